"""``ctxtool statusline`` without click or orjson: the line, and the command's fast start.

Claude Code runs the statusline command on every message, so its start-up is most of its cost:
``ctxtool`` (:mod:`ctxtool.__main__`) sends a plain ``statusline`` run here before it imports
click, and the transcript's few last lines are read with the standard ``json`` module (orjson's
import alone costs more than parsing them). Only the end of the transcript is read (back to the
last API call: :mod:`ctxtool.core.sizing.session_tail`), so the time does not grow with the file,
and the figure is ``estimate``'s. ``--help``, an option this parser does not know and any usage
error go to the click command (:mod:`ctxtool.cli.statusline`), which prints the same line through
:func:`status_line`.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Iterator
from datetime import datetime
from typing import Any, BinaryIO

from ctxtool.clock import parse_now
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS
from ctxtool.core.sizing.session_tail import (HEAD_BYTES, TailOptions, first_chain,
                                              report_of_tail, view_report)
from ctxtool.core.sizing.status import StatusInput, read_status_input, status_fields
from ctxtool.core.sizing.tokens import thresholds
from ctxtool.errors import CtxtoolError, ExitCode, InputError, StoreError, UsageError
from ctxtool.formats.detect import classify
from ctxtool.formats.registry import adapter_for
from ctxtool.printable import visible
from ctxtool.storage.claude_settings import read_settings
from ctxtool.storage.tail import iter_head_lines, iter_lines_reversed
from ctxtool.types import CLAUDE_CODE

DEFAULT_FORMAT = "{model} {bar} {tokens}/{window} ({percent}%) · {to_compact} to compact{marker}"
COLORED = ("bar", "tokens", "percent", "marker")
COLORS = {"ok": "32", "warning": "33", "auto_compact": "31", "blocking": "1;31"}  # SGR codes
COLOR_CHOICES = ("auto", "always", "never")


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_line(line: bytes) -> dict[str, Any] | None:
    """A line's JSON object, or None (a line cut short by a session being written, a blank
    line, NaN, anything else): what the orjson readers of the other commands accept."""
    try:
        value = json.loads(line, parse_constant=_refuse)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError included
        return None
    return value if isinstance(value, dict) else None


def stdin_input() -> StatusInput:
    """What Claude Code's statusline JSON on stdin says."""
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no input: pipe Claude Code's statusline JSON on stdin, or give FILE")
    try:
        value = json.loads(sys.stdin.buffer.read(), parse_constant=_refuse)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"not Claude Code's statusline JSON: {exc}", source="<stdin>") \
            from None
    if not isinstance(value, dict):
        raise InputError("not Claude Code's statusline JSON: expected an object",
                         source="<stdin>")
    return read_status_input(value)


def _head_entries(handle: BinaryIO) -> Iterator[dict[str, Any]]:
    """The entries at the transcript's start."""
    for line in iter_head_lines(handle, max_bytes=HEAD_BYTES):
        entry = parse_line(line)
        if entry:
            yield entry


def _document(handle: BinaryIO, path: str) -> dict[str, Any] | None:
    """The file as one entry when it is one pretty-printed JSON document an agent reads as a
    session (an older Gemini CLI session: :func:`ctxtool.formats.jsonl.document_entry`)."""
    handle.seek(0)
    if handle.readline(16).strip() != b"{":
        return None
    from ctxtool.formats.jsonl import document_entry, max_line_bytes

    handle.seek(0)
    data = handle.read(max_line_bytes() + 1)
    document = parse_line(data) if len(data) <= max_line_bytes() else None
    return document_entry(document, data, path) if document is not None else None


def _whole_session_report(handle: BinaryIO, path: str, fmt: str, given: StatusInput,
                          first: dict[str, Any], *, document: bool = False) -> Any:
    """``estimate``'s report of a session its agent reads whole (a Gemini CLI log, replayed
    as Gemini replays it): from its ``first`` line and the lines since the last one the agent
    rebuilds its view from (Gemini's checkpoint) when a call among them anchors the figure;
    else the file is read from its start (the figure rests on its first call). A ``document``
    (the whole file is ``first``) is that one entry."""
    from ctxtool.core.sizing.estimate import estimate
    from ctxtool.types import Entry

    options = {"fmt": fmt, "model": given.model_id, "context_window": given.window,
               "env": os.environ, "source": path}
    if document:
        return estimate([first], **options)
    report = view_report(first, iter_lines_reversed(handle), parse=parse_line, **options)
    if report is not None:
        return report
    handle.seek(0)
    entries = (Entry(entry, None, path, lineno) for lineno, line in enumerate(handle, start=1)
               if (entry := parse_line(line)) is not None)
    return estimate(entries, **options)


