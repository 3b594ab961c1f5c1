"""``microcompact``: clear old tool results, the way Claude Code and OpenCode do before a call.

Three strategies choose which results go (facts: DESIGN §5, seeds 000, 001 and 003):

* ``claude-code`` (Claude Code v2.1.19): the compactable tools' calls in order; the newest
  ``keep`` (3) are protected whatever their size; oldest first, a result is cleared while the
  compactable results still hold more than ``target`` (40,000) tokens. Nothing happens unless
  that saves at least ``clear_at_least`` (20,000) tokens and the context is at or above
  ``trigger`` (the warning threshold of the Claude Code version that wrote the transcript);
  ``force`` skips those two conditions, like a manual ``/compact``. Results are counted as
  the agent counts them (its adapter's ``clearing_count``: Claude Code's characters / 4),
  and the boundary records that count, as Claude Code's does.
* ``opencode`` (OpenCode's prune): newest first, skipping the newest ``protect_turns`` (2) user
  turns and ``protect`` tools (``skill``) and stopping at an already cleared result; the newest
  ``target`` tokens of tool output are kept and the older ones pruned, only when more than
  ``clear_at_least`` tokens would go.
* ``idle`` (Claude Code's time-based path): when more than ``idle`` passed between the last
  assistant entry and ``now`` (by default 54 minutes for Claude Code 2.1.286+, whose idle
  compaction fires then, else 60), every compactable result but the newest ``keep`` (5) is
  cleared, if that saves at least ``clear_at_least``.

On OpenCode sessions every strategy marks the chosen tool parts ``state.time.compacted`` instead
of replacing their output, as OpenCode's prune does (:mod:`ctxtool.core.clearing.marking`); the
strategies themselves are in :mod:`ctxtool.core.clearing.choosing`.

Only results after the last compaction count (earlier ones are not in the model's context),
results already cleared (a placeholder or a ``<persisted-output>`` preview) are skipped, so a
second run changes nothing, and the calls the agent's own ``microcompact_boundary`` lines list
(Claude Code cleared them itself; their content is still in the file) are neither cleared nor
counted again. Claude Code transcripts get a ``system`` entry with subtype
``microcompact_boundary`` appended, shaped like the ones Claude Code writes.

Reads its input twice (see :mod:`ctxtool.core.clearing.twopass`); holds one small record per tool call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from ctxtool.core.clearing.choosing import (CLEAR_AT_LEAST, COMPACTABLE_TOOLS, IDLE,
                                            PROTECTED_TOOLS, STRATEGIES, TARGET_TOKENS,
                                            MicrocompactOptions, MicrocompactReport, Selection,
                                            measures_context, select, strategy_defaults)
from ctxtool.core.clearing.marking import microcompact_by_marking
from ctxtool.core.clearing.replace import Clearing, iter_cleared, microcompact_placeholder
from ctxtool.core.clearing.twopass import (Limits, ToolScan, default_limits, reiterable,
                                           scan_tools, second_pass)
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.formats.registry import adapter_for
from ctxtool.types import ResultStore


def microcompact(entries: Iterable[dict[str, Any]], *, fmt: str, store: ResultStore | None,
                 now: datetime, options: MicrocompactOptions = MicrocompactOptions(),
                 limits: Limits | None = None,
                 report: MicrocompactReport | None = None) -> Iterator[dict[str, Any]]:
    """Clear old tool results (see the module docstring). Reads ``entries`` twice: pass a list
    or a :class:`~ctxtool.core.clearing.twopass.LazySource`; a one-shot iterator is buffered.
    ``store`` None drops the cleared content (--no-save)."""
    entries = reiterable(entries)
    report = report if report is not None else MicrocompactReport()
    report.strategy, report.trigger = options.strategy, "manual" if options.force else "auto"
    adapter = adapter_for(fmt)
    if adapter.clears_by_marking:  # marked compacted, as OpenCode does: the output stays
        yield from microcompact_by_marking(list(entries), fmt=fmt, now=now, options=options,
                                           limits=limits or default_limits, report=report)
        return
    meter = ContextMeter(fmt) if measures_context(options) else None
    view = adapter.clearing_view(entries)  # Gemini: the records it sends, not its lines
    scan = scan_tools(entries if view is None else view, fmt=fmt, meter=meter)
    report.clear.entries = scan.entries
    report.selection = select(scan, options, now=now, limits=limits or default_limits,
                              report=report)
    chosen = report.selection.records
    inputs = frozenset(r.id for r in chosen if r.input_clearable) \
        if options.clear_tool_inputs else frozenset()
    clearing = Clearing({r.id: r for r in chosen}, microcompact_placeholder, store, inputs,
                        report.clear)
    # the second pass parses only the lines it changes: the results', and the calls' whose
    # input is cleared too
    lines = {line for r in chosen for line in (r.lines if r.id in inputs else r.result_lines)}
    last: dict[str, Any] | None = None
    for last in iter_cleared(second_pass(entries, lines), fmt=fmt, clearing=clearing):
        yield last
    cleared = set(report.clear.cleared_ids)
    report.agent_tokens_saved = sum(r.agent_tokens for r in chosen if r.id in cleared)
    if adapter.writes_clearing_boundary and report.clear.results_cleared:
        report.boundary = True
        yield boundary_entry(scan, report, now=now, after=last)


def default_strategy(fmt: str) -> str:
    """The strategy of the agent that wrote the transcript: OpenCode's prune for its sessions."""
    return adapter_for(fmt).clearing_strategy




# --- the boundary entry ---------------------------------------------------------------------------

def boundary_entry(scan: ToolScan, report: MicrocompactReport, *, now: datetime,
                   after: dict[str, Any] | None = None) -> dict[str, Any]:
    """The clearing record the agent appends after clearing (Claude Code's
    ``microcompact_boundary``: :meth:`~ctxtool.formats.adapter.FormatAdapter.clearing_record`);
    ``after`` is the entry it follows."""
    return adapter_for(scan.fmt).clearing_record(
        last=scan.last_entry,
        ids=list(dict.fromkeys(report.clear.cleared_ids)), trigger=report.trigger,
        pre_tokens=report.selection.tokens_before, tokens_saved=report.agent_tokens_saved,
        estimated_saved=report.tokens_saved, now=now, after=after)


__all__ = ["CLEAR_AT_LEAST", "COMPACTABLE_TOOLS", "IDLE", "PROTECTED_TOOLS", "STRATEGIES",
           "TARGET_TOKENS", "MicrocompactOptions", "MicrocompactReport", "Selection",
           "boundary_entry", "default_strategy", "microcompact", "select", "strategy_defaults"]
