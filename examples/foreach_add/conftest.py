"""Run the Triton kernel on the CPU through Triton's interpreter: the tests hand it CPU tensors.
Set before anything imports triton (Triton reads it at import and at ``@triton.jit``); a CUDA
run is another process, with the variable unset and CUDA tensors."""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
