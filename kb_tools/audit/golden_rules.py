"""What the golden family's rules (GD1xx, ``kb_tools/audit/rules/gd*.py``) read alike in a CPU
golden or a third-party leg: whether a local module holds kernels, the literal casts a file
makes, the names bound to an input's dtype.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.casts import cast_target
from kb_tools.audit.family_context import FileContext, per_run
from kb_tools.audit.roles import KERNEL_FRAMEWORKS
from kb_tools.syntax import walk_nodes

MAX_LOCAL_MODULE_BYTES = 2_000_000  # a local module read for kernels: a bounded prefix
FRAMEWORK_IMPORT = re.compile(rf"^\s*(?:import|from)\s+(?:{'|'.join(KERNEL_FRAMEWORKS)})\b", re.M)
JIT_DECORATOR = re.compile(r"^\s*@\s*[\w.]*\bjit\b", re.M)


@per_run
@lru_cache(maxsize=1024)
def defines_kernels(path: Path) -> bool:
    """Whether a local module holds device code: it imports a kernel framework and decorates
    something with its ``jit``. Read as text, bounded: it is not audited here."""
    from kb_tools.files.text import read_head

    text = read_head(path, MAX_LOCAL_MODULE_BYTES)  # a FIFO named *.py is not a module: it must not block
    return bool(text and FRAMEWORK_IMPORT.search(text) and JIT_DECORATOR.search(text))


def literal_casts(ctx: FileContext):
    """(call, dtype) of each cast to a dtype written out in the file."""
    for node in ctx.nodes:
        if isinstance(node, ast.Call):
            cast = cast_target(node)
            if cast and cast[0]:
                yield node, cast[0]


def declared_names(fn: ast.AST) -> set[str]:
    """Names bound to an input's dtype (``declared = x.dtype``): what the leg narrows back to."""
    return {t.id for n in walk_nodes(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute)
            and n.value.attr == "dtype" for t in n.targets if isinstance(t, ast.Name)}
