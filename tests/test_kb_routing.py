"""The routing a reviewer signed: for each catalog operator, its exact required constraints
(each with the one-line reason it applies), plus the pins the KB issue states."""

from __future__ import annotations

import pytest

from conftest import REPO
from kb_tools.contract.selection import select
from kb_tools.contract.specs import load_spec
from kb_tools.kb.pages import load_kb
from kb_tools.kb.router import parse_router

KB = load_kb(REPO)

EVERY_OPERATOR = {
    "wrapper-boundary": "mandatory for architect, coder and verifier",
    "golden-follows-dut-widening": "every golden leg follows the DUT's widening outside float three-party",
    "tolerance-coverage": "every registered dtype needs a declared criterion",
    "golden-framework": "every golden is written in some framework: torch, or tf with a tf path",
    "semantic-alignment": "every operator declares exact, numerical or functional alignment",
    "op-prototype": "every operator registers a prototype with its dtype whitelist",
}
THREE_PARTY = {
    "golden-promote": "a float dtype declares cross_check: the golden casts nothing",
    "three-leg-comparison": "a float dtype declares cross_check: the case is three-party",
    "third-party-narrowing": "the GPU leg mirrors the DUT's widening and narrows at exit",
}
REDUCTION_FP = {
    "accumulator-precision": "a reduction over half dtypes / mixed precision accumulates wide",
    "reduction-order": "a floating reduction: summation order changes the bits",
}

PINNED = {
    "add": {**EVERY_OPERATOR,
            "integer-narrowing": "int8/int32/int64 registered; int8 widened to int32",
            "scalar-operand-promotion": "alpha is a scalar operand"},
    "floor_divide": {**EVERY_OPERATOR,
                     "integer-narrowing": "all-integer division: wrap and INT_MIN / -1",
                     "scalar-operand-promotion": "the divisor may be a scalar"},
    "cat": {**EVERY_OPERATOR,
            "integer-narrowing": "int8/int32/int64 registered",
            "tensorlist-fixed-slots": "the inputs are a TensorList",
            "kernel-bit-reinterpretation": "data movement copies elements as raw words in the kernel",
            "layout-format": "non-contiguous inputs must be handled in the kernel"},
    "bernoulli": {**EVERY_OPERATOR,
                  "integer-narrowing": "integer output dtypes registered",
                  "dense-alias": "the packed mask may alias the output only under five conditions",
                  # added with the page (issue 13): bernoulli_ writes its own input, so overlap rules apply
                  "inplace-aliasing": "an in-place form: out is self, partial overlap refused",
                  "wave-expansion": "in-place expansion must run high to low in waves",
                  "ub-tiling-budget": "the expansion kernel's UB budget per tile",
                  "memory-parity": "a memory optimisation is judged against an equivalent GPU call",
                  "random-op-verification": "a random operator is accepted by statistics",
                  "kernel-bit-reinterpretation": "the mask is read as bytes of a typed output; fp64 built from words",
                  "layout-format": "non-contiguous outputs take a fallback written in the kernel"},
    "softmax": {**EVERY_OPERATOR, **THREE_PARTY, **REDUCTION_FP,
                "platform-gated-conversion": "target a5 and mixed precision: pl.cast / vf.astype are gated",
                "layout-format": "softmax over a non-last dimension reads strided input"},
    "mean": {**EVERY_OPERATOR, **THREE_PARTY, **REDUCTION_FP,
             "platform-gated-conversion": "mixed precision needs on-chip conversion",
             "layout-format": "reduces over any dimension of a strided input"},
    "foreach_add": {**EVERY_OPERATOR, **THREE_PARTY,
                    "integer-narrowing": "int32 registered",
                    "scalar-operand-promotion": "the scalar variant adds a Python scalar",
                    "tensorlist-fixed-slots": "the operands are TensorLists: one launch over fixed slots",
                    "platform-gated-conversion": "half inputs accumulate in float32 on chip"},
}


def _selection(op):
    return select(KB, load_spec(REPO / "ops" / f"{op}.yaml"))


