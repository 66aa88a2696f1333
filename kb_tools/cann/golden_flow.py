"""Judge a CANN operator's tests/assets/golden.py against seed 000's golden and third-party rules.

Read statically (nothing is imported or run). Each entry TTK reaches is judged in its own case
mode: a three-party golden casts no floating tensor (Promote raised it, seed 000 §3, §8); a
two-party golden widens no further than the kernel (§3, §5); a third-party leg is torch and,
where it widens, narrows back at exit (§1, §6, §8). The kernel's widening is read where it is
plain (``Cast<T, float>``, ``PromoteT``); where it is not, findings that need it are warnings.
It is read per registered float too: a widening inside a branch on the kernel's dtype
(``if constexpr (std::is_same_v<T, bfloat16_t>)``, its ``else``, ``#if ORIG_DTYPE_X == DT_BF16``)
widens only the floats that take that branch.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from kb_tools.cann.golden_casts import LOW, WIDTH, cast_target
from kb_tools.cann.golden_reach import Context, Entry, GoldenModule, Reach, entries
from kb_tools.cann.opdef import read_opdef
from kb_tools.syntax import walk_nodes

GOLDEN = Path("tests") / "assets" / "golden.py"
MAX_BYTES = 4 << 20
KERNEL_SUFFIXES = (".h", ".hpp", ".cpp", ".cc")
_WIDEN = re.compile(r"Cast\s*<\s*[\w:]+\s*,\s*(float|U|PromoteT|PromteT)\b|Promo?teT\b|PromoteType\b|Cast\s*<\s*float\b")
_ANY_CAST = re.compile(r"\bCast\s*[<(]|\bfloat\b")  # a Cast, or float named anywhere (SIMT code widens by assignment)
_DOUBLE = re.compile(r"\bdouble\b|\bfloat64")
_DT = re.compile(r"\bDT_(FLOAT16|BF16|FLOAT|DOUBLE)\b")
_DT_NAMES = {"FLOAT16": "float16", "BF16": "bfloat16", "FLOAT": "float32", "DOUBLE": "float64"}
_INPUT = re.compile(r"(?:\.|->)\s*Input\s*\(\s*\"(\w+)\"")
FLOATS = frozenset(WIDTH)


@dataclass(frozen=True)
class GoldenFinding:
    """One golden / third-party violation at path:line, with the criterion and the fix."""

    path: str
    line: int
    code: str
    severity: str
    message: str
    fix: str


@dataclass(frozen=True)
class KernelFacts:
    """The kernel's widening (float32, none or unknown, with where it was read) and float dtypes."""

    widening: str
    widening_at: str
    float_dtypes: frozenset[str]
    names_double: bool = False  # a kernel that never names double computes in nothing wider than float
    # each registered float -> (float32, none or unknown, where it was read): one branch on the
    # dtype may widen bfloat16 while float16 is computed in T
    per_dtype: dict[str, tuple[str, str]] = field(default_factory=dict, hash=False)

    def widening_of(self, dtype: str) -> tuple[str, str]:
        """(widening, where it was read) for one registered float; the kernel's one value otherwise."""
        return self.per_dtype.get(dtype, (self.widening, self.widening_at))


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", re.S)


def _code_only(text: str) -> str:
    """C++ text with comments and string literals blanked, line numbers kept."""
    return _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


_TEMPLATE_OF = re.compile(r"(\w+)\s*<\s*$")
_CLOSES = re.compile(r"\s*>")


def _casts(text: str) -> Iterator[re.Match]:
    """Each Cast, or float named other than as one case of a dtype dispatch: ``Op<float>``
    where the same text also names ``Op<half>`` or ``Op<bfloat16_t>`` (one template instantiated
    per registered dtype) is not a widening to float."""
    dispatched: dict[str, bool] = {}
    for m in _ANY_CAST.finditer(text):
        name = _TEMPLATE_OF.search(text, max(0, m.start() - 80), m.start()) if m.group(0) == "float" else None
        if not (name and _CLOSES.match(text, m.end())):
            yield m
            continue
        op = name.group(1)
        if op.endswith("_cast"):  # static_cast<float>(h) converts; it is no dispatch
            yield m
            continue
        if op not in dispatched:
            dispatched[op] = bool(re.search(r"\b" + op + r"\s*<\s*(?:half|bfloat16_t)\s*>", text))
        if not dispatched[op]:
            yield m


def _first_cast(text: str) -> re.Match | None:
    return next(_casts(text), None)


# C++ names of the floats; any other plain type name (int32_t, bool) is no float
_CPP_FLOATS = {"half": "float16", "float16_t": "float16", "__fp16": "float16", "bfloat16_t": "bfloat16",
               "__bf16": "bfloat16", "float": "float32", "float32_t": "float32", "double": "float64",
               "float64_t": "float64"}
