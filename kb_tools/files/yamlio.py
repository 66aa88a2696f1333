"""YAML with the line of every key kept, and duplicate keys, aliases and deep nesting refused.

PyYAML silently keeps the last of two equal keys and forgets where a value came from;
a front-matter or spec error must name its line, so mappings load as ``LineDict``.

Aliases (``*name``) are refused outright, not bounded: no page, spec or sources file uses
one, and nine nested aliases turn 400 bytes into billions of values once anything walks,
validates or prints them ("billion laughs"). A bound on aliases would still let a few of
them multiply; refusing them costs a KB author nothing but spelling a value out twice.
"""

from __future__ import annotations

import yaml

from kb_tools.diagnostics import EXIT_USAGE, fail, shortened
from kb_tools.limits import limit

try:  # the C parser when libyaml is present; the constructor stays in Python either way
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader

# The largest real YAML is a 10 KB page; 256 KiB parses in well under a second even on a
# loaded machine, so a runaway or hostile file is refused before it costs anything.
MAX_YAML_BYTES = limit("OPKB_MAX_YAML_BYTES")  # 256 KiB unless set
# Real files nest four or five levels; Python's recursion limit would fail near 300.
MAX_NESTING = limit("OPKB_MAX_NESTING")  # 32 unless set


class LineDict(dict):
    """A dict that remembers the 1-based line of each key (``.lines``) and of itself."""

    __slots__ = ("line", "lines")  # no per-instance __dict__: a big file holds many of these

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.line = 1
        self.lines: dict = {}

    def line_of(self, key) -> int:
        return self.lines.get(key, self.line)


class LineList(list):
    """A list that remembers the line of each item."""

    __slots__ = ("line", "lines")

    def __init__(self, *args):
        super().__init__(*args)
        self.line = 1
        self.lines: list[int] = []

    def line_of(self, index: int) -> int:
        return self.lines[index] if 0 <= index < len(self.lines) else self.line


class _DuplicateKey(Exception):
    def __init__(self, key, line):
        super().__init__(key)
        self.key, self.line = key, line


class _Alias(Exception):
    """A node reached a second time: the composer hands an alias back as its anchor's node."""


class _TooDeep(Exception):
    def __init__(self, line):
        super().__init__(line)
        self.line = line


class _BadValue(Exception):
    """A scalar PyYAML cannot turn into a value (a date like 2024-02-30, an integer past
    Python's digit limit), with its line."""

    def __init__(self, line, why):
        super().__init__(why)
        self.line, self.why = line, why


# Python refuses to turn longer digit strings into integers (sys.int_info.default_max_str_digits).
MAX_INT_DIGITS = 4300


class _Loader(_BaseLoader):
    depth = 0

    def construct_object(self, node, deep=False):
        if node in self.constructed_objects or node in self.recursive_objects:
            raise _Alias()
        if self.depth >= MAX_NESTING:
            raise _TooDeep(node.start_mark.line + 1)
        self.depth += 1
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:
            spelled = shortened(node.value if isinstance(node.value, str) else "", 30)
            raise _BadValue(node.start_mark.line + 1, f"value {spelled!r} cannot be read: {exc}") from None
        finally:
            self.depth -= 1


def _construct_int(loader, node):
    digits = sum(c.isdigit() for c in node.value)
    if digits > MAX_INT_DIGITS:
        raise _BadValue(node.start_mark.line + 1, f"an integer of {digits} digits; at most {MAX_INT_DIGITS} are read")
    return loader.construct_yaml_int(node)


def _construct_mapping(loader, node):
    result = LineDict()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            key = str(key)
        if key in result:
            raise _DuplicateKey(key, key_node.start_mark.line + 1)
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader, node):
    result = LineList(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.lines = [child.start_mark.line + 1 for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_yaml(text: str, path, *, line_offset: int = 0, code: str = "YA001"):
    """Parse ``text`` (from ``path``); errors are KbErrors naming the file's own line.

    ``line_offset`` is added to every line: front matter starts after the ``---`` line.
    """
    size = len(text.encode("utf-8"))
    if size > MAX_YAML_BYTES:
        fail(path, None, code, f"YAML is {size} bytes, over the {MAX_YAML_BYTES}-byte limit for a KB file", EXIT_USAGE)
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as dup:
        fail(path, dup.line + line_offset, code, f"duplicate key {dup.key!r}")
    except _Alias:
        line = _first_alias_line(text)
        fail(path, line + line_offset if line else None, code,
             "YAML alias refused: spell the value out (aliases can expand a small file into gigabytes)")
    except _TooDeep as deep:
        fail(path, deep.line + line_offset, code, f"YAML nested more than {MAX_NESTING} levels deep")
    except _BadValue as bad:
        fail(path, bad.line + line_offset, code, bad.why)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = (mark.line + 1 + line_offset) if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        fail(path, line, code, f"YAML syntax error: {problem}")
    except yaml.YAMLError as exc:
        fail(path, None, code, f"YAML error: {exc}")
    if line_offset:
        _shift_lines(data, line_offset)
    return data


def _first_alias_line(text: str) -> int | None:
    """The line of the first ``*alias``; only called once an alias has been found, so the
    second pass over the events costs nothing on good input."""
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, yaml.AliasEvent):
            return event.start_mark.line + 1
    return None


def _shift_lines(node, offset: int) -> None:
    if isinstance(node, LineDict):
        node.line += offset
        node.lines = {k: v + offset for k, v in node.lines.items()}
        for value in node.values():
            _shift_lines(value, offset)
    elif isinstance(node, LineList):
        node.line += offset
        node.lines = [v + offset for v in node.lines]
        for value in node:
            _shift_lines(value, offset)


def line_at(data, path_parts) -> int | None:
    """The line of the deepest node reachable along ``path_parts`` (a jsonschema error path)."""
    line = getattr(data, "line", None)
    node = data
    for part in path_parts:
        if isinstance(node, LineDict) and part in node:
            line = node.line_of(part)
            node = node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and part < len(node):
            line = node.line_of(part)
            node = node[part]
        else:
            break
    return line
