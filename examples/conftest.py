"""Shared by every worked example's tests (each example's own conftest.py picks its Triton
backend): one seed before every test, so that a failure reproduces (TS105)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(0)
