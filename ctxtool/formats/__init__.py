"""Bytes <-> entries: JSONL framing, format detection, schemas.

The names below are imported on first use: importing any module of this package (an adapter, the
content helpers) must not load orjson, which ``ctxtool statusline`` never needs.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {"classify": "ctxtool.formats.detect", "detect_format": "ctxtool.formats.detect",
         "dumps_entry": "ctxtool.formats.jsonl", "iter_entries": "ctxtool.formats.jsonl",
         "iter_lines_out": "ctxtool.formats.jsonl", "write_entries": "ctxtool.formats.jsonl"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxtool.formats' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["classify", "detect_format", "dumps_entry", "iter_entries", "iter_lines_out",
           "write_entries"]
