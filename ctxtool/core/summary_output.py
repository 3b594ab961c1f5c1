"""The entries ``summarize`` appends: Claude Code's compact boundary and summary, restored files,
and the kept tail re-chained after them; or the summary message that starts a message list.

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

from ctxtool.core.blocks import iter_tool_uses, with_message_content
from ctxtool.core.file_state import FileRecord
from ctxtool.core.persist import truncate_text
from ctxtool.core.tokens import estimate_text_tokens
from ctxtool.types import CLAUDE_CODE

_NAMESPACE = uuid.UUID("6f1d3a52-5c7e-4f0b-9a51-7c2e8d0b4a10")  # ctxtool's uuid5 namespace
_COMMON_KEYS = ("userType", "cwd", "sessionId", "version", "gitBranch", "agentId", "slug")
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
                   timestamp: str, trigger: str, pre_tokens: int) -> dict[str, Any]:
    return {"parentUuid": None, "logicalParentUuid": logical_parent, **common, "type": "system",
            "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
            "timestamp": timestamp, "uuid": derived_uuid(digest, "boundary"), "level": "info",
            "compactMetadata": {"trigger": trigger, "preTokens": pre_tokens}}


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


def rechain(tail: Sequence[dict[str, Any]], *, parent: str, digest: str) -> list[dict[str, Any]]:
    """Copies of the kept entries, chained after ``parent``, with new uuids and tool ids.

    A copy whose original parent was kept points at that parent's copy, any other at the copy
    before it. Tool ids get a suffix (in the tool_use and in its result) so that no id appears
    twice in the file: the originals are still above the boundary.
    """
    renamed = {e["uuid"]: derived_uuid(digest, f"kept:{e['uuid']}") for e in tail
               if isinstance(e.get("uuid"), str)}
    tool_ids = {u.id: f"{u.id}_{derived_uuid(digest, 'kept-tools')[:8]}"
                for e in tail for u in iter_tool_uses(e, CLAUDE_CODE)}
    copies: list[dict[str, Any]] = []
    previous = parent
    for entry in tail:
        copy = _with_tool_ids(entry, tool_ids)
        old_parent = entry.get("parentUuid")
        copy["parentUuid"] = renamed.get(old_parent, previous) if isinstance(old_parent, str) else previous
        if isinstance(entry.get("uuid"), str):
            copy["uuid"] = renamed[entry["uuid"]]
            previous = copy["uuid"]
        source = entry.get("sourceToolAssistantUUID")
        if isinstance(source, str) and source in renamed:
            copy["sourceToolAssistantUUID"] = renamed[source]
        copies.append(copy)
    return copies


def _with_tool_ids(entry: dict[str, Any], tool_ids: dict[str, str]) -> dict[str, Any]:
    """A shallow copy of ``entry`` whose tool_use / tool_result ids are renamed."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not tool_ids:
        return dict(entry)
    blocks = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") in tool_ids:
            block = {**block, "id": tool_ids[block["id"]]}
        elif isinstance(block, dict) and block.get("type") == "tool_result" \
                and block.get("tool_use_id") in tool_ids:
            block = {**block, "tool_use_id": tool_ids[block["tool_use_id"]]}
        blocks.append(block)
    return with_message_content(entry, CLAUDE_CODE, blocks)


def summary_message(text: str) -> dict[str, Any]:
    """The user message that starts a compacted Anthropic or OpenAI message list."""
    return {"role": "user", "content": text}
