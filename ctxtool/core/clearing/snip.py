"""``snip``: clear tool results that newer ones made redundant (seed 001's "History Snip").

A result is snipped when it is superseded:

* a **read** of a file that is read again later with the same or a covering range (offset and
  limit), or that is edited or written after the read (its content is stale);
* an old **search**: beyond the newest ``keep_searches`` (3) results of the same search tool;
* an **identical** result: the same content as a newer one.

The newest ``keep`` (3) results are never snipped, nor are results smaller than ``min_tokens``
(the placeholder and its path would take as much room), nor results already cleared - which makes
a second run change nothing. Only results after the last compaction are looked at. By default it
runs whatever the context use; ``min_usage`` (percent of the effective window: the window less
20,000 output tokens, as the seed measures it) reproduces seed 001's "only above 60%".

What an agent does its own way comes from its adapter: its own tool names
(:attr:`~ctxtool.formats.adapter.FormatAdapter.own_tool_names`; OpenCode's ``read``, ``edit``,
``grep``, ``list``..., matched in lower case too), its calls read as Claude Code's
(:meth:`~ctxtool.formats.adapter.FormatAdapter.snip_view`; Codex CLI's ``exec_command`` running
``cat``, ``sed -n``, ``rg``... and its ``apply_patch``), the messages after its last compaction
(OpenCode's session is buffered, as OpenCode reads it) and where a result sits (an OpenCode
part's ``state.output`` becomes the placeholder, its input and attachments stay).

When it snipped results of a Claude Code transcript, a ``microcompact_boundary`` entry is
appended listing them, with the tokens saved before the last API call that records usage
(:mod:`ctxtool.core.clearing.boundary`): ``estimate`` subtracts them from that call's usage, and
``restore`` removes the entry.

Reads its input twice (see :mod:`ctxtool.core.clearing.twopass`); holds one small record per tool call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ctxtool.clock import parse_now
from ctxtool.core.clearing.boundary import AnchorSavings
from ctxtool.core.clearing.replace import ClearReport, Clearing, iter_cleared, snip_placeholder
from ctxtool.core.clearing.twopass import (LineKey, Limits, ToolRecord, ToolScan, default_limits,
                                  line_key, reiterable, scan_tools, second_pass)
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.errors import UsageError
from ctxtool.formats.capabilities.clearing import ClearingAdapter
from ctxtool.formats.registry import adapter_for
from ctxtool.types import ResultStore

READ_TOOLS = frozenset({"Read", "read_file", "view"})
WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "write_file", "edit_file",
                         "write", "edit", "patch"})
SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS", "WebSearch", "ToolSearch", "grep", "glob",
                          "grep_search", "list_files", "file_search", "codebase_search",
                          "web_search"})
MIN_TOKENS = 100  # a placeholder naming its saved file is about this long

READ_AGAIN = "read again later"
STALE = "file changed after the read"
OLD_SEARCH = "older search"
IDENTICAL = "identical to a newer result"


EFFECTIVE_RESERVE = 20_000  # --min-usage: the window less this many output tokens (seed 001)

@dataclass(frozen=True)
class SnipOptions:
    keep: int = 3
    keep_searches: int = 3
    read_tools: frozenset[str] = READ_TOOLS
    write_tools: frozenset[str] = WRITE_TOOLS
    search_tools: frozenset[str] = SEARCH_TOOLS
    identical: bool = True
    min_tokens: int = MIN_TOKENS
    min_usage: float | None = None  # percent of the context window

    def __post_init__(self) -> None:
        for name in ("keep", "keep_searches", "min_tokens"):
            if getattr(self, name) < 0:
                raise UsageError(f"--{name.replace('_', '-')} must not be negative")
        if self.min_usage is not None and not 0 <= self.min_usage <= 100:
            raise UsageError("--min-usage is a percentage between 0 and 100")


@dataclass
class SnipReport:
    context_tokens: int | None = None
    usage_percent: float | None = None
    reasons: Counter[str] = field(default_factory=Counter)
    skipped: str | None = None
    clear: ClearReport = field(default_factory=ClearReport)

    def as_dict(self) -> dict[str, Any]:
        return {"command": "snip", "context_tokens": self.context_tokens,
                "usage_percent": self.usage_percent, "skipped": self.skipped,
                "reasons": dict(sorted(self.reasons.items())), **self.clear.as_dict()}


def snip(entries: Iterable[dict[str, Any]], *, fmt: str, store: ResultStore | None,
         options: SnipOptions = SnipOptions(), limits: Limits | None = None,
         report: SnipReport | None = None,
         now: datetime | None = None) -> Iterator[dict[str, Any]]:
    """Snip superseded tool results (see the module docstring). Reads ``entries`` twice: pass a
    list or a :class:`~ctxtool.core.clearing.twopass.LazySource`; a one-shot iterator is buffered.
    ``store`` None drops the snipped content (--no-save). ``now`` stamps the boundary entry
    (None: the clock)."""
    entries = reiterable(entries)
    report = report if report is not None else SnipReport()
    meter = ContextMeter(fmt) if options.min_usage is not None else None
    scanned = entries
    adapter = adapter_for(fmt)
    if adapter.reads_whole_session:  # buffered: only what OpenCode's last compaction left in
        entries = list(entries)      # view counts
        scanned = adapter.context_entries(entries)
    if adapter.own_tool_names is not None:
        options = with_own_tools(options, adapter.own_tool_names)
    anchor: list[LineKey] = []  # Claude Code: where the last API call with usage is
    if adapter.writes_clearing_boundary:
        scanned = _noting_last_call(scanned, fmt, anchor)
    # an agent whose calls say what they read another way (Codex's shell commands) shows them
    # as Claude Code's; the base adapter's view is the block itself, not called
    view = adapter.snip_view if type(adapter).snip_view is not ClearingAdapter.snip_view else None
    scan = scan_tools(scanned, fmt=fmt, meter=meter, digests=options.identical, tool_view=view)
    report.clear.entries = scan.entries
    chosen = select_snips(scan, options, limits=limits or default_limits, report=report)
    clearing = Clearing({r.id: r for r in chosen}, snip_placeholder, store, report=report.clear)
    # the second pass parses only the lines it changes: the results' (snip leaves inputs alone)
    lines = {line for r in chosen for line in r.result_lines} | set(anchor)
    cleared = iter_cleared(second_pass(entries, lines), fmt=fmt, clearing=clearing)
    yield from (_with_boundary(cleared, scan, report.clear, now)
                if adapter.writes_clearing_boundary else cleared)


def _with_boundary(cleared: Iterator[dict[str, Any]], scan: ToolScan, report: ClearReport,
                   now: datetime | None) -> Iterator[dict[str, Any]]:
    """``cleared``, then (when something was snipped) the boundary listing the snipped ids and
    the tokens saved before the last API call with usage."""
    savings = AnchorSavings(scan.fmt)
    for entry in cleared:
        savings.note(entry, report.tokens_before - report.tokens_after)
        yield entry
    if report.results_cleared:
        yield adapter_for(scan.fmt).clearing_record(
            last=scan.last_entry,
            ids=list(dict.fromkeys(report.cleared_ids)), trigger="manual",
            pre_tokens=sum(r.tokens for r in scan.in_context()),
            tokens_saved=savings.before_anchor, now=now or parse_now(None), after=savings.last)


def _noting_last_call(entries: Iterable[dict[str, Any]], fmt: str,
                      anchor: list[LineKey]) -> Iterator[dict[str, Any]]:
    """``entries``, noting in ``anchor`` the line of the last entry with usage, so that the
    second pass parses that line (a lazy source leaves the others unparsed)."""
    usage = adapter_for(fmt).usage_of  # looked up once: this runs for every line
    for entry in entries:
        if not getattr(entry, "invalid", False) and usage(entry) is not None:
            key = line_key(entry)
            anchor[:] = [key] if key is not None else []
        yield entry


def with_own_tools(options: SnipOptions, own: Mapping[str, frozenset[str]]) -> SnipOptions:
    """``options`` with each tool set matching the agent's lower-case tool names too, plus the
    agent's own tools of that kind (``own``: set name -> names)."""
    return replace(options, **{
        name: getattr(options, name) | {n.lower() for n in getattr(options, name)} | extra
        for name, extra in own.items()})


