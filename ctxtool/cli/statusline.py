"""``ctxtool statusline``: one short line for Claude Code's status line, from its JSON on stdin.

Claude Code runs the statusline command on every message: it must stay instant whatever the
transcript's size, so only the transcript's last lines are read (back to the last API call;
see ``core/sizing/session_tail.py``) and nothing heavy is imported (not even the input layer of the
other commands, ``cli/streams.py``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click
import orjson

from ctxtool.cli.tail_read import TailOptions, head_chain, tail_report
from ctxtool.cli.terminal import visible
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS
from ctxtool.core.sizing.status import StatusInput, read_status_input, status_fields
from ctxtool.core.sizing.tokens import thresholds
from ctxtool.errors import InputError, StoreError, UsageError
from ctxtool.types import CLAUDE_CODE

DEFAULT_FORMAT = "{model} {bar} {tokens}/{window} ({percent}%) · {to_compact} to compact{marker}"
COLORED = ("bar", "tokens", "percent", "marker")
COLORS = {"ok": "32", "warning": "33", "auto_compact": "31", "blocking": "1;31"}  # SGR codes


@click.command("statusline")
@click.argument("transcript", required=False, metavar="[FILE]",
                type=click.Path(dir_okay=False, path_type=str))
@click.option("--format", "template", default=DEFAULT_FORMAT, show_default=True,
              metavar="TEMPLATE",
              help="The line, with {fields}: model, model_id, tokens, context_tokens, window, "
                   "window_tokens, percent, to_compact, to_compact_tokens, compact_at, bar, "
                   "status, marker, method, cwd, dir, session.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
              show_default=True,
              help="Colour by status (green, yellow past the warning, red past auto-compact): "
                   "auto = when stdout is a terminal. NO_COLOR turns it off.")
def statusline_cmd(transcript: str | None, template: str, color: str) -> None:
    """Print one line for Claude Code's status line: model, context, room left.

    Reads the JSON Claude Code passes a statusline command on stdin (transcript_path, model,
    cwd, context_window) and prints the context now as `ctxtool estimate` counts it - the
    last API call's usage plus what was added since (tool results not yet sent) - with the
    tokens left before auto-compact and a marker past the warning threshold. Only the end of
    the transcript is read, so it stays instant on any size. In ~/.claude/settings.json:
    {"statusLine": {"type": "command", "command": "ctxtool statusline --color always"}}

    \b
        echo '{"transcript_path": "s.jsonl"}' | ctxtool statusline
        ctxtool statusline session.jsonl --format '{tokens} ({percent}%)'
        ctxtool statusline --format '{dir}: {bar} {percent}%{marker}' < status.json
    """
    given = StatusInput(transcript_path=transcript) if transcript else _stdin_input()
    # a cwd or model name (from the JSON or the transcript) must not steer the terminal
    fields = {k: visible(v) if isinstance(v, str) else v for k, v in _fields(given).items()}
    if _colored(color):
        code = COLORS[fields["status"]]
        fields.update({k: f"\x1b[{code}m{fields[k]}\x1b[0m" for k in COLORED if fields[k]})
    try:
        line = template.format_map(fields)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise UsageError(f"--format: {exc}", hint="fields: " + ", ".join(sorted(fields))) \
            from None
    if sys.stdout is None:  # started with stdout closed
        raise StoreError("cannot write the line: stdout is closed")
    sys.stdout.buffer.write(line.replace("\n", " ").encode() + b"\n")


def _stdin_input() -> StatusInput:
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: pipe Claude Code's statusline JSON on stdin, or give FILE")
    data = sys.stdin.buffer.read()  # small: cli/streams (and all it loads) is not needed
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not Claude Code's statusline JSON: {exc}", source="<stdin>") \
            from None
    if not isinstance(value, dict):
        raise InputError("not Claude Code's statusline JSON: expected an object",
                         source="<stdin>")
    return read_status_input(value)


def _fields(given: StatusInput) -> dict[str, Any]:
    """From the transcript's tail when there is one; else (a session not written yet) from
    what the JSON reports, or the assumed system prompt before any call."""
    path = given.transcript_path
    if path and os.path.isfile(path):
        try:
            with open(path, "rb") as handle:
                report, _ = tail_report(handle, chain=head_chain(handle), fmt=CLAUDE_CODE,
                                        source=path,
                                        options=TailOptions(model=given.model_id,
                                                            context_window=given.window,
                                                            env=os.environ))
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=path) from None
        return status_fields(used=report.context_tokens, limits=report.limits,
                             model=report.model, given=given, method=report.method)
    limits = thresholds(model=given.model_id, context_window_override=given.window,
                        env=os.environ)
    used = given.prompt_tokens if given.prompt_tokens is not None else DEFAULT_SYSTEM_TOKENS
    return status_fields(used=used, limits=limits, model=None, given=given,
                         method="claude-code" if given.prompt_tokens is not None
                         else "heuristic")


def _colored(choice: str) -> bool:
    if os.environ.get("NO_COLOR") or choice == "never":
        return False
    return choice == "always" or (sys.stdout is not None and sys.stdout.isatty())
