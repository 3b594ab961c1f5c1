"""``ctxtool sessions``: every session on this machine, newest first, one row each."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime

import click

from ctxtool.clock import parse_duration, parse_now, parse_timestamp
from ctxtool.core.sizing.sessions import SessionInfo, one_line
from ctxtool.errors import UsageError
from ctxtool.formats.jsonl import dumps_json
from ctxtool.io import messages
from ctxtool.io.options import now_option
from ctxtool.io.session_files import list_sessions
from ctxtool.io.streams import open_output
from ctxtool.io.terminal import shorten_middle, size, visible, width


@click.command("sessions")
@click.option("--project", metavar="DIR",
              help="Only the sessions started in DIR ('.' = the current directory).")
@click.option("--since", metavar="AGE|TIME",
              help="Only sessions active since then: an age (90m, 12h, 7d) or an ISO-8601 time.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="At most N sessions.")
@click.option("--archived", is_flag=True,
              help="Also Codex CLI's archived sessions ($CODEX_HOME/archived_sessions), which "
                   "its own resume picker leaves out.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per session, one per line (schemas/sessions-report).")
@click.option("-o", "--output", metavar="FILE", help="Write to FILE instead of stdout.")
@now_option
def sessions_cmd(project: str | None, since: str | None, limit: int | None, archived: bool,
                 as_json: bool, output: str | None, now: str | None) -> None:
    """List the sessions on this machine, newest first.

    Claude Code's sessions (under $CLAUDE_CONFIG_DIR or ~/.claude), Codex CLI's (under
    $CODEX_HOME/sessions or ~/.codex/sessions), OpenCode's (in
    $XDG_DATA_HOME/opencode/opencode.db, read-only) and Gemini CLI's (under
    $GEMINI_CLI_HOME/.gemini/tmp or ~/.gemini/tmp), one row each: last activity, id, project
    (its directory), context now and % of the window, compactions, size, and the title or
    first prompt. A transcript is read from its first and last lines only, an OpenCode
    session once from its database (a cache keeps the rows of sessions that did not change),
    so the listing does not slow down as sessions grow. Any id (or a unique start of one)
    can be given to the other commands in place of a file.

    \b
        ctxtool sessions --limit 10
        ctxtool sessions --project . --since 7d
        ctxtool sessions --json | jq -r 'select(.percent > 80) | .id'
    """
    cutoff = _since(since, now)
    found = list_sessions(os.environ, project=project, since=cutoff, archived=archived,
                          warn=messages.warn)
    rows = found[:limit] if limit else found
    with open_output(output) as out:
        if as_json:
            out.writelines(dumps_json(row.as_dict()) + b"\n" for row in rows)
        else:
            table = render(rows, width=width(), year=parse_now(now).astimezone().year)
            out.write("".join(line + "\n" for line in table).encode())


def _since(value: str | None, now: str | None) -> datetime | None:
    """--since as a time: an age before --now (a bare number: days), or an ISO-8601 time."""
    if value is None:
        return None
    try:
        return parse_now(now) - parse_duration(value, option="--since")
    except UsageError:
        stamp = parse_timestamp(value)
    if stamp is None:
        raise UsageError(f"--since: not an age or a time: {value!r}",
                         hint="use e.g. 90m, 12h, 7d or 2026-01-31T12:00:00Z")
    return stamp


# --- the table ------------------------------------------------------------------------------------

MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
PROJECT_MIN, TITLE_MIN = 10, 12  # below these a row wraps rather than say nothing


def human_tokens(tokens: int) -> str:
    return f"{tokens / 1000:.1f}K" if tokens < 1_000_000 else f"{tokens / 1e6:.2f}M"


def _when(stamp: str | None, year: int) -> str:
    """As ``ls -l`` dates a file: ``Nov 20 10:00`` this year, ``Nov 20  2025`` before."""
    parsed = parse_timestamp(stamp)
    if parsed is None:
        return "-"
    local = parsed.astimezone()
    tail = f"{local:%H:%M}" if local.year == year else f" {local.year}"
    return f"{MONTHS[local.month - 1]} {local.day:>2} {tail}"


def _project(path: str | None, home: str) -> str:
    """The project's directory, ``~`` for the home directory."""
    if not path:
        return "-"
    path = visible(path)
    return "~" + path[len(home):] if home != "/" and path.startswith(home + os.sep) else path


def _context(row: SessionInfo) -> str:
    if row.context_tokens is None:
        return "-"
    return f"{human_tokens(row.context_tokens)} {row.percent:.0f}%"


def render(rows: Iterable[SessionInfo], *, width: int = 100,
           year: int | None = None) -> list[str]:
    """One line per session, fitted to ``width`` columns as ``ls -l`` fits its own: fixed
    columns as wide as their widest cell, the project shortened in its middle, the title at
    its end: the project whole when the title keeps a third of what is left, else cut to
    leave it 2 * TITLE_MIN (never below PROJECT_MIN and TITLE_MIN)."""
    rows = list(rows)
    if not rows:
        return []
    year = datetime.now().year if year is None else year
    home = os.path.expanduser("~")
    cells = [(_when(r.last_activity, year), visible(r.id)[:8], _project(r.project, home),
              _context(r), "-" if r.compactions is None else str(r.compactions), size(r.size),
              visible(" ".join(r.label.split())))
             for r in rows]
    head = ("LAST ACTIVE", "ID", "PROJECT", "CONTEXT", "COMPACT", "SIZE", "TITLE / FIRST PROMPT")
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    fixed = sum(widths[i] for i in (0, 1, 3, 4, 5)) + 2 * 6
    room = max(PROJECT_MIN + TITLE_MIN, width - fixed)
    title = min(widths[6], max(2 * TITLE_MIN, room // 3))  # a third at least, when it needs it
    widths[2] = min(widths[2], max(PROJECT_MIN, room - title))
    widths[6] = max(TITLE_MIN, room - widths[2])
    right = (False, False, False, True, True, True, False)

    def line(values: tuple[str, ...]) -> str:
        parts = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)]
        return "  ".join(parts).rstrip()

    if widths[6] < len(head[6]):
        head = (*head[:6], "TITLE")
    lines = [line(head)]
    for c in cells:
        lines.append(line((*c[:2], shorten_middle(c[2], widths[2]), *c[3:6],
                           one_line(c[6], widths[6]))))
    return lines


__all__ = ["human_tokens", "render", "sessions_cmd"]
