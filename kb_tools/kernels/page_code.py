"""A page's printed Python, run as printed: a marked Do/Don't block of a KB page (parsed by
kb_tools.kb.page_code) is executed into a namespace with the kernel names it calls bound to
Triton launchers, so a notebook demonstrates the page's own wrapper and not a copy of it. The
blocks it builds on (``page_code.run_before``: the Do blocks of the pages its marker ``uses``,
the earlier blocks of its page with its role) run first, into the same namespace, as in the
tests that run every page's code."""

from __future__ import annotations

import ast
import functools
import math
from pathlib import Path
from typing import NamedTuple

from kb_tools.kb.page_code import page_blocks, run_before
from kb_tools.kb.pages import split_front_matter


class _AnyCode:
    """Every failure code counts as known: lint judges the markers, a notebook only runs blocks."""

    def __contains__(self, code) -> bool:
        return True


@functools.cache
def _blocks(page: _Page):
    """A page parsed once a process: ``load`` reads its own page's blocks again through run_before."""
    return tuple(page_blocks(page, _AnyCode())[0])


class _Page(NamedTuple):
    id: str
    body: str
    body_line: int
    path: Path


@functools.cache
def _page(kb_dir: Path, page: str) -> _Page:
    """The page's body, split from its front matter only (kbt lint validates the rest)."""
    for kind in ("constraints", "patterns", "playbooks"):
        path = kb_dir / kind / f"{page}.md"
        if path.is_file():
            _, body, body_line = split_front_matter(path.read_text(encoding="utf-8"), path)
            return _Page(page, body, body_line, path)
    raise LookupError(f"no page {page!r} under {kb_dir}")


def run_block(block, path: Path, namespace: dict) -> None:
    """Executes a page block into ``namespace``; a traceback names the page's file and line."""
    tree = ast.parse(block.source)
    ast.increment_lineno(tree, block.line - 1)
    exec(compile(tree, str(path), "exec"), namespace)  # noqa: S102 - our own pages


def load(kb_dir, page: str, name: str, role: str = "do", bind: dict | None = None) -> dict:
    """The namespace of the page's ``role`` block whose marker names ``name``, executed after
    the blocks it builds on, with ``bind`` (e.g. a kernel launcher) defined first and kept over
    whatever the page defines under the same name."""
    import torch

    kb_dir = Path(kb_dir).resolve()
    for block in _blocks(_page(kb_dir, page)):
        if block.tested and block.role == role and name in block.entries:
            namespace = {"torch": torch, "math": math, **(bind or {})}
            for ran in (*run_before(block, lambda other: _blocks(_page(kb_dir, other))), block):
                run_block(ran, _page(kb_dir, ran.page).path, namespace)
            namespace.update(bind or {})
            return namespace
    raise LookupError(f"kb page {page}: no '# tested: {role}' block names {name!r}")
