"""The per-operator contract: operator specs, routing one operator to its pages
(KB_SELECTION.json), the KB_USAGE.json skeleton with its merge and check, and ``kbt build``.

Imports ``kb``, ``files`` and ``diagnostics``; never torch, numpy or numerics.
"""
