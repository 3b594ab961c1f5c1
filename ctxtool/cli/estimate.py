"""``ctxtool estimate``: how full the context window is, and what fills it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from ctxtool.core.sizing.estimate import (
    CATEGORIES, DEFAULT_SYSTEM_TOKENS, DEFAULT_TOP, EstimateReport, annotate, api_view, estimate,
)
from ctxtool.errors import InputError, LLMError, UsageError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import dumps_json, write_entries
from ctxtool.io import batch
from ctxtool.io.options import read_io_options
from ctxtool.io.terminal import (colour_enabled, fit_line, paint, shorten, shorten_middle,
                                  visible, width)
from ctxtool.io.streams import IOOptions, check_stdin, display_name, iter_file_entries, open_output
from ctxtool.storage.atomic import write_named
from ctxtool.storage.claude_settings import read_settings

# The timeline (its builder, renderers and html) and OpenCode's config files are imported where
# used: with --timeline, and for an OpenCode session's limits. Every run pays for what is here.
if TYPE_CHECKING:
    from ctxtool.core.sizing.timeline import Timeline, TimelineBuilder

DEFAULT_COUNT_MODEL = "claude-sonnet-4-5"  # for --exact when neither --model nor the file names one
NO_KEY_HINT = "set ANTHROPIC_API_KEY, or leave out --exact for the offline estimate"
LABELS = {
    "system_and_tools": "system prompt, tools, other", "user_text": "user text",
    "assistant_text": "assistant text", "thinking": "thinking", "tool_inputs": "tool inputs",
    "tool_results": "tool results", "images": "images", "compact_summaries": "compact summaries",
    "system_messages": "system messages",
}
SYMBOLS = {"system_and_tools": "S", "user_text": "U", "assistant_text": "A", "thinking": "T",
           "tool_inputs": "I", "tool_results": "R", "images": "M", "compact_summaries": "C",
           "system_messages": "Y"}
GRID_COLUMNS, GRID_ROWS = 50, 4
TIMELINE_SUFFIXES = (".svg", ".html", ".htm")
FREE, BUFFER = ".", "~"


@click.command("estimate")
@read_io_options
@click.option("--json", "as_json", is_flag=True,
              help="One JSON report per input file, one per line (schemas/estimate-report).")
@click.option("--grid", is_flag=True,
              help="Draw the window as a grid of cells: used by category, free, auto-compact buffer.")
@click.option("--per-entry", is_flag=True,
              help="Emit the transcript back as JSONL, each entry annotated under a 'ctxtool' key.")
@click.option("--model", metavar="NAME",
              help="Model whose window applies (default: the transcript's; '[1m]' suffix = 1M).")
@click.option("--context-window", type=click.IntRange(min=1), metavar="TOKENS",
              help="Context window size, overriding the model's.")
@click.option("--system-tokens", type=click.IntRange(min=0), default=None,
              envvar="CTXTOOL_SYSTEM_TOKENS", metavar="TOKENS",
              help="System prompt + tool definitions, assumed where no usage anchors the count "
                   "(after a compaction). Default: what the session's own API calls show, else "
                   f"{DEFAULT_SYSTEM_TOKENS} ($CTXTOOL_SYSTEM_TOKENS).")
@click.option("--no-usage", is_flag=True,
              help="Ignore recorded usage and estimate every message (after persist or snip "
                   "changed content the last API call saw).")
@click.option("--top", type=click.IntRange(min=0), default=DEFAULT_TOP, show_default=True,
              metavar="N", help="How many of the largest tool results to list.")
@click.option("--exact", is_flag=True,
              help="Count the messages with Anthropic's count_tokens API (needs ANTHROPIC_API_KEY; "
              "60 s in all, retries included, or $CTXTOOL_LLM_TIMEOUT).")
@click.option("--timeline", is_flag=False, flag_value="-", default=None, metavar="[FILE]",
              help="Draw the context across the session (each API call's prompt, compactions, "
                   "the auto-compact and window lines): in the terminal, or into FILE as a "
                   "self-contained .svg or .html. Put it after the inputs.")
@click.option("--input-limit", type=click.IntRange(min=1), metavar="TOKENS",
              help="OpenCode sessions: the model's input limit (models.dev limit.input), which "
                   "OpenCode's overflow rule uses instead of the window when a model has one.")
def estimate_cmd(io: IOOptions, as_json: bool, grid: bool, per_entry: bool, model: str | None,
                 context_window: int | None, system_tokens: int | None, no_usage: bool, top: int,
                 exact: bool, timeline: str | None, input_limit: int | None) -> None:
    """Show how much of the context window a transcript fills, and with what.

    The context "now" is what follows the last compact boundary: the prompt size of the last
    API call recorded in the transcript (its usage), plus an estimate of everything after it.
    Without usage it is an estimate of every message plus --system-tokens. The total adds what
    compactions took out of view. Several files give one report each. OpenCode sessions are
    cut where OpenCode cuts them, anchored on the last finished assistant message's tokens, and
    get OpenCode's overflow rule (where OpenCode compacts) in the report. Gemini CLI sessions
    are sized as Gemini sends them when it resumes them (tool results twice or three times),
    anchored on the last reply's tokens.input, with Gemini's window and compression point
    (model.compressionThreshold from the settings files Gemini reads).

    \b
        ctxtool estimate ~/.claude/projects/my-project/SESSION.jsonl
        ctxtool estimate --json session.jsonl | jq .context_tokens
        ctxtool microcompact session.jsonl | ctxtool estimate --grid
        ctxtool persist s.jsonl | ctxtool snip | ctxtool estimate --no-usage
        ctxtool estimate --per-entry s.jsonl | jq -c 'select(.ctxtool.tokens > 5000) | .uuid'
        ctxtool estimate --latest --timeline context.html
        ctxtool estimate --json ~/.gemini/tmp/proj/chats/session-*.jsonl | jq .gemini
    """
    if per_entry and (as_json or grid or exact):
        raise UsageError("--per-entry emits the transcript: it does not combine with "
                         "--json, --grid or --exact")
    _check_timeline(timeline, io, as_json=as_json, grid=grid, per_entry=per_entry)
    counter = _counter() if exact else None
    check_stdin(io)
    options: dict[str, Any] = {
        "model": model, "context_window": context_window, "system_tokens": system_tokens,
        "env": os.environ, "top": top, "use_usage": not no_usage, "input_limit": input_limit,
        "model_limits": _config_limits,
        "settings": read_settings(os.environ)}  # Claude Code's own settings files
    with open_output(io.output, io.paths) as out:
        for index, path in enumerate(io.paths, 1):
            if per_entry:  # one stream of all inputs: it stops at an input it cannot read
                last = index == len(io.paths)  # and only its end takes a truncated line
                fmt, entries = detect_format(iter_file_entries(path, io, final=last), io.format)
                write_entries(annotate(entries, fmt=fmt, system_tokens=system_tokens,
                                       use_usage=not no_usage), out, more=not last)
                continue
            # one report per file: a file that fails is told, and the others are done
            with batch.each(path, of=len(io.paths)):
                _report(path, io, out, counter=counter, timeline=timeline, options=options,
                        as_json=as_json, grid=grid)


def _report(path: str, io: IOOptions, out: BinaryIO, *, counter: Any, timeline: str | None,
            options: dict[str, Any], as_json: bool, grid: bool) -> None:
    """Estimate one input and write its report (or its timeline)."""
    # entries are not written back: no search for integers past 64 bits (see iter_entries)
    fmt, entries = detect_format(iter_file_entries(path, io, exact_ints=False), io.format)
    seen: list[bool] = []
    entries = _noting_a_line(entries, seen)
    builder = None
    if timeline:
        from ctxtool.core.sizing.timeline import TimelineBuilder, observe  # see the imports

        builder = TimelineBuilder(fmt)
        entries = observe(entries, builder)
    options = {**options, "fmt": fmt, "source": display_name(path)}
    if counter is None:
        report = estimate(entries, **options)
    else:
        report = _exact(list(entries), counter, options)
    if not seen:  # not a session of 24,000 tokens (the assumed system prompt): no input
        raise InputError("empty input: no transcript lines to estimate", source=display_name(path))
    if builder is not None and timeline == "-":
        from ctxtool.cli.estimate_timeline import render_text  # see the imports

        drawn = render_text(finished(builder, report), width=width())
        out.write(("\n".join(drawn) + "\n\n").encode())
        return
    if builder is not None:
        _draw(str(timeline), finished(builder, report))
    _write(out, report, as_json=as_json, grid=grid, colour=io.output is None and colour_enabled())


def _noting_a_line(entries: Iterable[Any], seen: list[bool]) -> Iterator[Any]:
    """``entries``, noting in ``seen`` whether any holds a line (blank lines come as one
    empty, invalid entry); the rest pass through untouched once one did."""
    entries = iter(entries)
    for entry in entries:
        yield entry
        if entry or not getattr(entry, "invalid", False):
            seen.append(True)
            break
    yield from entries


def _check_timeline(timeline: str | None, io: IOOptions, *, as_json: bool, grid: bool,
                    per_entry: bool) -> None:
    if timeline is None:
        return
    if timeline == "-":
        if as_json or grid or per_entry:
            raise UsageError("--timeline draws in the terminal instead of the report: give it "
                             "a FILE (.svg or .html) to combine it with --json, --grid or "
                             "--per-entry")
        return
    if not timeline.lower().endswith(TIMELINE_SUFFIXES):
        raise UsageError(f"--timeline {timeline}: FILE must end in .svg or .html",
                         hint="to draw in the terminal, put --timeline after the inputs: "
                              "ctxtool estimate session.jsonl --timeline")
    if per_entry or len(io.paths) > 1:
        raise UsageError("--timeline FILE draws one transcript: give one input, without "
                         "--per-entry")


def finished(builder: TimelineBuilder, report: EstimateReport) -> Timeline:
    """The timeline with what only the whole pass knows: the context now, window, model."""
    line = builder.timeline
    line.now, line.limits, line.model, line.source = (
        report.context_tokens, report.limits, report.model, report.source)
    return line


def _draw(path: str, line: Timeline) -> None:
    from ctxtool.cli.estimate_timeline import render_html, render_svg  # see the imports

    page = render_svg(line) if path.lower().endswith(".svg") else render_html(line)
    write_named(path, page.encode())


def _config_limits(provider: str | None, model: str | None,
                   folder: str | None) -> dict[str, int]:
    """An OpenCode session's model limits from OpenCode's own config files."""
    from ctxtool.storage import opencode_config  # see the imports

    return opencode_config.model_limits(provider, model, env=os.environ, directory=folder)


def _counter() -> Any:
    """``count_tokens`` of the Anthropic backend; fails fast (exit 5) without a key."""
    from ctxtool.llm.anthropic import count_tokens, has_key  # the SDK only for --exact

    if not has_key(os.environ):
        raise LLMError("--exact needs an Anthropic API key", hint=NO_KEY_HINT)
    return count_tokens


def _exact(entries: list[Any], counter: Any, options: dict[str, Any]) -> EstimateReport:
    report = estimate(entries, **options)
    messages = api_view(entries, options["fmt"])
    name = (options["model"] or report.model or DEFAULT_COUNT_MODEL).removesuffix("[1m]")
    try:
        counted = counter(messages, system=None, model=name) if messages else 0
    except LLMError as exc:
        if exc.hint and "--passthrough-on-error" in exc.hint:  # summarize's way out, not ours
            exc.hint = "try again later, or leave out --exact for the offline estimate"
        raise
    return report.with_exact(counted)


def _write(out: BinaryIO, report: EstimateReport, *, as_json: bool, grid: bool,
           colour: bool = False) -> None:
    if as_json:
        out.write(dumps_json(report.as_dict()) + b"\n")  # usage may hold integers past 64 bits
        return
    columns = width()
    lines = render_grid(report, width=columns) if grid else \
        render_table(report, width=columns, colour=colour)
    out.write(("\n".join(lines) + "\n\n").encode())


# --- the table ------------------------------------------------------------------------------------

def _n(value: int) -> str:
    return f"{value:,}"


STATUS_COLOURS = {"ok": "green", "warning": "yellow", "auto_compact": "red", "blocking": "red"}


def render_table(report: EstimateReport, *, width: int = 10_000,
                 colour: bool = False) -> list[str]:
    """The report for people: tool-result targets cut (from the left) to ``width`` columns, the
    verdict coloured when ``colour``."""
    limits, used = report.limits, report.context_tokens
    verdict = paint(report.status, colour, fg=STATUS_COLOURS.get(report.status), bold=True)
    said = (f": {_n(used)} tokens in context ({100 * used / limits.window:.1f}% of "
            f"{_n(limits.window)}), ")
    lines = [_source(report, width - len(said) - len(report.status)) + said + verdict]
    for label, value in _summary_rows(report):
        lines += fit_line(f"  {label:<17}{value}", width, indent=19)
    lines += ["", f"  {'what fills the context':<30}{'tokens':>10}{'%':>7}"]
    for category in CATEGORIES:
        tokens = report.breakdown.get(category, 0)
        if tokens or category == "system_and_tools":
            share = 100 * tokens / used if used else 0.0
            lines.append(f"  {LABELS[category]:<30}{_n(tokens):>10}{share:>7.1f}")
        if category == "tool_results":
            lines += [f"    {visible(tool):<28}{_n(n):>10}" for tool, n in
                      list(report.tool_results_by_tool.items())[:8]]
    if report.top:
        wheres = [visible(_where(o.location, report.source) or o.tool_use_id)
                  for o in report.top]
        column = max(len("where"), *map(len, wheres))
        lines += ["", f"  {'largest tool results':<22}{'tokens':>8}  {'tool':<12}"
                      f"{'where':<{column}}  target"]
        room = max(12, width - 2 - 22 - 8 - 2 - 12 - column - 2)
        for o, where in zip(report.top, wheres):
            lines.append(f"  {'':<22}{_n(o.tokens):>8}  {visible(o.tool)[:12]:<12}{where:<{column}}  "
                         + _fit(visible(" ".join((o.target or "-").split())), room))
    return lines


def _source(report: EstimateReport, room: int) -> str:
    """The report's file, shortened in its middle when the line would not fit otherwise."""
    return shorten_middle(visible(report.source or "-"), max(8, room))


