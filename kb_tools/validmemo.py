"""Documents already found valid against a schema, remembered between runs by hash.

jsonschema's import costs several times a bare interpreter start, and ``kbt select`` would
pay it on every run to re-validate the same spec. A document is remembered by a SHA-256 over
the schema, the validating code and the document's canonical JSON, only when it is plain
JSON (string keys; strings, numbers, booleans, null, lists, mappings) so that two documents
that differ can never share a key; anything else is validated every time. The memo holds
hashes only: a damaged memo file is ignored, and the worst it can do is cost a validation.
"""

from __future__ import annotations

import atexit
import hashlib
import json

from kb_tools import kbcache

KIND, NAME = "valid", "memo"
MAX_KEYS = 2048  # the most recent are kept
_known: list[str] | None = None  # read from the cache once per process
_known_set: set[str] = set()
_added: list[str] = []


def _plain_json(data) -> bool:
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not all(isinstance(k, str) for k in node):
                return False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif node is not None and type(node) not in (str, int, float, bool):
            return False
    return True


def key(schema: dict, data) -> str | None:
    """The memo key of validating ``data`` against ``schema``; None when it cannot have one."""
    if not _plain_json(data):
        return None
    digest = hashlib.sha256(kbcache.code_digest("schema_check.py", "validmemo.py"))
    digest.update(json.dumps(schema, sort_keys=True).encode())
    digest.update(b"\x00" + json.dumps(data, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def _load() -> list[str]:
    global _known, _known_set
    if _known is None:
        raw = kbcache.read_entry(KIND, NAME)
        try:
            doc = json.loads(raw) if raw else []
        except ValueError:
            doc = []
        _known = [k for k in doc if isinstance(k, str)] if isinstance(doc, list) else []
        _known_set = set(_known)
    return _known


def known(memo_key: str) -> bool:
    _load()
    return memo_key in _known_set or memo_key in _added


def remember(memo_key: str) -> None:
    if not _added:
        atexit.register(_save)
    _added.append(memo_key)


def _save() -> None:
    keys = list(dict.fromkeys([*_load(), *_added]))[-MAX_KEYS:]
    kbcache.write_entry(KIND, NAME, json.dumps(keys).encode())
    _added.clear()
