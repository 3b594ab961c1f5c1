"""Every command that reads transcripts refuses a Gemini CLI session (tests/fixtures/
gemini-cli-0.61.0, written by the real client) through the real entry point: one line on stderr
naming the file, the line and the problem, exit 3 (invalid input), nothing on stdout, the file
untouched — where it used to be read as a Claude Code transcript (estimate: 24,000 tokens)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxtool.errors import ExitCode
from tests.conftest import FIXTURES, run_ctxtool

GEMINI = FIXTURES / "gemini-cli-0.61.0"
COMMANDS = [["estimate"], ["validate"], ["persist"], ["snip"], ["microcompact"], ["summarize"],
            ["filter-compacted"], ["restore"], ["convert", "--to", "anthropic"], ["statusline"],
            ["vacuum"]]


def assert_refused(proc, where: str) -> None:  # type: ignore[no-untyped-def]
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.INVALID_INPUT, err
    assert proc.stdout == b""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"ctxtool: error: {where}: a Gemini CLI session (")
    assert "not supported yet" in err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_each_command_refuses_a_gemini_session(command: list[str], tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(GEMINI / "resumed.jsonl", path)
    proc = run_ctxtool(*command, str(path), cwd=tmp_path)
    assert_refused(proc, f"{path}:1")
    assert path.read_bytes() == (GEMINI / "resumed.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_stdin_from_any_line_is_refused() -> None:
    """A session piped from its third line on: a user message record, named as <stdin>:1."""
    data = b"".join((GEMINI / "new.jsonl").read_bytes().splitlines(keepends=True)[2:])
    assert_refused(run_ctxtool("estimate", input=data), "<stdin>:1")


def test_in_place_leaves_the_session_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(GEMINI / "compressed.jsonl", path)
    proc = run_ctxtool("microcompact", "--in-place", "--force", str(path))
    assert_refused(proc, f"{path}:1")
    assert path.read_bytes() == (GEMINI / "compressed.jsonl").read_bytes()


def test_statusline_json_on_stdin_is_refused(tmp_path: Path) -> None:
    """The way Claude Code calls it (the fast path, before click)."""
    path = GEMINI / "new.jsonl"
    proc = run_ctxtool("statusline", input=b'{"transcript_path": "%s"}' % str(path).encode())
    assert_refused(proc, f"{path}:1")


def test_validate_goes_on_with_the_other_files(tmp_path: Path) -> None:
    """Refused, not reported as a problem of the file: on stderr, and the other file is checked
    (a run over several files that partly failed exits 1)."""
    proc = run_ctxtool("validate", str(GEMINI / "new.jsonl"), str(FIXTURES / "validate_session.jsonl"))
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.FAILED, err
    assert b"Gemini" not in proc.stdout
    assert f"{GEMINI / 'new.jsonl'}:1: a Gemini CLI session (its metadata line)" in err
    assert "1 of 2 files failed" in err


def test_an_older_one_document_session_is_refused_too(tmp_path: Path) -> None:
    """Sessions from before the JSONL form are one JSON object (sessionId, projectHash,
    messages): on one line it is named a Gemini session; indented, it is no JSONL at all."""
    document = {"sessionId": "s1", "projectHash": "ab12", "startTime": "2026-03-01T10:00:00Z",
                "lastUpdated": "2026-03-01T10:05:00Z",
                "messages": [{"id": "m1", "timestamp": "2026-03-01T10:00:00Z", "type": "user",
                              "content": [{"text": "hi"}]}]}
    assert_refused(run_ctxtool("estimate", input=json.dumps(document).encode()), "<stdin>:1")
    indented = tmp_path / "session-2026-03-01T10-00-s1.json"
    indented.write_text(json.dumps(document, indent=2))
    proc = run_ctxtool("estimate", str(indented))
    assert proc.returncode == ExitCode.INVALID_INPUT and proc.stdout == b""
    assert f"{indented}:1: not JSONL" in proc.stderr.decode()
