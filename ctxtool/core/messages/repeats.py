"""One uuid, one entry: the later copies of an entry are not read again.

Claude Code keys a transcript's entries by ``uuid`` when it loads one. A repeated ``/compact`` in
one Claude Code process (an open bug) writes the history before the boundary into the file again,
every entry with its own uuid, parentUuid and timestamp, so a file can hold the same entries
twice or more. ``estimate`` counts them once (the meter skips a uuid it has seen,
:meth:`ctxtool.core.sizing.meter.ContextMeter.repeated`), ``summarize`` and ``filter-compacted``
read the history once (:class:`FirstOfEach`), and ``validate`` warns about them. Formats whose
entries carry no ``uuid`` are not affected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def uuid_of(entry: Mapping[str, Any]) -> str | None:
    uuid = entry.get("uuid")
    return uuid if uuid.__class__ is str else None


def copy_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a copy shares with its original besides the uuid (its timestamp and kind): entries
    that share only a uuid (a hand-trimmed fixture) are told apart, as validate's
    duplicate-uuid does."""
    return (entry.get("timestamp"), entry.get("type"), entry.get("subtype"))


class FirstOfEach:
    """``first(entry)`` is False for a copy of an earlier entry: the same uuid and
    :func:`copy_key` (entries without a uuid are always first)."""

    def __init__(self) -> None:
        self.seen: dict[str, tuple[Any, ...]] = {}
        self.repeated = 0

    def __call__(self, entry: Mapping[str, Any]) -> bool:
        uuid = uuid_of(entry)
        if uuid is None:
            return True
        key = copy_key(entry)
        if self.seen.get(uuid) == key:
            self.repeated += 1
            return False
        self.seen.setdefault(uuid, key)
        return True


__all__ = ["FirstOfEach", "copy_key", "uuid_of"]
