"""CPU STAND-IN for ``pypto_pro.language``: only ``jit`` and ``Ptr``, which the example uses.

A ``@pl.jit`` function becomes a :class:`CpuKernel`; launching it runs its body once on the
host with the tensors it was handed, and counts the launch so tests can see the wrapper
launches exactly once.
"""

from __future__ import annotations


class Ptr:
    """Annotation for a kernel argument that is a device tensor (a plain tensor on the CPU here)."""


class CpuKernel:
    def __init__(self, body, options: dict):
        self.body = body
        self.options = options
        self.launches = 0
        self.__name__ = body.__name__
        self.__doc__ = body.__doc__

    def __getitem__(self, grid):
        """``kernel[grid, block_dim]``: the launch configuration; the CPU body ignores it."""
        return self

    def __call__(self, *args):
        self.launches += 1
        return self.body(*args)


def jit(fn=None, **options):
    """``@pl.jit`` or ``@pl.jit(auto_mutex=True)``."""
    if fn is None:
        return lambda body: CpuKernel(body, options)
    return CpuKernel(fn, options)
