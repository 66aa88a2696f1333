"""What an operator folder's Ascend C kernel says about its widening, read statically from
``op_kernel/`` (and the headers it includes from other operators' ``op_kernel/``): the
kernel-wide value (float32, none or unknown, with where it was read) and the same per
registered float. The value is read where it is plain (``Cast<T, float>``, ``PromoteT``). A
widening inside a branch on the kernel's dtype (``if constexpr (std::is_same_v<T, bfloat16_t>)``,
its ``else``, ``#if ORIG_DTYPE_X == DT_BF16``) or in a file named for one float
(``floor_bf16.h``) widens only the floats that take it.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from kb_tools.cann.golden_casts import WIDTH

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


def read_source(path: Path) -> str | None:
    """A source file of the folder as text (bad bytes replaced), or None: missing, not a
    regular file, unreadable or over ``MAX_BYTES``."""
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
        text = read_source(path) or ""
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
        raw = read_source(path) or ""
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
