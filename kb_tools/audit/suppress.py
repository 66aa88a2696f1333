"""``# kbt: ignore[CODE,CODE]`` comments (the codes of ``codes.RULES``): which codes are waived on which line.

Only real comments count (read with ``tokenize``, so a string that contains the marker
waives nothing). Every waived finding is still listed in the summary: never silent.
"""

from __future__ import annotations

import io
import re
import tokenize

MARKER = "kbt:"
_IGNORE = re.compile(r"#.*?\bkbt:\s*ignore\[([A-Za-z0-9_,\s]+)\]")


def suppressions(text: str) -> dict[int, set[str]]:
    """line -> codes waived there. Cheap when the file has no marker at all."""
    if MARKER not in text:
        return {}
    found: dict[int, set[str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and MARKER in tok.string:
                m = _IGNORE.search(tok.string)
                if m:
                    codes = {c.strip().upper() for c in m.group(1).split(",") if c.strip()}
                    found.setdefault(tok.start[0], set()).update(codes)
    except (tokenize.TokenError, SyntaxError):  # ast.parse already accepted the file
        pass
    return found
