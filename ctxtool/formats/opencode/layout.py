"""What OpenCode (1.18.33) keeps of one session, in its database and beside it: the facts
``ctxtool cleanup`` needs to remove a session as OpenCode's own ``Session.remove`` would, and the
files it leaves behind.

In ``opencode.db`` (learned from the database the real client writes, ``sqlite_master``): the
``session`` row, then every table keyed by its id. ``Session.remove`` deletes the children
(``parent_id``) first, then the session row (the foreign keys cascade to ``message``, ``part``
through ``message``, ``todo``, ``session_share``, ``session_context_epoch``, ``session_input``
and ``session_message``), then its event log (``SyncEvent.remove``: ``event_sequence`` and
``event`` rows whose ``aggregate_id`` is the session id).

In its data folder (``$XDG_DATA_HOME/opencode``), files named after a session or one of its
tool calls, which ``Session.remove`` leaves behind:

    tool-output/tool_<id>                 a truncated tool output in full (the part's
                                          ``state.metadata.outputPath``; OpenCode itself
                                          removes these after 7 days)
    plans/<time.created>-<slug>.md        plan mode's file, for a project outside git
    storage/session_diff/<sessionID>.json the file changes a revert computed
"""

from __future__ import annotations

import os
import re
from typing import Any

# table -> the column that holds the session id, children before parents (``part`` points at
# ``message``), the session row itself last
SESSION_TABLES: dict[str, str] = {
    "part": "session_id",
    "message": "session_id",
    "todo": "session_id",
    "session_share": "session_id",
    "session_context_epoch": "session_id",
    "session_input": "session_id",
    "session_message": "session_id",
    "event": "aggregate_id",
    "event_sequence": "aggregate_id",
    "session": "id",
}
# tables whose rows hold a session's conversation (what its size is counted from)
CONTENT_TABLES = ("message", "part", "session_message", "event")

TOOL_OUTPUT = "tool-output"
_TOOL_OUTPUT_NAME = re.compile(r"^tool_[A-Za-z0-9]+$")
_SAFE = re.compile(r"^[A-Za-z0-9_-]+$")


def tool_output_rel(data: str, output_path: Any) -> str | None:
    """``tool-output/<name>`` for a part's ``outputPath`` that is a file OpenCode wrote directly
    in ``<data>/tool-output``; None for anything else (the path comes from the database, which a
    session's content can reach: nothing outside that folder is ever taken)."""
    if not isinstance(output_path, str):
        return None
    folder, name = os.path.split(output_path)
    if os.path.normpath(folder) != os.path.join(os.path.normpath(data), TOOL_OUTPUT):
        return None
    return f"{TOOL_OUTPUT}/{name}" if _TOOL_OUTPUT_NAME.match(name) else None


def side_file_rels(session_id: str, created: Any, slug: Any) -> list[str]:
    """The files named after a session that may exist in the data folder."""
    rels = []
    if _SAFE.match(session_id):
        rels.append(f"storage/session_diff/{session_id}.json")
    if isinstance(created, int) and isinstance(slug, str) and _SAFE.match(slug):
        rels.append(f"plans/{created}-{slug}.md")
    return rels


__all__ = ["CONTENT_TABLES", "SESSION_TABLES", "TOOL_OUTPUT", "side_file_rels",
           "tool_output_rel"]
