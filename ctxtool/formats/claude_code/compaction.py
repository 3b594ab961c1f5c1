"""What ``summarize`` appends to a Claude Code transcript: the compact boundary and the summary,
restored files, the kept tail by reference (``compactMetadata``'s preserved messages, in the form
the transcript's version writes: :func:`preserved_metadata`).

New entries look like the ones Claude Code writes (see the corpus): the boundary restarts the chain
(``parentUuid: null``) and points back with ``logicalParentUuid``; the summary is a user entry
with ``isCompactSummary`` and ``isVisibleInTranscriptOnly``. Their uuids are derived from a digest
of the input (uuid5), so the same input and options give the same bytes. The kept tail stays where
it is and the boundary keeps it by reference (Claude Code splices it in after the summary when it
loads the session): the file Claude Code itself would have after ``/compact``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxtool.formats.compaction import CONTINUE_NOTE, CompactionLines, CompactionWrite, derived_uuid
from ctxtool.formats.claude_code.chain import COMPACT_BOUNDARY, is_compact_boundary

_COMMON_KEYS = ("userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch", "agentId",
                "slug")


# Claude Code's note asking to carry on after the summary, by the version that writes it. The
# corpus's 2.0.76-2.1.42 summaries end with the first two (2.1.39 dropped the "it"), and only
# automatic ones; 2.1.330's and 2.1.332's manual /compact (tests/fixtures) and 2.1.332's code (the reactive
# path sets suppressFollowUpQuestions) end with the third for manual ones too. Versions between
# 2.1.42 and 2.1.330 are not pinned down: they get the older rule.
_OLD_NOTE = ("Please continue the conversation from where we left {it}off without asking the "
             "user any further questions. Continue with the last task that you were asked to "
             "work on.")
_NOTE_FOR_MANUAL_TOO = (2, 1, 330)


def version_tuple(version: Any) -> tuple[int, ...] | None:
    """``"2.1.39"`` -> (2, 1, 39); None for anything else."""
    if not isinstance(version, str):
        return None
    parts = version.split("-")[0].split(".")
    return tuple(int(p) for p in parts) if parts and all(p.isdigit() for p in parts) else None


def continue_note(version: Any, *, auto: bool) -> str | None:
    """The closing note of a summary written by Claude Code ``version`` (an unknown version:
    the newest rule), or None for none."""
    number = version_tuple(version)
    if number is None or number >= _NOTE_FOR_MANUAL_TOO:
        return CONTINUE_NOTE
    if not auto:
        return None
    return _OLD_NOTE.format(it="" if number >= (2, 1, 39) else "it ")


def common_fields(template: Mapping[str, Any] | None) -> dict[str, Any]:
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
            "subtype": COMPACT_BOUNDARY, "content": "Conversation compacted", "isMeta": False,
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


def meta_user_entry(*, common: dict[str, Any], parent: str, digest: str, what: str,
                    timestamp: str, text: str) -> dict[str, Any]:
    return {"parentUuid": parent, **common, "type": "user",
            "message": {"role": "user", "content": text}, "isMeta": True,
            "uuid": derived_uuid(digest, what), "timestamp": timestamp}


def preserved_segment(entries: Sequence[Mapping[str, Any]], kept: Sequence[Mapping[str, Any]],
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


# Which version writes which form of the kept messages (npm bundles, bisected): 2.1.76 is the
# first to write preservedSegment {headUuid, anchorUuid, tailUuid} and to read it (it relinks
# tail..head after the anchor); 2.1.141 the first to add preservedMessages {anchorUuid, uuids,
# allUuids}, which it reads first; 2.1.332 still writes both.
SEGMENT_FROM = (2, 1, 76)
MESSAGES_FROM = (2, 1, 141)


def preserved_metadata(segment: Sequence[str], messages: Sequence[str], anchor: str,
                       version: Any = None) -> dict[str, Any]:
    """``compactMetadata`` keys for messages kept by reference, as Claude Code ``version`` (the
    newest when unknown) writes them: on loading, the kept entries (``segment``: all of them,
    head first; ``messages``: those sent to the model) follow ``anchor`` (the summary). As
    2.1.332: the segment runs from the first to the last message (2.1.112: kept entry) and is
    left out when no message is kept; preservedMessages from 2.1.141 on."""
    if not segment:
        return {}
    number = version_tuple(version)
    ends = (messages[0], messages[-1]) if messages else (segment[0], segment[-1])
    meta: dict[str, Any] = {}
    if messages or (number is not None and number < MESSAGES_FROM):
        meta["preservedSegment"] = {"headUuid": ends[0], "anchorUuid": anchor,
                                    "tailUuid": ends[1]}
    if number is None or number >= MESSAGES_FROM:
        meta["preservedMessages"] = {"anchorUuid": anchor, "uuids": list(messages),
                                     "allUuids": list(segment)}
    return meta


def keeps_messages(version: Any) -> bool:
    """Claude Code ``version`` (the newest when unknown) reads messages kept by reference."""
    number = version_tuple(version)
    return number is None or number >= SEGMENT_FROM


class ClaudeCodeWriter:
    """Writes a compaction the way Claude Code's ``/compact`` does (module docstring). Reads of
    the main chain only what the new entries copy or point to: the last entry with a
    ``sessionId`` and a ``version`` (the fields to copy), the last uuid (the logical parent)
    and the dropped tokens the last boundary records; the chain itself only to keep a tail by
    reference."""

    def __init__(self) -> None:
        self.template: dict[str, Any] | None = None
        self.last_uuid: str | None = None
        self.dropped_before = 0  # cumulativeDroppedTokens of the last earlier boundary

    def add(self, entry: dict[str, Any]) -> None:
        # a line with a version over one without (2.1.332 ends a turn with last-prompt,
        # cost-state... lines that have a sessionId but no version, cwd or branch)
        if isinstance(entry.get("sessionId"), str) and (
                "version" in entry or self.template is None or "version" not in self.template):
            self.template = entry
        uuid_ = entry.get("uuid")
        if isinstance(uuid_, str):
            self.last_uuid = uuid_
        if is_compact_boundary(entry):
            meta = entry.get("compactMetadata")
            value = meta.get("cumulativeDroppedTokens") if isinstance(meta, dict) else None
            self.dropped_before = value if isinstance(value, int) and value > 0 else 0

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        out = CompactionLines([])
        tail = compaction.tail
        segment = preserved_segment(compaction.main or [], tail, self.last_uuid) if tail else []
        if tail and not segment:
            out.notes.append("the kept messages are not on the chain of the last entry: "
                             "none kept after the summary")
            out.kept_messages = 0
        listed = {e.get("uuid") for e in tail}
        kept = [u for u in segment if u in listed]
        common = common_fields(self.template)
        digest, stamp = compaction.digest, compaction.timestamp
        anchor = derived_uuid(digest, "summary")
        version = common.get("version")
        if segment and not keeps_messages(version):
            out.notes.append(f"Claude Code {version} does not keep messages across a compaction "
                             "(2.1.76 and later do): resumed by it, the summary stands alone")
        text = compaction.continuation(bool(segment), compaction.transcript_path,
                                       continue_note(version, auto=compaction.auto))
        boundary = boundary_entry(common=common, logical_parent=self.last_uuid, digest=digest,
                                  timestamp=stamp, trigger="auto" if compaction.auto else "manual",
                                  pre_tokens=compaction.pre_tokens,
                                  duration_ms=compaction.duration_ms,
                                  preserved=preserved_metadata(segment, kept, anchor, version))
        added = [boundary, summary_entry(common=common, parent=boundary["uuid"], digest=digest,
                                         timestamp=stamp, text=text)]
        for path, note in compaction.restored:
            added.append(meta_user_entry(common=common, parent=added[-1]["uuid"], digest=digest,
                                         what=f"restore:{path}", timestamp=stamp, text=note))
            out.restored.append(path)
        set_post_tokens(boundary, compaction.context_after(added), self.dropped_before)
        out.lines = added
        return out


__all__ = ["ClaudeCodeWriter", "boundary_entry", "common_fields", "continue_note",
           "derived_uuid", "keeps_messages", "meta_user_entry", "preserved_metadata",
           "preserved_segment",
           "set_post_tokens", "summary_entry", "version_tuple"]
