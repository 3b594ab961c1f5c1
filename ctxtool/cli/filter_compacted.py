"""``ctxtool filter-compacted``: what follows the last completed compaction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import click

from ctxtool.core.messages.convert import to_messages
from ctxtool.core.messages.filter_compacted import FilterReport, View, filter_compacted, plan_cut
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import write_entries
from ctxtool.io import messages
from ctxtool.io.options import ReportOptions, read_io_options, report_options
from ctxtool.io.spool import spooled_input
from ctxtool.io.streams import IOOptions, check_stdin, open_output


@click.command("filter-compacted")
@read_io_options
@click.option("--view", type=click.Choice(["transcript", "model"]), default="transcript",
              show_default=True,
              help="transcript: the entries after the cut, unchanged. model: only what is sent "
                   "to the model (messages; microcompacted results as their placeholder; "
                   "streamed lines merged).")
@click.option("--to", "to", type=click.Choice(["anthropic", "openai"]),
              help="Write the model view as plain API messages for this API (implies "
                   "--view model).")
@click.option("--thinking", type=click.Choice(["drop", "keep"]), default="drop",
              show_default=True,
              help="With --to anthropic: keep signed thinking blocks, or drop them.")
@click.option("--sidechains", is_flag=True,
              help="Keep side-chain entries (subagent turns stored in the main file).")
@report_options
def filter_compacted_cmd(io: IOOptions, view: View, to: str | None, thinking: str,
                         sidechains: bool, report: ReportOptions) -> None:
    """Show what follows the last completed compaction.

    For a Claude Code session: the last compact boundary, its summary, the messages Claude Code
    kept across it, and everything after. For Anthropic/OpenAI message lists: from ctxtool's
    last summary message. For OpenCode sessions: OpenCode's own rule (filterCompacted), its kept
    tail moved after the summary, as OpenCode sends it; --to writes what OpenCode sends the
    model. For Gemini CLI sessions: the records Gemini sends from its last <state_snapshot> (its
    own compression or ctxtool's) on. A transcript with no compaction comes out unchanged,
    byte for byte.
    Each input is read twice (stdin from a pipe is spooled to a temporary file), never held in
    memory.

    \b
        ctxtool filter-compacted session.jsonl | ctxtool estimate
        ctxtool filter-compacted --view model session.jsonl > what-the-model-sees.jsonl
        ctxtool summarize < s.jsonl | ctxtool filter-compacted --to anthropic > messages.jsonl
    """
    check_stdin(io)
    stats: dict[str, Any] = {"files": [], "entries_out": 0}
    with open_output(io.output, io.paths) as out:
        for index, path in enumerate(io.paths, 1):
            last = index == len(io.paths)  # one output: only its end takes a truncated line
            with spooled_input(path, io, final=last) as source:
                # no search for integers past 64 bits (a cost of half a parse) where entries are
                # only looked at: the plan, and the transcript view, which changes a few entries
                # through exact_entry; the model view rewrites most of them
                source.exact_ints = False
                fmt, first_reading = detect_format(iter(source), io.format)
                plan = plan_cut(first_reading, fmt)
                source.exact_ints = view == "model" or to is not None
                file_report = FilterReport()
                entries = _output(filter_compacted(source, plan, view="model" if to else view,
                                                   sidechains=sidechains, report=file_report),
                                  fmt, to, thinking, file_report)
                written = write_entries(entries, out, more=not last)
            stats["entries_out"] += written
            stats["files"].append({"input": source.name, "format": fmt, **plan.as_dict(),
                                   "entries_out": written, **_model_stats(file_report, view, to)})
            _warn_problem(plan.problem, plan.cut_location)
            _tell(source.name, plan.cut_location, written, len(plan.repeated))
    report.emit(stats)


def _tell(name: str, cut: str | None, written: int, repeated: int = 0) -> None:
    if cut is None and repeated:
        messages.summary("filter-compacted", f"{name}: no compaction; "
                         f"{messages.count(repeated, 'entry', 'entries')} written again with an "
                         "earlier one's uuid left out")
    elif cut is None:
        messages.summary("filter-compacted", f"{name}: no compaction, passed through unchanged")
    else:
        line = cut.rsplit(":", 1)[-1]
        messages.summary("filter-compacted", f"{name}: {messages.count(written, 'entry', 'entries')} from the last "
                                             f"compaction (line {line}) on")


def _output(entries: Iterator[dict[str, Any]], fmt: str, to: str | None, thinking: str,
            file_report: FilterReport) -> Iterator[dict[str, Any]]:
    if to is None:
        return entries
    return to_messages(entries, fmt, target=to, thinking=thinking,  # type: ignore[arg-type]
                       report=file_report.convert)


def _model_stats(file_report: FilterReport, view: str, to: str | None) -> dict[str, Any]:
    if view != "model" and to is None:
        return {}
    data: dict[str, Any] = {"dropped": file_report.dropped,
                            "cleared_results": file_report.cleared_results}
    data.update(file_report.convert.as_dict())
    return data


def _warn_problem(problem: str | None, where: str | None) -> None:
    if problem:
        messages.warn(f"{where}: {problem}; the view starts at the boundary without it")
