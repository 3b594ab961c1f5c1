"""The usage of an OpenCode session, without its conversation: what ``cleanup --keep-usage``
keeps of a session before it goes.

One line per assistant message: the message record OpenCode stores (``message.data`` with its
``id`` and ``sessionID``) cut down to the fields usage tools read from it - the same names, so a
reader of OpenCode's message records reads these too::

    {"id": "msg_...", "sessionID": "ses_...", "role": "assistant", "time": {"created": ms, ...},
     "providerID": "...", "modelID": "...", "agent": "build", "mode": "build",
     "cost": 0.0123, "tokens": {"input": 10, "output": 5, "reasoning": 0,
                                "cache": {"read": 0, "write": 0}},
     "directory": "/work/project", "parentSessionID": "ses_..."}

``directory`` and ``parentSessionID`` (a subagent's session) come from the session record. Text,
errors, paths and summaries are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_KEPT = ("id", "sessionID", "role", "time", "providerID", "modelID", "agent", "mode", "cost",
         "tokens")


def usage_only(info: Mapping[str, Any], session: Mapping[str, Any]) -> dict[str, Any] | None:
    """The usage line of one message record, or None (a user message, no tokens)."""
    if info.get("role") != "assistant" or not isinstance(info.get("tokens"), dict):
        return None
    line = {key: info[key] for key in _KEPT if key in info}
    if isinstance(session.get("directory"), str):
        line["directory"] = session["directory"]
    if isinstance(session.get("parentID"), str):
        line["parentSessionID"] = session["parentID"]
    return line


__all__ = ["usage_only"]
