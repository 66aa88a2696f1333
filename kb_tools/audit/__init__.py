"""The wrapper-boundary verifier (seed 003): a static audit of ``*_wrapper`` functions."""
