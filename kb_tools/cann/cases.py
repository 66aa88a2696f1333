"""The dtypes each enabled TTK case tests, read from ``tests/st/**/ttk_*.csv``.

A kernel/GEIR case row names ``output_dtypes`` as Python tuple text; an aclnn case row names
``tensor_dtypes`` and the ``output_tensor_indexes`` among them. A row with ``is_enabled`` false
is skipped. Files are read in a bounded stream: a huge file stops at a
row limit with one line saying so, and a malformed row is named by its line.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_ROWS = 200_000
MAX_FIELD = 1 << 20
_QUOTED = re.compile(r"'([A-Za-z0-9_]+)'|\"([A-Za-z0-9_]+)\"")
_FALSE = {"false", "0", "no", "n", "off"}
_INDEX = re.compile(r"-?\d+")
ALIASES = {"double": "float64", "float": "float32", "half": "float16", "bf16": "bfloat16", "fp16": "float16",
           "fp32": "float32"}


@dataclass
class CaseFacts:
    """Dtypes tested by enabled cases ({dtype: first 'path:line'}), case files, and problems."""

    tested: dict[str, str] = field(default_factory=dict)
    files: int = 0
    enabled: int = 0
    problems: list[str] = field(default_factory=list)


def case_files(folder: Path) -> list[Path]:
    st = folder / "tests" / "st"
    if not st.is_dir() or st.is_symlink():
        return []
    return sorted(p for p in st.rglob("ttk_*.csv") if p.is_file() and not p.is_symlink())


def _dtypes(cell: str) -> list[str]:
    return [ALIASES.get(a or b, a or b) for a, b in _QUOTED.findall(cell)]


def _outputs(row: list[str], cols: tuple[int, int]) -> list[str]:
    """The output dtypes of a row: its output_dtypes, or tensor_dtypes picked by index."""
    dtypes_i, index_i = cols
    dtypes = _dtypes(row[dtypes_i])
    if index_i < 0:
        return dtypes
    picked = []
    for text in _INDEX.findall(row[index_i]):
        i = int(text)
        if -len(dtypes) <= i < len(dtypes):
            picked.append(dtypes[i])
    return picked


def read_cases(folder: Path, shown: str) -> CaseFacts:
    """Read every case CSV of an operator folder; ``shown`` is the folder as printed."""
    facts = CaseFacts()
    csv.field_size_limit(MAX_FIELD)
    for path in case_files(folder):
        rel = f"{shown}/{path.relative_to(folder).as_posix()}"
        facts.files += 1
        try:
            with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
                reader = csv.reader(handle)
                header = next(reader, None)
                if header and "output_dtypes" in header:
                    cols = (header.index("output_dtypes"), -1)
                elif header and "tensor_dtypes" in header and "output_tensor_indexes" in header:
                    cols = (header.index("tensor_dtypes"), header.index("output_tensor_indexes"))
                else:
                    facts.problems.append(f"{rel}:1: neither output_dtypes nor tensor_dtypes with "
                                          "output_tensor_indexes; cases not read")
                    continue
                en_i = header.index("is_enabled") if "is_enabled" in header else -1
                for row in reader:
                    line = reader.line_num
                    if line > MAX_ROWS:
                        facts.problems.append(f"{rel}:{line}: more than {MAX_ROWS} rows; the rest not read")
                        break
                    if not row:
                        continue
                    if len(row) <= max(*cols, en_i):
                        facts.problems.append(f"{rel}:{line}: malformed row ({len(row)} fields, header has {len(header)})")
                        continue
                    if en_i >= 0 and row[en_i].strip().lower() in _FALSE:
                        continue
                    facts.enabled += 1
                    for dtype in _outputs(row, cols):
                        facts.tested.setdefault(dtype, f"{rel}:{line}")
        except csv.Error as exc:
            facts.problems.append(f"{rel}:{reader.line_num}: malformed CSV ({exc})")
        except OSError as exc:
            facts.problems.append(f"{rel}:1: cannot read ({exc.strerror})")
    return facts
