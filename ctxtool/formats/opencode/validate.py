"""validate: the rules an OpenCode session (ctxtool's OpenCode JSONL) must keep across lines.

OpenCode stores a tool call and its result in one part, so Claude Code's pairing rules do not
apply; these do (each a stable code):

``opencode-parent-missing`` (error)
    An assistant message's ``parentID`` names no message of the file: OpenCode cannot tell which
    user message it answers (``filterCompacted`` and the loop follow it).
``opencode-part-message`` (error)
    A part's ``messageID`` is not the id of the message it is stored with.
``opencode-callid-duplicate`` (error)
    Two tool parts share a ``callID``: the API rejects a history with two tool calls of one id.
``opencode-duplicate-id`` (error)
    Two messages share an id (OpenCode's storage would keep only one).
``opencode-session`` (warning)
    A message's ``sessionID`` is not the session line's id (lines from two sessions mixed).

Keeps a few ids per message, never the messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ctxtool.formats.adapter import Finding
from ctxtool.formats.opencode.view import is_message, is_session_line, obj, parts_of, string


class OpenCodeChecks:
    """Feed every valid entry with :meth:`add`, then read the findings from :meth:`finish`."""

    def __init__(self) -> None:
        self.messages: dict[Any, int] = {}  # message id -> line
        self.calls: dict[Any, int] = {}  # callID -> line
        self.parents: list[tuple[int, Any, Any]] = []  # (line, message id, parentID)
        self.session: Any = None
        self.found: list[Finding] = []

    def add(self, entry: dict[str, Any], line: int) -> None:
        if is_session_line(entry):
            self.session = obj(entry.get("session")).get("id")
            return
        if not is_message(entry):
            return
        info = entry["info"]
        ident = string(info.get("id"))  # the schema check reports an id of another type
        if ident in self.messages:
            self.found.append((line, "error", "opencode-duplicate-id", f"message id {ident} is "
                               f"already used by line {self.messages[ident]}"))
        else:
            self.messages[ident] = line
        if info.get("role") == "assistant" and isinstance(info.get("parentID"), str):
            self.parents.append((line, ident, info["parentID"]))
        if self.session is not None and info.get("sessionID") not in (None, self.session):
            self.found.append((line, "warning", "opencode-session", f"message {ident} belongs to "
                               f"session {info.get('sessionID')}, not {self.session}"))
        self._parts(entry, ident, line)

    def _parts(self, entry: dict[str, Any], ident: Any, line: int) -> None:
        for part in parts_of(entry):
            if "messageID" in part and part["messageID"] != ident:
                self.found.append((line, "error", "opencode-part-message",
                                   f"part {part.get('id')} has messageID {part['messageID']}, "
                                   f"but is stored with message {ident}"))
            call = part.get("callID")
            if part.get("type") != "tool" or not isinstance(call, str):
                continue
            if call in self.calls:
                self.found.append((line, "error", "opencode-callid-duplicate",
                                   f"tool callID {call} is used again (first at line "
                                   f"{self.calls[call]})"))
            else:
                self.calls[call] = line

    def finish(self) -> Iterator[Finding]:
        """Every finding, the parent checks included (a parent may come later in the file)."""
        yield from self.found
        for line, ident, parent in self.parents:
            if parent not in self.messages:
                yield (line, "error", "opencode-parent-missing", f"assistant message {ident} "
                       f"answers {parent}, which is not in this file")


__all__ = ["Finding", "OpenCodeChecks"]
