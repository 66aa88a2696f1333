"""The wave plan of seed 001 §3.4.2 proved safe: exhaustively for n <= 4096 and every width,
property-based beyond; and the checker itself catches unsafe plans."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kb_tools.memory.waves import Wave, plan_problems, plan_waves

WIDTHS = (1, 2, 4, 8)


def test_exhaustive_small_n_every_width():
    for width in WIDTHS:
        for n in range(0, 4097):
            plan = plan_waves(n, width)
            assert plan_problems(plan, n, width) == [], (n, width)
            assert all(width * w.start >= -(-w.end // 8) for w in plan if not w.buffered)


@settings(max_examples=300, deadline=None)
@given(n=st.integers(min_value=4097, max_value=1 << 40), width=st.sampled_from(WIDTHS))
def test_large_n(n, width):
    plan = plan_waves(n, width)
    assert plan_problems(plan, n, width) == []
    assert plan[-1].buffered and plan[-1].end <= 256
    assert len(plan) <= 40  # each wave shrinks the range by about 8·width


def test_seed_example_shape():
    plan = plan_waves(4096 * 4096, 2)  # fp16 [4096, 4096]
    assert plan[0] == Wave(1048576, 16777216, False)
    assert [w.end for w in plan[1:]] == [w.start for w in plan[:-1]]


def test_checker_rejects_unsafe_plans():
    # one wave straight over everything: element 0's write covers unread mask bytes
    assert any("over unread mask bytes" in p for p in plan_problems([Wave(0, 4096, False)], 4096, 4))
    # d = 1, end 2048: start 256 writes from byte 256 = ceil(2048/8), just safe
    assert plan_problems([Wave(256, 2048, False), Wave(0, 256, True)], 2048, 1) == []
    # d = 1, end 4096: start 256 writes from byte 256 < 512 unread mask bytes
    assert any("over unread" in p for p in plan_problems([Wave(256, 4096, False), Wave(0, 256, True)], 4096, 1))
    assert any("not a multiple" in p for p in plan_problems([Wave(300, 4096, False), Wave(0, 300, True)], 4096, 8))
    assert any("not a final prefix" in p for p in plan_problems([Wave(0, 512, True)], 512, 4))
    assert any("unexpanded" in p for p in plan_problems([Wave(256, 512, False)], 512, 4))
    assert any("does not continue" in p for p in plan_problems([Wave(256, 500, False)], 512, 4))


def test_empty_and_bad_input():
    assert plan_waves(0, 4) == []
    assert plan_waves(256, 8) == [Wave(0, 256, True)]
    import pytest

    with pytest.raises(ValueError):
        plan_waves(-1, 4)