_SAME = re.compile(r"(?:[\w:]*::)?(?:is_same_v|is_same|IsSameType)\s*<\s*([\w:]+)\s*,\s*([\w:]+)\s*>"
                   r"(?:\s*::\s*value|\s*\{\s*\}|\s*\(\s*\))?")
_MACRO_TEST = re.compile(r"(?:ORIG_)?DTYPE_(\w+)\s*(==|!=)\s*(?:ge::)?DT_(\w+)")
_DEFINED = re.compile(r"\bdefined\s*(?:\(\s*\w+\s*\)|\w+)")
# what comes just before float named as a type to test (is_same<T, float>, sizeof(float)): no computation
_TESTED_BEFORE = re.compile(r"(?:\b(?:is_same_v|is_same|IsSameType)\s*<[^<>;]*|\bsizeof\s*\(\s*)$")
_TYPE_TESTS = ("is_same", "IsSameType", "DTYPE_")
_IF = re.compile(r"if\s*(?:constexpr\s*)?\(")  # a literal start searches fast; no word character may precede it
_ELSE = re.compile(r"\s*else\b")
_SPACE = re.compile(r"\s*")
_PARENS = re.compile(r"[()]")
_BRACES = re.compile(r"[{}]")
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b([^\n]*)", re.M)
_MAYBE = (frozenset(), FLOATS)  # a test on something other than the dtype: any float may take either side

# (floats that certainly take a condition, floats that may), or None: it tests a dtype this
# reader cannot place (a type parameter that may not be the tensors' dtype)
Branch = tuple[frozenset[str], frozenset[str]] | None


def _split_top(text: str, op: str) -> list[str]:
    """``text`` split at each ``op`` outside parentheses."""
    if op not in text:
        return [text]
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        depth += (c == "(") - (c == ")")
        if depth == 0 and text.startswith(op, i):
            parts.append(text[start:i])
            start = i = i + len(op)
            continue
        i += 1
    return parts + [text[start:]]


def _paren_end(text: str, open_at: int, limit: int = 4000) -> int | None:
    """The index of the ``)`` closing the ``(`` at ``open_at``."""
    depth = 0
    for m in _PARENS.finditer(text, open_at, min(len(text), open_at + limit)):
        depth += 1 if m.group(0) == "(" else -1
        if depth == 0:
            return m.start()
    return None


def _condition(cond: str, inputs: frozenset[str], depth: int = 0) -> Branch:
    """Which floats take a C++ or ``#if`` condition on the kernel's dtype (``T``, or the macro
    ``DTYPE_X``/``ORIG_DTYPE_X`` of an OpDef input): ``||``, ``&&``, ``!`` and parentheses of
    ``is_same``/``IsSameType`` tests and ``ORIG_DTYPE_X == DT_BF16``; nested deeper than 32, unplaced."""
    if depth > 32:
        return None
    cond = cond.strip()
    while cond.startswith("(") and _paren_end(cond, 0) == len(cond) - 1:
        cond = cond[1:-1].strip()
    for op, combine in (("||", frozenset.union), ("&&", frozenset.intersection)):
        parts = _split_top(cond, op)
        if len(parts) > 1:
            sides = [_condition(p, inputs, depth + 1) for p in parts]
            if None in sides:
                return None
            return combine(*(s[0] for s in sides)), combine(*(s[1] for s in sides))
    if cond.startswith("!") and not cond.startswith("!="):
        inner = _condition(cond[1:], inputs, depth + 1)
        return None if inner is None else (FLOATS - inner[1], FLOATS - inner[0])
    if m := _SAME.fullmatch(cond):
        a, b = (g.rsplit("::", 1)[-1] for g in m.groups())
        named, other = (_CPP_FLOATS[a], b) if a in _CPP_FLOATS else (_CPP_FLOATS.get(b), a)
        if named is None or other in _CPP_FLOATS:
            return _MAYBE  # a test on integer types or on two parameters places no float
        if not (other == "T" or (other.startswith("DTYPE_") and other[6:].lower() in inputs)):
            return None
        return frozenset({named}), frozenset({named})
    if m := _MACRO_TEST.fullmatch(cond):
        name, op, dt = m.groups()
        if name.lower() not in inputs:
            return None
        hit = frozenset({_DT_NAMES.get(dt), "float32" if dt == "FLOAT32" else None}) & FLOATS
        return (hit, hit) if op == "==" else (FLOATS - hit, FLOATS - hit)
    return None if any(t in cond for t in _TYPE_TESTS) else _MAYBE


