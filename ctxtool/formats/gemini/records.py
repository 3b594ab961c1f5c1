"""Replaying a Gemini CLI session file into the conversation Gemini CLI itself loads on resume.

A session file (``~/.gemini/tmp/<project>/chats/session-*.jsonl``, docs/gemini-format.md) is a
log, not a list of messages: every line is applied in turn, as Gemini CLI 0.61's
``loadConversationRecord`` applies it (chunk-JDPZ4CE3.js:286006):

- ``{"$rewindTo": id}`` drops that message and every later one (all of them when the id is not
  there);
- a message record (a string ``id``) goes into a map by id: a repeated id replaces the earlier
  record *in its first place* (a model turn is written without, then with its ``toolCalls``);
- ``{"$set": {...}}`` merges into the metadata; when it holds ``messages`` (a checkpoint), the
  list replaces every message before it (it may list one id twice: the map folds them);
- the metadata line (strings ``sessionId`` and ``projectHash``) merges into the metadata, and
  its ``messages``, when it has some (a one-document session written as one line), are added;
- anything else, a line that does not parse included, is skipped.

The tests run in that order (a line with ``$rewindTo`` is a rewind whatever else it holds).
A file that ends without ``sessionId`` and ``projectHash`` is read by Gemini CLI as the older
one-document form (:func:`replay_document`).

Each live message keeps where it came from (:class:`Where`): the input line whose record Gemini
keeps, and its place in a checkpoint's list when it lives in one. A transform changes that line
(and only that one: every other line stays byte-identical); the earlier writes of the same id
(:attr:`LiveMessage.writes`) are dead for Gemini but hold the same content.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

REWIND = "rewind"
MESSAGE = "message"
SET = "set"
METADATA = "metadata"

#: Record types Gemini CLI writes (``MessageRecord.type``)
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


class Where(NamedTuple):
    """Where one write of a message is: ``line``, the index of its line among the entries
    replayed (0-based), and ``slot``, its index in that line's ``$set.messages`` (or the
    metadata line's ``messages``), or None when the line is the record itself."""

    line: int
    slot: int | None = None


@dataclass
class LiveMessage:
    """One message of the conversation Gemini CLI loads: the record it keeps (the last write of
    its id since the list was last replaced), where that record is, and every write of the id
    since then, oldest first (the last is :attr:`where`)."""

    id: str
    record: dict[str, Any]
    writes: list[Where] = field(default_factory=list)

    @property
    def where(self) -> Where:
        return self.writes[-1]

    @property
    def type(self) -> str | None:
        kind = self.record.get("type")
        return kind if isinstance(kind, str) else None


@dataclass
class Conversation:
    """The replayed session: its metadata (``messages`` left out) and its live messages in
    Gemini's order. ``checkpoint``: the index of the last line that replaced the whole list
    (None when none did); ``lines``: how many entries were replayed."""

    metadata: dict[str, Any]
    messages: list[LiveMessage]
    checkpoint: int | None = None
    lines: int = 0
    _by_id: dict[str, LiveMessage] | None = field(default=None, repr=False, compare=False)

    @property
    def session_id(self) -> str | None:
        value = self.metadata.get("sessionId")
        return value if isinstance(value, str) else None

    @property
    def is_complete(self) -> bool:
        """True when the lines name the session (``sessionId`` and ``projectHash``): else Gemini
        CLI reads the file as one JSON document instead."""
        return (isinstance(self.metadata.get("sessionId"), str)
                and isinstance(self.metadata.get("projectHash"), str))

    def records(self) -> list[dict[str, Any]]:
        return [message.record for message in self.messages]

    def by_id(self) -> dict[str, LiveMessage]:
        if self._by_id is None:
            self._by_id = {message.id: message for message in self.messages}
        return self._by_id


def line_kind(entry: Any) -> str | None:
    """What a parsed line is to Gemini CLI: :data:`REWIND`, :data:`MESSAGE`, :data:`SET`,
    :data:`METADATA`, or None (skipped). Tested in Gemini's order."""
    if not isinstance(entry, Mapping):
        return None
    if isinstance(entry.get("$rewindTo"), str):
        return REWIND
    if isinstance(entry.get("id"), str):
        return MESSAGE
    if isinstance(entry.get("$set"), (dict, list)):  # JavaScript: typeof [] is "object" too
        return SET
    if isinstance(entry.get("sessionId"), str) and isinstance(entry.get("projectHash"), str):
        return METADATA
    return None


def checkpoint_list(entry: Mapping[str, Any]) -> list[Any] | None:
    """The message list a ``$set`` line replaces the conversation with, or None."""
    updates = entry.get("$set")
    messages = updates.get("messages") if isinstance(updates, dict) else None
    return messages if isinstance(messages, list) else None


