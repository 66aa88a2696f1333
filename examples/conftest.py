"""Shared by every worked example's tests (each example's own conftest.py picks its Triton
backend): one seed before every test, so that a failure reproduces (TS105).

pytest's default import mode puts this folder (``harness.py``) and the example's own folder
(``make_tensors``, ``ops``, ``legs``) on ``sys.path``: one example a process, since every
example names its packages alike."""

import pytest
import torch


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(0)
