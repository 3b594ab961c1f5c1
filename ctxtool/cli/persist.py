"""``ctxtool persist``: move oversized tool results to files, leaving Claude Code's placeholder."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any, BinaryIO

import click

from ctxtool.clock import parse_now
from ctxtool.core.clearing.persist import (DEFAULT_MAX_CHARS, DEFAULT_MAX_MESSAGE_CHARS,
                                  PersistOptions, PersistReport, auto_max_chars, measure_context,
                                  persist, styles)
from ctxtool.core.sizing.tokens import thresholds
from ctxtool.errors import ExitCode, StoreError
from ctxtool.io import batch, messages
from ctxtool.io.options import (LazyChoice, ReportOptions, in_place_options, io_options,
                                 now_option, report_options, store_options)
from ctxtool.io.spool import spooled_inputs, staged_output
from ctxtool.io.streams import (IOOptions, check_stdin, in_place_paths, iter_input_entries,
                                 open_output)
# --max-bytes shows the opencode style's own limit as its default (the help names the styles)
from ctxtool.formats.opencode.truncate import MAX_BYTES as OPENCODE_MAX_BYTES
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import write_entries
from ctxtool.storage.store import store_for_entries
from ctxtool.types import Entry


# --- helpers shared with restore: units of work, inputs read twice, all-or-nothing output -------

def units(io: IOOptions) -> Iterator[tuple[IOOptions, str | None]]:
    """(inputs, output) pairs: all inputs to stdout/-o as one stream, or each file in place
    (pinned while its unit runs: see io/live.py; run it inside :func:`on_its_own`)."""
    if not io.in_place:
        yield io, io.output
        return
    for path in in_place_paths(io):
        yield dataclasses.replace(io, inputs=(path,), in_place=False), path


def on_its_own(io: IOOptions, target: str | None) -> contextlib.AbstractContextManager[None]:
    """Around a unit's work: an --in-place file that fails is reported and the run goes on
    (io/batch.py); one stream of all inputs stops at the first error."""
    if io.in_place and target:
        return batch.each(target, of=len(io.inputs))
    return contextlib.nullcontext()


def output_for(target: str | None, *, hold: bool,
               inputs: Iterable[str] = ()) -> contextlib.AbstractContextManager[BinaryIO]:
    """The output stream; with ``hold`` (--strict) stdout gets the bytes only once the block
    ended without an error. -o and --in-place files are written atomically either way (an -o
    file with the inputs' mode)."""
    return staged_output(target, inputs) if hold else open_output(target, inputs)


@contextlib.contextmanager
def input_entries(io: IOOptions, *, twice: bool) -> Iterator[Callable[[], Iterator[Entry]]]:
    """A function giving the entries of all inputs; with ``twice`` it may be called again
    (stdin is spooled to a temp file, see io/spool.py)."""
    if not twice:
        # read without the big-integer search: persist writes back only the entries it
        # changes, and core.clearing.persist reads those again exactly (exact_entry)
        yield lambda: iter_input_entries(io, exact_ints=False)
        return
    check_stdin(io)
    with spooled_inputs(io.paths, io) as source:
        yield lambda: iter(source)


def finish(report: ReportOptions, data: dict[str, Any], *, problems: int, what: str) -> None:
    """Emit --stats/--report, then exit 4 when some results had problems (not --strict)."""
    report.emit(data)
    if problems:
        messages.warn(f"{problems} tool result(s) {what}; see the warnings above")
        click.get_current_context().exit(int(ExitCode.STORAGE))


# --- the command ---------------------------------------------------------------------------------

@click.command("persist")
@io_options
@in_place_options()
@click.option("--max-chars", type=click.IntRange(min=1), default=DEFAULT_MAX_CHARS,
              show_default=True,
              help="Persist each tool result longer than this many characters (Claude Code's "
                   "classic per-result limit).")
@click.option("--max-message-chars", type=click.IntRange(min=0),
              default=DEFAULT_MAX_MESSAGE_CHARS, show_default=True,
              help="When one message's tool results together exceed this, persist the largest "
                   "first until it fits; 0 turns the per-message budget off.")
@click.option("--max-lines", type=click.IntRange(min=1), metavar="N",
              help="Also persist results with more than N lines (--style opencode: 2000).")
@click.option("--style", type=LazyChoice(styles),
              help="claude-code: <persisted-output> with a 2000-character preview, by --max-chars. "
                   "opencode: OpenCode's truncation - over --max-lines (2000) lines or "
                   "--max-bytes, the first lines and a hint to use Grep/Read. gemini: Gemini "
                   "CLI's <tool_output_masked> - over --max-bytes, head and tail of the saved "
                   "response. Default: the session's agent's own (opencode, gemini), "
                   "claude-code otherwise.")
@click.option("--max-bytes", type=click.IntRange(min=1), default=OPENCODE_MAX_BYTES,
              show_default=True, help="--style opencode, gemini: persist outputs over this many "
                   "bytes.")
@click.option("--budget", type=click.Choice(["fixed", "auto"]), default="fixed",
              show_default=True,
              help="auto: tighten --max-chars with context use (>=50% of the effective window: "
                   "30000, >70%: 15000), measured like `ctxtool estimate`.")
@click.option("--truncate", is_flag=True,
              help="Lossy: keep head and tail of each result over --max-chars around a "
                   "'[... N chars truncated ...]' marker instead of writing files.")
@click.option("--strict", is_flag=True,
              help="A result that cannot be saved is an error (exit 4) and nothing is written; "
                   "by default it stays in place with a warning, and the exit code is 4.")
@now_option
@store_options
@report_options
def persist_cmd(io: IOOptions, max_chars: int, max_message_chars: int, max_lines: int | None,
                style: str | None, max_bytes: int, budget: str, truncate: bool, strict: bool,
                now: str | None, store_dir: str | None, report: ReportOptions) -> None:
    """Move oversized tool results to files, leaving a <persisted-output> preview.

    Each tool result over --max-chars is saved to DIR/<session>/tool-results/<tool_use_id>.txt
    (.json for block lists) and replaced by Claude Code's own placeholder: its size, the full
    path and a 2000-character preview. Claude Code transcripts default to the session's own
    folder under ~/.claude/projects/, where Claude Code's Read tool finds the files. `ctxtool
    restore` puts them back. Running persist twice changes nothing the second time. OpenCode
    sessions get OpenCode's own truncation by default (--style opencode): each tool part's
    output over 2000 lines or 50 KB keeps its first lines and a hint naming the saved file.
    Gemini CLI sessions get Gemini's own masking (--style gemini): each response over 50 KB,
    in the model turn's toolCalls and in the user record that answered it, becomes a
    <tool_output_masked> preview naming the file, saved by default in the session's own
    tool-outputs/session-<id>/ folder beside Gemini's chats/.
    When results before the last recorded API call changed, a microcompact_boundary entry
    (stamped --now) records the tokens saved, so `ctxtool estimate` sees the saving.

    \b
        ctxtool persist session.jsonl > smaller.jsonl
        ctxtool persist --budget auto --store ./saved session.jsonl | ctxtool estimate
        ctxtool persist --in-place --max-chars 20000 ~/.claude/projects/*/SESSION.jsonl
        ctxtool persist --truncate --max-chars 10000 < chat.jsonl > short.jsonl
        ctxtool convert s.json | ctxtool persist --store ./saved > opencode-session.jsonl
    """
    base = PersistOptions(max_chars=max_chars, max_message_chars=max_message_chars or None,
                          max_lines=max_lines, truncate=truncate, style=style,
                          max_bytes=max_bytes)
    totals = PersistReport()
    stores: set[str] = set()
    moment = parse_now(now)
    for unit, target in units(io):
        with on_its_own(io, target):
            run, root = _persist_unit(unit, target, base, auto=budget == "auto", strict=strict,
                                      store_dir=store_dir, now=moment)
            _add(totals, run)
            stores.update([root] if root else [])
    _tell(totals, sorted(stores), truncate=truncate)
    finish(report, {**totals.as_dict(), "stores": sorted(stores)}, problems=totals.failed,
           what="could not be saved and were left in place")


def _persist_unit(io: IOOptions, target: str | None, base: PersistOptions, *, auto: bool,
                  strict: bool, store_dir: str | None,
                  now: datetime) -> tuple[PersistReport, str | None]:
    """Persist one output's worth of input; returns its report and the store root used."""
    run = PersistReport()
    with input_entries(io, twice=auto) as entries_of:
        options = _auto_options(base, entries_of, io) if auto else base
        fmt, entries = detect_format(entries_of(), io.format)
        store = None
        if not base.truncate:
            store, entries = store_for_entries(store_dir, entries, fmt=fmt, env=os.environ,
                                               notice=messages.warn)
            # saved files on disk (one batch, storage/durable.py) before the transcript itself
            # is replaced (-o or --in-place); on stdout the input still holds everything
            store.durable = target not in (None, "-")
        with output_for(target, hold=strict, inputs=io.paths) as out:
            write_entries(persist(entries, fmt=fmt, store=store, options=options, report=run,
                                  warn=messages.warn, now=now), out)
            if strict and run.failed:
                raise StoreError(f"{run.failed} tool result(s) could not be saved; no output "
                                 "written", hint="fix the store or drop --strict")
    return run, str(store.root) if store is not None else None


def _auto_options(base: PersistOptions, entries_of: Callable[[], Iterator[Entry]],
                  io: IOOptions) -> PersistOptions:
    """First pass for --budget auto: how full the context is at the end of the input."""
    fmt, entries = detect_format(entries_of(), io.format)
    use = measure_context(entries, fmt)
    effective = thresholds(model=use.model, env=os.environ).effective
    limit = auto_max_chars(use.tokens, effective, base.max_chars)
    messages.info(f"context {use.tokens:,} of {effective:,} tokens "
                  f"({use.tokens / effective:.0%}); persisting results over {limit} chars")
    return dataclasses.replace(base, max_chars=limit)


def _tell(totals: PersistReport, stores: list[str], *, truncate: bool) -> None:
    """The summary line: how many results went to files (or were cut), and where."""
    if not totals.persisted and not totals.truncated:
        messages.summary("persist", f"nothing to move ({totals.results} tool result(s), none "
                                    "over the size limit)")
        return
    done = (f"truncated {totals.truncated}" if truncate else f"saved {totals.persisted}")
    where = "" if truncate or not stores else f"; saved under {', '.join(stores)}"
    messages.summary("persist", f"{done} tool result(s), "
                     + messages.token_change(totals.tokens_before, totals.tokens_after) + where)


def _add(totals: PersistReport, run: PersistReport) -> None:
    for name in ("entries", "entries_changed", "results", "persisted", "truncated", "failed",
                 "chars_before", "chars_after", "tokens_before", "tokens_after", "files"):
        setattr(totals, name, getattr(totals, name) + getattr(run, name))