def _fit(target: str, room: int) -> str:
    """A path keeps its end (``…/cli/paths.go``), a command its start."""
    if " " in target or "/" not in target:
        return target if len(target) <= room else target[:room - 1] + "…"
    return shorten(target, room)


def _where(location: str | None, source: str | None) -> str | None:
    """``line 17`` for a line of the report's own file (its name heads the report)."""
    if location and source and location.startswith(source + ":"):
        return "line " + location[len(source) + 1:]
    return location


def _summary_rows(report: EstimateReport) -> Iterator[tuple[str, str]]:
    limits, used = report.limits, report.context_tokens
    yield "model", f"{visible(report.model or '-')} (window {_n(limits.window)}: {report.window_source})"
    if report.method == "usage" and report.anchor is not None:
        base = used - report.estimated_after_anchor
        how = (f"last API call's usage {_n(base)} + {_n(report.estimated_after_anchor)} "
               "estimated after it")
    elif report.method == "exact":
        how = f"count_tokens API + {_n(report.system_tokens)} assumed system tokens"
    else:
        how = f"estimated, incl. {_n(report.system_tokens)} assumed system/tool tokens"
    yield "context now", f"{_n(used)}  ({how})"
    yield "total", (f"{_n(report.total_tokens)}  (incl. {_n(report.total_tokens - used)} "
                    f"compacted away, {report.compact_boundaries} compaction(s))")
    if report.agent_context is not None:  # the agent's own /context, beside ctxtool's figure
        yield from ((label, visible(value)) for label, value in
                    _agent_context_rows(report.agent_context, report.source))
    if report.agent_rule is not None:  # the agent compacts by its own rule
        yield from ((label, visible(value)) for label, value in report.agent_rule.rows(used))
        return
    state = "" if limits.auto_compact_enabled else "  (auto-compact disabled)"
    yield "auto-compact at", (f"{_n(limits.auto_compact)}  ({_n(max(0, limits.auto_compact - used))}"
                              f" to go; warning at {_n(limits.warning)}, blocking at "
                              f"{_n(limits.blocking)}){state}")
    if report.idle is not None:  # a Claude Code transcript: its version chose the rule
        settings = ", ".join(limits.applied) or "none"
        yield "rule", (f"Claude Code {limits.rule} (written by {limits.version}); "
                       f"settings: {settings}")
        idle = report.idle
        when = idle.fires_at.strftime("%Y-%m-%d %H:%M:%S UTC") if idle.fires_at else None
        yield "idle compaction", (f"at {when} ({idle.reason})" if when
                                  else f"no ({idle.reason})")


