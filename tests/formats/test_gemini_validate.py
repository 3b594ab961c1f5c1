"""validate on Gemini CLI sessions: quiet on what the real client 0.61.0 writes (new, resumed,
compressed, the same-minute restart; masking: tests/e2e/test_gemini_masking.py), one clear line
with file:line for each broken record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxtool.errors import ExitCode
from tests.conftest import FIXTURES, run_ctxtool

GEMINI = FIXTURES / "gemini-cli-0.61.0"
SESSIONS = sorted(GEMINI.glob("*.jsonl"))
META = {"sessionId": "s1", "projectHash": "h1", "startTime": "t", "lastUpdated": "t",
        "kind": "main"}


def call(call_id: str) -> dict[str, Any]:
    return {"functionCall": {"id": call_id, "name": "read_file", "args": {"file_path": "a"}}}


def answer(call_id: str) -> dict[str, Any]:
    return {"functionResponse": {"id": call_id, "name": "read_file",
                                 "response": {"output": "text"}}}


def record(message_id: str, kind: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"id": message_id, "timestamp": "t", "type": kind, "content": content, **more}


def write(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text("".join(line if isinstance(line, str) else json.dumps(line) + "\n"
                            for line in lines))
    return path


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_the_real_sessions_have_no_problem(path: Path) -> None:
    proc = run_ctxtool("validate", str(path))
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stdout.decode()


def test_a_good_small_session_with_a_call_has_no_problem(tmp_path: Path) -> None:
    path = write(tmp_path, [META, record("u1", "user", [{"text": "read a"}]),
                            record("m1", "gemini", "", toolCalls=[
                                {"id": "c1", "name": "read_file", "args": {},
                                 "result": [answer("c1")]}], tokens=None),
                            record("u2", "user", [answer("c1")]),
                            record("m2", "gemini", [{"text": "done"}, call("c2")]),
                            record("u3", "user", [answer("c2")])])
    proc = run_ctxtool("validate", str(path))
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stdout.decode()


BROKEN = {
    "gemini-line-skipped": ([META, {"hello": 1}], 2),
    "gemini-rewind-unknown": ([META, record("u1", "user", "hi"), {"$rewindTo": "u9"}], 3),
    "gemini-result-orphan": ([META, record("u1", "user", [answer("c7")])], 2),
    "gemini-call-unanswered": ([META, record("m1", "gemini", [call("c1")]),
                                record("m2", "gemini", "again")], 2),
    "gemini-metadata-missing": ([record("u1", "user", "hi")], 1),
    "schema": ([META, record("u1", "chat", "hi")], 2),
    "invalid-json": ([META, '{"id": "u1", "type": "user"\n'], 2),
}


@pytest.mark.parametrize("code", sorted(BROKEN))
def test_each_broken_record_is_one_line_naming_file_line_and_code(code: str,
                                                                  tmp_path: Path) -> None:
    lines, line = BROKEN[code]
    path = write(tmp_path, lines)
    proc = run_ctxtool("validate", str(path))
    out = proc.stdout.decode().splitlines()
    assert proc.returncode == ExitCode.INVALID_INPUT, out
    assert [o for o in out if o.endswith(f"[{code}]")] == [o for o in out
                                                          if o.startswith(f"{path}:{line}:")]
    assert len(out) == 1 and out[0].startswith(f"{path}:{line}: error: ")
    assert "Traceback" not in proc.stderr.decode()


def test_the_last_turn_s_calls_may_wait_for_their_results(tmp_path: Path) -> None:
    """A session killed while a tool ran: no later model turn, no problem."""
    path = write(tmp_path, [META, record("m1", "gemini", [call("c1")])])
    assert run_ctxtool("validate", str(path)).returncode == 0


def test_a_repeated_id_replaces_the_earlier_record(tmp_path: Path) -> None:
    """Written without, then with its calls: the first write's missing result is no problem."""
    path = write(tmp_path, [META, record("m1", "gemini", "reading"),
                            record("m1", "gemini", "reading", toolCalls=[
                                {"id": "c1", "name": "read_file", "result": [answer("c1")]}]),
                            record("m2", "gemini", "done")])
    assert run_ctxtool("validate", str(path)).returncode == 0