def _brace_pairs(text: str) -> dict[int, int]:
    pairs, stack = {}, []
    for m in _BRACES.finditer(text):
        if m.group(0) == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def _statement_end(text: str, pos: int, braces: dict[int, int], depth: int = 0) -> int:
    """Where the statement at ``pos`` ends: a block, an ``if`` with its ``else``, or up to ``;``."""
    pos = _SPACE.match(text, pos).end()
    if text.startswith("{", pos):
        return braces.get(pos, len(text) - 1) + 1
    if (m := _IF.match(text, pos)) and depth < 64:
        close = _paren_end(text, m.end() - 1)
        if close is None:
            return len(text)
        end = _statement_end(text, close + 1, braces, depth + 1)
        other = _ELSE.match(text, end)
        return _statement_end(text, other.end(), braces, depth + 1) if other else end
    semi = text.find(";", pos)
    return len(text) if semi < 0 else semi + 1


def _dtype_regions(text: str, inputs: frozenset[str]) -> list[tuple[int, int, frozenset[str] | None]]:
    """(start, end, the floats that run it, or None where that cannot be placed) for each span
    of blanked C++ behind a test of the kernel's dtype: an ``if`` body and its ``else``, and the
    arms of an ``#if``/``#elif``/``#else``."""
    regions = []
    braces: dict[int, int] | None = None
    for m in _IF.finditer(text):
        if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
            continue
        close = _paren_end(text, m.end() - 1)
        if close is None or not any(t in text[m.end():close] for t in _TYPE_TESTS):
            continue
        branch = _condition(text[m.end():close], inputs)
        if branch == _MAYBE:
            continue
        braces = braces if braces is not None else _brace_pairs(text)
        end = _statement_end(text, close + 1, braces)
        regions.append((close + 1, end, None if branch is None else branch[1]))
        if other := _ELSE.match(text, end):
            regions.append((other.end(), _statement_end(text, other.end(), braces),
                            None if branch is None else FLOATS - branch[0]))
    stack: list[list] = []  # per open #if: [start of the arm, the floats it runs, the floats earlier arms took]
    for m in _DIRECTIVE.finditer(text) if "DTYPE_" in text else ():  # an #if on anything else places nothing
        kind, rest = m.group(1), _DEFINED.sub("1", m.group(2))
        if kind in ("elif", "else", "endif") and stack:
            start, live, _ = stack[-1]
            if live != FLOATS:
                regions.append((start, m.start(), live))
        if kind in ("if", "ifdef", "ifndef"):
            branch = _condition(rest, inputs) if kind == "if" else _MAYBE
            stack.append([m.end(), branch and branch[1], branch and branch[0]])
        elif kind == "elif" and stack:
            taken, branch = stack[-1][2], _condition(rest, inputs)
            live = None if branch is None or taken is None else branch[1] - taken
            stack[-1] = [m.end(), live, None if live is None else taken | branch[0]]
        elif kind == "else" and stack:
            taken = stack[-1][2]
            stack[-1] = [m.end(), None if taken is None else FLOATS - taken, taken]
        elif kind == "endif" and stack:
            stack.pop()
    return regions


def _runs(pos: int, regions) -> frozenset[str] | None:
    """The floats that run the code at ``pos`` (None: a dtype test around it cannot be placed)."""
    live = FLOATS
    for start, end, floats in regions:
        if start <= pos < end:
            if floats is None:
                return None
            live &= floats
    return live


