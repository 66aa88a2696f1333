"""kb/constraints/inplace-aliasing.md quotes torch's in-place semantics and prints an overlap check;
both are held here: torch still behaves as the page says, and the page's check agrees with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

PAGE = Path(__file__).resolve().parents[1] / "kb" / "constraints" / "inplace-aliasing.md"


def _page_check():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text("utf-8"), re.S)
    namespace: dict = {}
    exec(compile(next(b for b in blocks if "def check_inplace" in b), str(PAGE), "exec"), namespace)  # noqa: S102
    return namespace["check_inplace"]


def _torch_accepts(x, out) -> bool:
    try:
        torch.neg(x, out=out)
    except RuntimeError:
        return False
    return True


def test_torch_semantics_quoted_on_the_page():
    text = " ".join(PAGE.read_text("utf-8").split())
    a = torch.arange(6.0)
    with pytest.raises(RuntimeError) as partial:
        torch.add(a[1:], a[:-1], out=a[:-1])
    with pytest.raises(RuntimeError) as internal:
        torch.zeros(1).expand(4).add_(1)
    with pytest.raises(RuntimeError) as cast:
        torch.arange(3).add_(0.5)
    for exc in (partial, internal, cast):
        assert " ".join(str(exc.value).split(". ")[0].split(": ", 1)[-1].split()) in text
    full = torch.arange(4.0)
    torch.add(full, full, out=full)
    assert full.tolist() == [0.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("make", [
    lambda a: (a, a),                 # out is x: full overlap
    lambda a: (a[:3], a[3:]),         # disjoint halves of one storage
    lambda a: (a, torch.empty(6)),    # separate storage
    lambda a: (a[:-1], a[1:]),        # partial overlap
    lambda a: (a[1:4], a[2:5]),       # partial overlap, both inside
])
def test_page_check_agrees_with_torch(make):
    check_inplace = _page_check()
    x, out = make(torch.arange(6.0))
    if _torch_accepts(x, out):
        assert check_inplace(x, out) == (out.data_ptr() == x.data_ptr() and out.shape == x.shape)
    else:
        with pytest.raises(ValueError, match="partially overlaps"):
            check_inplace(x, out)


def test_page_check_rejects_an_expanded_output():
    with pytest.raises(ValueError, match="internal overlap"):
        _page_check()(torch.zeros(4), torch.zeros(1).expand(4))