class Replay:
    """The state of one replay, fed a line at a time (:meth:`apply`): the map by id (a dict
    keeps Gemini's Map order) and the metadata."""

    def __init__(self) -> None:
        self.live: dict[str, LiveMessage] = {}
        self.metadata: dict[str, Any] = {}
        self.checkpoint: int | None = None

    def put(self, record: dict[str, Any], where: Where) -> None:
        message_id = record["id"]
        found = self.live.get(message_id)
        if found is None:
            self.live[message_id] = LiveMessage(message_id, record, [where])
        else:  # replaced in its first place
            found.record = record
            found.writes.append(where)

    def rewind(self, message_id: str) -> None:
        ids = list(self.live)
        if message_id in self.live:
            for dropped in ids[ids.index(message_id):]:
                del self.live[dropped]
        else:
            self.live.clear()

    def put_all(self, records: list[Any], line: int) -> None:
        for slot, record in enumerate(records):
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                self.put(record, Where(line, slot))

    def apply(self, entry: Any, line: int) -> None:
        kind = line_kind(entry)
        if kind == REWIND:
            self.rewind(entry["$rewindTo"])
        elif kind == MESSAGE:
            self.put(entry, Where(line))
        elif kind == SET:
            updates = entry["$set"]
            messages = checkpoint_list(entry)
            if messages is not None:
                self.live.clear()
                self.checkpoint = line
                self.put_all(messages, line)
            if isinstance(updates, dict):
                self.metadata.update((k, v) for k, v in updates.items() if k != "messages")
        elif kind == METADATA:
            self.metadata.update((k, v) for k, v in entry.items() if k != "messages")
            messages = entry.get("messages")
            if isinstance(messages, list):  # added, not replacing (as Gemini does)
                self.put_all(messages, line)


def replay(entries: Iterable[Any]) -> Conversation:
    """The conversation Gemini CLI loads from these lines (parsed entries, in file order; lines
    that did not parse, ``invalid`` entries, are skipped as Gemini skips them)."""
    state = Replay()
    count = 0
    for line, entry in enumerate(entries):
        count += 1
        if getattr(entry, "invalid", False):
            continue
        state.apply(entry, line)
    return Conversation(state.metadata, list(state.live.values()), state.checkpoint, count)


def replay_document(document: Any) -> Conversation | None:
    """The older one-document session (``session-*.json``: one JSON object with ``sessionId``
    and ``messages``, read by Gemini's ``parseLegacyRecordFallback``), or None when
    ``document`` is not one. Its messages are taken as listed; each ``Where`` is line 0 with the
    message's index in the document's list."""
    if not isinstance(document, dict) or "sessionId" not in document:
        return None
    state = Replay()
    state.metadata.update((k, v) for k, v in document.items() if k != "messages")
    messages = document.get("messages")
    if isinstance(messages, list):
        # Gemini takes the list as it is (no map): a repeated id stays twice
        live = [LiveMessage(str(m["id"]), m, [Where(0, slot)]) for slot, m in enumerate(messages)
                if isinstance(m, dict) and isinstance(m.get("id"), str)]
        return Conversation(state.metadata, live, None, 1)
    return Conversation(state.metadata, [], None, 1)


def every_record(entries: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The last record written of every message id in the file, live or not, in the order
    the ids first appear."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if getattr(entry, "invalid", False):
            continue
        kind = line_kind(entry)
        if kind == MESSAGE:
            found[entry["id"]] = entry
        listed = checkpoint_list(entry) if kind == SET else (
            entry.get("messages") if kind == METADATA else None)
        for record in listed if isinstance(listed, list) else ():
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                found[record["id"]] = record
    return found


def record_at(entries: list[Any], where: Where) -> dict[str, Any] | None:
    """The record at ``where`` among ``entries`` (the line itself, or its place in the line's
    list), or None when it is not there."""
    entry = entries[where.line] if 0 <= where.line < len(entries) else None
    if not isinstance(entry, Mapping):
        return None
    if where.slot is None:
        return entry  # type: ignore[return-value]
    listed = checkpoint_list(entry)
    if listed is None:
        listed = entry.get("messages") if isinstance(entry.get("messages"), list) else None
    if listed is None or not 0 <= where.slot < len(listed):
        return None
    found = listed[where.slot]
    return found if isinstance(found, dict) else None


__all__ = ["MESSAGE", "MESSAGE_TYPES", "METADATA", "REWIND", "Replay", "SET", "Conversation",
           "LiveMessage", "Where", "checkpoint_list", "every_record", "line_kind",
           "record_at", "replay", "replay_document"]