class _PerDtype:
    """Where each registered float is widened, or may be, as the kernel's files are read."""

    def __init__(self, floats: frozenset[str], inputs: frozenset[str]):
        self.floats, self.inputs = floats, inputs
        self.widen: dict[str, str] = {}
        self.maybe: dict[str, str] = {}
        self.aside = ""  # the first float placed under a branch some registered float does not take
        self.only: str | None = None  # the float the file being read is written for, if its name says

    def done(self) -> bool:
        return len(self.widen) == len(self.floats)

    def placed(self) -> bool:
        """Every float has a widening it runs or may run: from here only a Cast can change a value."""
        return len(self.widen.keys() | self.maybe.keys()) == len(self.floats)

    def read(self, text: str, where, only: str | None = None) -> None:
        """Place each widening and each float named in ``text`` (blanked); ``where(pos)`` is its path:line.
        ``only``: the one float the file is written for (``floor_bf16.h``): what it holds runs for that one."""
        self.only = only
        regions = _dtype_regions(text, self.inputs) if any(t in text for t in _TYPE_TESTS) else []
        for m in _WIDEN.finditer(text) if "Cast" in text or "Promo" in text or "Promte" in text else ():
            self._place(m.start(), regions, self.widen, where)
            if self.done():
                return
        tests = "is_same" in text or "IsSameType" in text or "sizeof" in text
        for m in _casts(text):
            if not (tests and m.group(0) == "float" and _TESTED_BEFORE.search(text, max(0, m.start() - 120), m.start())):
                self._place(m.start(), regions, self.maybe, where)
            if self.placed():
                return  # no float is left without a widening it may run
            if self.only is not None and self.aside and self.only in self.widen.keys() | self.maybe.keys():
                return  # a file written for one float has placed it: the rest of it places nothing new

    def _place(self, pos, regions, found, where) -> None:
        live = _runs(pos, regions)
        if self.only is not None:
            live = frozenset({self.only}) if live is None else live & {self.only}
        if live is None:
            found = self.maybe
        hit = self.floats if live is None else live & self.floats
        new = hit - found.keys()
        if not new and (self.aside or hit == self.floats):
            return
        at = where(pos)  # path:line, counted once for this placement
        if not self.aside and hit != self.floats:
            self.aside = f"{at}: float only under {', '.join(sorted(hit)) or 'no registered float'}"
        for d in new:
            found[d] = at

    def result(self, none_at: str, has_files: bool, no_source: str) -> dict[str, tuple[str, str]]:
        out = {}
        for d in sorted(self.floats):
            if d in self.widen:
                out[d] = ("float32", self.widen[d])
            elif not has_files:
                out[d] = ("unknown", no_source)
            elif d in self.maybe:
                out[d] = ("unknown", self.maybe[d])
            else:
                out[d] = ("none", self.aside or none_at)
        return out


# a kernel file written for one dtype says so at the end of its name: floor_bf16.h, pows_fp32.h
_FILE_TAGS = {"bf16": "bfloat16", "bfloat16": "bfloat16", "f16": "float16", "fp16": "float16", "half": "float16",
              "float16": "float16", "f32": "float32", "fp32": "float32", "float": "float32", "float32": "float32"}


def file_dtype(path: Path) -> str | None:
    """The one float a kernel file is written for, by its name's last part (``floor_bf16.h``);
    None when the name names none or more than one (``lin_space_half_and_float.h``)."""
    parts = path.stem.lower().split("_")
    named = {_FILE_TAGS[p] for p in parts if p in _FILE_TAGS}
    return _FILE_TAGS.get(parts[-1]) if len(parts) > 1 and len(named) == 1 else None


def kernel_facts(folder: Path, shown: str = "") -> KernelFacts:
    """Plain facts an operator folder gives about its kernel's widening and registered floats.

    Locations are written under ``shown`` (the folder as the user named it). The kernel-wide
    value is the first widening anywhere (else the first float named); the per-dtype view goes
    on reading, and following includes, until each registered float has a widening it runs.
    """

    inside = str(folder) + os.sep

    def at(path: Path) -> str:
        if not shown:
            return str(path)
        text = str(path)  # a file under the folder (most): no relpath, which asks for the working directory
        rel = text[len(inside):] if text.startswith(inside) else os.path.relpath(path, folder)
        return os.path.normpath(os.path.join(shown, rel))

    dtypes, inputs = set(), set()
    for path in sorted((folder / "op_host").glob("*_def.cpp")) if (folder / "op_host").is_dir() else []:
        text = _read(path) or ""
        dtypes |= {_DT_NAMES[m] for m in _DT.findall(text)}
        inputs |= {name.lower() for name in _INPUT.findall(text)}
    per = _PerDtype(frozenset(dtypes) & FLOATS, frozenset(inputs))
    kernel = folder / "op_kernel"
    files = (_kernel_files(kernel) if kernel.is_dir() else [])[:400]
    own, queued = len(files), set(files)
    any_cast = widen = ""
    double = False
    cut = None  # files from here on were followed for the per-dtype view only
    for i, path in enumerate(files):  # whole-text searches; the line is counted only for a match (grows below)
        raw = _read(path) or ""
        old = cut is None or i < cut
        if (not widen or not per.done()) and '"../' in raw:  # the kernel may widen in another operator's headers
            for found in _outside_includes(path, raw):
                if found not in queued and len(files) < own + 200:
                    queued.add(found)
                    files.append(found)
        wanted = old and ((not widen and ("Cast" in raw or "Promo" in raw or "Promte" in raw)) or
                          (not any_cast and ("Cast" in raw or "float" in raw)) or
                          (not double and ("double" in raw or "float64" in raw)))
        per_wanted = not per.done() and ("Cast" in raw or "Promo" in raw or "Promte" in raw
                                         or ("float" in raw and not per.placed()))
        if not (wanted or per_wanted):  # nothing left to find in it: not blanked
            continue
        text = _code_only(raw)
        if per_wanted:
            per.read(text, lambda pos, path=path, text=text: f"{at(path)}:{text.count(chr(10), 0, pos) + 1}",
                     file_dtype(path))
        if not wanted:
            continue
        double = double or bool(("double" in text or "float64" in text) and _DOUBLE.search(text))
        if not widen and ("Cast" in text or "Promo" in text or "Promte" in text) and (m := _WIDEN.search(text)):
            widen = f"{at(path)}:{text.count(chr(10), 0, m.start()) + 1}"
            cut = len(files)
        if not any_cast and ("Cast" in text or "float" in text) and (m := _first_cast(text)):
            any_cast = f"{at(path)}:{text.count(chr(10), 0, m.start()) + 1}"
    included = f" and {len(files) - own} included" if len(files) > own else ""
    none_at = f"{at(kernel)}: no Cast in {own} files{included}"
    no_source = f"{at(kernel)}: no kernel source"
    per_dtype = per.result(none_at, bool(files), no_source)
    if widen:
        return KernelFacts("float32", widen, frozenset(dtypes), double, per_dtype)
    if not files:
        return KernelFacts("unknown", no_source, frozenset(dtypes), True, per_dtype)
    if any_cast:
        return KernelFacts("unknown", any_cast, frozenset(dtypes), double, per_dtype)
    return KernelFacts("none", none_at, frozenset(dtypes), double, per_dtype)


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"(\.\./[^"\n]+)"', re.M)


