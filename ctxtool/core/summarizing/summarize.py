"""``summarize``: replace a session's history by a summary, losing nothing.

What is summarized is decided here, for every format alike: everything before the kept tail
(``keep_last`` / ``keep_tokens``) since the last compaction - for agents whose own rule decides
what they send (:data:`~ctxtool.formats.adapter.AGENT_RULE`, OpenCode), the messages that rule
sends now, the tail taken only from those written since its last summary and starting at a user
message. How the compaction is written is the agent's: its adapter's
:meth:`~ctxtool.formats.adapter.FormatAdapter.compaction_writer` gets the summary and what an
agent records with one (:class:`~ctxtool.formats.compaction.CompactionWrite`) and gives the lines:

* Claude Code (:mod:`ctxtool.formats.claude_code.compaction`): every input entry unchanged, then
  a ``compact_boundary`` entry, the ``isCompactSummary`` user entry holding the continuation text
  and the restored files; the kept tail stays where it is, kept by reference - the file Claude
  Code itself would have after ``/compact``;
* OpenCode (:mod:`ctxtool.formats.opencode.compaction`): every line, then what OpenCode's own
  compaction writes (1.18 sessions are also summarized with 1.18's own request);
* Codex CLI: every line, then a ``compacted`` record Codex resumes from;
* Anthropic / OpenAI message lists (the default writer): the ``system``/``developer`` messages,
  the summary message (its text starts with ``[ctxtool summary]``, the marker
  ``filter-compacted`` cuts at) and the kept tail. An adapter whose output does not keep the
  input's lines (:attr:`~ctxtool.formats.adapter.FormatAdapter.summary_keeps_lines` False) has
  the full original saved in the store first, and the summary names the file.

When the result would not be smaller than the input (a short session, a long summary) the input
is returned unchanged with a reason. A tail never starts between a ``tool_use`` and its result,
nor inside one streamed response (assistant lines sharing ``message.id``).
Buffers the whole input: the summary must see all of it before anything is written - except a
transcript whose writer needs nothing held (``compaction_streams``, Claude Code) summarized
offline from a re-readable source with nothing kept verbatim, which is read twice instead
(:mod:`ctxtool.core.summarizing.stream`).
"""

from __future__ import annotations

import hashlib
import time
from itertools import chain
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from ctxtool.core.clearing.twopass import LazySource
from ctxtool.core.messages.blocks import iter_tool_results, iter_tool_uses, role_of
from ctxtool.core.messages.filter_compacted import SUMMARY_MARKER  # the cut marker for message lists
from ctxtool.core.sizing.estimate import Estimator
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.core.sizing.tokens import estimate_entry_tokens, estimate_text_tokens
from ctxtool.core.summarizing.file_state import collect_file_state
from ctxtool.core.summarizing.output import iso_timestamp, restored_files
from ctxtool.core.summarizing.prompt import continuation_text
from ctxtool.core.summarizing.request import build_request, first_kept, main_chain, summary_text_of
from ctxtool.core.summarizing.stream import scan, streams
from ctxtool.errors import LLMError, UsageError
from ctxtool.formats.adapter import AGENT_RULE
from ctxtool.formats.compaction import CONTINUE_NOTE, CompactionLines, CompactionWrite
from ctxtool.formats.jsonl import iter_lines_out
from ctxtool.llm.base import (Progress, StreamingSummarizer, Summarizer, SummaryRequest,
                              SummaryResult, no_progress)
from ctxtool.formats.registry import adapter_for


class TranscriptStore(Protocol):
    """Where a whole original transcript is saved before a message list is compacted."""

    def save_transcript(self, data: bytes, *, name: str, session_id: str | None) -> str:
        ...


