"""``ctxtool microcompact``: clear old tool results, as Claude Code does before each call."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import click
from click.core import ParameterSource

from ctxtool.clock import parse_duration, parse_now
from ctxtool.core.clearing.microcompact import (CLEAR_AT_LEAST, COMPACTABLE_TOOLS, PROTECTED_TOOLS,
                                       STRATEGIES, TARGET_TOKENS, MicrocompactOptions,
                                       MicrocompactReport, default_strategy, microcompact,
                                       strategy_defaults)
from ctxtool.formats.registry import adapter_for
from ctxtool.io.clearing import ClearingSettings, clearing_options, csv_set, run_clearing
from ctxtool.io.options import (ReportOptions, in_place_options, io_options, now_option,
                                 report_options)
from ctxtool.io.spool import FileSource
from ctxtool.io.streams import IOOptions

@click.command("microcompact")
@io_options
@in_place_options(force=False)  # its own --force covers --in-place too
@click.option("--strategy", type=click.Choice(STRATEGIES),
              help="claude-code: clear oldest results down to --target; opencode: prune "
                   "output older than the last user turns; idle: clear all but --keep after "
                   "an idle gap; gemini: Gemini CLI's masking (the newest --target 50000 tool "
                   "tokens kept, only when --clear-at-least 30000 go). Default: the session's "
                   "agent's own (opencode, gemini), else claude-code.")
@click.option("--keep", type=click.IntRange(min=0), metavar="N",
              help="Newest compactable tool calls left intact (Anthropic's `keep`). "
                   "Default: 3, or 5 with --strategy idle.")
@click.option("--target", type=click.IntRange(min=0), default=TARGET_TOKENS, show_default=True,
              help="Clear until compactable results hold at most this many tokens (opencode, "
                   "gemini: the newest tool output protected; gemini's default: 50000).")
@click.option("--clear-at-least", type=click.IntRange(min=0), default=CLEAR_AT_LEAST,
              show_default=True,
              help="Clear nothing unless at least this many tokens would go (Anthropic's "
                   "`clear_at_least`; gemini's default: 30000).")
@click.option("--trigger", type=click.IntRange(min=0), metavar="TOKENS",
              help="Run only when the context holds at least this many tokens (Anthropic's "
                   "`trigger`). Default: Claude Code's warning threshold for the model.")
@click.option("--force", is_flag=True,
              help="Skip the --trigger and --clear-at-least conditions (like a manual /compact); "
                   "with --in-place, also rewrite files modified within --live-window.")
@click.option("--tools", metavar="A,B",
              help=f"Compactable tools (default: {', '.join(sorted(COMPACTABLE_TOOLS))}).")
@click.option("--include-mcp", is_flag=True, help="Also clear results of mcp__* tools.")
@click.option("--exclude-tools", metavar="A,B",
              help="Tools whose results are never cleared (Anthropic's `exclude_tools`).")
@click.option("--protect", metavar="A,B", default=",".join(sorted(PROTECTED_TOOLS)),
              show_default=True, help="opencode: tools never pruned (any case); gemini's "
                   "default: its exempt tools (activate_skill, ask_user, enter/exit_plan_mode).")
@click.option("--protect-turns", type=click.IntRange(min=0), default=2, show_default=True,
              help="opencode: newest user turns whose tool output is never pruned.")
@click.option("--idle", "idle", metavar="DURATION",
              help="idle: clear only after this gap since the last assistant entry "
                   "(5m, 2h; a bare number means minutes; 5m matches a 5-minute prompt cache). "
                   "Default: 54m for sessions of Claude Code 2.1.286+ (its idle compaction "
                   "fires then), else 60m.")
@now_option
@click.option("--clear-tool-inputs", is_flag=True,
              help="Also blank the inputs of cleared tool uses (saved too; Anthropic's "
                   "`clear_tool_inputs`).")
@clearing_options
@report_options
def microcompact_cmd(io: IOOptions, strategy: str | None, keep: int | None, target: int,
                     clear_at_least: int, trigger: int | None, force: bool, tools: str | None,
                     include_mcp: bool, exclude_tools: str | None, protect: str,
                     protect_turns: int, idle: str | None, now: str | None,
                     clear_tool_inputs: bool,
                     clear: ClearingSettings, report: ReportOptions) -> None:
    """Replace old tool results with short placeholders.

    Each cleared result is saved to the store first and replaced with Claude Code's own
    placeholder naming the file (`ctxtool restore` brings it back); Claude Code transcripts get
    a microcompact_boundary entry listing the cleared tool ids. tool_use blocks, order, ids and
    the uuid chain are kept, untouched lines stay byte-identical, and a second run changes
    nothing. Results are counted as Claude Code counts them (characters / 4) for the
    trigger, --target, --clear-at-least and the boundary's tokensSaved, and the tool calls
    Claude Code's own microcompact_boundary lines list are neither cleared nor counted again.
    DISABLE_COMPACT=1 or DISABLE_MICROCOMPACT=1 (in the environment or settings.json's env)
    passes the input through unchanged, as does an OpenCode session whose release would not
    prune: 1.4 and later prune only with `compaction.prune: true` in OpenCode's config, older
    ones unless it is false (OPENCODE_DISABLE_PRUNE: never). On OpenCode sessions
    the chosen tool parts are marked compacted (state.time.compacted), as OpenCode's own prune
    does: their output stays in the file and OpenCode shows the placeholder. On Gemini CLI
    sessions the default strategy is Gemini's own masking (the newest 50000 tokens of tool
    output kept, nothing unless 30000 go, its exempt tools left alone), among the records
    Gemini sends on resume; each chosen result, in both places Gemini keeps it, becomes
    Gemini's <tool_output_masked> preview naming the saved file, in the lines Gemini loads.

    \b
        ctxtool microcompact session.jsonl > smaller.jsonl
        ctxtool microcompact --force --keep 5 session.jsonl | ctxtool estimate
        ctxtool microcompact --strategy idle --idle 5m --in-place --live-window 0 session.jsonl
        cat chat.jsonl | ctxtool microcompact --strategy opencode --no-save > pruned.jsonl
    """
    io = dataclasses.replace(io, live=dataclasses.replace(io.live, force=force))
    options = MicrocompactOptions(
        strategy=strategy or "claude-code", keep=keep, target=target,
        clear_at_least=clear_at_least,
        trigger=trigger, force=force, tools=csv_set(tools) or COMPACTABLE_TOOLS,
        include_mcp=include_mcp, exclude_tools=csv_set(exclude_tools) or frozenset(),
        protect=csv_set(protect) or frozenset(), protect_turns=protect_turns,
        idle=_idle(idle) if idle is not None else None, clear_tool_inputs=clear_tool_inputs)
    moment = parse_now(now)
    context = click.get_current_context()
    given = {name for name in ("target", "clear_at_least", "protect")
             if context.get_parameter_source(name) is not ParameterSource.DEFAULT}

    def transform(fmt: str, source: FileSource,
                  run: MicrocompactReport) -> Iterator[dict[str, Any]]:
        off = adapter_for(fmt).compaction_switched_off("prune", source, env=os.environ)
        if off:  # the agent prunes nothing: neither does its microcompact
            run.selection.skipped = f"{off}: input passed through unchanged"
            return source
        chosen = options if strategy else replace(options, strategy=default_strategy(fmt))
        chosen = chosen if tools else replace(chosen, tools=adapter_for(fmt).compactable_tools)
        chosen = replace(chosen, **{name: value for name, value
                                    in strategy_defaults(chosen.strategy).items()
                                    if name not in given})
        # an agent that hides cleared results by a mark (OpenCode) keeps them: nothing to save
        store = None if adapter_for(fmt).clears_by_marking else clear.store(fmt, source)
        return microcompact(source, fmt=fmt, store=store, now=moment, options=chosen,
                            limits=functools.partial(clear.limits, fmt=fmt), report=run)

    run_clearing(io, clear, report, transform, MicrocompactReport)


def _idle(value: str) -> timedelta:
    """--idle: a duration, where a bare number means minutes (not days, as elsewhere)."""
    if re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        value = f"{value.strip()}m"
    return parse_duration(value, option="--idle")
