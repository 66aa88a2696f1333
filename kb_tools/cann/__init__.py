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
- ``as_spec(folder) -> OpSpec | None``: the folder as opkb's spec (dtypes, reached criteria,
  widening), with topology and target inferred and the reasons in its description; the spec
  discovery of select, usage, review, verify, audit and compare calls it for such a folder.
"""

from kb_tools.cann.folder import OperatorFacts, find_operators, read_operator


def as_spec(folder):
    """See kb_tools.cann.spec_view.as_spec (imported here on use: the contract package is heavier)."""
    from kb_tools.cann.spec_view import as_spec as convert
    return convert(folder)


__all__ = ["OperatorFacts", "as_spec", "find_operators", "read_operator"]
