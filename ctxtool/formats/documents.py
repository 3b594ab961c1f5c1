"""Which files that are one JSON document an agent reads as a session (Gemini CLI's older
``session-*.json``): the reader (:mod:`ctxtool.formats.jsonl`) asks, the detector
(:mod:`ctxtool.formats.detect`), which knows the adapters, answers - set when it is imported.
The reader sits under the adapters and may not ask them itself; this module imports nothing,
so the detector sets the answer without loading the reader (``statusline`` starts fast).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Predicate = Callable[[dict[str, Any]], bool]
_predicate: Predicate | None = None  # None: no document is a session (it is not JSONL)


def read_with(predicate: Predicate) -> None:
    """Let the reader take a whole-file JSON object ``predicate`` accepts as one entry."""
    global _predicate
    _predicate = predicate


def is_session(document: dict[str, Any]) -> bool:
    """Whether an agent reads ``document``, a whole file, as one of its sessions."""
    return _predicate is not None and _predicate(document)


__all__ = ["is_session", "read_with"]