def fields_of(given: StatusInput, now: datetime | None = None) -> dict[str, Any]:
    """The template fields: from the transcript's tail when there is one; else (a session not
    written yet) from what the JSON reports, or the assumed system prompt before any call.
    Claude Code's settings files (the project's under the JSON's cwd) move the compaction
    point; the transcript's version picks the rule. A session its agent reads whole (Gemini
    CLI's) is read from its last checkpoint on, and its agent's own rule says where it
    compacts."""
    settings = read_settings(os.environ, project=given.cwd)
    path = given.transcript_path
    if path and os.path.isfile(path):
        compact_at = None
        try:
            with open(path, "rb") as handle:
                head = _head_entries(handle)
                first = next(head, None)
                document = _document(handle, path) if first is None else None
                first = first or document
                fmt = classify(first) if first is not None else None
                if fmt is not None and adapter_for(fmt).reads_whole_session:
                    report = _whole_session_report(handle, path, fmt, given, first,
                                                   document=document is not None)
                    compact_at = report.compact_at
                else:
                    chain = first_chain(itertools.chain([first] if first else [], head))
                    report, _ = report_of_tail(
                        iter_lines_reversed(handle), parse=parse_line, chain=chain,
                        fmt=CLAUDE_CODE, source=path,
                        options=TailOptions(model=given.model_id, context_window=given.window,
                                            env=os.environ, settings=settings))
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=path) from None
        return status_fields(used=report.context_tokens, limits=report.limits,
                             model=report.model, given=given, method=report.method,
                             idle=report.idle, now=now, compact_at=compact_at)
    limits = thresholds(model=given.model_id, context_window_override=given.window,
                        env=os.environ, fmt=CLAUDE_CODE, settings=settings)
    used = given.prompt_tokens if given.prompt_tokens is not None else DEFAULT_SYSTEM_TOKENS
    return status_fields(used=used, limits=limits, model=None, given=given,
                         method="claude-code" if given.prompt_tokens is not None
                         else "heuristic", now=now)


def colored(choice: str) -> bool:
    if os.environ.get("NO_COLOR") or choice == "never":
        return False
    return choice == "always" or (sys.stdout is not None and sys.stdout.isatty())


def status_line(transcript: str | None, template: str = DEFAULT_FORMAT,
                color: str = "auto", now: str | None = None) -> bytes:
    """The line (newline included) for ``transcript``, else for the JSON on stdin; ``now``
    (``--now``: ISO-8601 or epoch seconds) is the time ``idle_in`` counts from."""
    moment = parse_now(now)
    given = StatusInput(transcript_path=transcript) if transcript else stdin_input()
    # a cwd or model name (from the JSON or the transcript) must not steer the terminal
    fields = {k: visible(v) if isinstance(v, str) else v
              for k, v in fields_of(given, moment).items()}
    if colored(color):
        code = COLORS[fields["status"]]
        fields.update({k: f"\x1b[{code}m{fields[k]}\x1b[0m" for k in COLORED if fields[k]})
    try:
        line = template.format_map(fields)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise UsageError(f"--format: {exc}", hint="fields: " + ", ".join(sorted(fields))) \
            from None
    return line.replace("\n", " ").encode() + b"\n"


def parse_args(args: list[str]) -> tuple[str | None, str, str, str | None] | None:
    """(FILE, --format, --color, --now) from ``args`` as click would read them, or None for
    anything else (--help, another option, a missing or wrong value): the click command handles
    those."""
    transcript: str | None = None
    values: dict[str, str | None] = {"--format": DEFAULT_FORMAT, "--color": "auto",
                                     "--now": None}
    at, only_files = 0, False
    while at < len(args):
        arg = args[at]
        name, eq, inline = arg.partition("=")
        if not only_files and arg == "--":
            only_files = True
        elif not only_files and name in values and at + (0 if eq else 1) < len(args):
            values[name] = inline if eq else args[at + 1]
            at += 0 if eq else 1
        elif (only_files or not arg.startswith("-") or arg == "-") and transcript is None:
            transcript = arg
        else:
            return None
        at += 1
    if values["--color"] not in COLOR_CHOICES:
        return None
    return transcript, str(values["--format"]), str(values["--color"]), values["--now"]


def main(args: list[str]) -> None:
    """Print the line for ``ctxtool statusline ARGS`` and exit, or return (the click command is
    to handle these arguments)."""
    parsed = parse_args(args)
    if parsed is None:
        return
    try:
        line = status_line(*parsed)
        if sys.stdout is None:  # started with stdout closed
            raise StoreError("cannot write the line: stdout is closed")
        sys.stdout.buffer.write(line)
        sys.stdout.flush()
    except CtxtoolError as exc:
        if sys.stderr is not None:
            sys.stderr.write(visible(f"ctxtool: error: {exc.format()}", lines=True) + "\n")
        sys.exit(int(exc.exit_code))
    except OSError as exc:  # writing stdout failed (a closed pipe ends quietly: SIGPIPE)
        if sys.stderr is not None:
            sys.stderr.write(f"ctxtool: error: I/O error: {exc.strerror or exc}\n")
        sys.exit(int(ExitCode.STORAGE))
    sys.exit(int(ExitCode.OK))


__all__ = ["DEFAULT_FORMAT", "main", "parse_args", "parse_line", "status_line"]
