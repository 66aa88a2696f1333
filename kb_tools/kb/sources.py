"""The seed documents every page cites, and the sections a citation may name.

The registry lives in ``kb/sources.yaml`` so that a citation can be checked in a clone that
does not carry the seeds; where ``../shared/seeds`` is present, lint also checks that the
cited file is really there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.files.text import read_text
from kb_tools.files.yamlio import load_yaml
from kb_tools.kb.pages import shown_path


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


# A number a page quotes from a seed table: grouped thousands (35,652,608), three or more
# decimals (0.000763), a pass count (77/77) or a percentage (1.5625 %). Small integers are
# too common to check and are left alone.
QUOTED_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d{3,}|(\d+)/\2(?![\d/])|\d+(?:\.\d+)?\s?%)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_EXCEPTIONS = re.compile(r"<!--\s*drift-exceptions:(.*?)(?:--\s.*?)?-->", re.S)


def _squashed(text: str) -> str:
    return re.sub(r"[\s,]", "", text)


def drift_exceptions(body: str) -> set[str]:
    """Numbers a page declares as its own (derived, not quoted), in an HTML comment:
    ``<!-- drift-exceptions: 4,194,304; 80 % -- why they are ours -->``."""
    found = set()
    for m in _EXCEPTIONS.finditer(body):
        found |= {_squashed(n) for n in m.group(1).split(";") if n.strip()}
    return found


def quoted_numbers(body: str) -> list[tuple[str, int]]:
    """Each seed-like number in the page's prose (code blocks excluded) with its body line (0-based)."""
    prose = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), _EXCEPTIONS.sub("", body))
    return [(m.group(1), prose.count("\n", 0, m.start())) for m in QUOTED_NUMBER.finditer(prose)]


def number_drift(page, seed_texts: dict[str, str]) -> list[Diagnostic]:
    """Numbers the page quotes that none of its cited seeds contains, and exceptions that are
    stale (no longer on the page, or in fact in the seed)."""
    cited = _squashed(" ".join(seed_texts.get(src["seed"], "") for src in page.sources))
    allowed = drift_exceptions(page.body)
    shown, diags, seen = shown_path(page.path), [], set()
    for number, offset in quoted_numbers(page.body):
        key = _squashed(number)
        seen.add(key)
        if key not in cited and key not in allowed:
            diags.append(Diagnostic(shown, page.body_line + offset, "DR010",
                                    f"{number} is in none of the seeds this page cites; correct it or list it in drift-exceptions"))
    for key in sorted(allowed - seen):
        diags.append(Diagnostic(shown, page.body_line, "DR011", f"drift exception {key} no longer appears on the page"))
    for key in sorted(k for k in allowed & seen if k in cited):
        diags.append(Diagnostic(shown, page.body_line, "DR012", f"drift exception {key} is in a cited seed after all; drop the exception"))
    return diags


def heading_drift(seeds: dict[str, Seed], where: Path) -> list[Diagnostic]:
    """Every section heading kb/sources.yaml records (its Chinese part) is in the seed file."""
    diags = []
    for name, seed in seeds.items():
        text = re.sub(r"\s+", "", read_text(where / name, code_prefix="SO"))
        for key, heading in seed.sections.items():
            own_words = re.sub(r"\s+", "", heading.split(" (")[0])
            if own_words not in text:
                diags.append(Diagnostic("kb/sources.yaml", None, "DR020", f"{name} {key}: heading {heading.split(' (')[0]!r} is not in the seed"))
    return diags
