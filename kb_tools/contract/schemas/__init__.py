"""The JSON Schemas (Draft 2020-12) for KB_SELECTION.json and KB_USAGE.json."""

import json
from functools import cache
from importlib import resources


@cache
def load(name: str) -> dict:
    """``load("kb_usage")`` -> the parsed schema shipped in this package."""
    return json.loads(resources.files(__package__).joinpath(f"{name}.schema.json").read_text("utf-8"))
