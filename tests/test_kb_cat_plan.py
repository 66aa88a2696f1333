"""The copy plan printed on kb/patterns/cat-lowering.md is run as written and replayed against
torch.cat, so the page's corrected version of seed 004 §3.2 cannot drift into a wrong one."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from conftest import REPO
from kb_tools.kernels import page_code


def _page_plan():
    return page_code.load(REPO / "kb", "cat-lowering", "cat_copy_plan")["cat_copy_plan"]


def _example_harness():
    """examples/harness.py, whose concat_inputs the worked cat example's tests use too; loaded by
    path: the examples are not a package, and their folder on sys.path would shadow this run's modules."""
    spec = importlib.util.spec_from_file_location("example_harness", REPO / "examples" / "harness.py")
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    return harness


concat_inputs = _example_harness().concat_inputs


def _replay(plan, tensors):
    flats = [t.reshape(-1) for t in tensors]
    out = torch.full((sum(t.numel() for t in tensors),), -1, dtype=tensors[0].dtype)
    for i, src, dst, n in plan:
        out[dst:dst + n] = flats[i][src:src + n]
    return out


CASES = [
    ((2, 3), 0, (2, 5)), ((2, 3), 1, (3, 1)), ((2, 3), -1, (3, 4)),
    ((3, 4, 5), 1, (4, 2, 1)), ((3, 4, 5), 2, (5, 5)), ((3, 4, 5), 0, (3, 0, 2)),
    ((2, 1, 3), 1, (1, 0, 4)), ((4,), 0, (4, 7)),
]


@pytest.mark.parametrize("shape,dim,extents", CASES)
def test_page_plan_reproduces_torch_cat(shape, dim, extents):
    cat_copy_plan = _page_plan()
    tensors = concat_inputs(shape, dim, extents)
    plan = cat_copy_plan([t.shape for t in tensors], dim)
    assert torch.equal(_replay(plan, tensors), torch.cat(tensors, dim).reshape(-1))
    assert all(n > 0 for *_, n in plan)  # a zero-extent input yields no copy


def test_page_plan_rejects_bad_dim_and_mismatched_shapes():
    cat_copy_plan = _page_plan()
    with pytest.raises(IndexError):
        cat_copy_plan([(2, 3), (2, 3)], 2)
    with pytest.raises(ValueError):
        cat_copy_plan([(2, 3), (3, 3)], 1)