@dataclass(frozen=True)
class SummarizeOptions:
    keep_last: int = 0  # messages kept verbatim after the summary
    keep_tokens: int = 0  # ...or at least this many tokens of the newest messages
    restore_files: int = 0  # re-attach the latest content of this many recent files
    instructions: str | None = None  # custom focus, like `/compact <instructions>`
    max_summary_tokens: int = 8000
    auto: bool = False  # compact only when the context is at or over auto_compact_at
    auto_compact_at: int | None = None
    transcript_path: str | None = None  # named in the summary (Claude Code transcripts)
    passthrough_on_error: bool = False  # on LLMError, output the input unchanged
    now: datetime | None = None


@dataclass
class SummarizeReport:
    backend: str = ""
    model: str | None = None
    compacted: bool = False
    reason: str | None = None  # why nothing was compacted
    error: str | None = None  # the LLM error passed through with passthrough_on_error
    entries_in: int = 0
    entries_out: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summary_tokens: int = 0
    calls: int = 0
    chunks: int = 0
    dropped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    kept_messages: int = 0
    duration_ms: int = 0  # how long the summary took (the boundary's durationMs)
    restored_files: list[str] = field(default_factory=list)
    transcript_saved: str | None = None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Compaction:
    entries: list[dict[str, Any]] | Iterator[dict[str, Any]]  # an iterator when streamed
    summary: str | None  # the nine sections, None when nothing was compacted
    report: SummarizeReport


# --- where the kept tail starts ---------------------------------------------------------------------

def _message_groups(items: Sequence[dict[str, Any]], fmt: str, indices: Iterable[int]) -> list[list[int]]:
    """Message entries as groups: one API message each (streamed assistant lines together)."""
    groups: list[list[int]] = []
    last_key: str | None = None
    adapter = adapter_for(fmt)
    streamed = adapter.streams_over_lines  # one response over several lines (Claude Code)
    for index in indices:
        entry = items[index]
        role = role_of(entry, fmt)
        if role not in ("user", "assistant", "tool") or summary_text_of(entry, fmt) is not None:
            continue
        message = adapter.api_message(entry) if streamed else None
        key = message.get("id") if isinstance(message, dict) and role == "assistant" else None
        if groups and isinstance(key, str) and key == last_key:
            groups[-1].append(index)
        else:
            groups.append([index])
        last_key = key if isinstance(key, str) else None
    return groups


def _tail_group(items: Sequence[dict[str, Any]], fmt: str, groups: list[list[int]],
                keep_last: int, keep_tokens: int) -> int:
    """Index of the first kept group (len(groups) when nothing is kept)."""
    start = first_kept(len(groups), keep_last, keep_tokens,
                       lambda k: sum(estimate_entry_tokens(items[i], fmt) for i in groups[k]))
    return _keep_pairs(items, fmt, groups, start)


def _keep_pairs(items: Sequence[dict[str, Any]], fmt: str, groups: list[list[int]], start: int) -> int:
    """Move ``start`` back until every tool result in the tail has its tool_use in the tail."""
    def uses(k: int) -> set[str]:
        return {u.id for i in groups[k] for u in iter_tool_uses(items[i], fmt)}

    while 0 < start < len(groups):
        kept = set().union(*(uses(k) for k in range(start, len(groups))))
        wanted = {r.tool_use_id for k in range(start, len(groups)) for i in groups[k]
                  for r in iter_tool_results(items[i], fmt)} - kept
        earlier = [k for k in range(start) if uses(k) & wanted]
        if not earlier:
            break
        start = min(earlier)
    return start


# --- the run ----------------------------------------------------------------------------------------

def _digest(items: Sequence[dict[str, Any]]) -> str:
    sha = hashlib.sha256()
    for chunk in iter_lines_out(items):
        sha.update(chunk)
    return sha.hexdigest()


def _context_tokens(entries: list[dict[str, Any]], fmt: str) -> int:
    if _builds_view(entries, fmt):
        # what the agent builds from its lines (Gemini CLI's log), measured as estimate does:
        # its system figure from the session's first call, the view after it
        state = Estimator(fmt, top=0)
        state.add_session(entries)
        return state.meter.context_tokens
    meter = ContextMeter(fmt)
    for entry in entries:
        meter.add(entry)
    return meter.context_tokens


