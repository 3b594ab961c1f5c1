"""``ctxtool summarize``: compact a session into a nine-section summary (offline by default)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import click

from ctxtool.clock import parse_now
from ctxtool.core.sizing.tokens import DEFAULT_WINDOW, thresholds
from ctxtool.core.summarizing.backend import make_summarizer
from ctxtool.core.summarizing.model import call_max_tokens
from ctxtool.core.summarizing.summarize import (Compaction, SummarizeOptions, SummarizeReport,
                                                compact, reads_twice)
from ctxtool.errors import StoreError, UsageError
from ctxtool.formats.registry import adapter_for
from ctxtool.io import messages
from ctxtool.io.options import (ReportOptions, in_place_options, io_options, now_option,
                                 report_options, store_options)
from ctxtool.io.progress import progress
from ctxtool.io.spool import FileSource, run_two_pass, source_format, spooled_inputs
from ctxtool.io.streams import IOOptions, STDIN_NAME, check_stdin, open_output
from ctxtool.llm import BACKENDS, LLM_ENV, choose_backend
from ctxtool.llm.anthropic import DEFAULT_MODEL, DEFAULT_TIMEOUT, MODEL_ENV, TIMEOUT_ENV
from ctxtool.llm.base import Summarizer
from ctxtool.storage.claude_settings import read_settings
from ctxtool.storage.store import store_for_entries


@dataclass(frozen=True)
class Settings:
    """Everything but the streams, resolved once per run."""

    summarizer: Summarizer
    options: SummarizeOptions
    store_dir: str | None
    window: int | None = None  # --context-window


def _progress(steps: Iterable[int], total: int) -> Iterable[int]:
    return progress(steps, total=total, desc="summarizing", unit="part")


def _instructions(text: str | None, path: str | None) -> str | None:
    parts = [text] if text else []
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                parts.append(handle.read())
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read instructions: {exc}", source=path) from exc
    return "\n\n".join(p.strip() for p in parts if p.strip()) or None


def _auto_threshold(window: int | None) -> int | None:
    limits = thresholds(context_window_override=window, env=os.environ)
    return limits.auto_compact if limits.auto_compact_enabled else None


def _transcript_path(source: FileSource, output: str | None) -> str | None:
    """The file the summary points to for the full history: the input file, else the output."""
    first = source.inputs[0] if source.inputs else None
    if first is not None and first.path is not None and first.name != STDIN_NAME:
        return os.path.abspath(first.path)
    return os.path.abspath(output) if output and output != "-" else None


def _agent_window(fmt: str, source: FileSource) -> int:
    """The window the agent measures the session in, when its lines say (Gemini CLI: its
    model's, 1,048,576), else ctxtool's default: what --auto compares with without
    --context-window."""
    adapter = adapter_for(fmt)
    if not adapter.reads_whole_session:
        return DEFAULT_WINDOW
    view = adapter.entries_sent(source)
    return adapter.configured_limits(view, None).get("context") or DEFAULT_WINDOW


def _run(settings: Settings, fmt: str, source: FileSource, output: str | None) -> Compaction:
    """Summarize one source (read twice; core.compact holds it only when it must)."""
    if settings.options.auto:
        off = adapter_for(fmt).compaction_switched_off("auto", source, env=os.environ)
        if off:  # the agent would not compact this session by itself
            done = Compaction(source, None, SummarizeReport(backend=settings.summarizer.name,
                                                            reason=off))
            _tell(done, source.name)
            return done
    first_read = iter(source)
    store, _ = store_for_entries(settings.store_dir, first_read, fmt=fmt, env=os.environ,
                                 notice=messages.info)
    close = getattr(first_read, "close", None)
    if close is not None:
        close()  # it looked at the first entries only
    items = source
    options = settings.options
    # entries the buffered way writes anew must keep integers past 64 bits exact
    source.exact_ints = not reads_twice(fmt, settings.summarizer, options)
    own = adapter_for(fmt).compaction_threshold(
        items, window=settings.window or _agent_window(fmt, items), env=os.environ,
        settings=read_settings(os.environ)) if options.auto else None
    if own is not None:  # the agent's own rule: OpenCode's overflow, Claude Code's version's
        options = dataclasses.replace(options, auto_compact_at=own)
    if options.transcript_path is None:
        options = dataclasses.replace(options, transcript_path=_transcript_path(source, output))
    done = compact(items, fmt=fmt, summarizer=settings.summarizer, options=options, store=store,
                   progress=_progress)
    _tell(done, source.name)
    return done


def _tell(done: Compaction, name: str) -> None:
    """One line on stderr naming the input: which backend ran and what it did (or why nothing
    changed), then the backend's notes, each naming the input too (--in-place runs many)."""
    r = done.report
    who = f"{r.backend} ({r.model})" if r.model else r.backend
    if r.error:
        messages.warn(f"summarize: {name}: {r.error}; input passed through unchanged "
                      "(--passthrough-on-error)")
    elif r.reason:
        messages.summary("summarize", f"{name}: {r.reason}; input passed through unchanged")
    else:
        parts = (f", {messages.count(r.calls, 'call')}, {messages.count(r.chunks, 'part')}"
                 if r.calls else "")
        messages.summary("summarize", f"{name}: context "
                         + messages.token_change(r.tokens_before, r.tokens_after)
                         + f", summary {r.summary_tokens:,} tokens by {who}{parts}")
    for note in r.notes:
        messages.summary("summarize", f"{name}: {note}")


@click.command("summarize")
@io_options
@in_place_options()
@click.option("--llm", type=click.Choice(BACKENDS), envvar=LLM_ENV, default="auto",
              show_default=True, help="Who writes the summary: auto (anthropic when an API key "
              "is set, else offline), offline (no network), anthropic (the API, with "
              "ANTHROPIC_API_KEY), claude-code or codex (your own `claude` or `codex` CLI and "
              f"its login, run with no tools and no saved session). Also ${LLM_ENV}.")
@click.option("--model", envvar=MODEL_ENV, help=f"Model: anthropic's (default {DEFAULT_MODEL}), "
              "or passed to claude / codex (default: the agent's own). Also "
              f"${MODEL_ENV}.")
@click.option("--instructions", metavar="TEXT", help="What the summary should focus on, like "
              "`/compact TEXT`.")
@click.option("--instructions-file", metavar="FILE", type=click.Path(dir_okay=False),
              help="Read the instructions from FILE.")
@click.option("--keep-last", type=click.IntRange(min=0), default=0, show_default=True,
              help="Keep the last N messages verbatim after the summary.")
@click.option("--keep-tokens", type=click.IntRange(min=0), default=0, show_default=True,
              help="Keep at least N tokens of the newest messages verbatim.")
@click.option("--restore-files", type=click.IntRange(min=0), default=0, show_default=True,
              help="Re-attach the latest content of the N most recently read or edited files "
              "(from the transcript; 5000 tokens each, 50000 in all).")
@click.option("--max-summary-tokens", type=click.IntRange(min=500), default=8000,
              show_default=True, help="Upper bound for the summary's size.")
@click.option("--auto", "auto_mode", is_flag=True, help="Compact only when the context is over "
              "Claude Code's auto-compact threshold (OpenCode sessions: OpenCode's overflow rule; "
              "the compaction is then marked automatic); otherwise pass the input through.")
@click.option("--context-window", type=click.IntRange(min=1000), metavar="TOKENS",
              help="Context window, for --auto and the summarizing model (default: 200000).")
@click.option("--timeout", type=click.FloatRange(min=0.1), envvar=TIMEOUT_ENV,
              default=DEFAULT_TIMEOUT, show_default=True,
              help="Deadline in seconds for each model call, in all: its retries, the waits a "
              "server asks for and the reading of the reply (a summary in several parts makes "
              f"one call per part). Also ${TIMEOUT_ENV}.")
@click.option("--passthrough-on-error", is_flag=True, help="If the LLM backend fails, write the "
              "input unchanged (exit 0, with a warning) instead of failing with exit 5.")
@click.option("--text", is_flag=True, help="Print only the summary text, not the transcript.")
@store_options
@now_option
@report_options
def summarize_cmd(io: IOOptions, llm: str, model: str | None, instructions: str | None,
                  instructions_file: str | None, keep_last: int, keep_tokens: int,
                  restore_files: int, max_summary_tokens: int, auto_mode: bool,
                  context_window: int | None, timeout: float, passthrough_on_error: bool,
                  text: bool, store_dir: str | None, now: str | None,
                  report: ReportOptions) -> None:
    """Replace a session's history by a nine-section summary, losing nothing.

    Claude Code transcripts keep every line and get a compact boundary and the summary appended
    (what /compact writes), so Claude Code resumes from the summary and filter-compacted cuts
    there. Message lists become the summary plus the kept tail; the original is saved in the
    store. OpenCode sessions keep every line and get what OpenCode's own compaction writes: a
    compaction request, the summary message and, with --auto, the "continue" message. Gemini CLI
    sessions keep every line and get the checkpoint Gemini's own compression writes: its
    <session_context>, the summary inside <state_snapshot>, its "Got it" turn, the kept tail.
    Offline (no network) unless an Anthropic key is set or --llm names a model backend;
    --llm claude-code / codex have the agent you are logged in to write it (no API key).

    \b
        ctxtool summarize session.jsonl > compacted.jsonl
        ctxtool summarize --keep-last 4 --restore-files 3 session.jsonl | ctxtool filter-compacted
        ctxtool summarize --text --instructions "focus on the failing tests" session.jsonl
        ctxtool summarize --llm claude-code --model haiku session.jsonl > compacted.jsonl
        ctxtool summarize --llm codex --timeout 300 --text session.jsonl
        ctxtool summarize --auto --passthrough-on-error --in-place ~/.claude/projects/*/*.jsonl
    """
    if text and io.in_place:
        raise UsageError("--text prints the summary; it cannot be combined with --in-place")
    options = SummarizeOptions(
        keep_last=keep_last, keep_tokens=keep_tokens, restore_files=restore_files,
        instructions=_instructions(instructions, instructions_file),
        max_summary_tokens=max_summary_tokens, auto=auto_mode,
        auto_compact_at=_auto_threshold(context_window) if auto_mode else None,
        passthrough_on_error=passthrough_on_error, now=parse_now(now))
    summarizer = make_summarizer(choose_backend(llm), model=model, timeout=timeout,
                                 window=context_window,
                                 max_tokens=call_max_tokens(max_summary_tokens))
    _execute(io, Settings(summarizer=summarizer, options=options, store_dir=store_dir,
                          window=context_window), text=text, report=report)


def _execute(io: IOOptions, settings: Settings, *, text: bool, report: ReportOptions) -> None:
    """Run over the inputs (one transcript, or each file with --in-place) and report."""
    reports: list[dict[str, Any]] = []

    def transform(fmt: str, source: FileSource) -> Iterable[dict[str, Any]]:
        done = _run(settings, fmt, source, io.output)
        reports.append(done.report.as_dict())
        return done.entries

    if text:
        check_stdin(io)
        with spooled_inputs(io.paths, io) as source:
            done = _run(settings, source_format(source, io.format), source, io.output)
        reports.append(done.report.as_dict())
        with open_output(io.output, io.paths) as out:
            out.write(((done.summary or "") + "\n").encode("utf-8") if done.summary else b"")
    else:
        run_two_pass(io, transform)
    if reports:
        report.emit(reports[0] if len(reports) == 1 else {"files": reports})
