"""The names a source file uses in code, not in its comments or strings: a claim that a
symbol implements an invariant holds only where the code defines or uses it (issue 41).

Python is read from its syntax tree; other sources (C, C++, AscendC) have their comments
and string literals blanked before their identifiers are taken."""

from __future__ import annotations

import ast
import re


class Unreadable(ValueError):
    """The file does not parse: the message says where."""


def python_names(text: str) -> set[str]:
    """Every identifier the module binds or reads: definitions, arguments, imports,
    attribute names, keyword names, plain names."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise Unreadable(f"does not parse as Python (line {exc.lineno}: {exc.msg})") from None
    except (RecursionError, MemoryError, ValueError):
        raise Unreadable("does not parse as Python (nested too deeply)") from None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.keyword) and node.arg:
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.update((node.asname or node.name).split("."))
            names.update(node.name.split("."))
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


# A C-family comment or string/char literal, longest first so that "//" in a string stays a string.
_C_NOISE = re.compile(r'//[^\n]*|/\*.*?(?:\*/|\Z)|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_WORD = re.compile(r"[A-Za-z_]\w*")


def c_names(text: str) -> set[str]:
    """The identifiers of a C-family source once comments and literals are blanked."""
    return set(_WORD.findall(_C_NOISE.sub(" ", text)))


def code_names(name: str, text: str) -> set[str]:
    """The identifiers in code of the file called ``name``, by its suffix."""
    return python_names(text) if name.endswith((".py", ".pyi")) else c_names(text)
