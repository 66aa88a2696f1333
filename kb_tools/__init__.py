"""opkb's tools: load the rule pages, route them to an operator, write and check
KB_SELECTION.json / KB_USAGE.json, audit wrappers, and run the proving notebooks."""

__version__ = "0.1.0"
CONTRACT_VERSION = 3
