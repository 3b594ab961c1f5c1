"""``ctxtool convert``: OpenCode exports and storage trees to JSONL and back, and API messages."""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import struct
import subprocess
import termios
from pathlib import Path

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from tests.conftest import CORPUS, ctxtool_executable, read_terminal, run_ctxtool
from tests.opencode_builders import FIXTURE

EXPORT = FIXTURE / "export.json"
STORAGE = FIXTURE / "storage"
SES = "ses_4a1b2c3d4ffeAbCdEfGhIjKlMn"
CC = (b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z",'
      b'"message":{"role":"user","content":"hello"}}\n'
      b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:01Z",'
      b'"message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"hi"}]}}\n')


def lines(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_export_becomes_one_message_per_line(runner) -> None:
    result = runner.invoke(cli, ["convert", str(EXPORT)])
    assert result.exit_code == 0, result.stderr
    rows = lines(result.stdout_bytes)
    assert list(rows[0]) == ["session"] and len(rows) == 14
    assert all(set(r) == {"info", "parts"} for r in rows[1:])
    assert result.stderr == ""


def test_export_round_trip_is_byte_identical(runner, tmp_path: Path) -> None:
    jsonl = tmp_path / "s.jsonl"
    assert runner.invoke(cli, ["convert", str(EXPORT), "-o", str(jsonl)]).exit_code == 0
    back = runner.invoke(cli, ["convert", str(jsonl), "--to", "opencode-export"])
    assert back.exit_code == 0, back.stderr
    assert back.stdout_bytes == EXPORT.read_bytes()


def test_storage_tree_to_jsonl_matches_the_export_and_writes_back_unchanged(runner, tmp_path: Path) -> None:
    from_tree = runner.invoke(cli, ["convert", str(STORAGE), "--session", SES])
    from_export = runner.invoke(cli, ["convert", str(EXPORT)])
    assert from_tree.exit_code == 0 and from_tree.stdout_bytes == from_export.stdout_bytes
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_bytes(from_tree.stdout_bytes)
    tree = tmp_path / "storage"
    shutil.copytree(STORAGE, tree)
    before = {p: p.read_bytes() for p in tree.rglob("*.json")}
    result = runner.invoke(cli, ["convert", str(jsonl), "--to", "opencode-storage", "-o", str(tree),
                                 "--stats"])
    assert result.exit_code == 0, result.stderr
    assert {p: p.read_bytes() for p in tree.rglob("*.json")} == before
    stats = orjson.loads(result.stderr[result.stderr.index("{"):])
    assert (stats["files_written"], stats["files_unchanged"], stats["messages"]) == (0, 51, 13)
    assert "0 files written, 51 unchanged" in result.stderr


def test_storage_folder_forms(runner) -> None:
    several = runner.invoke(cli, ["convert", str(STORAGE)])
    assert several.exit_code == ExitCode.USAGE
    assert "2 sessions; pick one with --session ID" in several.stderr and several.stdout == ""
    by_folder = runner.invoke(cli, ["convert", str(STORAGE / "message" / SES)])
    parent = runner.invoke(cli, ["convert", str(FIXTURE), "--session", SES])
    assert by_folder.exit_code == parent.exit_code == 0
    assert by_folder.stdout_bytes == parent.stdout_bytes
    missing = runner.invoke(cli, ["convert", str(STORAGE), "--session", "ses_nope"])
    assert missing.exit_code == ExitCode.INVALID_INPUT and "no session ses_nope" in missing.stderr


def test_opencode_jsonl_to_api_messages(runner) -> None:
    jsonl = runner.invoke(cli, ["convert", str(EXPORT)]).stdout_bytes
    result = runner.invoke(cli, ["convert", "--to", "anthropic", "--stats"], input=jsonl)
    assert result.exit_code == 0, result.stderr
    messages = lines(result.stdout_bytes)
    assert [m["role"] for m in messages[:3]] == ["user", "assistant", "user"]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in zip(roles, roles[1:]))  # alternating turns
    last = messages[-1]["content"]
    assert {b["content"] for b in last if b["type"] == "tool_result"} == {"[Tool execution was interrupted]"}
    openai = runner.invoke(cli, ["convert", str(EXPORT), "--to", "openai"])
    assert openai.exit_code == 0 and any(m["role"] == "tool" for m in lines(openai.stdout_bytes))


