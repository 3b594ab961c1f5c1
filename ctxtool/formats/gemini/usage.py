"""The usage of a Gemini CLI session, without its conversation: what ``cleanup --keep-usage``
keeps of a session before it goes.

Gemini CLI 0.61.0 records the usage of each model call on the model message it answered with
(``recordMessageTokens``, chunk-JDPZ4CE3.js:286438): ``tokens`` = ``input`` (the prompt),
``output``, ``cached``, ``thoughts``, ``tool``, ``total``, with ``model``. One line per model
message, Gemini's own record cut down to the fields that say which call it was and what it
cost - the same names, so a reader of Gemini's records reads these too::

    {"id": "...", "timestamp": "2026-...Z", "type": "gemini", "model": "gemini-2.5-pro",
     "tokens": {"input": 11817, "output": 40, "cached": 0, "thoughts": 0, "tool": 0,
                "total": 11857},
     "sessionId": "...", "projectHash": "...", "directory": "/work/project",
     "parentSessionId": "..."}

Every model message the file ever recorded counts, once per id (its last write, as
:func:`~ctxtool.formats.gemini.records.every_record` finds it): a message a later checkpoint,
compression or ``/rewind`` dropped was still a call. ``directory`` (the project's folder) and
``parentSessionId`` (a subagent's session) come from where the file is. Text, thoughts, tool
calls and their results are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxtool.formats.gemini.records import METADATA, every_record, line_kind

_KEPT = ("id", "timestamp", "type", "model", "tokens")
_SESSION = ("sessionId", "projectHash")


def usage_only(entries: Iterable[Any], **where: str | None) -> list[dict[str, Any]]:
    """The usage lines of one session file's parsed lines (or of an older one-document
    session, given as its one document); ``where``: fields added to each line when given
    (``directory``, ``parentSessionId``)."""
    entries = list(entries)
    metadata = next((entry for entry in entries if line_kind(entry) == METADATA), {})
    session = {key: metadata[key] for key in _SESSION if isinstance(metadata.get(key), str)}
    session.update((key, value) for key, value in where.items() if value)
    return [{**{key: record[key] for key in _KEPT if key in record}, **session}
            for record in every_record(entries).values()
            if record.get("type") == "gemini" and isinstance(record.get("tokens"), dict)]


__all__ = ["usage_only"]