@pytest.mark.parametrize("op", sorted(PINNED))
def test_required_constraints_are_exactly_the_pinned_ones(op):
    sel = _selection(op)
    got = {v.page.id: v.reason for v in sel.constraints}
    assert set(got) == set(PINNED[op]), f"{op}: extra {sorted(set(got) - set(PINNED[op]))}, missing {sorted(set(PINNED[op]) - set(got))}"
    assert all(reason.strip() for reason in got.values())


def test_the_catalog_is_pinned_whole():
    assert {p.stem for p in (REPO / "ops").glob("*.yaml")} == set(PINNED)


@pytest.mark.parametrize("page", ["golden-promote", "three-leg-comparison", "third-party-narrowing"])
def test_three_party_pages_never_for_integer_or_two_party_operators(page):
    for op in ("add", "floor_divide", "cat", "bernoulli"):
        assert page not in {v.page.id for v in _selection(op).constraints}, op


def test_reasons_name_the_trigger_that_holds():
    reasons = {v.page.id: v.reason for v in _selection("softmax").constraints}
    assert "cross_check declared for float16, bfloat16, float32" in reasons["golden-promote"]
    assert "target a5" in reasons["platform-gated-conversion"]
    assert reasons["wrapper-boundary"].startswith("mandatory for architect, coder, verifier")


def test_every_page_is_reachable_from_a_router_row():
    routed = {ref for task in parse_router(REPO / "ROUTER.md") for ref in task.references}
    assert {p.rel_path for p in KB.pages.values()} - routed == set()


def test_the_issue_tasks_are_routed():
    wording = {t.wording for t in parse_router(REPO / "ROUTER.md")}
    for task in ("Decide what may run on the host", "Flatten a TensorList", "Write the CPU golden",
                 "Write the third-party leg", "Declare tolerances", "Choose the comparison criterion",
                 "Reduce device memory", "Expand a packed intermediate in place", "Verify a random operator",
                 "Plan tiling and the UB budget", "Lower an operator to the ISA", "Localise a numerical error",
                 "Measure performance"):
        assert task in wording, task


def test_router_skills_cover_the_four_owners():
    skills = {s for t in parse_router(REPO / "ROUTER.md") for s in t.skills}
    assert {"pypto-pro-op-design", "pypto-pro-op-develop", "pypto-pro-golden-generate", "op-review"} <= skills


# Router gaps closed by issue 13, one pin per gap with the page it must reach and why.
ROUTER_PINS = {
    "choose-criterion": {"constraints/semantic-alignment.md": "the alignment level decides the criterion",
                         "constraints/random-op-verification.md": "a random output is judged by statistics, not closeness"},
    "write-third-party-leg": {"constraints/integer-narrowing.md": "INT_MIN / -1 crashes the torch leg too"},
    "handle-degenerate-inputs": {"constraints/wrapper-boundary.md": "an empty tensor still launches once in a delivery",
                                 "constraints/tensorlist-fixed-slots.md": "an empty list or all-empty items",
                                 "patterns/exact-fast-paths.md": "p = 0 / 1 and the aclnn empty path"},
    "one-dtype-precision": {"constraints/accumulator-precision.md": "bf16/fp16 accumulate narrow where fp32 does not",
                            "constraints/platform-gated-conversion.md": "vf.exp has no BF16 row",
                            "constraints/tolerance-coverage.md": "an undeclared dtype falls to another criterion"},
    "criterion-per-dtype": {"constraints/tolerance-coverage.md": "the per-dtype criterion table (int8 included)"},
    "inplace-aliasing": {"constraints/inplace-aliasing.md": "input and output overlapping, out= the input"},
}


@pytest.mark.parametrize("task_id", sorted(ROUTER_PINS))
def test_router_gaps_are_closed(task_id):
    tasks = {t.id: t for t in parse_router(REPO / "ROUTER.md")}
    assert task_id in tasks
    missing = set(ROUTER_PINS[task_id]) - set(tasks[task_id].references)
    assert not missing, f"{task_id} no longer reaches {sorted(missing)}"
