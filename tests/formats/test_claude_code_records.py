"""Claude Code 2.1.3xx's newer records (issue 29): /context's own figures shown by estimate, the
newer line types kept byte for byte and counted where they reach the model, preserved messages
read in both forms."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.formats.claude_code.context_usage import context_usage
from ctxtool.types import CLAUDE_CODE
from tests.conftest import FIXTURES, run_ctxtool
from tests.estimate_builders import assistant, compact_boundary, compact_summary, usage, user

CONTEXT_LINES = (FIXTURES / "claude-code-2.1.332" / "context-command.jsonl").read_bytes()


def session(*extra: bytes) -> bytes:
    entries = [user("hello"), assistant("hi", msg_id="m1", usage=usage(5, 12_000, 0, 10))]
    return b"".join(orjson.dumps(e) + b"\n" for e in entries) + b"".join(extra)


def test_estimate_shows_claude_codes_own_context_beside_its_own(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(session(CONTEXT_LINES))
    report = json.loads(run_ctxtool("estimate", "--json", str(path)).stdout)
    own = report["agent_context"]
    # Claude Code 2.1.332's own figures (its contextUsage): the categories add up to the total
    assert (own["tokens"], own["window"], own["percent"], own["exact"]) == (13_173, 1_000_000,
                                                                             1, True)
    assert sum(own["categories"].values()) == own["tokens"]
    assert own["location"] == f"{path}:4" and own["timestamp"] == "2026-11-27T13:27:39.171Z"
    table = run_ctxtool("estimate", str(path)).stdout.decode()
    assert "Claude Code said 13,173 / 1,000,000  (its /context at line 4" in table
    assert "System tools 5,624" in table
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(session())
    assert "agent_context" not in json.loads(run_ctxtool("estimate", "--json",
                                                         str(plain)).stdout)


def test_the_table_is_read_when_no_figures_are_recorded() -> None:
    line = json.loads(CONTEXT_LINES.splitlines()[1])
    del line["contextUsage"]  # as a version writing only the table leaves it
    found = context_usage(line)
    assert found is not None and not found["exact"]
    assert (found["tokens"], found["window"], found["percent"]) == (13_200, 1_000_000, 1.0)
    assert found["categories"]["System tools"] == 5_600
    meta = user(line["content"].removeprefix("<local-command-stdout>"), isMeta=True)
    assert context_usage(meta) == found  # the isMeta user line the model is given
    assert context_usage(user("## Context Usage is what I wanted")) is None  # not meta


NEWER_LINES: list[dict[str, Any]] = [  # shapes as Claude Code 2.1.3xx writes them
    {"type": "relocated", "relocatedCwd": "/home/user/work/moved", "sessionId": "s1"},
    {"type": "continued-in", "continuedInSessionId": "s2", "sessionId": "s1",
     "timestamp": "2026-11-27T13:00:00.000Z"},
    {"type": "worktree-state", "sessionId": "s1", "worktreeSession": None},
    {"type": "queue-operation", "operation": "remove", "content": "now run ls",
     "reason": "absorbed_mid_turn", "sessionId": "s1", "timestamp": "2026-11-27T13:00:01.000Z"},
    {"type": "origin", "origin": {"kind": "cli"}, "sessionId": "s1"},
    {"type": "ai-title", "aiTitle": "First title", "sessionId": "s1"},
    {"type": "ai-title", "aiTitle": "Second title", "sessionId": "s1"},
]
QUEUED = ("<system-reminder>\nThe user sent a new message while you were working:\nnow run ls"
          "\n</system-reminder>")


def queued_command() -> dict[str, Any]:
    return {"type": "attachment", "uuid": "q1", "isSidechain": False, "sessionId": "s1",
            "attachment": {"type": "queued_command", "prompt": "now run ls",
                           "commandMode": "prompt"},
            "rendered": [{"content": QUEUED}], "renderedRole": "system"}


def test_newer_lines_pass_byte_for_byte_and_count_where_they_reach_the_model(
        tmp_path: Path) -> None:
    lines = [json.dumps(e, separators=(", ", ": ")).encode() for e in NEWER_LINES]
    path = tmp_path / "s.jsonl"
    path.write_bytes(session(*(line + b"\n" for line in lines)))
    before = json.loads(run_ctxtool("estimate", "--json", str(path)).stdout)["context_tokens"]
    for command in (["persist"], ["snip"], ["microcompact", "--force"], ["summarize"]):
        out = run_ctxtool(*command, "--store", str(tmp_path / "store"), str(path)) \
            if command[0] != "summarize" else run_ctxtool(*command, str(path))
        assert out.returncode == 0, out.stderr
        assert all(line + b"\n" in out.stdout for line in lines), command
    checked = run_ctxtool("validate", str(path))
    assert checked.returncode == 0 and b": error:" not in checked.stdout, checked.stdout
    # none of them reaches the model; the queued prompt does, as the text it was sent as
    path.write_bytes(path.read_bytes() + orjson.dumps(queued_command()) + b"\n")
    after = json.loads(run_ctxtool("estimate", "--json", str(path)).stdout)["context_tokens"]
    assert after - before == estimate_text_tokens(QUEUED)


@pytest.mark.parametrize("form", ["messages", "segment", "both"])
def test_preserved_messages_are_read_in_either_form(form: str) -> None:
    kept = [user("keep me " * 200, uuid="k1", parentUuid=None),
            assistant("kept reply " * 200, msg_id="m9", uuid="k2", parentUuid="k1")]
    boundary = compact_boundary(50_000)
    meta: dict[str, Any] = {}
    if form in ("segment", "both"):
        meta["preservedSegment"] = {"headUuid": "k1", "anchorUuid": "s1", "tailUuid": "k2"}
    if form in ("messages", "both"):
        meta["preservedMessages"] = {"anchorUuid": "s1", "uuids": ["k1", "k2"],
                                     "allUuids": ["k1", "k2"]}
    boundary["compactMetadata"].update(meta)
    summary = {**compact_summary("the summary"), "uuid": "s1", "parentUuid": boundary["uuid"]}
    entries = [*kept, boundary, summary]
    report = estimate(iter(entries), fmt=CLAUDE_CODE)
    none = estimate(iter([*kept, compact_boundary(50_000), summary]), fmt=CLAUDE_CODE)
    assert report.context_tokens - none.context_tokens > 600  # the kept pair counts
    view = list(filter_compacted(iter(entries), plan_cut(iter(entries), CLAUDE_CODE)))
    assert [e.get("uuid") for e in view] == [boundary["uuid"], "s1", "k1", "k2"]
