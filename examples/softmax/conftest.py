"""Run the example's Triton kernel on the Triton interpreter where no CUDA device is present.

The variable must be set before ``triton.jit`` decorates the kernel, i.e. before the kernel
module is imported by a test.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
