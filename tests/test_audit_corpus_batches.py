"""Blind batches of the real-code corpus (``benchmarks/audit_corpus/<batch>.yaml``) hold labels
only, well formed, all held out, and none of their files was in the corpus the audit was tuned on."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

CORPUS = Path(__file__).resolve().parents[1] / "benchmarks" / "audit_corpus"
KEYS = {"repo", "commit", "framework", "path", "function", "lines", "forbidden", "heldout", "batch"}
# Batch 3 on (issue 24): the strict-only subset of the forbidden lines, and the forbidden lines of
# the helpers and decorators the wrapper reaches (``path:line``), with an optional note. Batch 4 on, the
# strict-only subset may name reached lines too (as ``path:line``).
OPTIONAL = {"strict_only", "reached", "note"}


def test_blind_batches_are_well_formed_and_disjoint_from_the_tuned_files():
    tuned = {(x["repo"], x["path"]) for x in yaml.safe_load((CORPUS / "labels.yaml").read_text())}
    batches = sorted(CORPUS.glob("blind-*.yaml"))
    assert batches
    for batch in batches:
        labels = yaml.safe_load(batch.read_text())
        assert len(labels) >= 15, batch.name
        for item in labels:
            assert KEYS <= set(item) <= KEYS | OPTIONAL, item
            own = {n for n in item.get("strict_only", []) if isinstance(n, int)}
            assert own <= set(item["forbidden"]), item["function"]
            assert set(item.get("strict_only", [])) - own <= set(item.get("reached", [])), item["function"]
            assert all(re.fullmatch(r"[\w./-]+\.py:[1-9]\d*", r) for r in item.get("reached", [])), item["function"]
            assert item["batch"] == batch.stem and item["heldout"] is True
            assert re.fullmatch(r"[0-9a-f]{40}", item["commit"])
            assert item["framework"] in {"triton-ascend", "triton", "pypto"}  # triton: plain Triton for CUDA (batch 8)
            first, last = item["lines"]
            assert 0 < first <= last and all(first <= n <= last for n in item["forbidden"]), item["function"]
            assert item["forbidden"] == sorted(set(item["forbidden"]))
            assert (item["repo"], item["path"]) not in tuned, item["path"]
        keys = [(x["repo"], x["path"], x["function"], x["lines"][0]) for x in labels]  # two classes' forward: one file
        assert len(set(keys)) == len(keys)
