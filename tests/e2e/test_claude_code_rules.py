"""Claude Code's rules against the real client (issue 29): on a session Claude Code 2.1.332
writes here against the fake API, ``estimate`` of what ``microcompact`` and ``summarize`` write
is within 15% of what Claude Code then sends when it resumes that file, and the rule ``estimate``
applies is the one of the version the session records.

Both sides are counted as the resume tests count them (tests/e2e/test_claude_code_resume.py):
the conversation only (ctxtool's context less its system figure; the request's messages less
``role: system`` ones and the turn added on resume), in ctxtool's token heuristic, with the
fake server reporting usage in that same measure.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import run_ctxtool
from tests.e2e.claude_code import ClaudeCode
from tests.e2e.fake_messages import FakeMessages, heuristic_tokens, say, tool
from tests.e2e.test_claude_code_resume import (estimated_conversation, sent_conversation,
                                               session_id_of)

pytestmark = pytest.mark.e2e

VARIANTS = {
    "microcompact": ["microcompact", "--force"],
    "microcompact idle": ["microcompact", "--strategy", "idle", "--now", "2099-01-01T00:00:00Z"],
    "summarize": ["summarize", "--llm", "offline"],
    "summarize --keep-last": ["summarize", "--llm", "offline", "--keep-last", "4"],
}


@pytest.fixture(scope="module")
def written(claude_bin: str, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """Eight 28,000-character outputs (7,000 tokens each in Claude Code's count: 56,000 of
    compactable results, over microcompact's 40,000 target), then a short answer."""
    root = tmp_path_factory.mktemp("rules")
    with FakeMessages(tokens=heuristic_tokens) as api:
        cc = ClaudeCode(claude_bin, root, api)
        for n in range(8):
            body = "".join(f"{n}:{i:05d} the quick brown fox jumps over it\n"
                           for i in range(28_000 // 44))
            (cc.cwd / f"part{n}.txt").write_text(body)
        api.push(*[tool("Bash", {"command": f"cat part{n}.txt", "description": f"Part {n}"})
                   for n in range(8)], say("Eight parts read."))
        first = cc.ask("Read the eight parts.")
        assert first.returncode == 0, first.stderr
        return cc.session_path(str(first.result["session_id"])).read_bytes()


def resume(claude_bin: str, root: Path, data: bytes) -> dict:
    with FakeMessages() as api:
        cc = ClaudeCode(claude_bin, root, api)
        sid = session_id_of(data)
        cc.place(data, sid)
        run = cc.resume(sid)
        assert run.returncode == 0, run.stderr[-2000:]
        return run.first


def estimate(data: bytes) -> dict:
    proc = run_ctxtool("estimate", "--json", input=data)
    assert proc.returncode == 0, proc.stderr
    return orjson.loads(proc.stdout)


def test_the_session_records_the_client_version_and_estimate_uses_its_rule(
        written: bytes) -> None:
    versions = {orjson.loads(line).get("version") for line in written.splitlines()} - {None}
    assert versions == {"2.1.332"}
    report = estimate(written)
    assert report["thresholds"]["rule"] == "2.1.311+"
    assert report["thresholds"]["auto_compact"] == 167_000


@pytest.mark.parametrize("name", list(VARIANTS))
def test_estimate_of_the_output_is_within_15_percent_of_what_claude_code_sends(
        written: bytes, claude_bin: str, tmp_path: Path, name: str) -> None:
    args = VARIANTS[name]
    extra = ["--store", str(tmp_path / "store")] if args[0] == "microcompact" else []
    proc = run_ctxtool(*args, *extra, input=written)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout != written, proc.stderr  # it did something
    report = estimate(proc.stdout)
    body = resume(claude_bin, tmp_path / "home", proc.stdout)
    ours, theirs = estimated_conversation(report), sent_conversation(body)
    assert abs(ours / theirs - 1) <= 0.15, (name, ours, theirs)
    if args[0] == "microcompact":
        boundary = orjson.loads(proc.stdout.splitlines()[-1])["microcompactMetadata"]
        # Claude Code's count of what went: characters / 4 of 7,000-token outputs
        assert boundary["tokensSaved"] >= 7_000 * len(boundary["compactedToolIds"]) * 0.95


def kept_by_reference(entries: list[dict]) -> list[dict]:
    """The entries the last boundary keeps, as the form it holds names them: preservedMessages'
    uuids, else the preservedSegment chain from its tail back to its head."""
    meta = [e for e in entries if e.get("subtype") == "compact_boundary"][-1]["compactMetadata"]
    by_uuid = {e.get("uuid"): e for e in entries}
    if "preservedMessages" in meta:
        return [by_uuid[u] for u in meta["preservedMessages"]["uuids"]]
    segment = meta["preservedSegment"]
    chain = [by_uuid[segment["tailUuid"]]]
    while chain[-1]["uuid"] != segment["headUuid"]:
        chain.append(by_uuid[chain[-1]["parentUuid"]])
    return chain[::-1]


def block_ids(items: list[dict], kind: str, key: str) -> list[str]:
    return [b[key] for m in items if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == kind]


@pytest.mark.parametrize("version", ["2.1.332", "2.1.140"])
def test_claude_code_reads_the_kept_messages_in_the_form_the_version_writes(
        written: bytes, claude_bin: str, tmp_path: Path, version: str) -> None:
    """summarize --keep-last writes 2.1.332's form (preservedMessages and the segment) for its
    session, and the segment alone for one of 2.1.140 (before preservedMessages existed); the
    real 2.1.332 resumes both with the kept messages right after the summary, nothing else."""
    data = written.replace(b'"version":"2.1.332"', f'"version":"{version}"'.encode())
    proc = run_ctxtool("summarize", "--llm", "offline", "--keep-last", "4", input=data)
    assert proc.returncode == 0, proc.stderr
    entries = [orjson.loads(line) for line in proc.stdout.splitlines()]
    meta = [e for e in entries if e.get("subtype") == "compact_boundary"][-1]["compactMetadata"]
    assert ("preservedMessages" in meta) is (version == "2.1.332") and "preservedSegment" in meta
    kept = [e["message"] for e in kept_by_reference(entries) if "message" in e]
    assert block_ids(kept, "tool_use", "id"), "the kept tail holds a tool call"
    body = resume(claude_bin, tmp_path / "home", proc.stdout)
    sent = [m for m in body["messages"] if m["role"] != "system"]
    first = sent[0]["content"]
    assert "This session is being continued" in (first if isinstance(first, str)
                                                  else first[0]["text"])
    assert block_ids(sent, "tool_use", "id") == block_ids(kept, "tool_use", "id")
    assert block_ids(sent, "tool_result", "tool_use_id") == block_ids(kept, "tool_result",
                                                                      "tool_use_id")
