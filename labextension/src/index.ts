/**
 * `make lab` opens a `.py` in the view the server serves it as.
 *
 * JupyterLab picks a document's default viewer from its file name alone, so a review written by
 * `kbt review --format notebook -o X.py` and a module such as kb_tools/cli.py would get the
 * same one. The server already knows which is which: its contents manager
 * (kb_tools.outputs.lab_contents) gives a notebook script the type "notebook" and a module the
 * type "file", in a folder's listing and in the file's own model. This plugin keeps the type of
 * every path the contents API returns (the file browser lists a folder before anything in it
 * can be double-clicked; `docmanager:open` and a notebook's links fetch the file's model before
 * opening it) and, where a document is opened with its default viewer, takes the notebook view
 * for what the server serves as a notebook and a text view for the rest. "Open With" names its
 * viewer and is left alone.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { Contents } from '@jupyterlab/services';

type Viewer = DocumentRegistry.WidgetFactory;

/** Whether each path the contents API returned was served as a notebook, by path. */
class ServedAsNotebook {
  private readonly _byPath = new Map<string, boolean>();

  note(model: Contents.IModel): void {
    if (model.type === 'directory') {
      for (const child of Array.isArray(model.content) ? model.content : []) {
        this._byPath.set(normal(child.path), child.type === 'notebook');
      }
    } else {
      this._byPath.set(normal(model.path), model.type === 'notebook');
    }
  }

  get(path: string): boolean | undefined {
    return this._byPath.get(normal(path));
  }
}

function normal(path: string): string {
  return path.replace(/^\/+/, '');
}

function showsNotebook(viewer: Viewer): boolean {
  return (viewer.modelName || 'text') === 'notebook';
}

/** The stock choice when it agrees with how the server serves the path, else the first viewer that does. */
function agreeing(registry: DocumentRegistry, path: string, stock: Viewer | undefined, served: ServedAsNotebook): Viewer | undefined {
  const notebook = served.get(path);
  if (stock === undefined || notebook === undefined || showsNotebook(stock) === notebook) {
    return stock;
  }
  return registry.preferredWidgetFactories(path).find(viewer => showsNotebook(viewer) === notebook) || stock;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'opkb-lab-viewers:plugin',
  description: 'Opens a .py as a notebook where the server serves it as one, else in the editor.',
  autoStart: true,
  requires: [IDocumentManager],
  activate: (app: JupyterFrontEnd, docManager: IDocumentManager): void => {
    const served = new ServedAsNotebook();
    const contents = docManager.services.contents;
    const fetch = contents.get.bind(contents);
    contents.get = async (path: string, options?: Contents.IFetchOptions): Promise<Contents.IModel> => {
      const model = await fetch(path, options);
      if (!options?.type) {
        served.note(model); // the server's own choice; a fetch that names a type gets what it asked for
      }
      return model;
    };
    const registry = docManager.registry;
    const stockDefault = registry.defaultWidgetFactory.bind(registry);
    const stockRendered = registry.defaultRenderedWidgetFactory.bind(registry);
    registry.defaultWidgetFactory = (path?: string): Viewer =>
      (path ? agreeing(registry, path, stockDefault(path), served) : stockDefault(path)) as Viewer;
    registry.defaultRenderedWidgetFactory = (path: string): Viewer =>
      agreeing(registry, path, stockRendered(path), served) as Viewer;
  }
};

export default plugin;
