"""The ``microcompact_boundary`` entries ctxtool appends, and how ``restore`` takes them out.

``microcompact`` appends one such entry after clearing, shaped like Claude Code's own. Its uuid is
derived from its parent and the ids it lists (:func:`boundary_uuid`), so it is deterministic and
recognizable: ``restore`` drops the boundaries ctxtool wrote (they describe clearing that restore
undoes) and keeps every boundary Claude Code wrote. When the input's last line had no final
newline, the boundary carries :data:`NO_FINAL_NEWLINE` so restore can give that back too.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from ctxtool.core.chain import is_microcompact_boundary
from ctxtool.types import Entry

_NAMESPACE = uuid.UUID("5f0c3e1e-8d4b-4a55-9a51-6c7a1d3b2f10")
NO_FINAL_NEWLINE = "ctxtoolNoFinalNewline"


def boundary_uuid(parent: str | None, tool_ids: list[str]) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{parent}|{','.join(tool_ids)}"))


def is_own_boundary(entry: dict[str, Any]) -> bool:
    """True for a microcompact_boundary entry written by ``ctxtool microcompact``."""
    if not is_microcompact_boundary(entry):
        return False
    meta = entry.get("microcompactMetadata")
    ids = meta.get("compactedToolIds") if isinstance(meta, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return False
    parent = entry.get("parentUuid")
    return entry.get("uuid") == boundary_uuid(parent if isinstance(parent, str) else None, ids)


def without_own_boundaries(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``entries`` without ctxtool's microcompact boundaries (streaming, one entry held back)."""
    held: dict[str, Any] | None = None
    for entry in entries:
        if not getattr(entry, "invalid", False) and is_own_boundary(entry):
            if held is not None and entry.get(NO_FINAL_NEWLINE) is True:
                held = _without_final_newline(held)
            continue
        if held is not None:
            yield held
        held = entry
    if held is not None:
        yield held


def _without_final_newline(entry: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(entry, Entry) or entry.raw is None or not entry.raw.endswith(b"\n"):
        return entry
    raw = entry.raw
    trimmed = Entry(entry, raw=raw[:-1], source=entry.source, lineno=entry.lineno,
                    invalid=entry.invalid)
    trimmed.glued = entry.glued
    return trimmed


__all__ = ["NO_FINAL_NEWLINE", "boundary_uuid", "is_own_boundary", "without_own_boundaries"]
