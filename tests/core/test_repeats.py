"""One uuid, one entry (issue 29): history written twice is counted, summarized, shown and
validated once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.summarizing.request import main_chain
from ctxtool.core.validating.validate import validate
from ctxtool.types import CLAUDE_CODE
from tests.conftest import run_ctxtool
from tests.estimate_builders import (CODE, PROSE, assistant, compact_boundary, compact_summary,
                                     tool_result, tool_use, usage, user)


def chained(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """parentUuid and timestamps as Claude Code writes them (a boundary restarts the chain)."""
    parent = None
    for n, entry in enumerate(entries):
        entry.setdefault("parentUuid", None if entry.get("subtype") == "compact_boundary"
                         else parent)
        entry["timestamp"] = f"2026-11-01T10:{n // 60:02d}:{n % 60:02d}.000Z"
        entry.update(sessionId="s1", cwd="/w", version="2.1.332")
        if entry.get("subtype") == "compact_boundary":
            entry["logicalParentUuid"] = parent
        parent = entry["uuid"]
    return entries


def history() -> list[dict[str, Any]]:
    """Two calls, a compaction, then two more calls."""
    return chained([
        user("Read app.py"),
        assistant([tool_use("t1", "Read", file_path="/w/app.py")], msg_id="m1",
                  usage=usage(3, 20_000, 0, 40)),
        tool_result("t1", CODE),
        assistant("It defines compute().", msg_id="m2", request_id="r2",
                  usage=usage(2, 4_000, 20_040, 30)),
        compact_boundary(30_000), compact_summary("Summary: read app.py. " + PROSE),
        user("Now run the tests"),
        assistant([tool_use("t2", "Bash", command="pytest")], msg_id="m3", request_id="r3",
                  usage=usage(2, 6_000, 0, 30)),
        tool_result("t2", "3 passed\n" * 200),
        assistant("All pass.", msg_id="m4", request_id="r4", usage=usage(2, 60_700, 6_030, 20)),
    ])


def written_twice(entries: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """The history before the boundary copied again (same uuid, parentUuid and timestamp), as
    a second /compact in one Claude Code process writes it: before a new boundary, or at the
    end of the file (the copies' usage included)."""
    cut = next(i for i, e in enumerate(entries) if e.get("subtype") == "compact_boundary")
    copies = [dict(e) for e in entries[:cut]]
    if where == "end":
        return [*entries, *copies]
    last = len(entries) - 2  # before the last call's result and reply
    return [*entries[:last], *copies, *entries[last:]]


def figures(entries: list[dict[str, Any]]) -> tuple[int, int]:
    return (estimate(iter(entries), fmt=CLAUDE_CODE).context_tokens,
            estimate(iter(entries), fmt=CLAUDE_CODE, use_usage=False).context_tokens)


@pytest.mark.parametrize("where", ["end", "middle"])
def test_history_written_twice_is_counted_once(where: str) -> None:
    entries = history()
    twice = written_twice(entries, where)
    assert len(twice) > len(entries)
    assert figures(twice) == figures(entries)
    report = estimate(iter(twice), fmt=CLAUDE_CODE)
    assert report.breakdown == estimate(iter(entries), fmt=CLAUDE_CODE).breakdown


def test_summarize_and_filter_compacted_read_the_history_once() -> None:
    entries = history()
    twice = written_twice(entries, "end")
    assert [twice[i]["uuid"] for i in main_chain(twice, CLAUDE_CODE)] == [
        e["uuid"] for e in entries]
    plan = plan_cut(iter(twice), CLAUDE_CODE)
    view = list(filter_compacted(iter(twice), plan))
    assert [e["uuid"] for e in view] == [e["uuid"] for e in entries[4:]]
    assert plan.as_dict()["repeated"] == 4


def test_validate_warns_once_and_passes(tmp_path: Path) -> None:
    twice = written_twice(history(), "end")
    found = [p for p in validate(iter(twice), fmt=CLAUDE_CODE, source="s.jsonl")]
    assert [(p.line, p.severity, p.code) for p in found] == [(11, "warning", "entry-repeated")]
    assert "4 entries are written again" in found[0].message
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in twice))
    proc = run_ctxtool("validate", str(path))
    assert proc.returncode == 0 and b"entry-repeated" in proc.stdout


def test_the_cli_gives_the_same_figure_for_history_written_twice(tmp_path: Path) -> None:
    once, twice = tmp_path / "once.jsonl", tmp_path / "twice.jsonl"
    entries = history()
    once.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    twice.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in written_twice(entries, "end")))
    for args in ([], ["--no-usage"]):
        shown = [json.loads(run_ctxtool("estimate", "--json", *args, str(p)).stdout)
                 ["context_tokens"] for p in (once, twice)]
        assert shown[0] == shown[1]
    summaries = [orjson.loads(run_ctxtool("summarize", "--now", "2026-11-02T00:00:00Z",
                                          str(p)).stdout.splitlines()[-1])
                 for p in (once, twice)]
    texts = [s["message"]["content"].replace(str(p), "PATH") for s, p in zip(summaries,
                                                                          (once, twice))]
    assert texts[0] == texts[1]  # the copies are not read as more history
