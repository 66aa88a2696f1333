"""The KB model: rule pages (parsed, validated, cached), ROUTER.md's tasks, the glossary, the
seed registry, the closed vocabularies, the routing map, and where the KB lives.

Imports only ``files`` and ``diagnostics``; never torch, numpy or numerics.
"""
