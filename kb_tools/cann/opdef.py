"""The dtypes an OpDef registers, read from ``op_host/<op>_def.cpp`` without compiling it.

A tolerant reader: comments and strings are blanked, each ``this->Input/Output("name")`` chain's
``.DataType(...)`` / ``.DataTypeList(...)`` / ``.Follow(...)`` is read, and a dtype list named by
a vector declared above the class or by a plain ``#define`` is followed. A chain handed to a local
helper (``setAttr(this->Output("z"))`` with ``auto setAttr = [](auto&& t) { t.DataType(...); }``)
takes the helper's calls. Anything else is reported with ``path:line`` as unresolved; nothing is
guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 4 * 1024 * 1024

# ge::DT_* -> TTK's dtype names (hicann/ops-test-kit uses numpy/torch spellings)
DT_NAMES = {
    "DT_FLOAT": "float32", "DT_FLOAT16": "float16", "DT_BF16": "bfloat16", "DT_DOUBLE": "float64",
    "DT_INT8": "int8", "DT_INT16": "int16", "DT_INT32": "int32", "DT_INT64": "int64",
    "DT_UINT8": "uint8", "DT_UINT16": "uint16", "DT_UINT32": "uint32", "DT_UINT64": "uint64",
    "DT_BOOL": "bool", "DT_COMPLEX64": "complex64", "DT_COMPLEX128": "complex128",
    "DT_COMPLEX32": "complex32", "DT_FLOAT8_E4M3FN": "float8_e4m3fn", "DT_FLOAT8_E5M2": "float8_e5m2",
    "DT_HIFLOAT8": "hifloat8", "DT_INT4": "int4", "DT_UINT1": "uint1", "DT_STRING": "string",
    "DT_FLOAT4_E2M1": "float4_e2m1", "DT_FLOAT4_E1M2": "float4_e1m2", "DT_FLOAT8_E8M0": "float8_e8m0",
}

_BLANK = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", re.S)
_STRING = re.compile(r"\"((?:\\.|[^\"\\\n])*)\"")
_CHAIN = re.compile(r"\b(Input|Output|DynamicInput|DynamicOutput)\s*\(\s*\"([^\"]*)\"\s*\)")
_METHOD = re.compile(r"\.\s*(DataType|DataTypeList|Follow)\s*\(")
_DT = re.compile(r"\bDT_[A-Z0-9_]+\b")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+((?:[^\n]*\\\n)*[^\n]*)", re.M)
_SEQUENCE = re.compile(r"\b\w+\s*\.\s*GetSequence\s*\(\s*\"(\w+)\"\s*\)")  # a generator naming a vector
_RANGE = re.compile(r"(?:std::)?vector\s*<[^<>]*>\s*\(\s*(\w+)\s*\.\s*c?begin\s*\(\s*\)\s*,\s*\1\s*\.\s*c?end\s*\(\s*\)\s*\)")
_FILLED = re.compile(r"(?:(?:std::)?vector\s*<[^<>]*>)?\s*\(\s*[\w.]+\s*(?:\(\s*\))?\s*,\s*((?:ge::)?DT_[A-Z0-9_]+)\s*\)")
_ADDCONFIG = re.compile(r"AddConfig\s*\(\s*\"([^\"]+)\"")


@dataclass
class Tensor:
    """One input or output with the dtypes it registers (empty when unresolved)."""

    name: str
    kind: str  # "input" or "output"
    dtypes: list[str]
    line: int
    follows: str = ""
    unresolved: str = ""
    dtype_lines: dict[str, int] = field(default_factory=dict)  # dtype -> line of its .DataType(


@dataclass
class OpDef:
    """What one ``*_def.cpp`` declares: its tensors, SoCs, and what could not be resolved."""

    path: str
    tensors: list[Tensor] = field(default_factory=list)
    socs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def outputs(self) -> list[Tensor]:
        return [t for t in self.tensors if t.kind == "output"]


def _blank(text: str) -> str:
    """Comments blanked and strings kept only where a chain names a tensor, lines kept."""
    def sub(m: re.Match) -> str:
        s = m.group(0)
        return s if s.startswith('"') else "\n" * s.count("\n")
    return _BLANK.sub(sub, text)


_BRACKET = re.compile(r"[(){};]")


def _balanced(text: str, start: int, limit: int = 20000) -> int:
    """Index just past the bracket closing the one opened before ``start``; -1 when unbalanced
    (a ``;`` at the outer level, or nothing closes within ``limit`` characters)."""
    depth = 1
    for m in _BRACKET.finditer(text, start, min(len(text), start + limit)):
        c = m.group(0)
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
            if depth == 0:
                return m.end()
        elif depth <= 1:
            return -1
    return -1


class _Names:
    """Names bound to a brace list (vectors declared above the class), to a vector built from
    another (``= std::vector<...>(V.size(), ge::DT_X)``, ``name(n, ge::DT_X)``) or a plain macro;
    each looked up only when a DataType names it."""

    def __init__(self, text: str):
        self.text = text
        self.found = {m.group(1): m.group(2).replace("\\\n", " ") for m in _DEFINE.finditer(text)}

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def __getitem__(self, name: str) -> str:
        return self.get(name) or ""

    def get(self, name: str) -> str | None:
        if name not in self.found:
            self.found[name] = None
            pattern = re.compile(r"\b" + re.escape(name) + r"\s*(?:=\s*|(?=\{))\{")
            for m in pattern.finditer(self.text):
                end = _balanced(self.text, m.end())
                if end > 0:
                    self.found[name] = self.text[m.end() - 1:end]
                    break
            else:
                self.found[name] = self._bound(name)
                if self.found[name] is not None:
                    return self.found[name]
                built = re.compile(r"\b" + re.escape(name) + r"\s*(?:=\s*(?:std::)?vector\s*<[^<>;]*>\s*)?(\([^;{}]*?\))\s*;")
                m = built.search(self.text)
                if m:
                    self.found[name] = m.group(1)
        return self.found[name]

    def _bound(self, name: str) -> str | None:
        """``name = OTHER;`` (an alias) or ``name = std::get<N>(T);`` with ``T = F();``: the
        names the element is filled from, or None when the binding is not one of these."""
        m = re.search(r"\b" + re.escape(name) + r"\s*=\s*([^;{}]*?)\s*;", self.text)
        if not m:
            return None
        bound = m.group(1)
        if re.fullmatch(r"[A-Za-z_]\w*", bound):
            return bound if bound != name else None
        got = _GET.fullmatch(bound)
        return _tuple_element(self.text, int(got.group(1)), got.group(2)) if got else None


def _block(text: str, start: int, limit: int = 20000) -> str | None:
    """The text of a ``{...}`` block opened just before ``start``; None when nothing closes it."""
    depth = 1
    for m in re.finditer(r"[{}]", text[start:start + limit]):
        depth += 1 if m.group(0) == "{" else -1
        if depth == 0:
            return text[start:start + m.start()]
    return None


_GET = re.compile(r"std\s*::\s*get\s*<\s*(\d+)\s*>\s*\(\s*(\w+)\s*\)")
_ITEM = re.compile(r"(?:(?:std::)?vector\s*<[^<>]*>\s*\(\s*(\w+)\s*\.\s*c?begin\s*\(\s*\)\s*,\s*\1\s*\.\s*c?end\s*\(\s*\)\s*\)|(\w+))")


def _split_top(text: str) -> list[str]:
    """Comma-separated items of a brace list, commas inside brackets kept."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [i.strip() for i in items if i.strip()]


