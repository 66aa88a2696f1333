"""The seed documents every page cites, and the sections a citation may name.

The registry lives in ``kb/sources.yaml`` so that a citation can be checked in a clone that
does not carry the seeds; where ``../shared/seeds`` is present, lint also checks that the
cited file is really there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.pages import shown_path
from kb_tools.textfile import read_text
from kb_tools.yamlio import load_yaml


@dataclass(frozen=True)
class Seed:
    file: str
    title: str
    sections: dict  # section key -> heading in the seed's own words
    background: tuple[str, ...] = ()  # sections that hold no rule, so no page needs to cite them


def load_sources(kb_dir: Path) -> dict[str, Seed]:
    path = Path(kb_dir) / "sources.yaml"
    shown = shown_path(path)
    data = load_yaml(read_text(path, code_prefix="SO"), shown, code="SO010")
    if not isinstance(data, dict) or not isinstance(data.get("seeds"), dict):
        raise KbErrors([Diagnostic(shown, 1, "SO011", "expected a 'seeds' mapping of file name to title and sections")])
    seeds = {}
    for name, entry in data["seeds"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("sections"), dict):
            raise KbErrors([Diagnostic(shown, data["seeds"].line_of(name), "SO012", f"seed {name!r} needs a title and a sections mapping")])
        sections = {str(k): str(v) for k, v in entry["sections"].items()}
        background = tuple(str(b) for b in entry.get("background", ()))
        unknown = [b for b in background if b not in sections]
        if unknown:
            raise KbErrors([Diagnostic(shown, entry.line_of("background"), "SO013", f"background names unknown section(s) {', '.join(unknown)}")])
        seeds[name] = Seed(name, str(entry.get("title", "")), sections, background)
    return seeds


def seeds_dir(root: Path) -> Path | None:
    """Where the seed files are, when this checkout has them beside it."""
    for candidate in (Path(root) / "shared" / "seeds", Path(root).parent / "shared" / "seeds"):
        if candidate.is_dir():
            return candidate
    return None
