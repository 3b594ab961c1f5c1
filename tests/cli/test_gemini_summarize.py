"""summarize and filter-compacted on Gemini CLI sessions (tests/fixtures/gemini-cli-0.61.0, written
by the real client 0.61.0, and a larger one made from them here): the compression checkpoint
summarize appends, as Gemini writes its own; what filter-compacted and estimate make of it and of
Gemini's own compression. tests/e2e/test_gemini_summarize.py has the real client resume it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.core.summarizing.summarize import plan_summary
from ctxtool.errors import ExitCode
from tests.conftest import FIXTURES, run_ctxtool

GEMINI = FIXTURES / "gemini-cli-0.61.0"
NOW = "2026-11-27T18:00:00Z"
SMALL = "".join(f"line {n}: alpha beta gamma\n" for n in range(1, 11))
BIG = "".join(f"line {n}: alpha beta gamma delta\n" for n in range(1, 2001))
ACK = "Got it. Thanks for the additional context!"


def big_session(name: str = "new.jsonl") -> bytes:
    """The real client's session with notes.txt's ten lines read as 2,000: a history worth
    summarizing. Its recorded tokens counted ten lines: they go, and ctxtool estimates all."""
    small, big = json.dumps(SMALL)[1:-1].encode(), json.dumps(BIG)[1:-1].encode()
    data = (GEMINI / name).read_bytes().replace(small, big)
    return re.sub(rb',"tokens":\{[^}]*\}', b"", data)


def run(*args: str, data: bytes) -> Any:
    result = CliRunner().invoke(cli, list(args), input=data)
    assert result.exit_code == 0, result.stderr
    return result


def records(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines()]


def appended(data: bytes, out: bytes) -> list[dict[str, Any]]:
    assert out.startswith(data)  # every input line, byte for byte
    [line] = records(out[len(data):])
    assert set(line) == {"$set"} and set(line["$set"]) == {"messages", "lastUpdated"}
    return line["$set"]["messages"]


def test_summarize_appends_gemini_compression_checkpoint() -> None:
    data = big_session()
    result = run("summarize", "--now", NOW, "--stats", data=data)
    messages = appended(data, result.stdout_bytes)
    context, snapshot, thanks = messages
    assert context == records(data)[1]["$set"]["messages"][0]  # the <session_context>, as it was
    assert snapshot["type"] == "user" and snapshot["timestamp"] == "2026-11-27T18:00:00.000Z"
    text = snapshot["content"][0]["text"]
    assert text.startswith("<state_snapshot>\n1. Primary Request and Intent:")
    assert text.endswith("\n</state_snapshot>")
    assert "What is in notes.txt?" in text and "<session_context>" not in text
    assert "notes.txt (read x1)" in text  # read_file read as Claude Code's Read
    assert thanks == {"id": thanks["id"], "timestamp": snapshot["timestamp"], "type": "gemini",
                      "content": [{"text": ACK}]}
    stats = json.loads(result.stderr[result.stderr.index("{"):])
    # the 2,000 lines (about 21,500 tokens, sent twice by a resume) are gone
    assert stats["compacted"] and stats["tokens_after"] < stats["tokens_before"] - 20_000
    again = run("summarize", "--now", NOW, data=data).stdout_bytes
    assert again == result.stdout_bytes  # ids derived from the input: the same bytes


def test_a_kept_tail_starts_at_a_user_prompt_and_sends_each_result_once() -> None:
    data = big_session("resumed.jsonl")
    messages = appended(data, run("summarize", "--keep-last", "2", "--now", NOW,
                                  data=data).stdout_bytes)
    # the last two messages sent are the last turn's answers: the tail reaches back to its
    # prompt ("And third?" was the last prompt; the turn before it is summarized)
    assert [m["type"] for m in messages[3:]] == ["user", "gemini"]
    assert messages[3]["content"] == [{"text": "And third?"}]
    assert all(set(m) == {"id", "timestamp", "type", "content"} for m in messages[3:])
    wide = appended(data, run("summarize", "--keep-last", "6", "--now", NOW,
                              data=data).stdout_bytes)
    kept = wide[3:]
    assert kept[0]["content"] == [{"text": "What is in notes.txt?"}]  # not a tool result
    responses = [p for m in kept for p in m["content"] if "functionResponse" in p]
    assert len(responses) == 1 and BIG in json.dumps(responses[0], ensure_ascii=False) \
        .encode().decode("unicode_escape")
    assert not any("toolCalls" in m or "tokens" in m for m in kept)


def test_restore_files_is_refused_for_gemini() -> None:
    result = CliRunner().invoke(cli, ["summarize", "--restore-files", "2"], input=big_session())
    assert result.exit_code == ExitCode.USAGE
    assert "--restore-files does not apply to Gemini CLI sessions" in result.stderr


def test_a_short_session_passes_through_unchanged() -> None:
    data = (GEMINI / "new.jsonl").read_bytes()
    result = run("summarize", data=data)
    assert result.stdout_bytes == data and "would not make the context smaller" in result.stderr


def test_filter_compacted_starts_at_gemini_own_compression() -> None:
    data = (GEMINI / "compressed.jsonl").read_bytes()
    result = run("filter-compacted", "--view", "model", "--stats", data=data)
    view = records(result.stdout_bytes)
    assert [m["type"] for m in view] == ["user", "user", "gemini", "user", "gemini", "user",
                                         "gemini"]
    assert view[1]["content"][0]["text"].startswith("<state_snapshot>")
    assert view[2]["content"] == [{"text": ACK}]
    assert view[3]["content"] == [{"text": "What does line 2 say?"}]
    stats = json.loads(result.stderr[result.stderr.index("{"):])["files"][0]
    assert stats["compactions"] == 1 and stats["cut"].endswith(":20")


def test_filter_compacted_and_estimate_after_ctxtool_summary() -> None:
    data = big_session()
    out = run("summarize", "--now", NOW, data=data).stdout_bytes
    view = records(run("filter-compacted", "--view", "model", data=out).stdout_bytes)
    assert [m["content"][0]["text"][:16] for m in view] == [
        "<session_context", "<state_snapshot>", ACK[:16]]
    # the client writes the conversation again at every resume, the snapshot under its id
    resumed = out + orjson.dumps({"$set": {"messages": view}}) + b"\n"
    for session in (out, resumed):
        report = orjson.loads(run("estimate", "--json", data=session).stdout_bytes)
        assert report["compact_boundaries"] == 1
    first = orjson.loads(run("estimate", "--json", data=data).stdout_bytes)
    after = orjson.loads(run("estimate", "--json", data=out).stdout_bytes)
    stats = run("summarize", "--stats", "--now", NOW, data=data).stderr
    assert after["context_tokens"] == json.loads(stats[stats.index("{"):])["tokens_after"]
    assert after["context_tokens"] < first["context_tokens"] - 20_000


def test_gemini_own_snapshot_is_the_prior_summary() -> None:
    """After Gemini's own compression (compressed.jsonl) what is summarized starts at its
    snapshot, which is the earlier summary; Gemini's acknowledgement and <session_context> are
    no messages of the conversation."""
    items = [orjson.loads(line) for line in (GEMINI / "compressed.jsonl").read_bytes().splitlines()]
    request = plan_summary(items, "gemini").request
    [prior] = request.prior_summaries
    assert prior.startswith("<overall_goal>Know what notes.txt holds.</overall_goal>")
    said = [turn.text for turn in request.turns if turn.role == "user" and turn.text]
    assert said == ["What does line 2 say?"]
    assert not any(ACK in json.dumps(turn.blocks) for turn in request.turns)


def test_summarize_again_is_a_second_compression() -> None:
    first = run("summarize", "--now", NOW, data=big_session()).stdout_bytes
    more = b"".join(orjson.dumps(r) + b"\n" for r in (
        {"id": "u2", "timestamp": "2026-11-27T18:01:00.000Z", "type": "user",
         "content": [{"text": "Now count the deltas."}]},
        {"id": "g2", "timestamp": "2026-11-27T18:01:01.000Z", "type": "gemini",
         "content": "There are 2000 deltas. " * 800}))
    again = run("summarize", "--now", "2026-11-27T18:02:00Z", data=first + more)
    messages = appended(first + more, again.stdout_bytes)
    text = messages[1]["content"][0]["text"]
    assert "What is in notes.txt?" in text and "Now count the deltas." in text
    report = orjson.loads(run("estimate", "--json", data=again.stdout_bytes).stdout_bytes)
    assert report["compact_boundaries"] == 2


def test_summarize_through_the_entry_point(tmp_path: Path) -> None:
    path = tmp_path / "session-2026-11-27T16-22-0e5a1b2c.jsonl"
    data = big_session()
    path.write_bytes(data)
    os.utime(path, (1_700_000_000, 1_700_000_000))  # not a session in use
    proc = run_ctxtool("summarize", "--in-place", "--now", NOW, str(path))
    assert proc.returncode == 0, proc.stderr
    messages = appended(data, path.read_bytes())
    assert messages[1]["content"][0]["text"].startswith("<state_snapshot>")
    assert re.search(rb"context [0-9,]+ -> [0-9,]+ tokens", proc.stderr)  # on stderr


@pytest.mark.parametrize("name", ["new.jsonl", "resumed.jsonl", "same-minute.jsonl"])
def test_sessions_without_compression_come_back_byte_for_byte(name: str) -> None:
    data = (GEMINI / name).read_bytes()
    result = run("filter-compacted", "--stats", data=data)
    assert result.stdout_bytes == data
    assert json.loads(result.stderr[result.stderr.index("{"):])["files"][0]["compactions"] == 0


def test_auto_compacts_at_gemini_own_point() -> None:
    """--auto without --context-window measures in the window of the session's model
    (1,048,576) at Gemini's default threshold 0.5; with one, in that window."""
    data = big_session()
    below = CliRunner().invoke(cli, ["summarize", "--auto"], input=data)
    assert below.exit_code == 0 and below.stdout_bytes == data
    assert "below the auto-compact threshold (524,288)" in below.stderr
    over = run("summarize", "--auto", "--context-window", "40000", "--now", NOW, data=data)
    assert appended(data, over.stdout_bytes)[1]["content"][0]["text"].startswith("<state_snapshot>")