def select_snips(scan: ToolScan, options: SnipOptions, *, limits: Limits,
                 report: SnipReport | None = None) -> list[ToolRecord]:
    """The results to snip, oldest first, from the first pass alone."""
    report = report if report is not None else SnipReport()
    if options.min_usage is not None:
        # of the effective window, as the source rule measures it (seed 001)
        window = max(1, limits(scan.model, scan.version).window - EFFECTIVE_RESERVE)
        report.context_tokens = scan.context_tokens or 0
        report.usage_percent = round(100 * report.context_tokens / window, 1)
        if report.usage_percent <= options.min_usage:
            report.skipped = (f"context use {report.usage_percent}% is not above --min-usage "
                              f"{options.min_usage:g}%")
            return []
    results = scan.in_context()
    protected = {r.id for r in results[max(0, len(results) - options.keep):]}
    reasons = _superseded_reads(scan, options)
    reasons.update((r.id, OLD_SEARCH) for r in _old_searches(results, options)
                   if r.id not in reasons)
    if options.identical:
        reasons.update((r.id, IDENTICAL) for r in _repeated(results) if r.id not in reasons)
    chosen = [r for r in results if r.id in reasons and r.id not in protected and r.clearable
              and r.tokens >= options.min_tokens]
    report.reasons.update(reasons[r.id] for r in chosen)
    if not chosen:
        report.skipped = "no superseded tool result"
    return chosen


def _superseded_reads(scan: ToolScan, options: SnipOptions) -> dict[str, str]:
    """Reads whose file is read again (same or covering range) or changed later."""
    reasons: dict[str, str] = {}
    later_reads: dict[str, list[tuple[int, float]]] = {}
    changed: set[str] = set()
    for record in reversed(scan.by_use()):
        if record.path is None:
            continue
        if record.name in options.write_tools:
            changed.add(record.path)
        elif record.name in options.read_tools and record.span is not None:
            spans = later_reads.setdefault(record.path, [])
            if record.path in changed:
                reasons[record.id] = STALE
            elif any(_covers(span, record.span) for span in spans):
                reasons[record.id] = READ_AGAIN
            spans.append(record.span)
    return reasons


def _covers(outer: tuple[int, float], inner: tuple[int, float]) -> bool:
    return outer[0] <= inner[0] and outer[1] >= inner[1]


def _old_searches(results: list[ToolRecord], options: SnipOptions) -> Iterator[ToolRecord]:
    """Search results beyond the newest ``keep_searches`` of the same tool."""
    seen: Counter[str] = Counter()
    for record in reversed(results):
        if record.name in options.search_tools:
            seen[record.name] += 1
            if seen[record.name] > options.keep_searches:
                yield record


def _repeated(results: list[ToolRecord]) -> Iterator[ToolRecord]:
    """Results whose content a newer result repeats exactly."""
    newer: set[tuple[int, int]] = set()
    for record in reversed(results):
        if record.digest is None:
            continue
        if record.digest in newer:
            yield record
        newer.add(record.digest)


__all__ = ["READ_TOOLS", "SEARCH_TOOLS", "WRITE_TOOLS", "SnipOptions", "SnipReport",
           "select_snips", "snip", "with_own_tools"]