def _tuple_element(text: str, index: int, tuple_name: str) -> str | None:
    """Element ``index`` of ``tuple_name = F();`` where F returns a brace list of local arrays
    (``return {a, b};``, ``std::array res{a, b}; return res;`` or vectors built from them), each
    filled only by ``a[i] = SOURCE[j];``: the SOURCE names (their union is the element's dtype set,
    whatever the combination order). None where F is anything else."""
    call = re.search(r"\b" + re.escape(tuple_name) + r"\s*=\s*(\w+)\s*\(\s*\)\s*;", text)
    if not call:
        return None
    head = re.search(r"\b" + re.escape(call.group(1)) + r"\s*\(\s*\)\s*\{", text)
    body = _block(text, head.end()) if head else None
    if body is None:
        return None
    ret = re.search(r"\breturn\s+([^;]*);", body)
    if not ret:
        return None
    listed = ret.group(1).strip()
    if re.fullmatch(r"\w+", listed):  # return res; with res declared as a brace list
        decl = re.search(r"\b" + listed + r"\s*(?:=\s*)?\{([^;]*)\}\s*;", body)
        listed = "{" + decl.group(1) + "}" if decl else ""
    brace = re.search(r"\{(.*)\}\s*$", listed, re.S)
    items = _split_top(brace.group(1)) if brace else []
    if index >= len(items):
        return None
    item = _ITEM.fullmatch(items[index])
    local = item and (item.group(1) or item.group(2))
    if not local:
        return None
    sources = []
    for m in re.finditer(r"\b" + re.escape(local) + r"\s*\[[^\]]*\]\s*=\s*([^;]*);", body):
        rhs = re.fullmatch(r"\s*(?:((?:ge::)?DT_[A-Z0-9_]+)|(\w+)\s*\[[^\]]*\])\s*", m.group(1))
        if not rhs:
            return None
        sources.append(rhs.group(1) or rhs.group(2))
    return " ".join(sources) or None


