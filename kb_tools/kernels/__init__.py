"""Triton kernels that show KB rules running, one module per rule family.

Each kernel is plain Triton: the source that compiles for CUDA and, through triton-ascend, for an
Ascend NPU runs here on the CPU in Triton's interpreter (the ``triton`` backend of
:mod:`kb_tools.runtime.backends`). Each module pairs the kernel with the host logic its page
prescribes and, where the page names one, the violation, so a notebook can run both and a test
can compare the kernel with its CPU path. Importing a module needs triton.
"""
