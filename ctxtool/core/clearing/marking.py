"""``microcompact`` on sessions whose agent hides cleared results by a mark
(:attr:`ctxtool.formats.adapter.FormatAdapter.clears_by_marking`; OpenCode): mark tool results
cleared, as the agent's own prune does (:meth:`~ctxtool.formats.adapter.FormatAdapter.marked_cleared`).

Such an agent never rewrites a tool output to clear it (OpenCode's ``SessionCompaction.prune``
sets ``state.time.compacted`` and its loader then shows the model
:attr:`~ctxtool.formats.adapter.FormatAdapter.cleared_result_text`). On its input every strategy
does the same, so the output stays in the file: nothing is lost, no store is needed, and
``restore`` has nothing to undo.

* the agent's own strategy (:attr:`~ctxtool.formats.adapter.FormatAdapter.clearing_strategy`):
  its own prune, exactly (:meth:`~ctxtool.formats.adapter.FormatAdapter.own_prune`; OpenCode's
  chars/4 estimate, the two newest user turns and ``skill`` protected, the walk stopping at a
  summary or at a part already compacted, at least 20,000 tokens or nothing);
* the others (``claude-code``, ``idle``): their choice, made over the messages in the agent's
  context now (after its last compaction), with Claude Code's tool names matched in any case
  (``Read`` is OpenCode's ``read``).

The session is buffered, as the agent reads it. ``clear_tool_inputs`` does not apply: there is
no mark for a cleared input.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from ctxtool.core.clearing.choosing import (MicrocompactOptions, MicrocompactReport, Selection,
                                            measures_context, select)
from ctxtool.core.clearing.replace import ToolStats
from ctxtool.core.clearing.twopass import Limits, result_tokens, scan_tools
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.errors import UsageError
from ctxtool.formats.capabilities.clearing import ClearingAdapter
from ctxtool.formats.registry import adapter_for


def microcompact_by_marking(entries: list[dict[str, Any]], *, fmt: str, now: datetime,
                            options: MicrocompactOptions, limits: Limits,
                            report: MicrocompactReport) -> list[dict[str, Any]]:
    """The session with the chosen tool parts marked compacted (see the module docstring)."""
    adapter = adapter_for(fmt)
    if options.clear_tool_inputs:
        raise UsageError(f"--clear-tool-inputs does not apply to {adapter.title} sessions",
                         hint=f"{adapter.title} keeps tool inputs; microcompact marks outputs "
                              "compacted")
    now_ms = int(now.timestamp() * 1000)
    if options.strategy == adapter.clearing_strategy:
        out, marked = _prune(adapter, entries, now_ms, options, report)
    else:
        out, marked = _choose_and_mark(entries, fmt, now, now_ms, options, limits, report)
    _account(adapter, report, entries, out, marked)
    return out


def _prune(adapter: ClearingAdapter, entries: list[dict[str, Any]], now_ms: int,
           options: MicrocompactOptions,
           report: MicrocompactReport) -> tuple[list[dict[str, Any]], list[str]]:
    shielded = {n for name in options.protect for n in (name, name.lower())}
    result = adapter.own_prune(entries, now_ms=now_ms, protect=options.target,
                         minimum=-1 if options.force else options.clear_at_least,
                         protected_tools=shielded | set(options.exclude_tools),
                         protect_turns=options.protect_turns)
    skipped = None
    if not result.marked:
        skipped = (f"older tool output holds {result.total:,} tokens, not more than --target "
                   f"{options.target:,}") if not result.pruned else (
            f"pruning would remove {result.pruned:,} tokens, not more than --clear-at-least "
            f"{options.clear_at_least:,}")
    report.selection = Selection([], result.total, result.pruned if result.marked else 0, skipped)
    return result.entries, result.marked


def _choose_and_mark(entries: list[dict[str, Any]], fmt: str, now: datetime, now_ms: int,
                     options: MicrocompactOptions, limits: Limits,
                     report: MicrocompactReport) -> tuple[list[dict[str, Any]], list[str]]:
    def either_case(names: frozenset[str]) -> frozenset[str]:
        return names | {name.lower() for name in names}

    options = replace(options, tools=either_case(options.tools),
                      exclude_tools=either_case(options.exclude_tools))
    meter = ContextMeter(fmt) if measures_context(options) else None
    scan = scan_tools(adapter_for(fmt).context_entries(entries), fmt=fmt, meter=meter)
    report.selection = select(scan, options, now=now, limits=limits, report=report)
    return adapter_for(fmt).marked_cleared(entries, [r.id for r in report.selection.records],
                                           now_ms=now_ms)


def _account(adapter: ClearingAdapter, report: MicrocompactReport, entries: list[dict[str, Any]],
             out: list[dict[str, Any]], marked: list[str]) -> None:
    """The clearing figures of the report for the marked parts (changed entries are new
    objects; the others are the input's own)."""
    clear = report.clear
    clear.entries = len(out)
    wanted = set(marked)
    for old, entry in zip(entries, out):
        if entry is old or adapter.api_message(entry) is None:
            continue
        clear.entries_changed += 1
        for call_id, tool, text in adapter.results_named(entry):
            if call_id not in wanted:
                continue
            before, after = result_tokens(text), result_tokens(adapter.cleared_result_text)
            stats = clear.per_tool.setdefault(tool, ToolStats())
            stats.cleared += 1
            stats.tokens_before += before
            stats.tokens_after += after
            clear.tokens_before += before
            clear.tokens_after += after
    clear.results_cleared = len(marked)
    clear.cleared_ids = list(marked)
    report.marked = bool(marked)


__all__ = ["microcompact_by_marking"]