def _agent_context_rows(found: dict[str, Any], source: str | None) -> Iterator[tuple[str, str]]:
    """Claude Code's own /context figures, where the transcript holds them."""
    window = f" / {_n(found['window'])}" if found.get("window") else ""
    where = _where(found.get("location"), source) or "-"
    stamp = f", {found['timestamp']}" if found.get("timestamp") else ""
    rounded = "" if found.get("exact") else ", rounded"
    yield "Claude Code said", (f"{_n(found['tokens'])}{window}  (its /context at {where}"
                               f"{stamp}{rounded})")
    parts = [f"{name} {_n(tokens)}" for name, tokens in found.get("categories", {}).items()]
    if parts:
        yield "", ", ".join(parts)


# --- the grid -------------------------------------------------------------------------------------

def _cells(report: EstimateReport, total: int) -> list[str]:
    """One symbol per cell: used cells by category (largest remainder), free, then the buffer."""
    per_cell = report.limits.window / total
    used = min(total, round(report.context_tokens / per_cell))
    parts = [(c, report.breakdown.get(c, 0) / per_cell) for c in CATEGORIES]
    counts = {c: int(v) for c, v in parts}
    by_remainder = sorted(parts, key=lambda cv: cv[1] - int(cv[1]), reverse=True)
    for category, _ in by_remainder[:max(0, used - sum(counts.values()))]:
        counts[category] += 1
    cells = [SYMBOLS[c] for c in CATEGORIES for _ in range(counts[c])][:total]
    buffer = round((report.limits.window - report.compact_at) / per_cell)
    free = max(0, total - len(cells) - buffer)
    return cells + [FREE] * free + [BUFFER] * (total - len(cells) - free)


