"""The site shows what a spec, page, router, contract or glossary says as text, never as markup.

MyST passes inline and block HTML through as raw nodes, so an ``<img onerror=...>`` in a page's
title ran in every reader's browser. Here every raw HTML node is turned back into the text it
was written as, except the markup opkb writes itself: the Ask page's box and scripts, and the
review's folds (``<details class="opkb-fold">`` around a summary that holds no markup). Each
page also carries a Content-Security-Policy that runs no inline script, so a fragment that got
past this would still not run.
"""

from __future__ import annotations

import re

# The one page whose raw HTML opkb writes whole (kb_tools.search.askpage).
TRUSTED_PAGES = frozenset({"ask"})
# opkb's own notebooks, executed by kbt notebooks: their outputs (a DataFrame's table) are HTML it made.
TRUSTED_FOLDERS = ("notebooks/",)
_OWN_MARKUP = re.compile(r'<details class="opkb-fold"( open)?>\s*<summary>[^<>]*</summary>|</details>')
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'")


def _raw_html_as_text(document, docname: str) -> None:
    from docutils import nodes

    if docname in TRUSTED_PAGES or docname.startswith(TRUSTED_FOLDERS):
        return
    for node in list(document.findall(nodes.raw)):
        if "html" not in node.get("format", "").split() or _OWN_MARKUP.fullmatch(node.astext().strip()):
            continue
        inline = isinstance(node.parent, nodes.TextElement)  # inside a paragraph, a title, a table cell's text
        kind = nodes.inline if inline else nodes.paragraph
        node.replace_self(kind("", "", nodes.Text(node.astext()), classes=list(node["classes"])))


def _transform():
    """A read-time transform: it runs before the table of contents copies the titles."""
    from sphinx.transforms import SphinxTransform

    class RawHtmlAsText(SphinxTransform):
        default_priority = 100

        def apply(self, **kwargs) -> None:
            _raw_html_as_text(self.document, self.env.docname)

    return RawHtmlAsText


def _policy(app, pagename, templatename, context, doctree) -> None:
    context["metatags"] = context.get("metatags", "") + f'\n<meta http-equiv="Content-Security-Policy" content="{CSP}">'


def setup(app):
    app.add_transform(_transform())
    app.connect("html-page-context", _policy)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