def _outside_includes(path: Path, raw: str) -> list[Path]:
    """Headers that ``path`` includes from outside its own folder (``#include "../x/y.h"``): by
    the file's folder where that exists, else as the build lays out each ``op_kernel/`` as a
    folder named for its operator (``../arg_max_with_value/h.h`` is that operator's
    ``op_kernel/h.h``, in the same category or a sibling one). Unresolved includes are skipped."""
    root = next((p for p in path.parents if p.name == "op_kernel"), None)
    if root is None:
        return []
    op = root.parent.name
    found = []
    for inc in _INCLUDE.findall(raw):
        plain = path.parent / inc
        if plain.is_file():
            found.append(Path(os.path.normpath(plain)))
            continue
        built = os.path.normpath(os.path.join(op, os.path.relpath(path.parent, root), inc)).split(os.sep)
        if built[0] in ("..", op) or len(built) < 2:
            continue
        category = root.parent.parent
        for base in [category] + [p for p in _folders(category.parent) if p != category]:
            candidate = base.joinpath(built[0], "op_kernel", *built[1:])
            if candidate.is_file():
                found.append(candidate)
                break
    return found


@functools.lru_cache(maxsize=64)
def _folders(parent: Path) -> list[Path]:
    """The folders in ``parent``, sorted (the categories an include may land in)."""
    try:
        return sorted(p for p in parent.iterdir() if p.is_dir())
    except OSError:
        return []


def _kernel_files(kernel: Path) -> list[Path]:
    """The C++ files under ``op_kernel/``, sorted as paths; symlinked folders not followed."""
    found = []
    for dirpath, _, names in os.walk(kernel):
        found += [Path(dirpath) / n for n in names if n.endswith(KERNEL_SUFFIXES)]
    return sorted(found)


def opdef_tensors(folder: Path) -> list:
    """The tensors every OpDef file of the folder registers (read only when a rule needs them)."""
    host = folder / "op_host"
    defs = sorted(p for p in host.glob("*_def.cpp") if p.is_file()) if host.is_dir() else []  # no FIFO
    return [t for path in defs for t in read_opdef(path, str(path)).tensors]


def output_floats(tensors: list) -> set[str]:
    """Floating dtypes the OpDef registers for an output."""
    return {d for t in tensors if t.kind == "output" for d in t.dtypes if d in WIDTH}


def handed_dtypes(tensors: list) -> tuple[frozenset[str] | None, dict[str, frozenset[str]]]:
    """What a two-party golden can be handed: the floats the OpDef registers for any tensor (None
    when an OpDef is missing or a tensor's dtypes are unresolved), and each input's dtypes."""
    if not tensors or any(t.unresolved for t in tensors):
        return None, {}
    inputs: dict[str, set[str]] = {}
    for t in tensors:
        if t.kind == "input" and t.dtypes:
            inputs.setdefault(t.name, set()).update(t.dtypes)
    floats = frozenset(d for t in tensors for d in t.dtypes if d in WIDTH)
    return floats, {name: frozenset(d) for name, d in inputs.items()}


