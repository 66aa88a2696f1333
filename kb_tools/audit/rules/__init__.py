"""One module per audit rule code (as ruff and TorchFix keep theirs): the module named
``<code>_<name>`` (``wb101_host_cast``) is the only place that decides when its code is
reported and what the finding says; ``kb_tools.audit.codes`` is the registry of every code's
name, level, summary, fix, pages and policies. The wrapper rules (WB) are asked by the shared
walk (``checker``, ``host_ops``, ``launches``) about each host operation it meets; the golden,
test and kernel rules (GD, TS, KN) read a file's ``FileContext`` and return their findings.
Adding a rule is one module here and one entry in the registry.
"""
