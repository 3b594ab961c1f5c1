"""`estimate --timeline`: the points, the marks, and the drawings (text, SVG, HTML)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ctxtool.cli import cli
from ctxtool.cli.estimate_timeline import columns_of, render_html, render_svg, render_text
from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.sizing.timeline import TimelineBuilder, observe
from ctxtool.core.sizing.tokens import thresholds
from ctxtool.errors import ExitCode
from tests.conftest import CORPUS, run_ctxtool
from tests.estimate_builders import (
    assistant, compact_boundary, compact_summary, microcompact_boundary, tool_result, tool_use,
    usage, user,
)
from tests.sessions.helpers import APP, full_estimate, write_session

SVG = "{http://www.w3.org/2000/svg}"
REAL = CORPUS / "entireio__cli" / "b8__659b3a4dd4__0__full.jsonl"  # two compactions


def session() -> list[dict]:
    return [
        user("hi"),
        assistant("thinking", msg_id="m1", usage=usage(10, 0, 30_000, 5)),
        assistant([tool_use("t1", "Read", file_path="/a")], msg_id="m1",
                  usage=usage(10, 0, 31_000, 50)),  # the same call, a larger snapshot
        tool_result("t1", "x" * 1000),
        assistant("ok", msg_id="m2", usage=usage(10, 0, 120_000, 5)),
        microcompact_boundary(20_000),
        assistant("more", msg_id="m3", usage=usage(10, 0, 160_000, 5)),
        compact_boundary(170_000), compact_summary("summary"),
        user("go on"), assistant("fine", msg_id="m4", usage=usage(10, 0, 25_000, 5))]


def built(entries: list[dict], fmt: str = "claude-code"):
    builder = TimelineBuilder(fmt)
    report = estimate(observe(entries, builder), fmt=fmt)
    line = builder.timeline
    line.now, line.limits, line.model, line.source = (report.context_tokens, report.limits,
                                                      report.model, "s.jsonl")
    return line, report


def test_one_point_per_call_and_the_marks_between() -> None:
    line, report = built(session())
    assert [p.tokens for p in line.points] == [31_010, 120_010, 160_010, 25_010]
    assert [(m.kind, m.before, m.trigger, m.pre_tokens, m.saved) for m in line.marks] == [
        ("microcompact", 1, None, None, 20_000), ("compact", 2, "auto", 170_000, None)]
    assert line.now == report.context_tokens and line.peak == 160_010


def test_messages_without_usage_get_estimated_points() -> None:
    entries = [{"role": "user", "content": "a" * 4000}, {"role": "assistant", "content": "b"},
               {"role": "user", "content": "c" * 4000}, {"role": "assistant", "content": "d"}]
    line, _ = built(entries, fmt="anthropic")
    assert len(line.points) == 2 and not any(p.measured for p in line.points)
    assert line.points[0].tokens < line.points[1].tokens


def test_columns_group_points_by_their_largest() -> None:
    assert columns_of([1, 2, 3], 5) == [(1, 0, 0), (2, 1, 1), (3, 2, 2)]
    assert columns_of([1, 9, 2, 3, 8, 1], 3) == [(9, 0, 1), (3, 2, 3), (8, 4, 5)]


def test_text_chart_marks_compactions_under_their_column() -> None:
    line, _ = built(session())
    text = render_text(line)
    assert text[0].startswith("s.jsonl: context over 4 API calls")
    marks = text[-2].strip()
    assert marks == "mC" and text[-2].index("C") - text[-2].index("m") == 1
    assert "C compaction (1: auto at 170.0K)" in text[-1] and "m microcompaction (1)" in text[-1]
    bars = text[1:-3]
    assert any("┈" in row for row in bars)  # the auto-compact line
    assert "█" in bars[-1]


def test_svg_is_well_formed_and_self_contained() -> None:
    line, _ = built(session())
    svg = render_svg(line)
    root = ET.fromstring(svg)
    groups = root.findall(f"{SVG}g")
    assert [g.get("class") for g in groups] == ["mark-microcompact", "mark-compact"]
    points = root.find(f"{SVG}polyline").get("points").split()
    assert len(points) == 5  # four calls and now
    assert "<script" not in svg and "href" not in svg
    classes = {e.get("class") for e in root.iter(f"{SVG}line")}
    assert {"limit-window", "limit-auto", "limit-warning"} <= classes
    page = render_html(line)
    assert page.startswith("<!doctype html>") and svg in page and "<td>compact</td>" in page


def test_cli_terminal_and_file(runner, tmp_path: Path) -> None:
    path = write_session(tmp_path, APP, "s1", session())
    text = runner.invoke(cli, ["estimate", str(path), "--timeline"])
    assert text.exit_code == 0, text.stderr
    assert "context over 4 API calls" in text.stdout and "compaction" in text.stdout
    out = tmp_path / "t.svg"
    drawn = runner.invoke(cli, ["estimate", str(path), "--timeline", str(out)])
    assert drawn.exit_code == 0, drawn.stderr
    assert "tokens in context" in drawn.stdout  # the usual report on stdout
    assert len(ET.parse(out).getroot().findall(f"{SVG}g")) == 2
    page = tmp_path / "t.html"
    assert runner.invoke(cli, ["estimate", str(path), "--timeline", str(page)]).exit_code == 0
    assert page.read_text().startswith("<!doctype html>")


def test_cli_timeline_usage_errors(runner, tmp_path: Path) -> None:
    path = write_session(tmp_path, APP, "s1", session())
    wrong = runner.invoke(cli, ["estimate", "--timeline", str(path)])  # FILE taken as output
    assert wrong.exit_code == ExitCode.USAGE and ".svg or .html" in wrong.stderr
    both = runner.invoke(cli, ["estimate", str(path), "--json", "--timeline"])
    assert both.exit_code == ExitCode.USAGE


@pytest.mark.skipif(not REAL.is_file(), reason=f"corpus not found at {CORPUS}")
def test_every_compaction_of_a_real_session(tmp_path: Path) -> None:
    out = tmp_path / "real.svg"
    proc = run_ctxtool("estimate", str(REAL), "--timeline", str(out))
    assert proc.returncode == 0, proc.stderr
    report = full_estimate(REAL)
    root = ET.parse(out).getroot()
    marks = [g for g in root.findall(f"{SVG}g") if g.get("class") == "mark-compact"]
    assert len(marks) == report.compact_boundaries == 2
    assert thresholds().auto_compact == 167_000


def test_nice_steps() -> None:
    from ctxtool.cli.estimate_timeline import nice_step
    assert [nice_step(210_000, 5), nice_step(111, 10), nice_step(3, 10), nice_step(1e6, 5)] == [
        50_000, 20, 1, 200_000]