def _handed_as(tensors: list, dtype: str) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """What a two-party golden is handed in a case of ``dtype``: each tensor that registers it
    holds it (the usual OpDef, one float shared by its float tensors), the others keep theirs."""
    floats = {dtype} | {d for t in tensors if dtype not in t.dtypes for d in t.dtypes if d in WIDTH}
    inputs: dict[str, set[str]] = {}
    for t in tensors:
        if t.kind == "input" and t.dtypes:
            inputs.setdefault(t.name, set()).update({dtype} if dtype in t.dtypes else t.dtypes)
    return frozenset(floats), {name: frozenset(d) for name, d in inputs.items()}


def _criterion(entry: Entry, rel: str) -> str:
    if entry.mode == "unknown":
        return f"criterion not readable (tolerance computed at {rel}:{entry.tolerance_line}): case mode unknown"
    if not entry.criteria:
        return "TTK's default criterion mix_tolerance (no tolerance declared): two-party"
    cc = [(d, line) for d, (s, line) in entry.criteria.items() if s == "cross_check"]
    if cc:
        dtype, line = cc[0]
        return f"criterion cross_check for {dtype} ({rel}:{line}): three-party, Promote on"
    dtype, (standard, line) = next(iter(entry.criteria.items()))
    return f"criterion {standard} for {dtype} ({rel}:{line}): two-party"


def _judge_golden(mod, entry, rel, kernel, out, opdef):
    promoted = entry.mode == "three_party"
    handed = functools.cache(lambda: handed_dtypes(opdef())) if entry.mode == "two_party" else None
    ctx = Context(promoted=promoted, numpy_inputs=entry.numpy_inputs, handed=handed)
    where = _criterion(entry, rel)
    widens = False
    reached: dict[int, ast.FunctionDef] = {}
    reach = Reach(mod, ctx)
    calls_for = functools.cache(lambda dtype: _calls_for(mod, entry, opdef, handed, dtype))
    for call, func, exits in reach.calls(entry.functions):
        reached[id(func)] = func
        found = cast_target(call, reach.local(func)[1])
        if not found:
            continue
        target, line = found
        widens |= WIDTH[target] >= 32
        if entry.mode in ("three_party", "unknown"):
            severity = "error" if promoted else "warning"
            if exits:
                out.append(GoldenFinding(rel, line, "GD107", severity,
                                         f"{entry.key}: the golden casts its result to {target} at exit in {func.name}(), undoing Promote; {where}",
                                         "return the result in the dtype it was computed in, or cast to the handed output_dtypes[i]"))
            else:
                out.append(GoldenFinding(rel, line, "GD102", severity,
                                         f"{entry.key}: the golden casts to {target} by name in {func.name}(); {where}",
                                         "drop the cast: Promote already hands float32/float64 tensors"))
            continue
        if target == "float32":
            # judged per low float that reaches the cast: an error where the kernel certainly computes it in T
            bare = [d for d in sorted(kernel.float_dtypes & LOW) if kernel.widening_of(d)[0] == "none"
                    and (calls_for(d) is None or id(call) in calls_for(d))]
            if bare and not (exits and _returned_unchanged(call, func)):
                names = ", ".join(bare)
                out.append(GoldenFinding(rel, line, "GD108", "error",
                                         f"{entry.key}: the two-party golden computes {names} in float32 in {func.name}(), wider than "
                                         f"the kernel's widening for {names} (none, {kernel.widening_of(bare[0])[1]}); {where}",
                                         f"widen only as the kernel does (none for {names}) and narrow at the same points"))
        elif target in LOW and not exits and (wide := [d for d in _input_floats(call, func, handed)
                                                       if WIDTH[d] > WIDTH[target] and id(call) in (calls_for(d) or ())]):
            names = ", ".join(wide)  # the golden rounds a wider input down before computing on it
            out.append(GoldenFinding(rel, line, "GD103", "error",
                                     f"{entry.key}: the two-party golden casts its input down to {target} in {func.name}() where "
                                     f"the OpDef hands it {names}, rounding away what the kernel computes with; {where}",
                                     "compute on the input in its own dtype (or widened as the kernel widens it); narrow only the result, at exit"))
        elif _wider_than_kernel(target, kernel) and not (exits and _returned_unchanged(call, func)):
            certain = kernel.widening != "unknown" or (target == "float64" and not kernel.names_double)
            severity = "error" if certain else "warning"
            out.append(GoldenFinding(rel, line, "GD108", severity,
                                     f"{entry.key}: the two-party golden computes in {target} in {func.name}(), wider than the kernel's widening "
                                     f"({kernel.widening}, {kernel.widening_at}); {where}",
                                     f"widen only as the kernel does ({'none' if kernel.widening == 'none' else 'float32'}) and narrow at the same points"))
    _narrower_than_kernel(entry, rel, kernel, widens, where, out, opdef, list(reached.values()))


