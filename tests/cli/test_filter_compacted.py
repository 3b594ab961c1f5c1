"""ctxtool filter-compacted through the real entry point and click's runner: inputs read twice
(files, seekable stdin, piped stdin), byte-identical lines, options, errors, pipelines."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.core.messages.filter_compacted import SUMMARY_MARKER
from ctxtool.errors import ExitCode
from tests.api_message_rules import anthropic_problems, openai_problems
from tests.conftest import FIXTURES, ctxtool_executable, run_ctxtool

SESSION = FIXTURES / "filter-compacted_session.jsonl"
LINES = SESSION.read_bytes().splitlines(keepends=True)
CUT = 19  # the second compact_boundary (line 20)
VIEW = b"".join(line for line in LINES[CUT:] if b'"isSidechain":true' not in line)


def records(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_the_view_is_the_last_boundary_and_what_follows_byte_for_byte() -> None:
    proc = run_ctxtool("filter-compacted", str(SESSION))
    assert proc.returncode == 0
    assert proc.stderr.decode() == (f"ctxtool: filter-compacted: {SESSION}: 7 entries from the "
                                    "last compaction (line 20) on\n")
    assert run_ctxtool("filter-compacted", "-q", str(SESSION)).stderr == b""
    assert proc.stdout == VIEW
    assert records(proc.stdout)[0]["uuid"] == "b-02"


@pytest.mark.parametrize("how", ["pipe", "seekable"])
def test_stdin_is_read_twice_whether_piped_or_redirected(how: str) -> None:
    if how == "pipe":
        proc = run_ctxtool("filter-compacted", input=SESSION.read_bytes())
    else:
        with SESSION.open("rb") as stdin:
            proc = subprocess.run([*ctxtool_executable(), "filter-compacted", "-"], stdin=stdin,
                                  capture_output=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout) == (0, VIEW)


def test_without_a_compaction_the_output_is_the_input(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf" + b"\r\n".join(line.rstrip(b"\n") for line in LINES[:7]) + b"\r\n\r\n"
    plain = tmp_path / "plain.jsonl"
    plain.write_bytes(raw[:-2])  # CRLF, a BOM, a blank line... and no final newline
    assert run_ctxtool("filter-compacted", str(plain)).stdout == raw[:-2]
    assert run_ctxtool("filter-compacted", input=raw).stdout == raw


def test_each_file_is_cut_on_its_own(tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"".join(LINES[:7]))  # no compaction: comes out whole
    proc = run_ctxtool("filter-compacted", str(SESSION), str(other), "--stats")
    assert proc.stdout == VIEW + other.read_bytes()
    report = orjson.loads(proc.stderr[proc.stderr.index(b"{"):])
    assert [f["cut"] for f in report["files"]] == [f"{SESSION}:20", None]
    assert report["entries_out"] == 7 + 7


def test_in_place_is_not_offered_and_the_file_left_alone(runner, tmp_path: Path) -> None:
    # it would delete the history before the compaction from the file: not an option at all
    copy = tmp_path / "s.jsonl"
    copy.write_bytes(SESSION.read_bytes())
    assert "--in-place" not in runner.invoke(cli, ["filter-compacted", "--help"]).stdout
    result = runner.invoke(cli, ["filter-compacted", "--in-place", str(copy)])
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.startswith("ctxtool: error: No such option '--in-place'")
    assert copy.read_bytes() == SESSION.read_bytes()


def test_output_file(runner, tmp_path: Path) -> None:
    target = tmp_path / "view.jsonl"
    result = runner.invoke(cli, ["filter-compacted", str(SESSION), "-o", str(target)])
    assert (result.exit_code, result.stdout) == (0, "")
    assert target.read_bytes() == VIEW


def test_a_bad_line_anywhere_fails_before_anything_is_written(runner) -> None:
    data = b"".join(LINES[:-1]) + b'{"type": oops}\n' + LINES[-1]
    result = runner.invoke(cli, ["filter-compacted"], input=data)
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stdout == ""
    assert f"<stdin>:{len(LINES)}: invalid JSON" in result.stderr


def test_a_truncated_last_line_is_warned_about_once(runner) -> None:
    data = SESSION.read_bytes() + b'{"type":"user","mess'
    result = runner.invoke(cli, ["filter-compacted"], input=data)
    assert result.exit_code == 0
    assert result.stderr.count("truncated last line") == 1
    assert result.stdout.encode().endswith(b'\n{"type":"user","mess')


def test_a_preserved_segment_that_cannot_be_resolved_is_a_warning(runner) -> None:
    broken = [orjson.loads(line) for line in LINES]
    broken[CUT]["compactMetadata"]["preservedSegment"] = {
        "headUuid": "missing", "anchorUuid": "s-02", "tailUuid": "a-07"}
    data = b"".join(orjson.dumps(e) + b"\n" for e in broken)
    result = runner.invoke(cli, ["filter-compacted"], input=data)
    assert result.exit_code == 0
    assert "ctxtool: warning: <stdin>:20: preserved segment missing..a-07 is not a complete " \
           "chain in the file; the view starts at the boundary without it" in result.stderr
    assert [r["uuid"] for r in records(result.stdout_bytes)][:2] == ["b-02", "s-02"]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_to_api_messages(runner, api: str) -> None:
    result = runner.invoke(cli, ["filter-compacted", "--to", api, str(SESSION)])
    assert result.exit_code == 0, result.stderr
    messages = records(result.stdout_bytes)
    check = anthropic_problems if api == "anthropic" else openai_problems
    assert check(messages) == []
    assert "raise it back to 10s" in result.stdout and "lower the timeout" not in result.stdout


def test_summarize_then_filter_compacted_gives_the_compacted_view(tmp_path: Path) -> None:
    summarized = run_ctxtool("summarize", str(SESSION), env={"CTXTOOL_STORE": str(tmp_path)})
    assert summarized.returncode == 0, summarized.stderr
    view = run_ctxtool("filter-compacted", input=summarized.stdout)
    out = records(view.stdout)
    assert out[0]["subtype"] == "compact_boundary" and out[1]["isCompactSummary"] is True
    assert summarized.stdout.endswith(view.stdout)  # the tail summarize appended, unchanged
    messages = tmp_path / "list.jsonl"
    long = b"yo " * 5000  # enough for the summary to be smaller than what it replaces
    messages.write_bytes(b'{"role":"user","content":"hi"}\n{"role":"assistant","content":"'
                         + long + b'"}\n'
                         b'{"role":"user","content":"next"}\n{"role":"assistant","content":"ok"}\n')
    summarized = run_ctxtool("summarize", "--keep-last", "1", str(messages),
                             env={"CTXTOOL_STORE": str(tmp_path)})
    assert summarized.returncode == 0, summarized.stderr
    view = run_ctxtool("filter-compacted", "--to", "anthropic", input=summarized.stdout)
    out = records(view.stdout)
    assert out[0]["content"].startswith(SUMMARY_MARKER) and anthropic_problems(out) == []


def test_help_examples_run(runner, tmp_path: Path) -> None:
    help_text = runner.invoke(cli, ["filter-compacted", "--help"]).stdout
    examples = [line.strip() for line in help_text.splitlines()
                if line.strip().startswith("ctxtool ")]
    assert len(examples) == 3
    for name in ("session.jsonl", "s.jsonl"):
        (tmp_path / name).write_bytes(SESSION.read_bytes())
    exe = " ".join(ctxtool_executable())
    for example in examples:
        proc = subprocess.run(example.replace("ctxtool ", f"{exe} "), shell=True, cwd=tmp_path,
                              capture_output=True, timeout=120, check=False,
                              env={"PATH": "/usr/bin:/bin", "CTXTOOL_STORE": str(tmp_path)})
        assert proc.returncode == 0, (example, proc.stderr)
    assert records((tmp_path / "what-the-model-sees.jsonl").read_bytes())[0]["uuid"] == "s-02"
    assert anthropic_problems(records((tmp_path / "messages.jsonl").read_bytes())) == []
