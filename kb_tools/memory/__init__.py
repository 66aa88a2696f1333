"""Memory rules of seed 001 (aclnnBernoulli) made executable: the dense-alias predicate, the
high-to-low wave plan, in-place expansion of a packed mask, the tiling / UB budget, the
memory-parity protocol and Bernoulli by the aliased path.

``waves`` and ``tiling`` are pure integer arithmetic (the CLI imports them without numpy or
torch); the other modules import numpy / torch themselves.
"""
