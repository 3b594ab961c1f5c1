"""``ctxtool convert``: OpenCode sessions to JSONL and back, and transcripts to API messages.

This command names OpenCode on purpose: it reads OpenCode's own stores (its database, storage
folder and ``opencode export`` documents) and writes them back, which is storage, not transcript
logic; what a transcript holds comes from the adapters as in every other command.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import click

from ctxtool.core.messages.convert import ConvertReport, to_messages
from ctxtool.errors import InputError, UsageError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import (BOM, MAX_LINE_ENV, bounded_lines, document_entry, iter_entries,
                                   max_line_bytes, write_entries)
from ctxtool.formats.opencode.export import (
    dumps_export, entries_from_export, export_document, is_export, loads_document,
)
from ctxtool.formats.opencode.view import is_message
from ctxtool.formats.registry import adapter_for, format_names
from ctxtool.io import database, messages
from ctxtool.io.options import ReportOptions, report_options
from ctxtool.io.progress import byte_progress
from ctxtool.io.selectors import selector_options
from ctxtool.io.streams import STDIN_NAME, open_input, open_output
from ctxtool.storage import opencode_tree
from ctxtool.storage.opencode_db_file import find_database  # no sqlite3 to tell it is one
from ctxtool.types import ANTHROPIC, OPENCODE

TARGETS = ("opencode", "opencode-export", "opencode-storage", "anthropic", "openai")


@click.command("convert")
@selector_options
@click.argument("source", required=False, metavar="[INPUT]",
                type=click.Path(allow_dash=True, path_type=str))
@click.option("--to", "target", type=click.Choice(TARGETS),
              help="opencode: JSONL, one message with its parts per line (the default for "
                   "OpenCode input). opencode-export: one `opencode export` JSON document. "
                   "opencode-storage: OpenCode's storage files, under -o DIR. anthropic, openai: "
                   "plain API messages (lossy; see README).")
@click.option("-o", "--output", metavar="FILE|DIR",
              help="Write to FILE (atomically) instead of stdout; the storage folder for "
                   "--to opencode-storage.")
@click.option("--session", "session_id", metavar="ID",
              help="The session to read when INPUT is OpenCode's database or a storage folder "
                   "(database default: the most recently updated).")
@click.option("-f", "--format", "fmt", type=click.Choice(format_names()),
              help="Format of JSONL input; detected when not given.")
@click.option("--on-invalid", type=click.Choice(["error", "skip", "keep"]), default="error",
              show_default=True, help="What to do with a JSONL line that is not a JSON object.")
@click.option("--thinking", type=click.Choice(["drop", "keep"]), default="drop", show_default=True,
              help="With --to anthropic: keep signed thinking blocks, or drop them.")
@click.option("-q", "--quiet", is_flag=True, help="No messages on stderr.")
@report_options
def convert_cmd(source: str | None, target: str | None, output: str | None,
                session_id: str | None, fmt: str | None, on_invalid: str, thinking: str,
                quiet: bool, report: ReportOptions) -> None:
    """Convert OpenCode sessions to JSONL and back, or transcripts to API messages.

    INPUT is an `opencode export` JSON file, OpenCode's database (opencode.db, or the data
    folder ~/.local/share/opencode holding it; OpenCode 1.2 and later), an OpenCode storage
    folder (~/.local/share/opencode/storage, OpenCode 1.1 and older), or a JSONL transcript in
    any format (stdin when not given). --session picks the session in a database or folder.
    OpenCode input becomes JSONL with one message and its parts per line, after a
    {"session": ...} line; that JSONL converts back to an export or to storage files unchanged.
    A Gemini CLI session becomes the messages Gemini sends when it resumes it (each tool result
    once, though Gemini sends it two or three times).

    \b
        opencode export ses_123 > s.json && ctxtool convert s.json > s.jsonl
        ctxtool convert ~/.local/share/opencode --session ses_123 | ctxtool estimate
        ctxtool convert s.jsonl --to opencode-export -o s2.json
        ctxtool convert session.jsonl --to anthropic > messages.jsonl
        ctxtool convert ~/.gemini/tmp/proj/chats/session-*.jsonl --to openai
    """
    messages.set_quiet(quiet)
    if target == "opencode-storage" and not output:
        raise UsageError("--to opencode-storage needs -o DIR, the storage folder to write into")
    database.set_session(session_id)
    in_database = source not in (None, "-") and find_database(str(source)) is not None
    if source not in (None, "-") and Path(str(source)).is_dir() and not in_database:
        _convert(OPENCODE, _read_tree(str(source), session_id), target, output, str(source),
                 thinking, report)
        return
    if session_id and not in_database:
        raise UsageError("--session picks a session from a database or storage folder; "
                         "INPUT is a transcript file")
    path = source or "-"
    if path == "-" and sys.stdin is not None and sys.stdin.isatty():
        raise UsageError("no input: give an export, a storage folder or a JSONL file, or pipe one",
                         hint="see --help for examples")
    name = STDIN_NAME if path == "-" else path
    with open_input(path) as stream:
        in_fmt, entries = _read_stream(stream, path, fmt, on_invalid)
        _convert(in_fmt, entries, target, output, name, thinking, report)


def _convert(in_fmt: str, entries: Iterable[dict[str, Any]], target: str | None,
             output: str | None, name: str, thinking: str, report: ReportOptions) -> None:
    target = target or _default_target(in_fmt)
    stats: dict[str, Any] = {"input": name, "format": in_fmt, "to": target}
    if target.startswith("opencode"):
        _need_opencode(in_fmt, target)
        _write_opencode(list(entries), target, output, name, stats)
    else:
        convert_report = ConvertReport()
        api = _api_messages(entries, in_fmt, target, thinking, convert_report)
        with open_output(output, _file_inputs(name)) as out:
            stats["entries_out"] = write_entries(api, out)
        stats.update(convert_report.as_dict())
    report.emit(stats)


def _file_inputs(name: str) -> tuple[str, ...]:
    """The input as open_output wants it (to give -o its mode): a path, none for stdin."""
    return () if name == STDIN_NAME else (name,)


def _default_target(fmt: str) -> str:
    own = adapter_for(fmt).convert_targets
    if own:
        return own[0]
    raise UsageError(f"{fmt} input: say what to convert it to",
                     hint="pass --to anthropic or --to openai")


def _need_opencode(fmt: str, target: str) -> None:
    if target not in adapter_for(fmt).convert_targets:
        raise UsageError(f"cannot convert {fmt} input to {target}: only OpenCode sessions go there",
                         hint="--to anthropic or --to openai convert any transcript")


# --- reading ---------------------------------------------------------------------------------------

def _read_tree(folder: str, session_id: str | None) -> list[dict[str, Any]]:
    root, named = opencode_tree.find_root(folder)
    chosen = opencode_tree.pick_session(root, session_id or named)
    return opencode_tree.read_session(root, chosen, warn=messages.warn)


def _read_stream(stream: BinaryIO, path: str, forced: str | None,
                 on_invalid: str) -> tuple[str, Iterable[dict[str, Any]]]:
    """An export document (pretty-printed: its first line is a lone ``{``, or squeezed onto one
    line), or an agent's one-document session (pretty-printed), else JSONL in any format, read
    lazily (a bar on a terminal: the messages go out as the lines come in)."""
    name = STDIN_NAME if path == "-" else path
    limit = max_line_bytes()
    rest = iter(byte_progress(path, bounded_lines(stream, name, limit)))
    first = next(rest, b"")
    if first.removeprefix(BOM).strip() == b"{":
        data = first + stream.read(limit + 1)  # the document is held whole: bounded like a line
        if len(data) > limit:
            raise InputError(f"export document longer than {limit} bytes (the maximum line "
                             "length)", source=name, hint=f"raise ${MAX_LINE_ENV}")
        document = loads_document(data.removeprefix(BOM), name)
        session = None if is_export(document) else document_entry(document, data, name)
        if session is not None:  # an agent's one-document session (Gemini CLI's older ones)
            return detect_format([session], forced)
        return OPENCODE, entries_from_export(document, name)
    lines = itertools.chain([first], rest) if first else iter(())
    entries = iter_entries(lines, name, on_invalid=on_invalid, warn=messages.warn)  # type: ignore[arg-type]
    head = next(entries, None)
    if head is not None and is_export(head):
        return OPENCODE, entries_from_export(head, name)
    return detect_format(itertools.chain([head] if head is not None else [], entries), forced)


# --- writing ---------------------------------------------------------------------------------------

def _write_opencode(entries: list[dict[str, Any]], target: str, output: str | None, name: str,
                    stats: dict[str, Any]) -> None:
    stats["messages"] = sum(1 for e in entries if is_message(e))
    stats["parts"] = sum(len(e["parts"]) for e in entries if is_message(e))
    if target == "opencode-storage":
        assert output is not None  # checked before reading
        result = opencode_tree.write_session(entries, output, source=name, warn=messages.warn)
        stats.update(result.as_dict())
        messages.info(f"{output}: session {result.session_id}: {len(result.written)} files "
                      f"written, {result.unchanged} unchanged")
        if result.left:
            messages.warn(f"{output}: {len(result.left)} files of session {result.session_id} "
                          "are not in the input; left in place")
        return
    with open_output(output, _file_inputs(name)) as out:
        if target == "opencode-export":
            out.write(dumps_export(export_document(entries, source=name)))
        else:
            write_entries(entries, out)


def _api_messages(entries: Iterable[dict[str, Any]], fmt: str, target: str, thinking: str,
                  report: ConvertReport) -> Iterator[dict[str, Any]]:
    adapter = adapter_for(fmt)
    if adapter.converts_through_messages:
        # such an adapter gives Anthropic-shaped {"role", "content"} messages
        entries, fmt = adapter.iter_api_messages(entries), ANTHROPIC
    return to_messages(entries, fmt, target=target, thinking=thinking,  # type: ignore[arg-type]
                       report=report)
