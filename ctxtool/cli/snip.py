"""``ctxtool snip``: clear tool results that newer ones made redundant."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import click

from ctxtool.clock import parse_now
from ctxtool.core.clearing.snip import (MIN_TOKENS, READ_TOOLS, SEARCH_TOOLS, WRITE_TOOLS, SnipOptions,
                               SnipReport, snip)
from ctxtool.io.clearing import ClearingSettings, clearing_options, csv_set, run_clearing
from ctxtool.io.options import (ReportOptions, in_place_options, io_options, now_option,
                                 report_options)
from ctxtool.io.spool import FileSource
from ctxtool.io.streams import IOOptions


@click.command("snip")
@io_options
@in_place_options()
@click.option("--keep", type=click.IntRange(min=0), default=3, show_default=True,
              help="Newest tool results never snipped, whatever they are.")
@click.option("--keep-searches", type=click.IntRange(min=0), default=3, show_default=True,
              help="Newest results kept per search tool; older ones are snipped.")
@click.option("--search-tools", metavar="A,B",
              help=f"Search-like tools (default: {', '.join(sorted(SEARCH_TOOLS))}).")
@click.option("--read-tools", metavar="A,B",
              help=f"Tools that read a file (default: {', '.join(sorted(READ_TOOLS))}).")
@click.option("--write-tools", metavar="A,B",
              help=f"Tools that change a file (default: {', '.join(sorted(WRITE_TOOLS))}).")
@click.option("--identical/--no-identical", default=True, show_default=True,
              help="Snip results whose exact content a newer result repeats.")
@click.option("--min-tokens", type=click.IntRange(min=0), default=MIN_TOKENS, show_default=True,
              help="Leave results smaller than this alone (the placeholder would be as long).")
@click.option("--min-usage", type=click.FloatRange(0, 100), metavar="PCT",
              help="Snip only when the context fills more than PCT% of the effective window "
                   "(the window less 20,000 output tokens; 60 is a common choice). Default: "
                   "always.")
@now_option
@clearing_options
@report_options
def snip_cmd(io: IOOptions, keep: int, keep_searches: int, search_tools: str | None,
             read_tools: str | None, write_tools: str | None, identical: bool, min_tokens: int,
             min_usage: float | None, now: str | None, clear: ClearingSettings,
             report: ReportOptions) -> None:
    """Clear tool results that newer ones superseded.

    A file read again later (same or covering range), or edited or written after it was read;
    search results beyond the newest --keep-searches per tool; results identical to a newer
    one. Each is saved to the store first and replaced with "[Content snipped - re-read if
    needed]" and the saved path (`ctxtool restore` brings it back). The newest --keep results
    are never snipped, untouched lines stay byte-identical, and a second run changes nothing.
    OpenCode sessions work the same way (its lower-case tool names match; a part's output is
    replaced). On Gemini CLI sessions the records Gemini sends are looked at (read_file's
    start_line/end_line as the range) and a snipped result becomes Gemini's own
    <tool_output_masked> preview naming the saved file. A Claude Code transcript gets a
    microcompact_boundary entry recording the tokens saved (stamped --now), so `ctxtool
    estimate` sees the saving; restore removes it.

    \b
        ctxtool snip session.jsonl > smaller.jsonl
        ctxtool persist < s.jsonl | ctxtool snip | ctxtool microcompact | ctxtool estimate
        ctxtool snip --min-usage 60 --keep-searches 1 --in-place --force session.jsonl
    """
    options = SnipOptions(
        keep=keep, keep_searches=keep_searches,
        search_tools=csv_set(search_tools) or SEARCH_TOOLS,
        read_tools=csv_set(read_tools) or READ_TOOLS,
        write_tools=csv_set(write_tools) or WRITE_TOOLS,
        identical=identical, min_tokens=min_tokens, min_usage=min_usage)
    moment = parse_now(now)

    def transform(fmt: str, source: FileSource, run: SnipReport) -> Iterator[dict[str, Any]]:
        return snip(source, fmt=fmt, store=clear.store(fmt, source), options=options,
                    limits=functools.partial(clear.limits, fmt=fmt), report=run, now=moment)

    run_clearing(io, clear, report, transform, SnipReport)