def _resolve(arg: str, names: "_Names", depth: int = 0) -> list[str] | None:
    """The DT names an argument denotes, or None when a name in it cannot be followed."""
    arg = _SEQUENCE.sub(lambda m: m.group(1), arg.strip())
    arg = _RANGE.sub(lambda m: m.group(1), arg)  # vector(V.begin(), V.end()) is V
    arg = _FILLED.sub(lambda m: m.group(1), arg)  # vector(V.size(), ge::DT_X) holds only DT_X
    dts = _DT.findall(arg)
    rest = _DT.sub("", arg).replace("ge::", "")
    idents = [w for w in re.findall(r"[A-Za-z_]\w*", rest) if w not in ("std", "vector", "DataType", "ge", "const", "static")]
    if not idents:
        return [DT_NAMES.get(d, d.lower()[3:]) for d in dts]
    if depth > 6:
        return None
    out = [DT_NAMES.get(d, d.lower()[3:]) for d in dts]
    for word in idents:
        if word not in names:
            return None
        sub = _resolve(names[word], names, depth + 1)
        if sub is None:
            return None
        out += sub
    return out


_HANDED = re.compile(r"\b([A-Za-z_]\w*)\s*\(\s*(?:this\s*->\s*)?$")


def _helper_calls(text: str, chain_start: int) -> list[re.Match]:
    """The ``.DataType/.DataTypeList/.Follow`` calls of the local helper a chain is handed to
    (``NAME(this->Output("z"))``): a lambda ``NAME = [..](P) {..}`` or a function ``NAME(P) {..}``
    whose body calls them on its parameter. Empty when the chain is not handed to such a helper."""
    handed = _HANDED.search(text, max(0, chain_start - 200), chain_start)
    if not handed:
        return []
    name = re.escape(handed.group(1))
    head = re.compile(r"\b" + name + r"\s*=\s*\[[^\]]*\]\s*\(([^()]*)\)[^{;]*\{|"
                      r"\b" + name + r"\s*\(([^()]*)\)\s*(?:const\s*)?\{")
    for m in head.finditer(text):
        params = re.findall(r"[A-Za-z_]\w*", m.group(1) if m.group(1) is not None else m.group(2))
        block = _block(text, m.end())
        if not params or block is None:
            continue
        end = m.end() + len(block)
        body = re.compile(r"\b" + re.escape(params[-1]) + r"\s*\.")
        if body.search(text, m.end(), end):
            return list(_METHOD.finditer(text, m.end(), end))
    return []


def read_opdef(path: Path, shown: str) -> OpDef:
    """Read one OpDef file; ``shown`` is how its path is printed in ``path:line``."""
    result = OpDef(shown)
    try:
        if path.stat().st_size > MAX_BYTES:
            result.problems.append(f"{shown}:1: OpDef larger than {MAX_BYTES} bytes, not read")
            return result
        raw = path.read_bytes().decode("utf-8-sig", "replace")
    except OSError as exc:
        result.problems.append(f"{shown}:1: cannot read the OpDef ({exc.strerror})")
        return result
    text = _blank(raw)
    names = _Names(text)
    result.socs = list(dict.fromkeys(_ADDCONFIG.findall(text)))
    chains = list(_CHAIN.finditer(text))
    for i, m in enumerate(chains):
        kind = "output" if "Output" in m.group(1) else "input"
        line = text.count("\n", 0, m.start()) + 1
        stop = chains[i + 1].start() if i + 1 < len(chains) else len(text)
        semi = text.find(";", m.end(), stop)
        body_end = semi if semi >= 0 else stop
        tensor = Tensor(m.group(2), kind, [], line)
        calls = list(_METHOD.finditer(text, m.end(), body_end))
        if not calls:
            calls = _helper_calls(text, m.start())
        for call in calls:
            end = _balanced(text, call.end())
            cline = text.count("\n", 0, call.start()) + 1
            if end < 0:
                tensor.unresolved = f"{shown}:{cline}: unbalanced .{call.group(1)}( for {kind} '{m.group(2)}'"
                break
            arg = text[call.end():end - 1]
            if call.group(1) == "Follow":
                tensor.follows = (_STRING.findall(arg) or [arg.strip()])[0]
                continue
            dtypes = _resolve(arg, names)
            if dtypes is None:
                tensor.unresolved = (f"{shown}:{cline}: {kind} '{m.group(2)}' dtypes '{' '.join(arg.split())[:60]}' "
                                     "not resolved (not a brace list, declared vector, alias, plain macro or std::get of a plain copy)")
            else:
                tensor.dtypes += dtypes
                for d in dtypes:
                    tensor.dtype_lines.setdefault(d, cline)
        if not calls:
            tensor.unresolved = f"{shown}:{line}: {kind} '{m.group(2)}' registers no .DataType or .Follow that this reader finds"
        result.tensors.append(tensor)
    by_name = {t.name: t for t in result.tensors}
    for t in result.tensors:  # a Follow takes the followed tensor's dtypes
        if t.follows and not t.dtypes and not t.unresolved:
            src = by_name.get(t.follows)
            if src and src.dtypes:
                t.dtypes = list(src.dtypes)
                t.dtype_lines = {d: t.line for d in t.dtypes}
            else:
                t.unresolved = f"{shown}:{t.line}: {t.kind} '{t.name}' follows '{t.follows}', whose dtypes are unknown"
    result.problems += [t.unresolved for t in result.tensors if t.unresolved]
    return result
