"""Codex CLI's compactions: what it sends after the last ``compacted`` record, and the record
``summarize`` appends so that Codex resumes from the summary, as Codex writes its own."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ctxtool.formats.codex.rollout import (is_compacted, is_instruction, item_of,
                                           replacement_history)

if TYPE_CHECKING:  # imported where summarize writes (formats/compaction.py)
    from ctxtool.formats.compaction import CompactionLines, CompactionWrite

# What Codex writes in front of a compaction summary (``compacted.message`` and the user message
# that ends ``replacement_history``), as 0.169.0 does; the model reads it, so ours says the same.
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking"
    " process. You also have access to the state of the tools that were used by that language"
    " model. Use this to build on the work that has already been done and avoid duplicating"
    " work. Here is the summary produced by the other language model, use the information in"
    " this summary to assist with your own analysis:")


def as_line(item: dict[str, Any], like: Mapping[str, Any]) -> dict[str, Any]:
    """A ``response_item`` line holding ``item``, stamped like ``like`` (a view for sizing and
    summarizing what a compaction kept; never written)."""
    return {"timestamp": like.get("timestamp", ""), "type": "response_item", "payload": item}


def context_entries(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines whose items Codex sends next, in its order: after the last ``compacted``
    record, its ``replacement_history`` (as lines) then every line after it; a record without
    a replacement history keeps the user messages before it, then its summary (the record
    itself). Without a compaction: every line."""
    lines = list(entries)
    last = max((i for i, e in enumerate(lines) if is_compacted(e)), default=-1)
    if last < 0:
        return lines
    record = lines[last]
    history = replacement_history(record)
    if history is not None:
        return [as_line(item, record) for item in history] + lines[last + 1:]
    kept = [e for e in lines[:last] if (item_of(e) or {}).get("type") == "message"
            and (item_of(e) or {}).get("role") == "user"]
    return [*kept, record, *lines[last + 1:]]


def compaction_lines(summary: str, lead: list[dict[str, Any]], last_lines: Mapping[str, Any],
                     timestamp: str, tail: list[dict[str, Any]] | None = None,
                     ordinal: int | None = None) -> list[dict[str, Any]]:
    """What ``summarize`` appends so that Codex resumes from the summary: a ``compacted`` record
    (``message`` = Codex's prefix + the summary; ``replacement_history`` = the ``lead`` items
    (standing instructions), the summary as a user message as Codex writes its own, then the
    kept ``tail`` items), followed by copies of the last ``world_state`` and ``turn_context``
    lines (``last_lines`` by line type), as Codex does after its own compaction. ``ordinal``
    numbers them on from the file's last line, as Codex numbers its lines."""
    message = f"{SUMMARY_PREFIX}\n{summary}"
    summary_item = {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": message}]}
    payloads: list[tuple[str, Any]] = [("compacted", {
        "message": message, "replacement_history": [*lead, summary_item, *(tail or [])]})]
    payloads += [(kind, line["payload"]) for kind in ("world_state", "turn_context")
                 if isinstance(line := last_lines.get(kind), Mapping)]
    out: list[dict[str, Any]] = []
    for n, (kind, payload) in enumerate(payloads):
        line: dict[str, Any] = {"timestamp": timestamp}
        if ordinal is not None:
            line["ordinal"] = ordinal + n
        out.append({**line, "type": kind, "payload": payload})
    return out


def summary_lines(items: list[dict[str, Any]], head: list[dict[str, Any]],
                  tail: list[dict[str, Any]], summary: str, timestamp: str) -> list[dict[str, Any]]:
    """The lines appended to a rollout summarized up to ``head`` (``tail`` kept verbatim): the
    instructions still in view before it lead the replacement history (see
    :func:`compaction_lines`); every line of ``items`` stays in the file."""
    lead = [e["payload"] for e in context_entries(head) if is_instruction(e)]
    last = {e["type"]: e for e in items if e.get("type") in ("world_state", "turn_context")}
    kept = [item for e in tail if (item := item_of(e)) is not None]
    numbers = [n for e in items if isinstance(n := e.get("ordinal"), int)]
    return compaction_lines(summary, lead, last, timestamp, kept,
                            max(numbers) + 1 if numbers else None)


class CompactionTracker:
    """The meter's compaction tracker: a ``compacted`` record restarts the context with what it
    keeps (its blocks are its replacement history, so its own estimate is that)."""

    def note(self, entry: Mapping[str, Any], tokens: int) -> int | None:
        return tokens if is_compacted(entry) else None


class CodexWriter:
    """Appends a ``compacted`` record (see :func:`summary_lines`); every input line stays."""

    def add(self, entry: dict[str, Any]) -> None:
        pass  # the input is held: read whole when writing

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        from ctxtool.formats.compaction import CompactionLines  # see the imports

        assert compaction.items is not None and compaction.head is not None
        return CompactionLines(summary_lines(compaction.items, compaction.head, compaction.tail,
                                             compaction.summary, compaction.timestamp))
