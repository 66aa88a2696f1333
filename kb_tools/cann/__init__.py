"""Real CANN operator folders read statically as specs (nothing in them is imported or run).

- ``find_operators(path)``: the operator folders (``<op>/`` with ``op_host/``) under an operator
  folder, a category folder or a whole repository, sorted.
- ``read_operator(folder, shown=None) -> OperatorFacts``: ``op``, ``folder`` (as ``shown``),
  ``dtypes`` (output dtypes registered over all SoC configs, TTK names), ``criteria``
  ({dtype: standard} that TTK reaches), ``uncovered`` (registered, no criterion), ``stale``
  (criterion, not registered), ``three_party`` (any reached criterion is ``cross_check``),
  ``untested`` (registered, no enabled case), ``golden_framework`` (torch, numpy, tf, mixed or
  unknown), ``sources`` (each fact's ``path:line``), ``golden_path``, and for golden rules
  ``outputs`` ({output name: dtypes}), ``mode`` (three_party/two_party), ``widening`` and
  ``widening_at`` (the kernel's plain widening: float32, none or unknown), ``socs``, and
  ``problems`` (one ``path:line`` line for each thing not read).

The folder as opkb's spec is ``kb_tools.contract.cann_spec.as_spec``; its judged golden is
``kb_tools.audit.cann_goldens`` (this room stands below both).
"""

from kb_tools.cann.folder import OperatorFacts, find_operators, listed_operators, read_listed, read_operator


__all__ = ["OperatorFacts", "find_operators", "listed_operators", "read_listed", "read_operator"]
