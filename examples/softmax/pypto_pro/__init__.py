"""CPU STAND-IN for the PyPTO-Pro package, for this worked example only.

The real ``pypto_pro`` compiles ``@pl.jit`` kernels for the accelerator. This stand-in gives
the same launch surface (``kernel[grid, block_dim](*args)`` and a plain call) and runs the
kernel's Python body on the host, so the example's wrapper, legs and tests run on any CPU.
Nothing outside ``examples/softmax`` imports it.
"""
