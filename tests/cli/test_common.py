"""Behaviour every JSONL command shares, tested once for all of them (like csvkit's mixins):
--help with examples, bad lines, unreadable inputs, empty input, `| head`, no tracebacks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from tests.conftest import ctxtool_executable, run_ctxtool

ALL = cli.list_commands(None)  # type: ignore[arg-type]
# commands whose input is JSONL transcripts on stdin or in FILE arguments
STREAM = [name for name in ALL if name not in ("cleanup", "convert", "sessions", "statusline")]
DOCUMENTED = {int(code) for code in ExitCode}

GOOD = (b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z",'
        b'"message":{"role":"user","content":"hello"}}\n')


def params(names: list[str]) -> list[object]:
    return names or [pytest.param(None, marks=pytest.mark.skip(reason="no command built yet"))]


@pytest.mark.parametrize("name", params(ALL))
def test_help_has_runnable_examples(runner, name: str) -> None:
    result = runner.invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert f"ctxtool {name}" in result.stdout  # an example pipeline in the help text


@pytest.mark.parametrize("name", params(STREAM))
def test_bad_json_line_is_one_clear_error(runner, name: str) -> None:
    result = runner.invoke(cli, [name], input=GOOD + b'{"type": "user", oops}\n')
    assert result.exit_code == ExitCode.INVALID_INPUT, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("ctxtool: error: <stdin>:2: invalid JSON"), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", params(STREAM))
def test_unreadable_inputs_exit_4(runner, tmp_path: Path, name: str) -> None:
    missing = runner.invoke(cli, [name, str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == ExitCode.STORAGE
    assert f"ctxtool: error: {tmp_path / 'nope.jsonl'}: cannot read" in missing.stderr
    folder = runner.invoke(cli, [name, str(tmp_path)])
    assert folder.exit_code == ExitCode.STORAGE
    assert "is a directory" in folder.stderr


@pytest.mark.parametrize("name", params(STREAM))
def test_empty_input_never_tracebacks(runner, tmp_path: Path, name: str) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = runner.invoke(cli, [name, str(empty)])
    assert result.exit_code in DOCUMENTED
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("name", params(STREAM))
def test_real_entry_point_reads_dash_as_stdin(name: str) -> None:
    proc = run_ctxtool(name, "-", input=GOOD)
    assert proc.returncode in DOCUMENTED
    assert b"Traceback" not in proc.stderr


def test_unknown_command_is_a_usage_error() -> None:
    proc = run_ctxtool("frobnicate")
    assert proc.returncode == ExitCode.USAGE
    assert b"No such command" in proc.stderr


def test_version() -> None:
    proc = run_ctxtool("--version")
    assert proc.returncode == 0 and proc.stdout.startswith(b"ctxtool, version ")


@pytest.mark.skipif("filter-compacted" not in ALL and "restore" not in ALL,
                    reason="needs a streaming passthrough command")
def test_pipe_into_head_ends_quietly(tmp_path: Path) -> None:
    name = "filter-compacted" if "filter-compacted" in ALL else "restore"
    line = GOOD.replace(b"hello", b"x" * 2000)
    big = tmp_path / "big.jsonl"
    # ~40 MB, far more than a pipe buffer; each entry its own (one uuid is one entry)
    big.write_bytes(b"".join(line.replace(b'"uuid":"u1"', f'"uuid":"u{n}"'.encode())
                             for n in range(20000)))
    exe = " ".join(ctxtool_executable())
    proc = subprocess.run(f"{exe} {name} {big} | head -c 100 > /dev/null", shell=True,
                          capture_output=True, timeout=120, check=False)
    assert proc.stderr == b""
