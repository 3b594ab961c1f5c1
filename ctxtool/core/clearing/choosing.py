"""Which tool results ``microcompact`` clears: its options, the four strategies
(``claude-code``, ``opencode``, ``idle``, ``gemini``; see
:mod:`ctxtool.core.clearing.microcompact`) and the report. Shared by the replacing path and the
marking path (:mod:`ctxtool.core.clearing.marking`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from ctxtool.core.clearing.replace import ClearReport
from ctxtool.core.clearing.twopass import Limits, ToolRecord, ToolScan
from ctxtool.errors import UsageError
from ctxtool.formats.capabilities.clearing import ClearingAdapter
from ctxtool.formats.registry import adapter_for, adapters

STRATEGIES = ("claude-code", "opencode", "idle", "gemini")
# the default adapter's (Claude Code's) compactable tools; an agent's own: its adapter's
COMPACTABLE_TOOLS = ClearingAdapter.compactable_tools
DEFAULT_KEEP = {"claude-code": 3, "idle": 5, "opencode": 0, "gemini": 0}
TARGET_TOKENS = 40_000  # uW2 / OpenCode PRUNE_PROTECT
CLEAR_AT_LEAST = 20_000  # BW2 / OpenCode PRUNE_MINIMUM
PROTECTED_TOOLS = frozenset({"skill"})  # OpenCode PRUNE_PROTECTED_TOOLS
IDLE = timedelta(minutes=60)


@dataclass(frozen=True)
class MicrocompactOptions:
    strategy: str = "claude-code"
    keep: int | None = None  # newest tool calls left alone; None: 3, or 5 for idle
    target: int = TARGET_TOKENS
    clear_at_least: int = CLEAR_AT_LEAST
    trigger: int | None = None  # context tokens; None: the warning threshold
    force: bool = False
    tools: frozenset[str] = COMPACTABLE_TOOLS
    include_mcp: bool = False
    exclude_tools: frozenset[str] = frozenset()
    protect: frozenset[str] = PROTECTED_TOOLS
    protect_turns: int = 2
    idle: timedelta | None = None  # None: the agent's own gap for the version, else IDLE
    clear_tool_inputs: bool = False

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise UsageError(f"unknown strategy {self.strategy!r}",
                             hint=f"use one of {', '.join(STRATEGIES)}")
        for name in ("keep", "target", "clear_at_least", "trigger", "protect_turns"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise UsageError(f"--{name.replace('_', '-')} must not be negative")

    @property
    def kept(self) -> int:
        return self.keep if self.keep is not None else DEFAULT_KEEP[self.strategy]

    def compactable(self, name: str) -> bool:
        if name in self.exclude_tools:
            return False
        return name in self.tools or (self.include_mcp and name.startswith("mcp__"))


@dataclass
class Selection:
    """The results a strategy chose, and the token counts Claude Code reports for them."""

    records: list[ToolRecord] = field(default_factory=list)  # the ones to clear
    tokens_before: int = 0  # tokens of the results the strategy looked at, as the agent counts
    tokens_saved: int = 0  # tokens of the chosen ones, as the agent counts (its boundary's)
    skipped: str | None = None  # why nothing is cleared, when nothing is
    #: every call the rule chose, as the agent counts them (results already cleared, or too
    #: small to shrink, included: they count in its savings), oldest first
    counted: list[ToolRecord] = field(default_factory=list)


@dataclass
class MicrocompactReport:
    strategy: str = "claude-code"
    trigger: str = "auto"
    context_tokens: int | None = None
    threshold: int | None = None
    selection: Selection = field(default_factory=Selection)
    clear: ClearReport = field(default_factory=ClearReport)
    boundary: bool = False
    marked: bool = False  # OpenCode: parts marked state.time.compacted, their output kept
    agent_tokens_saved: int = 0  # the cleared results as the agent counts them (its boundary's)

    @property
    def tokens_saved(self) -> int:
        """Net: the cleared results' tokens less their placeholders' (never the gross count)."""
        if not self.clear.results_cleared:
            return 0
        if self.marked:  # OpenCode keeps the output and shows its own short notice
            return self.selection.tokens_saved
        return max(0, self.clear.tokens_before - self.clear.tokens_after)

    def as_dict(self) -> dict[str, Any]:
        saved = self.tokens_saved
        extra = {"marked_compacted": True} if self.marked else {}
        return {"command": "microcompact", "strategy": self.strategy, "trigger": self.trigger,
                "context_tokens": self.context_tokens, "trigger_tokens": self.threshold,
                "tool_result_tokens_before": self.selection.tokens_before,
                "tool_result_tokens_after": self.selection.tokens_before
                - self.agent_tokens_saved,
                "tokens_saved": saved, "agent_tokens_saved": self.agent_tokens_saved,
                "skipped": self.selection.skipped,
                "boundary_appended": self.boundary, **extra, **self.clear.as_dict()}


def strategy_defaults(strategy: str) -> dict[str, Any]:
    """The option values a strategy takes from its agent when not given: the
    :attr:`~ctxtool.formats.adapter.FormatAdapter.clearing_defaults` of the adapter whose own
    strategy it is (Gemini's masking thresholds); empty for the others."""
    if strategy in (ClearingAdapter.clearing_strategy, "idle"):
        return {}  # Claude Code's are the options' own (and loading every adapter costs)
    return next((dict(a.clearing_defaults) for a in adapters()
                 if a.clearing_strategy == strategy), {})


def measures_context(options: MicrocompactOptions) -> bool:
    return options.strategy == "claude-code" and not options.force


# --- choosing -------------------------------------------------------------------------------------

def select(scan: ToolScan, options: MicrocompactOptions, *, now: datetime, limits: Limits,
           report: MicrocompactReport | None = None) -> Selection:
    """The results a strategy clears, from the first pass alone."""
    if options.strategy == "opencode":
        selection = _select_opencode(scan, options)
    elif options.strategy == "gemini":
        selection = _select_masking(scan, options)
    elif options.strategy == "idle":
        selection = _select_idle(scan, options, now)
    else:
        selection = _select_claude_code(scan, options, limits, report)
    if selection.skipped:
        return replace(selection, records=[])
    selection.counted = list(selection.records)
    selection.records = [r for r in selection.records if r.clearable]
    if not selection.records:
        selection.skipped = "no tool result to clear"
    return selection


def _candidates(scan: ToolScan, options: MicrocompactOptions) -> list[ToolRecord]:
    """The compactable tool calls as Claude Code lists them, in tool_use order: every call of
    a compactable tool since the last compaction, whatever its result (small, cleared already,
    not there yet), less those the agent's own clearing records list (:attr:`agent_cleared`:
    not cleared or counted again). Its newest ``keep`` are these calls' newest."""
    return [r for r in scan.by_use() if options.compactable(r.name)]


def _oldest_but(records: list[ToolRecord], keep: int) -> list[ToolRecord]:
    return records[:max(0, len(records) - keep)]


def _select_claude_code(scan: ToolScan, options: MicrocompactOptions, limits: Limits,
                        report: MicrocompactReport | None) -> Selection:
    """Claude Code's microcompact, in its own count of a result (``agent_tokens``): oldest
    first, past the newest ``keep`` calls, a result is chosen while the results still hold more
    than ``target``; the savings are the chosen results' count (what its boundary records)."""
    candidates = _candidates(scan, options)
    total = sum(r.agent_tokens for r in candidates)
    saved, chosen = 0, []
    for record in _oldest_but(candidates, options.kept):
        if total - saved > options.target:
            chosen.append(record)
            saved += record.agent_tokens
    selection = Selection(chosen, total, saved)
    if options.force or not chosen:
        return _explain_empty(selection, f"compactable results hold {total:,} tokens: "
                                         f"nothing past --keep {options.kept} to clear down "
                                         f"to --target {options.target:,}")
    trigger = options.trigger if options.trigger is not None \
        else limits(scan.model, scan.version).warning
    context = scan.context_tokens or 0
    if report is not None:
        report.context_tokens, report.threshold = context, trigger
    if context < trigger:
        selection.skipped = f"context is {context:,} tokens, below the trigger of {trigger:,}"
    elif saved < options.clear_at_least:
        selection.skipped = (f"clearing would save {saved:,} tokens, less than "
                             f"--clear-at-least {options.clear_at_least:,}")
    return selection


def _explain_empty(selection: Selection, reason: str) -> Selection:
    if not selection.records:
        selection.skipped = reason
    return selection


def _select_idle(scan: ToolScan, options: MicrocompactOptions, now: datetime) -> Selection:
    """Claude Code's clearing of an idle session: all compactable calls but the newest
    ``keep`` (5); the savings are the chosen results not cleared yet, in its own count, and
    must reach ``clear_at_least`` (20,000; as its keep-recent clearing requires)."""
    candidates = _candidates(scan, options)
    total = sum(r.agent_tokens for r in candidates)
    if scan.last_assistant_time is None:
        return Selection([], total, 0, "no assistant entry with a timestamp")
    gap, idle = now - scan.last_assistant_time, idle_gap(scan, options)
    if gap <= idle:
        return Selection([], total, 0, f"idle for {_minutes(gap)}, not more than "
                                       f"{_minutes(idle)}")
    chosen = _oldest_but(candidates, options.kept)
    saved = sum(r.agent_tokens for r in chosen if not r.cleared)
    selection = Selection(chosen, total, saved)
    if not options.force and chosen and saved < options.clear_at_least:
        selection.skipped = (f"clearing would save {saved} tokens, less than --clear-at-least "
                             f"{options.clear_at_least}")
    return _explain_empty(selection, f"no more than --keep {options.kept} compactable results")


def idle_gap(scan: ToolScan, options: MicrocompactOptions) -> timedelta:
    """--idle, else the agent's own (Claude Code 2.1.286+: 54 minutes), else 60 minutes."""
    if options.idle is not None:
        return options.idle
    return adapter_for(scan.fmt).idle_clearing_after(scan.version) or IDLE


def _minutes(delta: timedelta) -> str:
    return f"{delta.total_seconds() / 60:g} min"


def _select_opencode(scan: ToolScan, options: MicrocompactOptions) -> Selection:
    chosen, total, pruned = _past_target(_opencode_walk(scan, options), options.target,
                                         lambda record: record.tokens)
    selection = Selection(chosen, total, pruned)
    if not options.force and chosen and not pruned > options.clear_at_least:
        selection.skipped = (f"pruning would remove {pruned:,} tokens, not more than "
                             f"--clear-at-least {options.clear_at_least:,}")
    return _explain_empty(selection, f"older tool output holds {total:,} tokens, not more than "
                                     f"--target {options.target:,}")


def _opencode_walk(scan: ToolScan, options: MicrocompactOptions) -> Iterator[ToolRecord]:
    """OpenCode's prune walk, newest first: past the newest user turns and protected tools,
    up to the first result an earlier run pruned."""
    protect = {name.lower() for name in options.protect}
    for record in reversed(scan.in_context()):
        if record.turn > scan.turns - options.protect_turns:
            continue  # one of the newest user turns
        if record.name.lower() in protect or record.name in options.exclude_tools:
            continue
        if record.cleared:
            return  # everything older was pruned by an earlier run
        yield record


def _past_target(newest_first: Iterable[ToolRecord], target: int,
                 tokens: Callable[[ToolRecord], int]) -> tuple[list[ToolRecord], int, int]:
    """The newest ``target`` tokens kept: the record that goes past them and every older one,
    oldest first, with the tokens of all and of those."""
    total = past = 0
    chosen: list[ToolRecord] = []
    for record in newest_first:
        total += tokens(record)
        if total > target:
            past += tokens(record)
            chosen.append(record)
    chosen.reverse()
    return chosen, total, past


def _select_masking(scan: ToolScan, options: MicrocompactOptions) -> Selection:
    """Gemini CLI's tool-output masking (``ToolOutputMaskingService``), in its own count of a
    result (``agent_tokens``): newest first, results of ``protect`` tools and results cleared
    already left out, the newest keep ``target`` tokens; the result that goes past it and every
    older one are cleared, only when together they hold at least ``clear_at_least``. (Gemini
    counts each copy of a result it sends; ctxtool each call once. Its protection of the
    request's last content is the new prompt's: no stored result.)"""
    protect = options.protect | options.exclude_tools
    walk = (r for r in reversed(scan.in_context())
            if r.name not in protect and r.clearable and not r.cleared)
    chosen, total, pruned = _past_target(walk, options.target, lambda record: record.agent_tokens)
    selection = Selection(chosen, total, pruned)
    if not options.force and chosen and pruned < options.clear_at_least:
        selection.skipped = (f"masking would remove {pruned:,} tokens, less than "
                             f"--clear-at-least {options.clear_at_least:,}")
    return _explain_empty(selection, f"tool output holds {total:,} tokens, not more than "
                                     f"--target {options.target:,}")


__all__ = ["CLEAR_AT_LEAST", "COMPACTABLE_TOOLS", "IDLE", "PROTECTED_TOOLS", "STRATEGIES",
           "TARGET_TOKENS", "MicrocompactOptions", "MicrocompactReport", "Selection",
           "measures_context", "select", "strategy_defaults"]
