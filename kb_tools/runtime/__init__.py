"""The runtime view: which backends this machine offers, what a wrapper dispatches outside its
kernel (the trace), and wall-clock comparisons a notebook may show but never assert.

A ground of its own beside ``numerics`` and ``memory``: imports no KB, contract or audit module.
"""