def _input_floats(call: ast.Call, func: ast.FunctionDef, handed) -> list[str]:
    """The floats the OpDef registers for the input a cast converts (``x1.astype("float16")``
    where ``x1`` is a parameter of ``func`` named as an OpDef input), sorted; none for anything else."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if handed is None or not isinstance(receiver, ast.Name):
        return []
    params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}
    inputs = handed()[1]
    return sorted(d for d in inputs.get(receiver.id, ()) if d in WIDTH) if receiver.id in params else []


def _calls_for(mod, entry, opdef, handed, dtype) -> frozenset[int] | None:
    """The ids of the calls a two-party entry reaches in a case of ``dtype`` (its dtype guards
    decided for that dtype), or None where the OpDef does not say what the golden is handed."""
    floats = handed()[0] if handed else None
    if floats is None or dtype not in floats:
        return None
    tensors = opdef()
    ctx = Context(promoted=False, numpy_inputs=entry.numpy_inputs, handed=functools.cache(lambda: _handed_as(tensors, dtype)))
    return frozenset(id(call) for call, _, _ in Reach(mod, ctx).calls(entry.functions))


# methods that convert a value without computing on it
_CONVERSIONS = frozenset({"numpy", "astype", "to", "type", "cpu", "detach", "contiguous", "float", "double",
                          "half", "bfloat16", "clone", "copy", "view", "reshape", "tolist", "item"})


def _returned_unchanged(call: ast.Call, func: ast.FunctionDef) -> bool:
    """A conversion whose value the entry returns through conversions only
    (``return res.float().numpy().astype(d)``): nothing is computed in the dtype it casts to."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in _CONVERSIONS):
        return False  # np.sum(x, dtype=...) and the like compute in the dtype they name
    parents = {id(child): node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    node = call
    while True:
        up = parents.get(id(node))
        top = parents.get(id(up)) if isinstance(up, ast.Attribute) and up.value is node else None
        if not (isinstance(top, ast.Call) and top.func is up and up.attr in _CONVERSIONS):
            return isinstance(up, ast.Return)
        node = top


# calls that round their result (exact ones such as abs, max, neg, copies and views are left out)
_ROUNDING = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "fmod",
    "remainder", "mod", "pow", "power", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "rsqrt", "reciprocal", "square", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
    "atan2", "sinc", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "sum", "mean", "prod",
    "cumsum", "cumprod", "matmul", "dot", "mm", "bmm", "einsum", "var", "std", "norm", "softmax",
    "log_softmax", "addcmul", "addcdiv", "lerp", "hypot", "logaddexp"})
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


_SIZE_CALLS = frozenset({"len", "int", "range", "list", "tuple"})


def _size_like(node: ast.AST) -> bool:
    """A container literal, a ``len(...)``-like call or ``.shape``/``.ndim``/``.size``: arithmetic
    on it is Python bookkeeping (shapes, indices), not a tensor operation."""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in _SIZE_CALLS
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "size")