def test_claude_code_needs_a_target_and_cannot_become_opencode(runner) -> None:
    result = runner.invoke(cli, ["convert"], input=CC)
    assert result.exit_code == ExitCode.USAGE and "--to anthropic" in result.stderr
    wrong = runner.invoke(cli, ["convert", "--to", "opencode-export"], input=CC)
    assert wrong.exit_code == ExitCode.USAGE and "only OpenCode sessions" in wrong.stderr
    good = runner.invoke(cli, ["convert", "--to", "anthropic"], input=CC)
    assert good.exit_code == 0 and lines(good.stdout_bytes) == [
        {"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]


def test_usage_errors(runner, tmp_path: Path) -> None:
    no_dir = runner.invoke(cli, ["convert", str(EXPORT), "--to", "opencode-storage"])
    assert no_dir.exit_code == ExitCode.USAGE and "needs -o DIR" in no_dir.stderr
    session_on_file = runner.invoke(cli, ["convert", str(EXPORT), "--session", SES])
    assert session_on_file.exit_code == ExitCode.USAGE
    no_header = tmp_path / "m.jsonl"
    no_header.write_bytes(b"\n".join(runner.invoke(cli, ["convert", str(EXPORT)]).stdout_bytes.splitlines()[1:]))
    refused = runner.invoke(cli, ["convert", str(no_header), "--to", "opencode-export"])
    assert refused.exit_code == ExitCode.INVALID_INPUT and "session record" in refused.stderr
    assert refused.stdout == ""


def test_bad_documents_are_one_line_errors(runner, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{\n  "info": {},\n  "messages": [\n')
    result = runner.invoke(cli, ["convert", str(broken)])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr.startswith(f"ctxtool: error: {broken}:4: invalid JSON")
    assert "Traceback" not in result.stderr and result.stdout == ""
    other = tmp_path / "other.json"
    other.write_bytes(b'{\n  "hello": 1\n}\n')
    result = runner.invoke(cli, ["convert", str(other)])
    assert result.exit_code == ExitCode.INVALID_INPUT and "not an OpenCode export" in result.stderr
    empty_folder = runner.invoke(cli, ["convert", str(tmp_path)])
    assert empty_folder.exit_code == ExitCode.INVALID_INPUT
    missing = runner.invoke(cli, ["convert", str(tmp_path / "nope.json")])
    assert missing.exit_code == ExitCode.STORAGE


def test_a_minified_export_is_still_an_export(runner) -> None:
    squeezed = orjson.dumps(orjson.loads(EXPORT.read_bytes())) + b"\n"
    result = runner.invoke(cli, ["convert", "-"], input=squeezed)
    assert result.exit_code == 0
    assert result.stdout_bytes == runner.invoke(cli, ["convert", str(EXPORT)]).stdout_bytes


def test_real_entry_point_export_to_storage_and_back(tmp_path: Path) -> None:
    proc = run_ctxtool("convert", str(EXPORT), "--to", "opencode-storage", "-o", str(tmp_path / "st"))
    assert proc.returncode == 0, proc.stderr
    assert b"51 files written" in proc.stderr and proc.stdout == b""
    for written in (tmp_path / "st").rglob("*.json"):
        assert written.read_bytes() == (STORAGE / written.relative_to(tmp_path / "st")).read_bytes()
    back = run_ctxtool("convert", str(tmp_path / "st"), "--to", "opencode-export")
    assert back.returncode == 0 and back.stdout == EXPORT.read_bytes()
    piped = run_ctxtool("convert", "-", input=EXPORT.read_bytes())
    assert piped.returncode == 0 and piped.stdout.count(b"\n") == 14


@pytest.mark.skipif(not (CORPUS / "ggfincke__opencode-to-ccusage").is_dir(), reason="corpus absent")
def test_corpus_export_converts_and_comes_back(tmp_path: Path) -> None:
    path = CORPUS / "ggfincke__opencode-to-ccusage" / "test__fixtures__sample-export.json"
    jsonl = run_ctxtool("convert", str(path))
    assert jsonl.returncode == 0 and len(jsonl.stdout.splitlines()) == 9
    back = run_ctxtool("convert", "--to", "opencode-export", input=jsonl.stdout)
    assert back.returncode == 0 and back.stdout == path.read_bytes()


def _stderr_on_a_terminal(*args: str) -> bytes:
    """What the entry point writes to stderr when stderr is a pseudo-terminal."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 0x0: no bar
    proc = subprocess.Popen([*ctxtool_executable(), *args], stdout=subprocess.DEVNULL,
                            stderr=child, stdin=subprocess.DEVNULL)
    os.close(child)
    written = read_terminal(main)
    assert proc.wait(timeout=120) == 0
    return written


def test_a_file_converted_to_messages_shows_a_bar_on_a_terminal(tmp_path: Path) -> None:
    path = tmp_path / "users.jsonl"
    path.write_bytes(CC * 200)
    err = _stderr_on_a_terminal("convert", "--to", "anthropic", str(path))
    assert b"users.jsonl:" in err and b"%|" in err  # tqdm's bar, named after the file
    assert _stderr_on_a_terminal("convert", "--to", "anthropic", "-q", str(path)) == b""
