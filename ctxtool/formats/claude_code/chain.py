"""uuid / parentUuid bookkeeping and compact boundaries (Claude Code transcripts)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

COMPACT_BOUNDARY = "compact_boundary"
MICROCOMPACT_BOUNDARY = "microcompact_boundary"


def is_compact_boundary(entry: dict[str, Any]) -> bool:
    return entry.get("type") == "system" and entry.get("subtype") == COMPACT_BOUNDARY


def is_microcompact_boundary(entry: dict[str, Any]) -> bool:
    return entry.get("type") == "system" and entry.get("subtype") == MICROCOMPACT_BOUNDARY


def is_compact_summary(entry: dict[str, Any]) -> bool:
    return entry.get("type") == "user" and entry.get("isCompactSummary") is True


def last_uuid(entries: Iterable[dict[str, Any]]) -> str | None:
    """The uuid of the last entry that has one (the parent for an appended entry)."""
    found: str | None = None
    for entry in entries:
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            found = uuid
    return found


def relink(entries: Iterable[dict[str, Any]], dropped: dict[str, str | None]) -> Iterator[dict[str, Any]]:
    """Re-point ``parentUuid`` of entries whose parent was dropped to the nearest kept ancestor.

    ``dropped`` maps each dropped uuid to its own parentUuid; chains of dropped entries are
    followed. Only entries whose parent changes are copied.
    """
    for entry in entries:
        parent = entry.get("parentUuid")
        if isinstance(parent, str) and parent in dropped:
            seen: set[str] = set()
            target: str | None = parent
            while isinstance(target, str) and target in dropped and target not in seen:
                seen.add(target)
                target = dropped[target]
            entry = {**entry, "parentUuid": target}
        yield entry