def _rounding_steps(functions: list[ast.FunctionDef]) -> int:
    """How many rounding operations the reached functions write (arithmetic operators but on two
    constants or on size bookkeeping, and calls named in _ROUNDING); dead branches count too."""
    steps = 0
    for func in functions:
        for node in walk_nodes(func):
            if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
                constants = isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant)
                steps += not (constants or _size_like(node.left) or _size_like(node.right))
            elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                steps += (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in _ROUNDING
    return steps


def _narrower_than_kernel(entry, rel, kernel, widens, where, out, opdef, reached):
    """GD103: a two-party golden for half output dtypes that never widens, while the kernel
    computes them in float32 (seed 000 §4: the two-party golden widens as far as the NPU does).
    torch and numpy compute one half op in float and round once, as the kernel does, so a golden
    that writes a single rounding operation is not reported; a chain of them is, as a warning
    (whether the chain runs on half tensors is not weighed)."""
    if entry.mode != "two_party" or widens or not entry.functions or kernel.widening != "float32":
        return
    if _rounding_steps(reached or entry.functions) < 2:
        return
    if not kernel.float_dtypes & LOW:
        return
    outputs = output_floats(opdef())
    halves = sorted(d for d in (set(entry.criteria) or outputs) & outputs & LOW if kernel.widening_of(d)[0] != "none")
    if not halves or any(_constructs_wide(node) for f in entry.functions for node in walk_nodes(f)):
        return
    out.append(GoldenFinding(rel, entry.functions[0].lineno, "GD103", "warning",
                             f"{entry.key}: the two-party golden never widens {', '.join(halves)}, while the kernel computes "
                             f"them in float32 ({kernel.widening_at}); where it chains ops in {', '.join(halves)} it rounds "
                             f"after each, the kernel once; {where}",
                             "cast the half inputs to float32 where the kernel widens, compute there, and narrow to the "
                             "output dtype at exit as the kernel's store does"))


def _constructs_wide(node: ast.AST) -> bool:
    """``np.float32(x)`` / ``numpy.float64(x)``: a widening written as a constructor, not a cast."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
            and node.func.attr in ("float32", "float64", "double") and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("np", "numpy"))


def _wider_than_kernel(target: str, kernel: KernelFacts) -> bool:
    """float64 where the OpDef registers none (float32 is judged per dtype in _judge_golden)."""
    return target == "float64" and "float64" not in kernel.float_dtypes


def _judge_leg(mod, entry, rel, kernel, out, opdef):
    where = _criterion(entry, rel)
    if entry.framework.lower() != "torch":
        out.append(GoldenFinding(rel, entry.line, "GD109", "error",
                                 f"{entry.key}: the third-party leg is written in {entry.framework}, not torch; {where}",
                                 "write the GPU leg in torch (seed 000 §6): it also gives the performance data"))
        return
    narrowest = min((WIDTH.get(d, 64) for d in entry.criteria), default=64)
    widened, narrows = [], False
    for call, func, _ in Reach(mod, Context(promoted=False, numpy_inputs=False)).calls(entry.functions):
        found = cast_target(call, mod.scope(func))
        if found and WIDTH[found[0]] > narrowest:
            widened.append(found)
        elif found and WIDTH[found[0]] <= narrowest:
            narrows = True
        elif isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "astype", "type"):
            narrows = True
    if widened and not narrows and output_floats(opdef()):  # integer outputs (indices) have nothing to narrow
        target, line = widened[0]
        out.append(GoldenFinding(rel, line, "GD110", "error",
                                 f"{entry.key}: the third-party leg widens to {target} and never narrows back at exit; {where}",
                                 "cast every output back to its declared dtype (the input's dtype) before returning"))
    low = sorted(d for d in set(entry.criteria) & LOW if kernel.widening_of(d)[0] != "none")
    if entry.functions and not widened and low and kernel.widening == "float32":
        # torch may still accumulate half in float inside its own kernels: a warning, not an error
        out.append(GoldenFinding(rel, entry.functions[0].lineno, "GD110", "warning",
                                 f"{entry.key}: the third-party leg never widens {', '.join(low)}, while the kernel computes "
                                 f"them in float32 ({kernel.widening_at}); {where}",
                                 "cast the half inputs to float32 where the kernel does, and narrow back at exit"))


def judge_golden(golden: Path, rel: str | None = None, tree: ast.Module | None = None) -> tuple[list[GoldenFinding], str | None]:
    """Findings for one golden.py (path relative as ``rel``), and an error line if it cannot be
    read; ``tree``, when the caller parsed the file already, is used instead of parsing it again."""
    rel = rel or str(golden)
    if tree is None:
        text = _read(golden)
        if text is None:
            return [], f"{rel}:1: cannot read the golden (missing, not a file, or over {MAX_BYTES >> 20} MiB)"
        try:
            tree = ast.parse(text.lstrip("\ufeff"), filename=rel)
        except SyntaxError as exc:
            return [], f"{rel}:{exc.lineno or 1}: the golden does not parse: {exc.msg}"
        except (ValueError, RecursionError) as exc:
            return [], f"{rel}:1: the golden does not parse: {exc}"
    mod = GoldenModule(tree)
    suffix = GOLDEN.as_posix()
    absolute = golden.absolute()
    folder = absolute.parents[2] if absolute.as_posix().endswith(suffix) else absolute.parent
    shown = rel[: -len(suffix)].rstrip("/") or "." if rel.endswith(suffix) else str(folder)
    kernel = kernel_facts(folder, shown)
    opdef = functools.cache(lambda: opdef_tensors(folder))  # the OpDef, read once and only if a rule asks
    out: list[GoldenFinding] = []
    try:
        for entry in entries(mod, folder.name):
            if entry.role == "golden":
                _judge_golden(mod, entry, rel, kernel, out, opdef)
            elif entry.mode == "three_party":
                _judge_leg(mod, entry, rel, kernel, out, opdef)
    except RecursionError:
        return [], f"{rel}:1: the golden nests expressions too deeply to judge"
    unique = {(f.line, f.code): f for f in out}
    return sorted(unique.values(), key=lambda f: (f.line, f.code)), None


def golden_files(root: Path) -> list[Path]:
    """Every operator's golden.py under ``root`` (an operator, a category or a repository)."""
    if (root / GOLDEN).is_file():
        return [root / GOLDEN]
    found = []
    for path in sorted(root.rglob("golden.py")):
        if path.parent.name == "assets" and path.parent.parent.name == "tests" and not path.is_symlink():
            found.append(path)
    return found
