"""The JSON Schemas shipped with ctxtool (top-level ``schemas/``, installed as ``ctxtool.schemas``).

Only reads files; imports no jsonschema. ``load_schema("claude-code-entry")`` returns the parsed
``claude-code-entry.schema.json``. It works the same from a source checkout, an editable install
and a wheel, because the files are package data read through :mod:`importlib.resources`.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import orjson

PACKAGE = "ctxtool.schemas"
SUFFIX = ".schema.json"


def schema_names() -> list[str]:
    """Names of every shipped schema (file names without ``.schema.json``), sorted."""
    return sorted(item.name[: -len(SUFFIX)] for item in resources.files(PACKAGE).iterdir()
                  if item.name.endswith(SUFFIX))


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``<name>.schema.json`` (cached: each file is read once per process).

    Raises FileNotFoundError for an unknown name. Treat the result as read-only.
    """
    resource = resources.files(PACKAGE).joinpath(name + SUFFIX)
    if not resource.is_file():
        raise FileNotFoundError(f"no schema named {name!r} in {PACKAGE} (have: {schema_names()})")
    schema = orjson.loads(resource.read_bytes())
    if not isinstance(schema, dict):
        raise ValueError(f"schema {name!r} is not a JSON object")
    return schema
