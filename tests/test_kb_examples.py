"""The wrappers printed on the pages are held to the verifier: every "Do" wrapper audits clean,
and every rule code a "Don't" wrapper's comments name is one the audit really reports there.
Also runs the page helpers whose correctness the page claims (scalar promotion)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from kb_tools.audit.engine import audit_source

from conftest import REPO

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _wrapper_blocks():
    for page in sorted((REPO / "kb").glob("*/*.md")):
        text = page.read_text("utf-8")
        for m in _BLOCK.finditer(text):
            body = m.group(1)
            if not re.search(r"^def \w+_wrapper\(", body, re.M):
                continue
            lead = text[:m.start()].rstrip().split("\n\n")[-1].lstrip()
            label = "dont" if lead.startswith("Don") else "do" if lead.startswith("Do") else None
            line = text[:m.start()].count("\n") + 2
            yield pytest.param(page, line, label, body, id=f"{page.stem}:{line}")


def _audit(page: Path, line: int, body: str):
    source = body if re.search(r"^import torch", body, re.M) else "import torch\n" + body
    launchers = tuple(sorted(set(re.findall(r"\b(\w+_kernel)\b", body))))
    return audit_source(source, f"{page.name}:{line}", launchers=launchers).findings


@pytest.mark.parametrize("page,line,label,body", list(_wrapper_blocks()))
def test_page_wrapper_agrees_with_the_audit(page, line, label, body):
    codes = {f.code for f in _audit(page, line, body)}
    if label == "do":
        assert not codes, f"a Do wrapper breaks the boundary: {sorted(codes)}"
    else:
        claimed = set(re.findall(r"#.*?\b(WB1\d\d)\b", body))
        assert claimed <= codes, f"comments name {sorted(claimed - codes)}, which the audit does not report"


def test_every_do_and_dont_wrapper_was_found():
    labels = [p.values[2] for p in _wrapper_blocks()]
    assert labels.count("do") >= 8 and labels.count("dont") >= 10


def _page_function(rel: str, name: str):
    text = (REPO / "kb" / rel).read_text("utf-8")
    namespace: dict = {}
    exec(compile(next(b for b in _BLOCK.findall(text) if f"def {name}(" in b), rel, "exec"), namespace)  # noqa: S102
    return namespace[name]


DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.uint8, torch.int8,
          torch.int16, torch.int32, torch.int64, torch.bool)  # bool + int is int64 in torch


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("scalar", [2, -1, 2.5, float("nan"), True], ids=repr)
def test_scalar_result_dtype_on_the_page_matches_torch(dtype, scalar):
    scalar_result_dtype = _page_function("constraints/scalar-operand-promotion.md", "scalar_result_dtype")
    assert scalar_result_dtype(dtype, scalar) == torch.result_type(torch.empty(0, dtype=dtype), scalar)
