"""``ctxtool cleanup`` on a terminal: one row per session (or loose item), what goes, what stays
and why, sizes, whose (the agent), and the run's summary as the last line. Programs get the JSONL records instead."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ctxtool.io.terminal import paint, shorten_middle, size, visible
from ctxtool.storage.retention import format_age

REMOVING = ("delete", "archive")
COLOURS = {"delete": "red", "archive": "yellow", "update": "cyan", "keep": "green"}


@dataclass
class Row:
    action: str
    age: int | None
    size: int
    label: str
    reason: str
    error: str | None = None
    session: bool = False  # the label is ``<project folder>/<session id>``, not a path
    agent: str = ""

    @property
    def order(self) -> tuple[int, int]:
        rank = 0 if self.action in REMOVING else 1 if self.action == "update" else 2
        return rank, -(self.age or 0)


def rows(records: Iterable[dict[str, Any]]) -> list[Row]:
    """One row per session, one per path of no session."""
    sessions: dict[str, list[dict[str, Any]]] = {}
    out = []
    for record in records:
        if record.get("session"):
            sessions.setdefault(record["session"], []).append(record)
        else:
            out.append(Row(record["action"], record["age_seconds"], record["bytes"],
                           record["path"], record["reason"], record.get("error"),
                           agent=record.get("agent", "")))
    out.extend(_session_row(session, group) for session, group in sessions.items())
    return sorted(out, key=lambda row: row.order)


def _session_row(session: str, group: list[dict[str, Any]]) -> Row:
    removing = [r for r in group if r["action"] in REMOVING]
    main = removing[0] if removing else group[0]
    errors = [r["error"] for r in group if r.get("error")]
    size = sum(r["bytes"] for r in (removing or group))
    return Row(main["action"] if not (removing and errors) else "failed",
               main["age_seconds"], size, _label(session, group), main["reason"],
               errors[0] if errors else None, session=True, agent=main.get("agent", ""))


def _label(session: str, group: list[dict[str, Any]]) -> str:
    """``<project folder>/<session id>``, the way a person finds it under ~/.claude/projects."""
    for record in group:
        if record["kind"] == "transcript":
            parts = record["path"].split("/")
            if len(parts) >= 3:
                return f"{parts[1]}/{session}"
    return session


def _short_reason(reason: str) -> str:
    """The AGE column already says how long: ``inactive for 40d (limit 30d)`` -> ``over 30d``."""
    reason = re.sub(r"^recent: inactive for [^()]*\(limit ([^)]+)\)", r"recent (limit \1)", reason)
    return re.sub(r"inactive for [^()]*\(limit ([^)]+)\)", r"inactive over \1", reason)


def _fit_label(row: Row, room: int) -> str:
    """The label in ``room`` columns. A session keeps both halves: its project folder cut in
    the middle and the start of its id (what ``ctxtool`` takes in place of a file); a path is
    cut in the middle."""
    label = visible(row.label)
    project, slash, session = label.rpartition("/")
    if len(label) <= room or not (row.session and slash):
        return shorten_middle(label, room)
    id_room = min(len(session), max(9, room // 3))
    if id_room < len(session):
        session = session[:id_room - 1] + "…"
    return shorten_middle(project, max(1, room - len(session) - 1)) + "/" + session


def _short_agent(agent: str) -> str:
    """``claude-code`` -> ``claude``: the table's narrowest unambiguous name (JSONL has it whole)."""
    return agent.split("-", 1)[0]


def _clip(text: str, room: int) -> str:
    return text if len(text) <= room else text[:room - 1] + "…"


def render(table: list[Row], footer: str, *, width: int, colour: bool) -> str:
    """The table as text, columns fitted to ``width``."""
    head = ("ACTION", "AGE", "SIZE", "AGENT")
    cells = [(row.action, format_age(timedelta(seconds=row.age)) if row.age is not None else "-",
              size(row.size), _short_agent(row.agent)) for row in table]
    widths = [max([len(h), *(len(c[i]) for c in cells)]) for i, h in enumerate(head)]
    fixed = sum(widths) + 2 * len(widths)
    room = max(20, width - fixed)
    label_room = min(max([len("SESSION OR PATH"), *(len(visible(r.label)) for r in table)]),
                     max(12, room * 2 // 3))
    reason_room = max(8, room - label_room - 2)
    lines = ["  ".join([*(h.ljust(w) for h, w in zip(head, widths)),
                        "SESSION OR PATH".ljust(label_room), "WHY"])]
    lines[0] = paint(lines[0].rstrip(), colour, bold=True)
    for row, cell in zip(table, cells):
        action = paint(cell[0].ljust(widths[0]), colour,
                       fg=COLOURS.get(row.action, "red"), bold=row.action in REMOVING)
        why = visible(row.error or _short_reason(row.reason))
        lines.append("  ".join([action, cell[1].rjust(widths[1]), cell[2].rjust(widths[2]),
                                cell[3].ljust(widths[3]),
                                _fit_label(row, label_room).ljust(label_room),
                                _clip(why, reason_room)])
                     .rstrip())
    lines.extend(paint(line, colour, bold=True)
                 for line in textwrap.wrap(visible(footer), width, subsequent_indent="  "))
    return "\n".join(lines) + "\n"
