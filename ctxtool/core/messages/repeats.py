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


class FirstOfEach:
    """``first(entry)`` is False for an entry whose uuid an earlier entry had (entries without
    a uuid are always first)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.repeated = 0

    def __call__(self, entry: Mapping[str, Any]) -> bool:
        uuid = uuid_of(entry)
        if uuid is None:
            return True
        if uuid in self.seen:
            self.repeated += 1
            return False
        self.seen.add(uuid)
        return True


__all__ = ["FirstOfEach", "uuid_of"]
