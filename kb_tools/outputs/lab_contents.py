"""JupyterLab's contents manager for ``make lab``: a ``.py`` file is served as a notebook when it
is one, and a plain module stays a file that no notebook view can overwrite.

Jupytext decides by extension, folder by folder (jupytext.toml: only ``notebooks/*.py`` are
notebooks), so a review written anywhere by ``kbt review --format notebook -o X.py`` would open
as text, and making every ``.py`` a notebook breaks ``kb_tools/cli.py`` ("NotJSONError").
Here a ``.py`` that starts with a jupytext header (``# ---`` then ``# jupyter:``, which every
review carries, with its kernel) is a notebook wherever it lies; any other ``.py`` follows the
folder's jupytext.toml.

The type this manager gives a path ("notebook" or "file", in a folder's listing and in the
file's own model) is what ``make lab``'s frontend extension (labextension/) opens it by: a
notebook script in the notebook view, a module in the editor. A module can still be asked for
as a notebook, by Open With → Jupytext Notebook (jupytext offers that view for every ``.py``) or
by a saved workspace that reopens such a tab; it is then shown read-only, its source in one
cell, with a line saying to open it with the Editor, and it is never written back as a notebook.

A notebook is served with the kernel metadata JupyterLab would write once the native python3
kernel starts (its spec's display name, the kernel's ``language_info``): a ``.py`` notebook has
no ``language_info`` and often no kernelspec, and JupyterLab adding them marked every notebook
"modified" as it opened.
"""

from __future__ import annotations

from functools import cache

import nbformat
from jupytext.async_contentsmanager import AsyncTextFileContentsManager
from jupytext.config import JupytextConfiguration

HEAD_BYTES = 4096  # the header is the file's first lines; nothing past this is read to decide


def is_notebook_script(os_path: str) -> bool:
    """Whether the file starts with a jupytext YAML header."""
    try:
        with open(os_path, "rb") as stream:
            head = stream.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    lines = head.splitlines()
    if not lines or lines[0].rstrip() != "# ---":
        return False
    return any(line.rstrip() == "# jupyter:" for line in lines[1:40])


def _with_py(config):
    """A copy of a jupytext configuration that counts ``.py`` as a notebook extension."""
    values = {name: getattr(config, name) for name in config.trait_names() if config.trait_metadata(name, "config")}
    extensions = values.get("notebook_extensions") or []
    if isinstance(extensions, str):
        extensions = extensions.split(",")
    values["notebook_extensions"] = [*extensions, "py"]
    return JupytextConfiguration(**values)


@cache
def _native_language_info() -> dict:
    """What the native kernel (ipykernel, run by this server's Python) reports as its language."""
    from ipykernel.ipkernel import IPythonKernel

    return IPythonKernel.language_info


class ScriptNotebooksContentsManager(AsyncTextFileContentsManager):
    def _as_the_kernel_reports(self, nb) -> None:
        """Give a notebook for the native python3 kernel (named, or the default when none is)
        the kernelspec and language_info that JupyterLab would set when that kernel starts."""
        from jupyter_client.kernelspec import NATIVE_KERNEL_NAME

        specs = getattr(self.parent, "kernel_spec_manager", None)
        name = (nb["metadata"].get("kernelspec") or {}).get("name") or NATIVE_KERNEL_NAME
        if specs is None or name != NATIVE_KERNEL_NAME:
            return
        spec = specs.get_kernel_spec(name)
        nb["metadata"]["kernelspec"] = {"name": name, "display_name": spec.display_name, "language": spec.language}
        nb["metadata"]["language_info"] = dict(_native_language_info())

    async def get_config(self, path, use_cache=False):
        config = await super().get_config(path, use_cache=use_cache)
        if not str(path).endswith(".py") or ".py" in self.all_nb_extensions(config):
            return config
        if not is_notebook_script(self._get_os_path(str(path).strip("/"))):
            return config
        return _with_py(config)

    async def _is_module(self, path: str) -> bool:
        """A .py file that is not a notebook here (not by its folder's jupytext.toml, not by its header)."""
        path = str(path).strip("/")
        return path.endswith(".py") and ".py" not in self.all_nb_extensions(await self.get_config(path))

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        if type != "notebook" or not await self._is_module(path):
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            if content and model.get("type") == "notebook":
                self._as_the_kernel_reports(model["content"])
            return model
        model = await super().get(path, content=content, type="file", format="text", **kwargs)
        model.update(type="notebook", format="json" if content else None, mimetype=None, writable=False)
        if content:
            note = nbformat.v4.new_markdown_cell(f"`{path}` is a Python module, not a notebook: shown read-only. "
                                                 "To edit it, right-click it in the file browser → Open With → Editor.")
            nb = nbformat.v4.new_notebook(cells=[note, nbformat.v4.new_code_cell(model["content"])])
            self._as_the_kernel_reports(nb)
            model["content"] = nb
        return model

    async def save(self, model, path=""):
        if model.get("type") == "notebook" and await self._is_module(path):
            from tornado.web import HTTPError

            raise HTTPError(403, f"{path} is a Python module, not a notebook: open it with the Editor to change it")
        return await super().save(model, path)
