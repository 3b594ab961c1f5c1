"""``ctxtool statusline``: one short line for Claude Code's status line, from its JSON on stdin.

The line itself is made by :mod:`ctxtool.statusline`, which also runs a plain invocation before
click is imported (``ctxtool`` sends it there: it runs on every message). This command is what
``--help``, CliRunner tests and the arguments that parser leaves to click go through.
"""

from __future__ import annotations

import sys

import click

from ctxtool.errors import StoreError
from ctxtool.statusline import COLOR_CHOICES, DEFAULT_FORMAT, status_line


@click.command("statusline")
@click.argument("transcript", required=False, metavar="[FILE]",
                type=click.Path(dir_okay=False, path_type=str))
@click.option("--format", "template", default=DEFAULT_FORMAT, show_default=True,
              metavar="TEMPLATE",
              help="The line, with {fields}: model, model_id, tokens, context_tokens, window, "
                   "window_tokens, percent, to_compact, to_compact_tokens, compact_at, bar, "
                   "status, marker, method, cwd, dir, session, idle_at (when Claude Code's "
                   "idle compaction fires: local HH:MM, empty when it will not), idle_in "
                   "(minutes until then).")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colour by status (green, yellow past the warning, red past auto-compact): "
                   "auto = when stdout is a terminal. NO_COLOR turns it off.")
@click.option("--now", metavar="TIME",
              help="The time idle_in counts from (ISO-8601 or epoch seconds). Default: now.")
def statusline_cmd(transcript: str | None, template: str, color: str, now: str | None) -> None:
    """Print one line for Claude Code's status line: model, context, room left.

    Reads the JSON Claude Code passes a statusline command on stdin (transcript_path, model,
    cwd, context_window) and prints the context now as `ctxtool estimate` counts it - the
    last API call's usage plus what was added since (tool results not yet sent) - with the
    tokens left before auto-compact (where Claude Code compacts under the version that wrote
    the transcript and its settings.json: autoCompactWindow...) and a marker past the warning
    threshold. Only the end of
    the transcript is read, so it stays instant on any size. In ~/.claude/settings.json:
    {"statusLine": {"type": "command", "command": "ctxtool statusline --color always"}}
    Given a Gemini CLI session FILE, it reads the file whole and counts to where Gemini
    compresses.

    \b
        echo '{"transcript_path": "s.jsonl"}' | ctxtool statusline
        ctxtool statusline session.jsonl --format '{tokens} ({percent}%)'
        ctxtool statusline --format '{dir}: {bar} {percent}%{marker}' < status.json
        ctxtool statusline --format '{percent}% · idle compact {idle_at}' < status.json
    """
    line = status_line(transcript, template, color, now)
    if sys.stdout is None:  # started with stdout closed
        raise StoreError("cannot write the line: stdout is closed")
    sys.stdout.buffer.write(line)
