"""The entries ``summarize`` appends: Claude Code's compact boundary and summary, restored files,
the kept tail by reference (``compactMetadata.preservedSegment``, as Claude Code 2.1 keeps recent
messages); or the summary message that starts a message list.

New entries look like the ones Claude Code writes (see the corpus): the boundary restarts the chain
(``parentUuid: null``) and points back with ``logicalParentUuid``; the summary is a user entry
with ``isCompactSummary`` and ``isVisibleInTranscriptOnly``. Their uuids are derived from a digest
of the input (uuid5), so the same input and options give the same bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ctxtool.core.clearing.persist import truncate_text
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.core.summarizing.file_state import FileRecord

_NAMESPACE = uuid.UUID("6f1d3a52-5c7e-4f0b-9a51-7c2e8d0b4a10")  # ctxtool's uuid5 namespace
_COMMON_KEYS = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "agentId",
                "slug")
RESTORE_FILE_TOKENS = 5_000  # per restored file (Claude Code's limit)
RESTORE_TOTAL_TOKENS = 50_000  # all restored files together


def derived_uuid(digest: str, what: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{digest}:{what}"))


def iso_timestamp(now: datetime) -> str:
    """``2026-01-02T19:21:02.004Z``: the form Claude Code writes."""
    utc = now.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def common_fields(template: dict[str, Any] | None) -> dict[str, Any]:
    """The session fields new entries copy from the last entry of the conversation (a subagent's
    own transcript is a side chain, and its new entries are too)."""
    side = template is not None and template.get("isSidechain") is True
    fields: dict[str, Any] = {"isSidechain": side}
    for key in _COMMON_KEYS:
        if template is not None and key in template:
            fields[key] = template[key]
    return fields


def boundary_entry(*, common: dict[str, Any], logical_parent: str | None, digest: str,
                   timestamp: str, trigger: str, pre_tokens: int, duration_ms: int = 0,
                   preserved: dict[str, Any] | None = None) -> dict[str, Any]:
    """Claude Code's boundary (``durationMs``: how long the summary took, as 2.1 records it);
    ``postTokens``/``cumulativeDroppedTokens`` are filled in by :func:`set_post_tokens` once
    the result is measured."""
    return {"parentUuid": None, "logicalParentUuid": logical_parent, **common, "type": "system",
            "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
            "timestamp": timestamp, "uuid": derived_uuid(digest, "boundary"), "level": "info",
            "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens,
                                "durationMs": duration_ms, **(preserved or {})}}


def set_post_tokens(boundary: dict[str, Any], post_tokens: int, dropped_before: int) -> None:
    """Record the context after the compaction, and the tokens dropped by every compaction so
    far (``dropped_before`` from the previous boundary), as Claude Code does."""
    meta = boundary["compactMetadata"]
    meta["postTokens"] = post_tokens
    meta["cumulativeDroppedTokens"] = dropped_before + max(0, meta["preTokens"] - post_tokens)


def summary_entry(*, common: dict[str, Any], parent: str, digest: str, timestamp: str,
                  text: str) -> dict[str, Any]:
    return {"parentUuid": parent, **common, "type": "user",
            "message": {"role": "user", "content": text}, "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True, "uuid": derived_uuid(digest, "summary"),
            "timestamp": timestamp}


def restored_file_text(record: FileRecord, budget: int) -> str:
    """A file's latest known content as a note to the model, cut to ``budget`` tokens."""
    content = record.content or ""
    tokens = estimate_text_tokens(content)
    if tokens > budget:
        content = truncate_text(content, max(200, len(content) * budget // tokens))
    return (f"<system-reminder>\nRestored by ctxtool after compaction: the latest content of "
            f"{record.path} as this session's transcript recorded it. The file may have changed "
            f"on disk since; read it again before editing.\n</system-reminder>\n{content}")


def restored_files(records: Sequence[FileRecord], count: int) -> list[tuple[FileRecord, str]]:
    """(file, note text) for up to ``count`` files, newest first, within the token limits."""
    chosen: list[tuple[FileRecord, str]] = []
    total = 0
    for record in records:
        if len(chosen) >= count:
            break
        if record.content is None or not record.content.strip():
            continue
        text = restored_file_text(record, RESTORE_FILE_TOKENS)
        tokens = estimate_text_tokens(text)
        if total + tokens > RESTORE_TOTAL_TOKENS:
            break
        chosen.append((record, text))
        total += tokens
    return chosen


def meta_user_entry(*, common: dict[str, Any], parent: str, digest: str, what: str,
                    timestamp: str, text: str) -> dict[str, Any]:
    return {"parentUuid": parent, **common, "type": "user",
            "message": {"role": "user", "content": text}, "isMeta": True,
            "uuid": derived_uuid(digest, what), "timestamp": timestamp}


def preserved_segment(entries: Sequence[dict[str, Any]], kept: Sequence[dict[str, Any]],
                      tail_uuid: str | None) -> list[str]:
    """The uuids Claude Code keeps across the boundary for the kept messages, head first: the
    chain from ``tail_uuid`` (the last entry) back to the first kept message, everything between
    included, as Claude Code's own ``/compact`` records it. Empty when nothing is kept or the
    chain does not lead back to a kept message."""
    wanted = {e["uuid"] for e in kept if isinstance(e.get("uuid"), str)}
    if not wanted or tail_uuid is None:
        return []
    parents = {e["uuid"]: e.get("parentUuid") for e in entries if isinstance(e.get("uuid"), str)}
    walked: list[str] = []
    current: Any = tail_uuid
    while isinstance(current, str) and current in parents and current not in walked:
        walked.append(current)
        current = parents[current]
    on_path = [i for i, u in enumerate(walked) if u in wanted]
    return list(reversed(walked[:on_path[-1] + 1])) if on_path else []


def preserved_metadata(segment: Sequence[str], messages: Sequence[str],
                       anchor: str) -> dict[str, Any]:
    """``compactMetadata`` keys for messages kept by reference (Claude Code 2.1's own form): on
    loading, the segment head..tail is spliced in after ``anchor`` (the summary)."""
    if not segment:
        return {}
    return {"preservedSegment": {"headUuid": segment[0], "anchorUuid": anchor,
                                 "tailUuid": segment[-1]},
            "preservedMessages": {"anchorUuid": anchor, "uuids": list(messages),
                                  "allUuids": list(segment)}}


def summary_message(text: str) -> dict[str, Any]:
    """The user message that starts a compacted Anthropic or OpenAI message list."""
    return {"role": "user", "content": text}
