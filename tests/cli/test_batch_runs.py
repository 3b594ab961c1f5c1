"""Runs over several files (issue 27, item 11): where each file is worked on by itself, one
that cannot be read is told in one line, the others are done, exit 1 at the end; where the
inputs make one output, the run stops there as with one input. Real entry point, real files."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import orjson
import pytest

from ctxtool.errors import ExitCode
from tests.conftest import FIXTURES, run_ctxtool

SESSION = FIXTURES / "estimate-session.jsonl"
OLD = time.time() - 3 * 86400  # outside --in-place's live window


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {"a": tmp_path / "a.jsonl", "bad": tmp_path / "notasession.jsonl",
            "c": tmp_path / "c.jsonl"}
    shutil.copy(SESSION, made["a"])
    made["bad"].write_bytes(b"hello, this is no transcript\n")
    shutil.copy(SESSION, made["c"])
    for path in made.values():
        os.utime(path, (OLD, OLD))
    return made


def closing_error(stderr: bytes) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    return text.strip().splitlines()[-1]


def test_estimate_reports_every_readable_file_and_exits_1(files: dict[str, Path]) -> None:
    result = run_ctxtool("estimate", "--json", str(files["a"]), str(files["bad"]),
                         str(files["c"]))
    assert result.returncode == ExitCode.FAILED, result.stderr
    reports = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [r["source"] for r in reports] == [str(files["a"]), str(files["c"])]
    errors = [line for line in result.stderr.decode().splitlines() if "error:" in line]
    assert errors[0].startswith(f"ctxtool: error: {files['bad']}:1: invalid JSON"), errors
    assert closing_error(result.stderr) == (f"ctxtool: error: 1 of 3 files failed "
                                            f"({files['bad']}); the others were done or skipped")


@pytest.mark.parametrize("command", [
    ["summarize", "--auto", "--context-window", "1000"],  # the README's cron line, made to act
    ["persist", "--max-chars", "200"],
    ["microcompact", "--force", "--keep", "0", "--target", "0"],
])
def test_in_place_runs_go_on_past_a_bad_file(files: dict[str, Path],
                                             command: list[str]) -> None:
    before = {name: path.read_bytes() for name, path in files.items()}
    missing = files["a"].parent / "gone.jsonl"
    result = run_ctxtool(*command, "--in-place", str(files["a"]), str(files["bad"]),
                         str(missing), str(files["c"]), "--store", str(files["a"].parent / "st"))
    assert result.returncode == ExitCode.FAILED, result.stderr
    # both files after the bad ones were rewritten; the bad one is untouched
    assert files["a"].read_bytes() != before["a"]
    assert files["c"].read_bytes() != before["c"]
    assert files["bad"].read_bytes() == before["bad"]
    stderr = result.stderr.decode()
    assert f"ctxtool: error: {files['bad']}:1: invalid JSON" in stderr
    assert f"ctxtool: error: {missing}: cannot read" in stderr
    assert closing_error(result.stderr).startswith("ctxtool: error: 2 of 4 files failed")


def test_validate_checks_the_others_past_an_unreadable_file(files: dict[str, Path]) -> None:
    folder = files["a"].parent / "folder.jsonl"
    folder.mkdir()
    result = run_ctxtool("validate", str(files["a"]), str(folder), str(files["c"]))
    assert result.returncode == ExitCode.FAILED, result.stderr
    assert f"ctxtool: error: {folder}: is a directory" in result.stderr.decode()
    assert "no problems in 2 files" in result.stderr.decode()
    # the others' errors still decide: exit 3
    both = run_ctxtool("validate", str(files["a"]), str(folder), str(files["bad"]))
    assert both.returncode == ExitCode.INVALID_INPUT, both.stderr


def test_one_input_and_one_output_keep_their_own_codes(files: dict[str, Path]) -> None:
    alone = run_ctxtool("estimate", str(files["bad"]))
    assert alone.returncode == ExitCode.INVALID_INPUT
    # inputs joined into one output stop at the bad one: no transcript with a hole
    for command in (["estimate", "--per-entry"], ["persist"], ["filter-compacted"]):
        out = files["a"].parent / "out.jsonl"
        joined = run_ctxtool(*command, str(files["a"]), str(files["bad"]), str(files["c"]),
                             "-o", str(out))
        assert joined.returncode == ExitCode.INVALID_INPUT, (command, joined.stderr)
        assert not out.exists()