def render_grid(report: EstimateReport, *, width: int = 10_000) -> list[str]:
    total = GRID_COLUMNS * GRID_ROWS
    cells = _cells(report, total)
    limits, used = report.limits, report.context_tokens
    said = (f": {_n(used)} / {_n(limits.window)} tokens ({100 * used / limits.window:.1f}%), "
            f"one cell = {_n(limits.window // total)} tokens")
    lines = [_source(report, width - len(said)) + said]
    lines += ["  " + "".join(cells[r * GRID_COLUMNS:(r + 1) * GRID_COLUMNS])
              for r in range(GRID_ROWS)]
    for category in CATEGORIES:
        tokens = report.breakdown.get(category, 0)
        if tokens:
            lines.append(f"  {SYMBOLS[category]} {LABELS[category]:<28}{_n(tokens):>10}"
                         f"{100 * tokens / limits.window:>6.1f}%")
    buffer = limits.window - report.compact_at
    free = max(0, limits.window - used - buffer)
    lines.append(f"  {FREE} {'free':<28}{_n(free):>10}{100 * free / limits.window:>6.1f}%")
    lines.append(f"  {BUFFER} {'auto-compact buffer':<28}{_n(buffer):>10}"
                 f"{100 * buffer / limits.window:>6.1f}%")
    return lines
