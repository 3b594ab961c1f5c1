"""The ``microcompact_boundary`` lines ctxtool appends to Claude Code transcripts, and how
``restore`` takes them out (the Claude Code adapter's clearing records).

``microcompact`` appends one such entry after clearing, shaped like Claude Code's own. Its uuid is
derived from its parent and the ids it lists (:func:`boundary_uuid`), so it is deterministic and
recognizable: ``restore`` drops the boundaries ctxtool wrote (they describe clearing that restore
undoes) and keeps every boundary Claude Code wrote. When the input's last line had no final
newline, the boundary carries :data:`NO_FINAL_NEWLINE` so restore can give that back too.

``snip`` and ``persist`` append the same entry (:func:`clearing_boundary`) when they shrank
content the last recorded API call still saw: its ``tokensSaved`` is what ``estimate``
subtracts from that call's usage (``ctxtool.core.clearing.boundary.AnchorSavings`` tracks it
while streaming).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ctxtool.formats.claude_code.chain import is_microcompact_boundary, relink
from ctxtool.types import Entry

if TYPE_CHECKING:
    from datetime import datetime

# Fields copied from the last entry onto an entry ctxtool appends, as Claude Code writes them.
ENVELOPE_KEYS = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "slug")

_NAMESPACE = "5f0c3e1e-8d4b-4a55-9a51-6c7a1d3b2f10"  # ctxtool's uuid5 namespace for these
NO_FINAL_NEWLINE = "ctxtoolNoFinalNewline"
# ctxtool's estimate of what a clearing took off the last call's prompt, beside Claude Code's own
# characters / 4 count in tokensSaved (estimate subtracts this one)
ESTIMATED_SAVED = "ctxtoolTokensSaved"
BOUNDARY_CONTENT = "Context microcompacted"


def boundary_uuid(parent: str | None, tool_ids: list[str]) -> str:
    import uuid  # here: the statusline loads this module, and uuid costs a few ms to import

    return str(uuid.uuid5(uuid.UUID(_NAMESPACE), f"{parent}|{','.join(tool_ids)}"))


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
    """``entries`` without ctxtool's microcompact boundaries (streaming, one entry held back).

    Claude Code parents the first entry it writes on a resumed session on the file's last line,
    which may be such a boundary: entries whose parent was a dropped boundary are re-pointed at
    the boundary's own parent, so the chain stays whole."""
    held: dict[str, Any] | None = None
    dropped: dict[str, str | None] = {}
    for entry in relink(_dropping(entries, dropped), dropped):
        if entry is _DROPPED_LAST:
            if held is not None:
                held = _without_final_newline(held)
            continue
        if held is not None:
            yield held
        held = entry
    if held is not None:
        yield held


_DROPPED_LAST: dict[str, Any] = {}  # marks a dropped boundary that ended the file without "\n"


def _dropping(entries: Iterable[dict[str, Any]],
              dropped: dict[str, str | None]) -> Iterator[dict[str, Any]]:
    """``entries`` less ctxtool's boundaries, each recorded in ``dropped`` (uuid -> parent)."""
    for entry in entries:
        if not getattr(entry, "invalid", False) and is_own_boundary(entry):
            key, parent = entry.get("uuid"), entry.get("parentUuid")
            if isinstance(key, str):
                dropped[key] = parent if isinstance(parent, str) else None
            if entry.get(NO_FINAL_NEWLINE) is True:
                yield _DROPPED_LAST
            continue
        yield entry


def _without_final_newline(entry: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(entry, Entry) or entry.raw is None or not entry.raw.endswith(b"\n"):
        return entry
    raw = entry.raw
    trimmed = Entry(entry, raw=raw[:-1], source=entry.source, lineno=entry.lineno,
                    invalid=entry.invalid)
    trimmed.glued = entry.glued
    return trimmed


# --- writing one -----------------------------------------------------------------------------------

def cleared_ids(entry: Mapping[str, Any]) -> list[str] | None:
    """The tool ids a ``microcompact_boundary`` lists (Claude Code shows their results
    cleared), or None for another line."""
    if not is_microcompact_boundary(entry):  # type: ignore[arg-type]
        return None
    metadata = entry.get("microcompactMetadata")
    ids = metadata.get("compactedToolIds") if isinstance(metadata, dict) else None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else None


def clearing_boundary(*, last: Mapping[str, Any] | None, ids: list[str], trigger: str,
                      pre_tokens: int, tokens_saved: int, now: datetime,
                      after: Mapping[str, Any] | None = None,
                      estimated_saved: int | None = None) -> dict[str, Any]:
    """The ``system``/``microcompact_boundary`` entry Claude Code appends after clearing, with
    a uuid ``restore`` recognizes. ``last`` is the last entry with a uuid (its parent; the
    fields it copies, :data:`ENVELOPE_KEYS`); ``after`` is the entry it follows: when that was
    a last line without a final newline, the boundary says so. ``tokens_saved`` is Claude
    Code's count (characters / 4) for microcompact; ``estimated_saved``, when given, ctxtool's
    estimate of the same, kept under :data:`ESTIMATED_SAVED` for ``estimate``."""
    last = last or {}
    parent = last["uuid"] if isinstance(last.get("uuid"), str) else None
    entry: dict[str, Any] = {"parentUuid": parent, **{k: last[k] for k in ENVELOPE_KEYS if k in last}}
    entry.update({
        "type": "system", "subtype": "microcompact_boundary", "content": BOUNDARY_CONTENT,
        "isMeta": False, "timestamp": iso_timestamp(now), "uuid": boundary_uuid(parent, ids),
        "level": "info",
        "microcompactMetadata": {
            "trigger": trigger, "preTokens": pre_tokens, "tokensSaved": tokens_saved,
            "compactedToolIds": ids, "clearedAttachmentUUIDs": []},
    })
    if estimated_saved is not None:
        entry["microcompactMetadata"][ESTIMATED_SAVED] = estimated_saved
    raw = getattr(after, "raw", None)
    # a truncated last line is written after the boundary (formats.jsonl.iter_lines_out)
    if raw is not None and not raw.endswith(b"\n") and not getattr(after, "partial", False):
        entry[NO_FINAL_NEWLINE] = True
    return entry


def iso_timestamp(moment: datetime) -> str:
    """``2026-01-21T01:17:39.305Z``, as Claude Code writes timestamps."""
    from datetime import timezone

    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


__all__ = ["BOUNDARY_CONTENT", "ENVELOPE_KEYS", "ESTIMATED_SAVED", "NO_FINAL_NEWLINE", "boundary_uuid", "cleared_ids",
           "clearing_boundary", "is_own_boundary", "iso_timestamp", "without_own_boundaries"]