def _builds_view(entries: list[dict[str, Any]], fmt: str) -> bool:
    """True when the agent sends a view it builds from the lines rather than picks among them."""
    adapter = adapter_for(fmt)
    if adapter.compactions != AGENT_RULE:
        return False
    lines = {id(e) for e in entries}
    return not lines.issuperset(map(id, adapter.entries_sent(entries)))


def _last_cut(items: Sequence[dict[str, Any]], fmt: str, main: list[int]) -> int:
    """Index of the last compaction (boundary, or prior summary in a message list), else -1."""
    found = -1
    adapter = adapter_for(fmt)
    for index in main:
        entry = items[index]
        if adapter.is_compaction_record(entry) or summary_text_of(entry, fmt) is not None:
            found = index
    return found


@dataclass
class _Plan:
    """What will be summarized and what kept: the request, the cut index and the kept tail."""

    request: SummaryRequest
    cut: int
    tail: list[dict[str, Any]]
    kept_messages: int
    reason: str | None = None  # why there is nothing to summarize


def _plan(items: list[dict[str, Any]], fmt: str, options: SummarizeOptions) -> _Plan:
    refusal = adapter_for(fmt).restore_files_refusal
    if options.restore_files and refusal is not None:
        raise UsageError(refusal[0], hint=refusal[1])
    if adapter_for(fmt).compactions == AGENT_RULE:
        return _plan_agent_rule(items, fmt, options)
    main = main_chain(items, fmt)
    since = _last_cut(items, fmt, main)
    groups = _message_groups(items, fmt, (i for i in main if i > since))
    first_kept = _tail_group(items, fmt, groups, options.keep_last, options.keep_tokens)
    cut = groups[first_kept][0] if first_kept < len(groups) else len(items)
    request = build_request(items[:cut], fmt, instructions=options.instructions,
                            max_summary_tokens=options.max_summary_tokens)
    tail = [items[i] for group in groups[first_kept:] for i in group]
    plan = _Plan(request, cut, tail, len(groups) - first_kept)
    if not request.recent_turns:
        plan.reason = "nothing to summarize: " + (
            "the kept tail holds every message" if groups and first_kept == 0
            else "no messages since the last compaction" if groups or request.turns
            else "no messages")
    return plan


def _plan_agent_rule(items: Sequence[dict[str, Any]], fmt: str,
                     options: SummarizeOptions) -> _Plan:
    """For an agent whose own rule decides what it sends (OpenCode): the messages it sends now,
    less a kept tail of those written since its last summary (starting at a user message, so
    the turn stays whole); the agent's own summarizer request when it has one."""
    adapter = adapter_for(fmt)
    view = [e for e in adapter.entries_sent(list(items)) if adapter.api_message(e) is not None]
    newer = _since_summary(items, view, adapter.is_completed_summary)
    start = first_kept(len(newer), options.keep_last, options.keep_tokens,
                       lambda k: estimate_entry_tokens(newer[k], fmt))
    while 0 < start < len(newer) and not _opens_turn(newer[start], fmt):
        start -= 1
    tail = newer[start:]
    kept = {id(e) for e in tail}
    head = [e for e in view if id(e) not in kept]
    request = build_request(head, fmt, instructions=options.instructions,
                            max_summary_tokens=options.max_summary_tokens)
    reason = None
    if not request.recent_turns:
        reason = "nothing to summarize: " + (
            "the kept tail holds every message" if newer and start == 0
            else "no messages since the last compaction"
            if newer or request.turns or request.prior_summaries else "no messages")
    prompt = adapter.summary_prompt(head, list(items), instructions=options.instructions)
    if prompt is not None:  # the agent's own request carries the earlier summary itself
        request = replace(request, prior_summaries=(), history_missing=False, agent_prompt=prompt)
    return _Plan(request, len(items), tail, len(tail), reason)


