"""validate: the rules a Gemini CLI session must keep across its lines, checked on the
conversation Gemini loads (:mod:`.records`, replayed as the lines come: only the live records are
kept). Claude Code's uuid chain and tool pairing do not apply; these do (each a stable code):

``gemini-metadata-missing`` (error)
    No line names the session (``sessionId`` and ``projectHash``): Gemini CLI then reads the
    file as one JSON document, fails, and cannot resume it.
``gemini-line-skipped`` (error)
    A JSON object that is none of Gemini's lines (a message record with a string ``id``,
    ``$set``, ``$rewindTo``, the metadata line): Gemini skips it, and what it holds is lost.
``gemini-rewind-unknown`` (error)
    A ``$rewindTo`` names no message loaded at that point: Gemini drops the whole
    conversation there.
``gemini-result-orphan`` (error)
    A ``functionResponse`` answers no ``functionCall`` sent before it (the API refuses such
    a history).
``gemini-call-unanswered`` (error)
    A call has no result although the model was called again after it (the API refuses a
    model turn after an unanswered call). The last turn's calls may wait for their results.

A repeated id is no problem: Gemini writes a model turn twice (without, then with its calls),
and the later record replaces the earlier.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxtool.formats.adapter import Finding
from ctxtool.formats.gemini.parts import model_parts, part_list, result_parts
from ctxtool.formats.gemini.records import REWIND, Conversation, Replay, line_kind


class GeminiChecks:
    """Feed every valid entry with :meth:`add`, then read the findings from :meth:`finish`."""

    def __init__(self) -> None:
        self.state = Replay()
        self.found: list[Finding] = []
        self.lines = 0

    def add(self, entry: dict[str, Any], line: int) -> None:
        self.lines += 1
        kind = line_kind(entry)
        if kind is None:
            self.found.append((line, "error", "gemini-line-skipped",
                               "Gemini CLI skips this line: it is no message record (a string "
                               "id), $set, $rewindTo or metadata line"))
            return
        if kind == REWIND and entry["$rewindTo"] not in self.state.live:
            self.found.append((line, "error", "gemini-rewind-unknown",
                               f"$rewindTo {entry['$rewindTo']!r} names no message loaded here: "
                               "Gemini CLI drops the whole conversation"))
        self.state.apply(entry, line)  # Where.line holds the line number

    def finish(self) -> Iterator[Finding]:
        yield from self.found
        conversation = Conversation(self.state.metadata, list(self.state.live.values()))
        if self.lines and not conversation.is_complete:
            yield (1, "error", "gemini-metadata-missing",
                   "no line names the session (sessionId and projectHash): Gemini CLI cannot "
                   "resume it")
        yield from _pairing(conversation)


def _call_ids(parts: list[Any]) -> list[str]:
    return [str(p["functionCall"]["id"]) for p in parts if isinstance(p, dict)
            and isinstance(p.get("functionCall"), dict) and p["functionCall"].get("id")]


def _response_ids(parts: list[Any]) -> list[str]:
    return [str(p["functionResponse"]["id"]) for p in parts if isinstance(p, dict)
            and isinstance(p.get("functionResponse"), dict) and p["functionResponse"].get("id")]


def _pairing(conversation: Conversation) -> Iterator[Finding]:
    """Calls and results in the order Gemini sends them (ids Gemini did not record are not
    checked)."""
    open_calls: dict[str, int] = {}  # call id -> line, not answered yet
    answered: set[str] = set()
    for message in conversation.messages:
        record, line = message.record, message.where.line
        if record.get("type") == "gemini":
            parts = model_parts(record)
            if parts:
                for call_id, call_line in list(open_calls.items()):
                    yield (call_line, "error", "gemini-call-unanswered",
                           f"call {call_id} has no result, but the model was called again "
                           f"(line {line})")
                    del open_calls[call_id]
            open_calls.update((call_id, line) for call_id in _call_ids(parts))
            responses = _response_ids(result_parts(record.get("toolCalls")))
        elif record.get("type") == "user":
            responses = _response_ids(part_list(record.get("content")))
        else:
            continue
        for response in responses:
            if response in open_calls or response in answered:
                open_calls.pop(response, None)
                answered.add(response)
            else:
                yield (line, "error", "gemini-result-orphan",
                       f"functionResponse {response} answers no call sent before it")


__all__ = ["GeminiChecks"]
