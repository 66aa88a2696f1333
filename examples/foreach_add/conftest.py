"""Run the Triton kernel on the CPU through Triton's interpreter unless a CUDA device is there.
Set before the kernel module is imported: Triton reads it when ``@triton.jit`` runs."""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
