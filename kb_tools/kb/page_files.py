"""Which files are rule pages: every ``kb/<kind folder>/*.md`` but a README.

Its own module so that the content-keyed caches can list the pages without importing the
page parser (kb_tools.kb.pages re-exports it)."""

from __future__ import annotations

from pathlib import Path

from kb_tools.kb import vocabulary as V


def page_files(kb_dir: Path) -> list[Path]:
    return sorted(p for sub in V.PAGE_KINDS.values() for p in (kb_dir / sub).glob("*.md") if p.name != "README.md")
