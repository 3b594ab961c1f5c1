"""A Claude Code transcript line reduced to what usage tools count (ccusage and its peers).

ccusage 18 counts every line whose ``message.usage`` has ``input_tokens`` and ``output_tokens``
and that carries a ``timestamp``, once per ``message.id`` + ``requestId`` (the first it reads),
priced by ``message.model`` (or ``costUSD`` when the line has one). The reduced line keeps exactly
that, plus the identifiers that say whose call it was; never ``message.content``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# top-level keys kept, in this order (identifiers, time, place, price; no text)
LINE_KEYS = ("type", "uuid", "timestamp", "sessionId", "agentId", "isSidechain", "cwd", "version",
             "requestId", "costUSD", "isApiErrorMessage")
MESSAGE_KEYS = ("id", "type", "role", "model", "usage")


def usage_only(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The line as a usage tool needs it, or None when it records no usage."""
    message = entry.get("message")
    if not isinstance(message, Mapping) or not isinstance(message.get("usage"), Mapping):
        return None
    line = {key: entry[key] for key in LINE_KEYS if key in entry}
    line["message"] = {key: message[key] for key in MESSAGE_KEYS if key in message}
    return line
