"""What the hostile-input tests share: a filled usage folder to damage, a look at a folder's
files, and the bar every refusal meets (one line naming the file, its code, no traceback).

The filled folder is made the way a coder's is: the worked example's filled KB_USAGE.json
merged by ``kbt usage`` against the KB the test uses, so it matches that KB's pages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import REPO

SOFTMAX = REPO / "ops" / "softmax.yaml"
SOFTMAX_ROOT = REPO / "examples" / "softmax"

# A spec the tests edit by replacing its lines: spelled here, so that a change to ops/ never
# makes an edit miss (it routes like softmax: a row reduction with half dtypes).
SPEC = """\
op: hostile
class_id: "."
description: >-
  A row reduction with half inputs, accumulated in float32.
topologies: [row-reduction]
properties:
  dtypes: [float16, bfloat16, float32]
  ranks: [1, 2, 3, 4]
  mixed_precision: true
target: a5
criteria:
  float16: cross_check
  bfloat16: cross_check
  float32: cross_check
widening:
  float16: float32
  bfloat16: float32
wrapper: ops/wrappers/softmax_wrapper.py
"""


def spec_with(old: str, new: str) -> str:
    assert old in SPEC, old
    return SPEC.replace(old, new, 1)


def filled_usage(kbt, out: Path, root: Path = REPO) -> Path:
    """``out/KB_USAGE.json``: the softmax example's filled records, merged against ``root``'s KB."""
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOFTMAX_ROOT / "KB_USAGE.json", out / "KB_USAGE.json")
    result = kbt("usage", root / "ops" / "softmax.yaml", "-o", out, root=root)
    assert result.code == 0, result.err
    return out / "KB_USAGE.json"


def filled(records: list[dict]) -> list[dict]:
    return [r for r in records if isinstance(r.get("implementation"), dict) and r["implementation"].get("status")]


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text("utf-8"))


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) and its bytes."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def one_line(result, where: str, code: str, exit_code: int | None = None) -> str:
    """The single stderr line of a refused command: it starts with ``where`` and carries ``code``."""
    assert "Traceback" not in result.err, result.err[-2000:]
    assert result.code != 0 if exit_code is None else result.code == exit_code, (result.code, result.err[-2000:])
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, lines[:6]
    (line,) = lines
    assert line.startswith(where) and f" {code} " in f" {line}", line
    return line
