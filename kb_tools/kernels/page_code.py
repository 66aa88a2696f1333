"""A page's printed Python, run as printed: the Do/Don't blocks of kb/<kind>/<page>.md are
executed into a namespace, with the kernel names they call bound to Triton launchers, so a
notebook demonstrates the page's own wrapper and not a copy of it.

A block is chosen by its marker line (``# tested: do name, ...; uses: page, ...``); the blocks
of the pages it ``uses`` run first, into the same namespace.
"""

from __future__ import annotations

import re
from pathlib import Path

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
_MARKER = re.compile(r"^# tested: (do|dont)\b([^;\n]*)(.*)$", re.M)


def _page_file(kb_dir: Path, page: str) -> Path:
    for kind in ("constraints", "patterns", "playbooks"):
        path = kb_dir / kind / f"{page}.md"
        if path.is_file():
            return path
    raise LookupError(f"no page {page!r} under {kb_dir}")


def blocks(kb_dir: Path, page: str, role: str) -> list[tuple[str, list[str], list[str]]]:
    """(source, entry names, used pages) of each ``role`` ("do" or "dont") block of the page."""
    found = []
    for source in _BLOCK.findall(_page_file(kb_dir, page).read_text(encoding="utf-8")):
        marker = _MARKER.search(source.split("\n", 1)[0])
        if not marker or marker.group(1) != role:
            continue
        names = [n.strip() for n in marker.group(2).split(",") if n.strip()]
        uses = re.search(r"uses: ([^;]*)", marker.group(3))
        found.append((source, names, [u.strip() for u in uses.group(1).split(",")] if uses else []))
    return found


def load(kb_dir, page: str, name: str, role: str = "do", bind: dict | None = None) -> dict:
    """The namespace of the page's ``role`` block whose marker names ``name``, executed after the
    Do blocks of the pages it uses, with ``bind`` (e.g. a kernel launcher) defined first."""
    kb_dir = Path(kb_dir)
    for source, names, uses in blocks(kb_dir, page, role):
        if name in names:
            namespace = {"torch": __import__("torch"), **(bind or {})}
            for used in uses:
                for used_source, _, _ in blocks(kb_dir, used, "do"):
                    exec(compile(used_source, str(_page_file(kb_dir, used)), "exec"), namespace)  # noqa: S102 - our pages
            exec(compile(source, str(_page_file(kb_dir, page)), "exec"), namespace)  # noqa: S102
            namespace.update(bind or {})  # the page's own stand-ins never replace the kernel
            return namespace
    raise LookupError(f"kb page {page}: no '# tested: {role}' block names {name!r}")
