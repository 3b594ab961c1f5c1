"""``ctxtool sessions``: every session on this machine, newest first, one row each."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime

import click

from ctxtool.cli import messages
from ctxtool.cli.options import now_option
from ctxtool.cli.session_files import list_sessions
from ctxtool.cli.streams import open_output
from ctxtool.cli.terminal import size, visible
from ctxtool.clock import parse_duration, parse_now, parse_timestamp
from ctxtool.core.sizing.sessions import SessionInfo, one_line
from ctxtool.errors import UsageError
from ctxtool.formats.jsonl import dumps_json


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
    $CODEX_HOME/sessions or ~/.codex/sessions) and OpenCode's (in
    $XDG_DATA_HOME/opencode/opencode.db, read-only), one row each: last activity, id, project
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
            out.write("".join(line + "\n" for line in render(rows)).encode())


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

LABEL_WIDTH = 70


def human_tokens(tokens: int) -> str:
    return f"{tokens / 1000:.1f}K" if tokens < 1_000_000 else f"{tokens / 1e6:.2f}M"


def _when(stamp: str | None) -> str:
    parsed = parse_timestamp(stamp)
    return parsed.astimezone().strftime("%Y-%m-%d %H:%M") if parsed else "-"


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


def render(rows: Iterable[SessionInfo]) -> list[str]:
    rows = list(rows)
    if not rows:
        return []
    home = os.path.expanduser("~")
    projects = [_project(r.project, home) for r in rows]
    width = min(40, max(map(len, projects)))
    lines = [f"{'LAST ACTIVE':<16}  {'ID':<8}  {'PROJECT':<{width}}  {'CONTEXT':>12}  "
             f"{'COMPACT':>7}  {'SIZE':>8}  TITLE / FIRST PROMPT"]
    for row, project in zip(rows, projects):
        if len(project) > width:
            project = "…" + project[-(width - 1):]
        compactions = "-" if row.compactions is None else str(row.compactions)
        lines.append(f"{_when(row.last_activity):<16}  {visible(row.id)[:8]:<8}  {project:<{width}}  "
                     f"{_context(row):>12}  {compactions:>7}  {size(row.size):>8}  "
                     f"{one_line(visible(one_line(row.label, len(row.label))), LABEL_WIDTH)}")
    return lines


__all__ = ["human_tokens", "render", "sessions_cmd"]
