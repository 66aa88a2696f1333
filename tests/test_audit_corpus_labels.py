"""The real-code corpus holds labels only, well formed: at least 40 wrapper functions, each
pinned to a commit, its forbidden lines inside its own line range, a quarter held out."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

LABELS = Path(__file__).resolve().parents[1] / "benchmarks" / "audit_corpus" / "labels.yaml"
KEYS = {"repo", "commit", "framework", "path", "function", "lines", "forbidden", "heldout"}


def test_labels_are_labels_only_and_well_formed():
    labels = yaml.safe_load(LABELS.read_text())
    assert len(labels) >= 40
    for item in labels:
        assert set(item) == KEYS, item
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", item["repo"]) and re.fullmatch(r"[0-9a-f]{40}", item["commit"])
        first, last = item["lines"]
        assert 0 < first <= last and all(first <= n <= last for n in item["forbidden"]), item["function"]
        assert item["forbidden"] == sorted(set(item["forbidden"]))
    keys = [(x["repo"], x["path"], x["function"]) for x in labels]
    assert len(set(keys)) == len(keys)
    held = sum(x["heldout"] for x in labels)
    assert abs(held - len(labels) / 4) <= 1
    assert {x["framework"] for x in labels} == {"triton-ascend", "pypto"}
