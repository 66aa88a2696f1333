"""Documents already found valid against a schema, remembered between runs by hash.

jsonschema's import costs several times a bare interpreter start, and ``kbt select`` would
pay it on every run to re-validate the same spec. A document is remembered by a SHA-256 over
the schema, the validating code and the document's canonical JSON, only when it is plain
JSON (string keys; strings, numbers, booleans, null, lists, mappings) so that two documents
that differ can never share a key; anything else is validated every time. The memo holds
hashes only: a damaged memo file is ignored, and the worst it can do is cost a validation.
"""

from __future__ import annotations

import hashlib
import json

from kb_tools import kbcache

MEMO = kbcache.Memo("valid", max_items=4096)
_schema_digests: dict[int, tuple[dict, bytes]] = {}  # id -> (the schema, kept alive; its digest)


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
    digest = hashlib.sha256(_schema_digest(schema))
    digest.update(json.dumps(data, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()


def _schema_digest(schema: dict) -> bytes:
    """The digest of a schema and the validating code, computed once per schema object
    (schemas are module constants; a catalog build validates a thousand specs with one)."""
    held = _schema_digests.get(id(schema))
    if held is None or held[0] is not schema:
        if len(_schema_digests) > 64:  # schemas built afresh per call: do not hold them all
            _schema_digests.clear()
        digest = hashlib.sha256(kbcache.code_digest("schema_check.py", "validmemo.py"))
        digest.update(json.dumps(schema, sort_keys=True).encode() + b"\x00")
        held = _schema_digests[id(schema)] = (schema, digest.digest())
    return held[1]


def known(memo_key: str) -> bool:
    return MEMO.get(memo_key) is True


def remember(memo_key: str) -> None:
    MEMO.put(memo_key, True)