def _since_summary(items: Sequence[dict[str, Any]], view: list[dict[str, Any]],
                   is_summary: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """The messages of ``view`` written after its last summary, in the order they were written.
    A view message is an input line (OpenCode's messages: their place in the file says when they
    were written, and a kept tail moved after the summary is older than it) or one the agent's
    lines hold (Gemini's checkpoint: the view's own order is the written order)."""
    order = {id(e): i for i, e in enumerate(items)}
    last = max((k for k, m in enumerate(view) if is_summary(m)), default=-1)
    written = order.get(id(view[last])) if last >= 0 else None
    after = [m for m in view[last + 1:]
             if written is None or order.get(id(m), written + 1) > written]
    return sorted(after, key=lambda m: order.get(id(m), -1)) if written is not None else after


def _opens_turn(entry: dict[str, Any], fmt: str) -> bool:
    """True for a user message that is not a tool result: a kept tail starts there, so that no
    result in it is cut from its call."""
    return role_of(entry, fmt) == "user" and next(iter_tool_results(entry, fmt), None) is None


def plan_summary(items: list[dict[str, Any]], fmt: str | None = None, *, keep_last: int = 0,
                 keep_tokens: int = 0, restore_files: int = 0, instructions: str | None = None,
                 max_summary_tokens: int = 8000) -> _Plan:
    """What :func:`compact` would summarize (``.request``) and keep (``.tail``); ``fmt``
    detected from the entries when not given."""
    if fmt is None:
        from ctxtool.formats.detect import detect_format
        fmt = detect_format(iter(items))[0]
    return _plan(items, fmt, SummarizeOptions(keep_last=keep_last, keep_tokens=keep_tokens,
                                              restore_files=restore_files,
                                              instructions=instructions,
                                              max_summary_tokens=max_summary_tokens))


def compact(entries: Iterable[dict[str, Any]], *, fmt: str, summarizer: Summarizer,
            options: SummarizeOptions = SummarizeOptions(), store: TranscriptStore | None = None,
            progress: Progress = no_progress) -> Compaction:
    """Summarize ``entries``; see the module docstring. Raises LLMError when the summarizer fails
    (unless ``passthrough_on_error``), StoreError when the original cannot be saved.

    A Claude Code transcript given as a source that can be read twice (a LazySource), summarized
    by a backend that reads turns one at a time, with nothing kept verbatim or restored, is not
    held: :func:`_compact_stream` reads it twice (``entries`` of the result is then an iterator
    over the second read)."""
    if isinstance(entries, LazySource) and reads_twice(fmt, summarizer, options):
        return _compact_stream(entries, fmt=fmt, summarizer=summarizer, options=options)
    items = list(entries)
    report = SummarizeReport(backend=summarizer.name, model=summarizer.model, entries_in=len(items))
    report.tokens_before = _context_tokens(items, fmt)
    unchanged = Compaction(items, None, report)
    report.reason = _not_due(options, report.tokens_before)
    if report.reason:
        return _finish(unchanged, fmt)
    plan = _plan(items, fmt, options)
    if plan.reason:
        report.reason = plan.reason
        return _finish(unchanged, fmt)
    started = time.monotonic()
    try:
        result = summarizer.summarize(plan.request, progress=progress)
    except LLMError as exc:
        if not options.passthrough_on_error:
            raise
        report.error = exc.format()
        return _finish(unchanged, fmt)
    _record(report, result, started, options)
    report.kept_messages = plan.kept_messages
    output = _write(items, items[:plan.cut], plan.tail, fmt, result.text, options, report, store)
    after = _context_tokens(output, fmt)
    if after >= report.tokens_before:  # a summary must never cost more than it replaces
        report.reason = _not_smaller(report.tokens_before, after)
        report.restored_files, report.transcript_saved = [], None
        return _finish(unchanged, fmt)
    report.compacted = True
    return _finish(Compaction(output, result.text, report), fmt)


def _not_smaller(before: int, after: int) -> str:
    return f"the summary would not make the context smaller ({before:,} -> {after:,} tokens)"


def _not_due(options: SummarizeOptions, tokens: int) -> str | None:
    """Why an automatic compaction is not due (the context below its threshold), or None."""
    threshold = options.auto_compact_at
    if options.auto and (threshold is None or tokens < threshold):
        limit = "auto-compact is off" if threshold is None else f"{threshold:,}"
        return f"context {tokens:,} tokens is below the auto-compact threshold ({limit})"
    return None


def reads_twice(fmt: str, summarizer: Summarizer, options: SummarizeOptions) -> bool:
    """Whether :func:`compact` of a re-readable source reads it twice instead of holding it
    (then every entry it writes comes from the second read, none is re-serialized)."""
    keeps = bool(options.keep_last or options.keep_tokens or options.restore_files)
    return streams(fmt, summarizer, keeps_messages=keeps)


def _record(report: SummarizeReport, result: SummaryResult, started: float,
            options: SummarizeOptions) -> None:
    """What the summary cost; ``started``: the monotonic clock when the compaction began (a
    clock fixed with ``now`` does not move: 0 ms, so that output is reproducible)."""
    report.duration_ms = 0 if options.now else round((time.monotonic() - started) * 1000)
    for key in ("calls", "chunks", "dropped", "input_tokens", "output_tokens"):
        setattr(report, key, getattr(result, key))
    report.notes = list(result.notes)
    report.summary_tokens = estimate_text_tokens(result.text)


def _finish(compaction: Compaction, fmt: str) -> Compaction:
    assert isinstance(compaction.entries, list)
    compaction.report.entries_out = len(compaction.entries)
    compaction.report.tokens_after = _context_tokens(compaction.entries, fmt)
    return compaction


def _compact_stream(source: LazySource, *, fmt: str, summarizer: Summarizer,
                    options: SummarizeOptions) -> Compaction:
    """:func:`compact` of a transcript read twice, never held: the first read
    (:func:`ctxtool.core.summarizing.stream.scan`) makes the summary, the second copies the input
    and the new entries follow. Same output and report as the buffered way."""
    assert isinstance(summarizer, StreamingSummarizer)
    started = time.monotonic()  # the summary is made while the transcript is read
    found = scan(source, fmt, summarizer, instructions=options.instructions,
                 max_summary_tokens=options.max_summary_tokens)
    if not found.messages:  # a subagent's own transcript: nothing but a side chain
        found = scan(source, fmt, summarizer, instructions=options.instructions,
                     max_summary_tokens=options.max_summary_tokens, sidechains=True)
    report = SummarizeReport(backend=summarizer.name, model=summarizer.model,
                             entries_in=found.count, tokens_before=found.meter.context_tokens)
    report.entries_out, report.tokens_after = report.entries_in, report.tokens_before
    unchanged = Compaction(source.iter_parsing(()), None, report)
    report.reason = _not_due(options, report.tokens_before)
    if report.reason:
        return unchanged
    if not found.builder.has_recent_turns:
        report.reason = "nothing to summarize: " + (
            "no messages since the last compaction" if found.builder.count else "no messages")
        return unchanged
    try:
        result = found.sink.finish(found.builder.request())
    except LLMError as exc:
        if not options.passthrough_on_error:
            raise
        report.error = exc.format()
        return unchanged
    _record(report, result, started, options)
    measured: dict[int, int] = {}

    def context_after(lines: list[dict[str, Any]]) -> int:  # the meter goes on over them, once
        if id(lines) not in measured:
            for entry in lines:
                found.meter.add(entry)
            measured[id(lines)] = found.meter.context_tokens
        return measured[id(lines)]

    written = _lines(found.writer, fmt, result.text, options, report, digest=found.digest,
                     items=None, head=None, tail=[], main=None, restore=[],
                     context_after=context_after)
    added = written.lines
    after = context_after(added)
    if after >= report.tokens_before:  # a summary must never cost more than it replaces
        report.reason = _not_smaller(report.tokens_before, after)
        return Compaction(source.iter_parsing(()), None, report)
    report.entries_out, report.tokens_after = found.count + len(added), after
    report.compacted = True
    return Compaction(chain(source.iter_parsing(()), added), result.text, report)


def _write(items: list[dict[str, Any]], head: list[dict[str, Any]], tail: list[dict[str, Any]],
           fmt: str, summary: str, options: SummarizeOptions, report: SummarizeReport,
           store: TranscriptStore | None) -> list[dict[str, Any]]:
    """The output: the input and the lines the agent's writer appends, or (an output that does
    not keep the input's lines) what it writes instead, the input saved in ``store`` first."""
    adapter = adapter_for(fmt)
    main = [items[i] for i in main_chain(items, fmt)]
    writer = adapter.compaction_writer()
    for entry in main:
        writer.add(entry)
    digest = _digest(items)
    if not adapter.summary_keeps_lines:
        _save(items, digest, report, store)
    written = _lines(writer, fmt, summary, options, report, digest=digest, items=items,
                     head=head, tail=tail, main=main,
                     restore=_restore(head, fmt, options.restore_files),
                     context_after=lambda lines: _context_tokens([*items, *lines], fmt))
    return written.lines if written.replaces else [*items, *written.lines]


def _lines(writer: Any, fmt: str, summary: str, options: SummarizeOptions,
           report: SummarizeReport, *, digest: str, items: list[dict[str, Any]] | None,
           head: list[dict[str, Any]] | None, tail: list[dict[str, Any]],
           main: list[dict[str, Any]] | None, restore: list[tuple[Any, str]],
           context_after: Callable[[list[dict[str, Any]]], int]) -> CompactionLines:
    """What ``writer`` writes for this run (the report takes its notes and restored files)."""
    moment = options.now or datetime.now(timezone.utc)
    written = writer.write(CompactionWrite(
        summary=summary, items=items, head=head, tail=tail, main=main,
        timestamp=iso_timestamp(moment), now_ms=int(moment.timestamp() * 1000),
        auto=options.auto, pre_tokens=report.tokens_before, duration_ms=report.duration_ms,
        digest=digest, restored=[(record.path, note) for record, note in restore],
        backend=report.backend, model=report.model, input_tokens=report.input_tokens,
        output_tokens=report.output_tokens, transcript_saved=report.transcript_saved,
        marker=SUMMARY_MARKER,
        continuation=lambda kept, path, closing=CONTINUE_NOTE if options.auto else None:
        continuation_text(summary, transcript_path=path, closing=closing, kept=kept),
        transcript_path=options.transcript_path, context_after=context_after))
    report.notes.extend(written.notes)
    report.restored_files.extend(written.restored)
    if written.kept_messages is not None:
        report.kept_messages = written.kept_messages
    return written


def _save(items: list[dict[str, Any]], digest: str, report: SummarizeReport,
          store: TranscriptStore | None) -> None:
    """The whole input, saved before an output that does not keep its lines."""
    if store is not None:
        data = b"".join(iter_lines_out(items))  # the input's own bytes
        report.transcript_saved = store.save_transcript(data, name=f"transcript-{digest[:16]}",
                                                        session_id=None)
    else:
        report.notes.append("no store given: the original list was not saved")


def _restore(head: Sequence[dict[str, Any]], fmt: str, count: int) -> list[tuple[Any, str]]:
    if count <= 0:
        return []
    state = collect_file_state([head[i] for i in main_chain(head, fmt)], fmt)
    return restored_files(state.recent(len(state.files)), count)


def summarize(entries: Iterable[dict[str, Any]], *, fmt: str, summarizer: Summarizer,
              options: SummarizeOptions = SummarizeOptions(), store: TranscriptStore | None = None,
              progress: Progress = no_progress,
              report: SummarizeReport | None = None) -> Iterator[dict[str, Any]]:
    """The compacted transcript, entry by entry (see :func:`compact`); ``report`` is filled in."""
    done = compact(entries, fmt=fmt, summarizer=summarizer, options=options, store=store,
                   progress=progress)
    if report is not None:
        report.__dict__.update(done.report.__dict__)
    yield from done.entries
