"""Edges a hostile or careless command line reaches (issue 27, item 14): a closed stdin, an
ANTHROPIC_BASE_URL that is no URL, a symlink loop as input, ``--backup=SUFFIX`` spelled with a
'/'. Each is one line on stderr and a documented exit code, through the real entry point."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ctxtool.errors import ExitCode
from tests.conftest import ctxtool_executable, run_ctxtool

LINE = (b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s",'
        b'"timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hello"}}\n')


RESULT = (b'{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"'
          + b"x" * 600 + b'"}]}\n')


def one_error(stderr: bytes) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    lines = text.strip().splitlines()
    assert lines and lines[-1].startswith("ctxtool: error: "), text
    return lines[-1]


def test_closed_stdin_is_an_io_error() -> None:
    # `ctxtool estimate <&-`: no stdin at all, not an empty one
    result = subprocess.run([*ctxtool_executable(), "estimate"], stdin=subprocess.DEVNULL,
                            capture_output=True, check=False,
                            preexec_fn=lambda: os.close(0))
    assert result.returncode == ExitCode.STORAGE, result.stderr
    assert "stdin is closed" in one_error(result.stderr)


def test_invalid_anthropic_base_url_is_one_line_exit_5(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LINE)
    for url in ("::not a url::", "ftp://example.com", "http://", "http://host:notaport"):
        result = run_ctxtool("summarize", "--llm", "anthropic", str(session),
                             env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": url})
        assert result.returncode == ExitCode.LLM, (url, result.stderr)
        assert "ANTHROPIC_BASE_URL is not an http(s) URL" in one_error(result.stderr)


def test_symlink_loop_is_an_io_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    for command in (["estimate"], ["validate"], ["persist", "--in-place", "--force"]):
        result = run_ctxtool(*command, "loop1", cwd=tmp_path)
        assert result.returncode == ExitCode.STORAGE, (command, result.stderr)
        error = one_error(result.stderr)
        assert error.startswith("ctxtool: error: loop1: cannot read"), error
        assert "symbolic links" in error


def test_backup_with_equals_is_a_suffix(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LINE)
    for value in ("/x", ""):
        result = run_ctxtool("persist", "--in-place", "--force", f"--backup={value}", "s.jsonl",
                             cwd=tmp_path)
        assert result.returncode == ExitCode.USAGE, (value, result.stderr)
        assert f"--backup={value}: the suffix" in one_error(result.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    assert session.read_bytes() == LINE
    # spelled with '=', a suffix is a suffix even when it does not start with '.' (a run that
    # changes nothing writes no backup: the file holds a result persist moves out)
    session.write_bytes(RESULT)
    ok = run_ctxtool("persist", "--in-place", "--force", "--max-chars", "100", "--backup=orig",
                     "s.jsonl", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "s.jsonlorig").read_bytes() == RESULT
    # `--backup FILE`: click takes the file for the value; it is still the input
    session.write_bytes(RESULT)
    again = run_ctxtool("persist", "--in-place", "--force", "--max-chars", "100", "--backup",
                        "./s.jsonl", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "s.jsonl.bak").read_bytes() == RESULT
