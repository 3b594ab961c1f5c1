"""Gemini CLI's compression, read and written: what ``summarize`` appends to a Gemini session,
and how ``filter-compacted`` and ``estimate`` recognise a compression, Gemini's own or ctxtool's.

Gemini CLI 0.61 compresses a chat (``ChatCompressionService.compress``, docs/gemini-format.md
"Compression") by asking its model for a ``<state_snapshot>`` of the older history, then
restarting the chat on ``[<session_context>, snapshot (user), "Got it. Thanks for the additional
context!" (model), kept history]`` and recording that list as a checkpoint line,
``{"$set": {"messages": [...], "lastUpdated": ...}}``, which replaces every message before it
(``tests/fixtures/gemini-cli-0.61.0/compressed.jsonl:20``). The kept history is written the way
the chat holds it: a model turn whose content carries its ``functionCall`` parts (no
``toolCalls``), its results as the user message that answered it, no ``tokens``.

``summarize`` writes the same checkpoint, appended after every input line (nothing is lost: the
file keeps all it had, as Gemini's own compression leaves it): the ``<session_context>`` the
conversation starts with, ctxtool's summary inside ``<state_snapshot>`` as a user message,
Gemini's acknowledgement, then the kept tail in Gemini's history form (:func:`history_records`).
Gemini CLI resumes from it as from its own (it reads the last checkpoint and what follows), and a
later compression of its own sees ctxtool's snapshot as "a previous <state_snapshot>" and
carries it forward (``hasPreviousSnapshot``, which tests ``includes("<state_snapshot>")``).

The summary goes inside ``<state_snapshot>`` as the summarizer wrote it (ctxtool's nine
sections), not re-cut into Gemini's XML sections: nothing in Gemini CLI parses the snapshot - the
resumed model reads it as the text of a user message, and the only code that looks inside is that
``includes`` test - so a mapping would lose text (the verbatim user messages of section 6 have
no Gemini section) and gain nothing. docs/summarize.md says so too.

New messages get ids derived from the input's digest (Gemini draws random ones), so the same
input gives the same bytes; kept messages keep their own ids (Gemini gives them new ones), so a
kept message can be traced to the line it came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ctxtool.formats.gemini.history import is_ignored_user_text, is_session_context
from ctxtool.formats.gemini.parts import (content_text, model_parts, part_list, result_parts,
                                          verbose_text)
from ctxtool.formats.gemini.records import SET, checkpoint_list, line_kind
from ctxtool.types import location_of

if TYPE_CHECKING:  # loaded when summarize writes, not with the adapter (every command)
    from ctxtool.formats.compaction import CompactionLines, CompactionWrite

SNAPSHOT_TAG = "<state_snapshot>"
SNAPSHOT_END = "</state_snapshot>"
#: the model turn Gemini CLI puts after the snapshot (chatCompressionService: extraHistory)
ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
_MESSAGE_TYPES = ("user", "gemini")
_AGENT_CONTEXT = ("<session_context>", "<hook_context>")


# --- one record -------------------------------------------------------------------------------------

def _is_user(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "user" and isinstance(record.get("id"), str)


def is_snapshot(record: Mapping[str, Any]) -> bool:
    """True for a compression summary: a user message holding ``<state_snapshot>`` (Gemini
    CLI's own test for an earlier snapshot)."""
    return _is_user(record) and SNAPSHOT_TAG in content_text(record.get("content"))


def snapshot_text(record: Mapping[str, Any]) -> str | None:
    """The text of a compression summary: what ``<state_snapshot>`` holds (the whole text when
    the tag is not closed), or None when ``record`` is not one."""
    if not is_snapshot(record):
        return None
    text = content_text(record.get("content"))
    inner = text.split(SNAPSHOT_TAG, 1)[1]
    return inner.split(SNAPSHOT_END, 1)[0].strip() if SNAPSHOT_END in inner else text.strip()


def is_acknowledgement(record: Mapping[str, Any]) -> bool:
    """True for the model turn Gemini CLI writes after a snapshot: its own words, no model
    call behind them."""
    return (record.get("type") == "gemini" and not record.get("toolCalls")
            and content_text(record.get("content")).strip() == ACKNOWLEDGEMENT)


def is_agent_context(record: Mapping[str, Any]) -> bool:
    """True for the context Gemini CLI puts in a user message itself (``<session_context>``,
    ``<hook_context>``): not the user's words."""
    return _is_user(record) and content_text(record.get("content")).lstrip().startswith(
        _AGENT_CONTEXT)


def is_context_message(record: Mapping[str, Any]) -> bool:
    """True for a user message Gemini CLI leaves out of the history it rebuilds on a resume:
    its own ``<session_context>`` and hook context, a slash command, ``?``, an empty one."""
    return _is_user(record) and is_ignored_user_text(verbose_text(record.get("content")))


# --- the history Gemini keeps -------------------------------------------------------------------------

def history_records(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``records`` (a conversation's messages, in order) as the messages Gemini CLI records
    after a compression: what its resume makes of them (``convertSessionToClientHistory``: info,
    error and warning messages and the user messages it ignores left out; a model turn's thoughts
    and ``toolCalls`` become parts of its content), written back as its chat recording writes a
    history (``{id, timestamp, type, content}``). A call's result stays the user message that
    answered it; only a result no later message holds is written as ``<id>_response``, as the
    resume does, and a message repeating results already given (an earlier resume's
    ``<id>_response``) is left out: no result is sent twice."""
    records = [r for r in records if r.get("type") in _MESSAGE_TYPES]
    answered = {call_id for r in records if r.get("type") == "user"
                for call_id in _response_ids(r.get("content"))}
    given: set[str] = set()  # results already in the output
    out: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") == "user":
            ids = _response_ids(record.get("content"))
            if not is_context_message(record) and not (ids and ids <= given
                                                       and _only_responses(record)):
                out.append(_message(record, "user", part_list(record.get("content"))))
                given |= ids
            continue
        parts = model_parts(record)
        if not parts:
            continue
        out.append(_message(record, "gemini", parts))
        results = result_parts([c for c in _calls(record) if str(c.get("id")) not in answered])
        if results:
            out.append({"id": f"{record['id']}_response", "timestamp": record.get("timestamp"),
                        "type": "user", "content": results})
    return out


def _message(record: Mapping[str, Any], kind: str, parts: list[Any]) -> dict[str, Any]:
    return {"id": record.get("id"), "timestamp": record.get("timestamp"), "type": kind,
            "content": parts}


def _calls(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls = record.get("toolCalls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _only_responses(record: Mapping[str, Any]) -> bool:
    return all(isinstance(p, dict) and "functionResponse" in p
               for p in part_list(record.get("content")))


def _response_ids(content: Any) -> set[str]:
    return {str(p["functionResponse"].get("id")) for p in part_list(content)
            if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)}


# --- compressions in a session's lines -------------------------------------------------------------

def is_compression_line(entry: Mapping[str, Any]) -> bool:
    """True for a checkpoint line whose message list holds a snapshot: the conversation Gemini
    loads starts over from a compression there (its own, ctxtool's, or one a resume wrote
    again)."""
    listed = checkpoint_list(entry) if line_kind(entry) == SET else None
    return listed is not None and any(isinstance(m, Mapping) and is_snapshot(m) for m in listed)


def compression_starts(entries: Iterable[Mapping[str, Any]]) -> Iterator[tuple[int, str | None]]:
    """(index, ``file:line``) of each line that completes a compression: the checkpoint (or,
    in a session written message by message, the record) where a snapshot first appears. Every
    resume writes the conversation again as a checkpoint, its snapshot under the same id: a
    snapshot seen before is the same compression."""
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        listed = checkpoint_list(entry) if line_kind(entry) == SET else None
        found = [m for m in (listed if listed is not None else [entry])
                 if isinstance(m, Mapping) and is_snapshot(m)]
        new = {str(m["id"]) for m in found} - seen
        if new:
            seen |= new
            yield index, location_of(entry)  # type: ignore[arg-type]


def count_compressions(entries: Iterable[Mapping[str, Any]]) -> int:
    """How many compressions the session's lines record (see :func:`compression_starts`)."""
    return sum(1 for _ in compression_starts(entries))


# --- summarize --------------------------------------------------------------------------------------

Replay = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


class GeminiWriter:
    """Appends one compression checkpoint, as Gemini CLI writes its own (module docstring).
    ``replay``: the adapter's, the conversation Gemini loads from a session's lines."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    def add(self, entry: dict[str, Any]) -> None:
        pass  # the session is held: replayed whole when writing

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        from ctxtool.formats.compaction import CompactionLines, derived_uuid  # see the imports

        assert compaction.items is not None
        conversation = self.replay(compaction.items)
        lead = _leading_context(conversation)
        digest, now = compaction.digest, compaction.timestamp
        snapshot = {"id": derived_uuid(digest, "gemini-snapshot"), "timestamp": now,
                    "type": "user", "content": [{"text": wrap_snapshot(compaction.summary)}]}
        thanks = {"id": derived_uuid(digest, "gemini-acknowledgement"), "timestamp": now,
                  "type": "gemini", "content": [{"text": ACKNOWLEDGEMENT}]}
        kept = history_records(compaction.tail)
        messages = [*lead, snapshot, thanks, *kept]
        return CompactionLines([{"$set": {"messages": messages, "lastUpdated": now}}],
                               kept_messages=len(kept))


def wrap_snapshot(summary: str) -> str:
    """The snapshot message's text: ``summary`` inside ``<state_snapshot>`` (an earlier
    snapshot's own tags, when the summarizer kept them, are not doubled)."""
    text = summary.strip()
    if text.startswith(SNAPSHOT_TAG) and text.endswith(SNAPSHOT_END):
        return text
    return f"{SNAPSHOT_TAG}\n{text}\n{SNAPSHOT_END}"


def _leading_context(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``<session_context>`` messages the conversation starts with (Gemini CLI keeps its
    environment message in front of a compressed history, and sends a fresh one on a resume)."""
    lead: list[dict[str, Any]] = []
    for record in conversation:
        if not is_session_context(record):
            break
        lead.append(record)
    return lead


__all__ = ["ACKNOWLEDGEMENT", "GeminiWriter", "SNAPSHOT_TAG", "compression_starts",
           "count_compressions", "history_records", "is_acknowledgement", "is_agent_context",
           "is_compression_line", "is_context_message", "is_snapshot", "snapshot_text",
           "wrap_snapshot"]
