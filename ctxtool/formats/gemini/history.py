"""What Gemini CLI sends the model for a session it resumes: the replayed records
(:mod:`.records`) turned into its history the way ``convertSessionToClientHistory``
(chunk-JDPZ4CE3.js:285870) turns them, as records again (a view, never written back).

- ``info``, ``error`` and ``warning`` records are not sent;
- a user record whose text is empty or starts with ``/``, ``?``, ``<session_context>`` or
  ``<hook_context>`` is not sent from the file. Gemini starts every chat with a fresh
  ``<session_context>`` (date, folders, a directory tree) instead: the view keeps the first one
  recorded in its place, as the nearest measure of it;
- a ``gemini`` record is its model turn, then, when its ``toolCalls`` hold results, a user
  content ``<id>_response`` of those results - although the user record that answered the call
  follows with the same results: the view holds that copy too, as Gemini sends it (twice, and
  three times once a resume wrote the ``<id>_response`` back, docs/gemini-format.md).

Records of the view that are not a line of their own (they live in a checkpoint's list, or are
such a response) are :class:`ViewRecord` entries naming the line they come from (for messages
that say ``file:line``) and, for the sizing, the parts the record's own model call was not sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtool.formats.gemini.parts import model_parts, part_list, result_parts, verbose_text
from ctxtool.formats.gemini.records import Conversation, LiveMessage
from ctxtool.types import Entry

SESSION_CONTEXT = "<session_context>"
_IGNORED_PREFIXES = ("/", "?", SESSION_CONTEXT, "<hook_context>")
RESPONSE_SUFFIX = "_response"


class ViewRecord(Entry):
    """A record of the view built from a line (not the line itself): ``source``/``lineno`` are
    the line's. ``resent`` (set on a model record that recorded its call's tokens) lists the
    result parts sent on resume before it that its call was not sent (see
    :func:`sent_records`)."""

    __slots__ = ("resent",)

    def __init__(self, data: dict[str, Any], source: str = "<input>", lineno: int = 0) -> None:
        super().__init__(data, None, source, lineno)
        self.resent: list[Any] = []


class SentView(list):  # type: ignore[type-arg]
    """The records sent (a list), with the session's ``metadata`` (``sessionId``,
    ``projectHash``...) that Gemini's rules read besides them."""

    def __init__(self, records: list[dict[str, Any]], metadata: dict[str, Any]) -> None:
        super().__init__(records)
        self.metadata = metadata


def is_ignored_user_text(text: str) -> bool:
    """Gemini's ``isIgnoredUserContent``: a user record it does not send from the file."""
    trimmed = text.strip()
    return not trimmed or trimmed.startswith(_IGNORED_PREFIXES)


def is_session_context(record: Mapping[str, Any]) -> bool:
    return (record.get("type") == "user"
            and verbose_text(record.get("content")).strip().startswith(SESSION_CONTEXT))


def has_model_parts(record: Mapping[str, Any]) -> bool:
    """True when a ``gemini`` record gives a model turn (content, thoughts or calls)."""
    return bool(model_parts(record))


def sent_parts(record: Mapping[str, Any]) -> list[Any]:
    """The parts a record of the view sends."""
    if record.get("type") == "gemini":
        return model_parts(record)
    return part_list(record.get("content"))


def _located(message: LiveMessage, entries: list[Any]) -> dict[str, Any]:
    """The record as an entry of the view: the line itself when it is one, else a
    :class:`ViewRecord` naming its line."""
    line = entries[message.where.line] if message.where.line < len(entries) else None
    if message.where.slot is None and line is message.record:
        return message.record
    return ViewRecord(message.record, getattr(line, "source", "<input>"),
                      getattr(line, "lineno", 0))


def _sent_as_record(conversation: Conversation, response_id: str) -> bool:
    """True when the run that wrote the live ``<id>_response`` record already sent it besides
    the copy it made from ``toolCalls``: a resume's checkpoint lists every content it sent, so
    such a record is listed twice in it (``resumed.jsonl:19``), once when it is new."""
    found = conversation.by_id().get(response_id)
    if found is None:
        return False
    lines = [where.line for where in found.writes if where.slot is not None]
    return len(lines) >= 2 and lines[-1] == lines[-2]


def sent_records(conversation: Conversation, entries: list[Any]) -> SentView:
    """The records Gemini CLI sends for ``conversation`` (replayed from ``entries``), in its
    order, the ``<id>_response`` copies included.

    The last model record carrying its call's ``tokens`` (the usage anchor) was sent the
    history before it with one copy fewer of some results than a resume sends now: the run
    that made the call sent the results of its own calls once, and a resume's checkpoint
    writes the ``<id>_response`` copy it sent as a record, which the next resume sends besides
    the copy it makes again. Those results are listed on it (:attr:`ViewRecord.resent`): what a
    resume sends beyond the call's ``tokens.input`` before it."""
    view: list[dict[str, Any]] = []
    copies: list[Any] = []
    anchor: tuple[ViewRecord, int] | None = None  # the last call's record, copies before it
    context_kept = False
    for message in conversation.messages:
        record = message.record
        kind = record.get("type")
        if kind == "user":
            if is_session_context(record) and not context_kept:
                context_kept = True
                view.insert(0, _located(message, entries))
            elif not is_ignored_user_text(verbose_text(record.get("content"))):
                view.append(_located(message, entries))
        elif kind == "gemini" and has_model_parts(record):
            turn = _located(message, entries)
            if isinstance(record.get("tokens"), dict):
                if not isinstance(turn, ViewRecord):
                    turn = ViewRecord(record, getattr(turn, "source", "<input>"),
                                      getattr(turn, "lineno", 0))
                anchor = (turn, len(copies))
            view.append(turn)
            results = result_parts(record.get("toolCalls"))
            if results and not _sent_as_record(conversation, f"{message.id}{RESPONSE_SUFFIX}"):
                copies.extend(results)
            if results:
                view.append(ViewRecord({"id": f"{message.id}{RESPONSE_SUFFIX}", "type": "user",
                                        "content": results}, getattr(turn, "source", "<input>"),
                                       getattr(turn, "lineno", 0)))
    if anchor is not None:
        anchor[0].resent = copies[:anchor[1]]
    return SentView(view, conversation.metadata)


__all__ = ["RESPONSE_SUFFIX", "SESSION_CONTEXT", "SentView", "ViewRecord", "has_model_parts",
           "is_ignored_user_text", "is_session_context", "sent_parts", "sent_records"]
