"""Strict file I/O, the ground floor: a user's text file, JSON and YAML that know their lines,
schema validation that names them, atomic writes, and the content-keyed cache.

Imports nothing of kb_tools but ``diagnostics``: every other package stands on this one.
"""
