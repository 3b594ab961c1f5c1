"""Gemini CLI sessions are detected as such from any of their lines, and no line of any other
agent's transcript (every fixture, the corpus) is taken for one. The sessions are the real
Gemini CLI 0.61.0's (tests/fixtures/gemini-cli-0.61.0)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from ctxtool.formats.detect import classify, detect_format
from ctxtool.formats.gemini.adapter import gemini_line
from ctxtool.formats.jsonl import iter_entries
from tests.conftest import FIXTURES, corpus_files

GEMINI = FIXTURES / "gemini-cli-0.61.0"
SESSIONS = sorted(GEMINI.glob("*.jsonl"))


def lines_of(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_the_fixtures_are_there() -> None:
    assert [p.name for p in SESSIONS] == ["compressed.jsonl", "new.jsonl", "resumed.jsonl",
                                          "same-minute.jsonl"]


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_every_line_of_a_gemini_session_is_claimed(path: Path) -> None:
    """Any line may come first (a session cut with tail, a `$set` piped alone)."""
    kinds = [gemini_line(line) for line in lines_of(path)]
    assert None not in kinds
    assert kinds[0] == "its metadata line"
    assert "a '$set' record" in kinds and "a 'gemini' message record" in kinds
    assert {classify(line) for line in lines_of(path)} == {"gemini"}


def test_rewind_and_legacy_forms_are_claimed() -> None:
    """`$rewindTo` (chatRecordingService.rewindTo) and the older one-document session, which
    starts with the same sessionId and projectHash."""
    assert gemini_line({"$rewindTo": "5e0222f8"}) == "a '$rewindTo' record"
    legacy = {"sessionId": "s", "projectHash": "h", "startTime": "t", "messages": []}
    assert gemini_line(legacy) == "its metadata line"
    info = {"id": "i1", "timestamp": "t", "type": "info", "content": "Request cancelled."}
    assert gemini_line(info) == "a 'info' message record"


def test_lookalikes_of_other_formats_are_not_claimed() -> None:
    claude_user = {"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "t",
                   "message": {"role": "user", "content": "hi"}}
    plain = {"id": "m1", "timestamp": "t", "type": "user", "role": "user", "content": "hi"}
    two_keys = {"$set": {"a": 1}, "type": "user"}
    odd_type = {"id": "m1", "timestamp": "t", "type": ["user"], "content": "hi"}  # unhashable
    for entry in (claude_user, plain, two_keys, odd_type, {"sessionId": "s", "projectHash": 7},
                  {}):
        assert gemini_line(entry) is None, entry


@pytest.mark.parametrize("start", [0, 1, 2])
def test_detection_from_any_line(start: int) -> None:
    data = b"".join((GEMINI / "new.jsonl").read_bytes().splitlines(keepends=True)[start:])
    fmt, entries = detect_format(iter_entries(io.BytesIO(data), "s.jsonl"))
    assert fmt == "gemini"
    assert len(list(entries)) == 11 - start


def test_forced_format_is_not_second_guessed() -> None:
    entries = iter_entries(io.BytesIO((GEMINI / "new.jsonl").read_bytes()), "s.jsonl")
    fmt, _ = detect_format(entries, "claude-code")
    assert fmt == "claude-code"


def other_transcripts() -> list[Path]:
    return [p for p in sorted(FIXTURES.rglob("*.jsonl")) if GEMINI not in p.parents]


def test_no_line_of_another_agent_is_claimed() -> None:
    """Every line of every other fixture (Claude Code, Codex, OpenCode, messages) and of the
    corpus (when ../shared is there): a false claim would misread a transcript."""
    paths = other_transcripts() + corpus_files()
    assert len(paths) > 10
    claimed = []
    for path in paths:
        for lineno, line in enumerate(path.read_bytes().splitlines(), start=1):
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(entry, dict) and gemini_line(entry) is not None:
                claimed.append(f"{path}:{lineno}")
    assert claimed == []
