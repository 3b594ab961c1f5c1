"""``microcompact`` on sessions whose agent hides cleared results by a mark (OpenCode,
:attr:`ctxtool.formats.adapter.FormatAdapter.clears_by_marking`): mark tool parts compacted, as
OpenCode's prune does.

OpenCode never rewrites a tool output to clear it: ``SessionCompaction.prune`` sets
``state.time.compacted`` and its loader then shows the model ``[Old tool result content
cleared]``. On OpenCode input every strategy does the same, so the output stays in the file:
nothing is lost, no store is needed, and ``restore`` has nothing to undo.

* ``opencode``: OpenCode's own prune, exactly (:func:`ctxtool.formats.opencode.session.prune_marks`: its
  chars/4 estimate, the two newest user turns and ``skill`` protected, the walk stopping at a
  summary or at a part already compacted, at least 20,000 tokens or nothing);
* ``claude-code`` and ``idle``: their choice, made over the messages in OpenCode's context now
  (after its last compaction), with Claude Code's tool names matched in any case (``Read`` is
  OpenCode's ``read``).

The session is buffered, as OpenCode reads it. ``clear_tool_inputs`` does not apply: OpenCode has
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
from ctxtool.formats.opencode.session import mark_compacted, prune_marks
from ctxtool.formats.opencode.view import CLEARED, is_message, output_text, parts_of, string
from ctxtool.formats.registry import adapter_for


def microcompact_by_marking(entries: list[dict[str, Any]], *, fmt: str, now: datetime,
                            options: MicrocompactOptions, limits: Limits,
                            report: MicrocompactReport) -> list[dict[str, Any]]:
    """The session with the chosen tool parts marked compacted (see the module docstring)."""
    if options.clear_tool_inputs:
        raise UsageError("--clear-tool-inputs does not apply to OpenCode sessions",
                         hint="OpenCode keeps tool inputs; microcompact marks outputs compacted")
    now_ms = int(now.timestamp() * 1000)
    if options.strategy == "opencode":
        out, marked = _prune(entries, now_ms, options, report)
    else:
        out, marked = _choose_and_mark(entries, fmt, now, now_ms, options, limits, report)
    _account(report, entries, out, marked)
    return out


def _prune(entries: list[dict[str, Any]], now_ms: int, options: MicrocompactOptions,
           report: MicrocompactReport) -> tuple[list[dict[str, Any]], list[str]]:
    shielded = {n for name in options.protect for n in (name, name.lower())}
    result = prune_marks(entries, now_ms=now_ms, protect=options.target,
                         minimum=-1 if options.force else options.clear_at_least,
                         protected_tools=shielded | set(options.exclude_tools),
                         protect_turns=options.protect_turns)
    skipped = None
    if not result.marked:
        skipped = (f"older tool output holds {result.total} tokens, not more than --target "
                   f"{options.target}") if not result.pruned else (
            f"pruning would remove {result.pruned} tokens, not more than --clear-at-least "
            f"{options.clear_at_least}")
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
    return mark_compacted(entries, [r.id for r in report.selection.records], now_ms=now_ms)


def _account(report: MicrocompactReport, entries: list[dict[str, Any]],
             out: list[dict[str, Any]], marked: list[str]) -> None:
    """The clearing figures of the report for the marked parts (changed entries are new
    objects; the others are the input's own)."""
    clear = report.clear
    clear.entries = len(out)
    wanted = set(marked)
    for old, entry in zip(entries, out):
        if entry is old or not is_message(entry):
            continue
        clear.entries_changed += 1
        for part in parts_of(entry):
            if part.get("type") != "tool" or string(part.get("callID")) not in wanted:
                continue
            before, after = result_tokens(output_text(part) or ""), result_tokens(CLEARED)
            stats = clear.per_tool.setdefault(str(part.get("tool") or "?"), ToolStats())
            stats.cleared += 1
            stats.tokens_before += before
            stats.tokens_after += after
            clear.tokens_before += before
            clear.tokens_after += after
    clear.results_cleared = len(marked)
    clear.cleared_ids = list(marked)
    report.marked = bool(marked)


__all__ = ["microcompact_by_marking"]
