"""Messages a new user reads: each names its file, numbers carry separators and nouns agree, an
empty input says so, a hint names an option the command has, a bad environment variable is
named, ``--help`` tells the truth about pipes and exit codes, sizes have one style."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxtool.errors import ExitCode
from ctxtool.io.terminal import size
from tests.conftest import FIXTURES, ROOT, run_ctxtool
from tests.fake_anthropic import FakeAnthropic, error

EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"
BARE = re.compile(r"(?<![\d,.])\d{4,}(?![\d,.])")  # 69159: a count without separators


def test_summarize_auto_notes_name_each_file_with_separators(tmp_path: Path) -> None:
    files = [tmp_path / "one.jsonl", tmp_path / "two.jsonl"]
    for path in files:
        path.write_bytes(EXAMPLE.read_bytes())
    proc = run_ctxtool("summarize", "--auto", "--in-place", "--force", *map(str, files),
                       env={"CTXTOOL_STORE": str(tmp_path / "store")})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 2, lines
    for line, path in zip(lines, files):  # the threshold is the session's version's
        assert re.fullmatch(rf"ctxtool: summarize: {re.escape(str(path))}: context 103,511 tokens "
                            r"is below the auto-compact threshold \(1\d\d,000\); input passed "
                            "through unchanged", line), line


def test_summarize_names_the_file_when_it_compacts() -> None:
    proc = run_ctxtool("summarize", "ctxtool/examples/session.jsonl", cwd=ROOT)
    [line] = proc.stderr.decode().splitlines()
    assert line.startswith("ctxtool: summarize: ctxtool/examples/session.jsonl: context 103,511 ")
    assert not BARE.search(line)


def test_one_entry_is_an_entry(tmp_path: Path) -> None:
    lines = (FIXTURES / "filter-compacted_session.jsonl").read_bytes().splitlines(keepends=True)
    last = max(n for n, line in enumerate(lines) if b'"compact_boundary"' in line)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:last + 1]))
    proc = run_ctxtool("filter-compacted", str(cut))
    assert proc.returncode == 0, proc.stderr
    assert f"{cut}: 1 entry from the last compaction" in proc.stderr.decode()


def test_microcompact_reasons_carry_separators() -> None:
    proc = run_ctxtool("microcompact", str(EXAMPLE))
    line = proc.stderr.decode()
    assert "tokens" in line and not BARE.search(line), line


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_an_empty_input_is_said_to_be_empty(how: str) -> None:
    proc = run_ctxtool("estimate", "/dev/null") if how == "file" else \
        run_ctxtool("estimate", input=b"")
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.INVALID_INPUT, err
    assert proc.stdout == b"" and "24,000" not in err
    assert err == f"ctxtool: error: {'/dev/null' if how == 'file' else '<stdin>'}: empty input: " \
                  "no transcript lines to estimate\n"


def test_an_exact_count_failing_suggests_what_estimate_has() -> None:
    with FakeAnthropic() as api:
        api.push(*[error(500, "api_error", "boom", retry_after_ms=1)] * 5)
        proc = run_ctxtool("estimate", "--exact", str(EXAMPLE),
                           env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api.url})
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.LLM, err
    assert "--passthrough-on-error" not in err and "leave out --exact" in err


def test_a_bad_environment_variable_is_named() -> None:
    proc = run_ctxtool("summarize", str(EXAMPLE), env={"CTXTOOL_LLM_TIMEOUT": "soon"})
    err = proc.stderr.decode()
    assert proc.returncode == ExitCode.USAGE and proc.stdout == b""
    assert "$CTXTOOL_LLM_TIMEOUT" in err and "'soon'" in err, err
    typed = run_ctxtool("summarize", "--timeout", "soon", str(EXAMPLE)).stderr.decode()
    assert "'--timeout'" in typed and "$CTXTOOL" not in typed  # typed: the option is named


def test_top_help_says_what_a_pipe_gets_and_every_exit_code() -> None:
    text = " ".join(run_ctxtool("--help", env={"COLUMNS": "80"}).stdout.decode().split())
    assert "JSON with --json or into a pipe" not in text
    piped = run_ctxtool("estimate", str(EXAMPLE)).stdout.decode()  # into a pipe: text
    with pytest.raises(json.JSONDecodeError):
        json.loads(piped.splitlines()[0])
    assert "into a pipe too" in text
    codes = re.search(r"Exit codes: (.*?)\.", text).group(1)  # type: ignore[union-attr]
    assert [int(c) for c in re.findall(r"\b(\d+) ", codes + " ")] == [int(e) for e in ExitCode]


@pytest.mark.parametrize("count, shown", [(0, "0 B"), (999, "999 B"), (41_062, "40.1 KB"),
                                          (1_046_835, "1.0 MB"), (5 << 30, "5.0 GB")])
def test_one_size_style(count: int, shown: str) -> None:
    assert size(count) == shown


def test_cleanup_and_sessions_print_sizes_in_that_style(tmp_path: Path) -> None:
    project = tmp_path / "claude" / "projects" / "-home-me-app"
    project.mkdir(parents=True)
    target = project / "0ld5e55-aaaa.jsonl"
    target.write_bytes(EXAMPLE.read_bytes())
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "COLUMNS": "160"}
    proc = run_ctxtool("cleanup", "--older-than", "1d", "--now", "2099-01-01T00:00:00Z", env=env)
    line = proc.stderr.decode()
    assert "would remove 1 session and 0 other items (" in line, line
    assert re.search(r"\(\d+\.\d (KB|MB)\)", line) and not re.search(r"\d(KB|MB|K|M)\b", line)
    table = run_ctxtool("sessions", env=env).stdout.decode()
    assert re.search(r"\b\d+\.\d KB\b", table.splitlines()[1]), table
