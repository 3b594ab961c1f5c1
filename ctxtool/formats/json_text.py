"""The JSON text of a value read from a transcript, for modules that must not load orjson.

The content helpers and the adapters turn tool inputs into text, to size or quote them. Every
command that parses a transcript has :mod:`ctxtool.formats.jsonl` (and orjson) loaded, and its
:func:`~ctxtool.formats.jsonl.dumps_json` writes the text, as before. ``ctxtool statusline`` reads
a few lines with the standard ``json`` module and loads neither: there the stdlib writes it, the
same text except for floats in exponent form (``1e-07`` for orjson's ``1e-7``), which only
changes a size estimate by a character.
"""

from __future__ import annotations

import json
import sys
from typing import Any

_JSONL = "ctxtool.formats.jsonl"


def dumps_json(value: Any) -> bytes:
    """Compact JSON, as :func:`ctxtool.formats.jsonl.dumps_json` writes it when loaded."""
    jsonl = sys.modules.get(_JSONL)
    if jsonl is not None:
        return jsonl.dumps_json(value)  # type: ignore[no-any-return]
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def loads_json(body: bytes) -> Any:
    """:func:`ctxtool.formats.jsonl.loads_json` (loads orjson: only the paths that parse tool
    arguments, never the statusline's, call it)."""
    from ctxtool.formats.jsonl import loads_json as exact

    return exact(body)


__all__ = ["dumps_json", "loads_json"]
