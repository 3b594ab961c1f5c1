"""persist/restore from the command line: store locations, failures and exit codes, --strict,
pipelines through the real entry point, and the byte-identical round trip over the corpus."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.core.clearing.restore import placeholder_path
from ctxtool.storage.paths import project_slug
from tests.conftest import corpus_params, ctxtool_executable, run_ctxtool
from tests.persist_fixtures import (CWD, SESSION, anthropic_results, big_text, cc_results,
                                    cc_tool_use, result_contents, write_jsonl)


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "session.jsonl"
    data = write_jsonl(path, [cc_tool_use("toolu_a"),
                              cc_results(("toolu_a", big_text(60_000)), uuid="u1"),
                              cc_results(("toolu_b", "small"), uuid="u2")])
    return path, data


def _lines(stdout: bytes) -> list[dict]:
    return [orjson.loads(line) for line in stdout.splitlines()]


def test_claude_code_transcripts_go_to_the_session_folder(session: tuple[Path, bytes],
                                                          tmp_path: Path) -> None:
    copy, _ = session
    project = tmp_path / "cc" / "projects" / project_slug(CWD)
    project.mkdir(parents=True)
    path = copy.rename(project / f"{SESSION}.jsonl")  # the session in Claude Code's own folder
    result = run_ctxtool("persist", str(path), env={"CLAUDE_CONFIG_DIR": str(tmp_path / "cc")})
    assert result.returncode == 0, result.stderr
    saved = project / SESSION / "tool-results" / "toolu_a.txt"
    assert placeholder_path(result_contents(_lines(result.stdout)[1])[0]) == str(saved)
    assert saved.read_text() == big_text(60_000)


def test_store_option_env_and_default_folder(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, _ = session
    run_ctxtool("persist", "--store", "opt", str(path), cwd=tmp_path)
    assert (tmp_path / "opt" / SESSION / "tool-results" / "toolu_a.txt").exists()
    run_ctxtool("persist", str(path), cwd=tmp_path, env={"CTXTOOL_STORE": str(tmp_path / "env")})
    assert (tmp_path / "env" / SESSION / "tool-results" / "toolu_a.txt").exists()
    messages = tmp_path / "messages.jsonl"
    write_jsonl(messages, [anthropic_results(("toolu_m", big_text(60_000)))])
    result = run_ctxtool("persist", str(messages), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "ctxtool-store" / "default" / "tool-results" / "toolu_m.txt").exists()


def test_persist_restore_pipeline_is_byte_identical(session: tuple[Path, bytes],
                                                    tmp_path: Path) -> None:
    path, data = session
    persisted = run_ctxtool("persist", "--store", str(tmp_path / "s"), "--max-chars", "3",
                            input=data)
    assert persisted.returncode == 0 and len(persisted.stdout) < len(data) // 5
    back = run_ctxtool("restore", input=persisted.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout == data


def test_stats_report(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, _ = session
    result = CliRunner().invoke(cli, ["persist", "--stats", "--store", str(tmp_path / "s"),
                                      "--report", str(tmp_path / "r.json"), str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    summary, stats = result.stderr.split("\n", 1)
    assert summary.startswith("ctxtool: persist: saved 1 tool result(s), ")
    assert json.loads(stats) == report
    assert report["persisted"] == 1 and report["files"] == 1 and report["tool_results"] == 2
    assert report["changed_results"]["tokens_after"] < report["changed_results"]["tokens_before"]
    assert report["stores"] == [str(tmp_path / "s")]


def test_a_failed_write_leaves_the_result_and_exits_4(session: tuple[Path, bytes],
                                                      tmp_path: Path) -> None:
    path, data = session
    (tmp_path / "blocker").write_text("a file where the store folder should be")
    result = run_ctxtool("persist", "--store", str(tmp_path / "blocker" / "store"), str(path))
    assert result.returncode == 4
    assert result.stdout == data  # every line unchanged
    assert b"session.jsonl:2: tool result toolu_a left in place" in result.stderr
    assert b"Traceback" not in result.stderr


def test_strict_writes_nothing(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, data = session
    (tmp_path / "blocker").write_text("x")
    store = str(tmp_path / "blocker" / "store")
    result = run_ctxtool("persist", "--strict", "--store", store, str(path))
    assert result.returncode == 4 and result.stdout == b""
    assert b"ctxtool: error: 1 tool result(s) could not be saved; no output written" \
        in result.stderr
    out = tmp_path / "out.jsonl"
    result = run_ctxtool("persist", "--strict", "--store", store, str(path), "-o", str(out))
    assert result.returncode == 4 and not out.exists()
    result = run_ctxtool("persist", "--strict", "--store", store, "--in-place", "--force",
                         str(path))
    assert result.returncode == 4 and path.read_bytes() == data


def test_full_disk_is_a_warning_and_exit_4(session: tuple[Path, bytes], tmp_path: Path) -> None:
    """A file-size limit makes every store write fail (EFBIG) like a full disk, even as root."""
    path, data = session

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))

    result = subprocess.run([*ctxtool_executable(), "persist", "--store", str(tmp_path / "s"),
                             str(path)], capture_output=True, preexec_fn=limit, check=False,
                            env={**os.environ}, timeout=60)
    assert result.returncode == 4, result.stderr
    assert result.stdout == data
    assert b"File too large" in result.stderr
    assert not list((tmp_path / "s").rglob("*.txt")) and not list((tmp_path / "s").rglob(".*tmp"))


def test_in_place_and_idempotence(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, _ = session
    store = str(tmp_path / "s")
    assert run_ctxtool("persist", "--in-place", "--force", "--store", store,
                       str(path)).returncode == 0
    once = path.read_bytes()
    assert b"<persisted-output>" in once
    result = run_ctxtool("persist", "--in-place", "--force", "--store", store, str(path))
    assert result.returncode == 0 and path.read_bytes() == once


def test_restore_in_place(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, data = session
    assert run_ctxtool("persist", "--in-place", "--force", "--store", str(tmp_path / "s"),
                       str(path)).returncode == 0
    assert path.read_bytes() != data
    result = run_ctxtool("restore", "--in-place", "--force", "--stats", str(path))
    assert result.returncode == 0 and result.stdout == b""
    assert path.read_bytes() == data
    summary, stats = result.stderr.split(b"\n", 1)
    assert summary == b"ctxtool: restore: restored 1 of 1 saved tool result(s)"
    assert json.loads(stats)["restored"] == 1


def test_truncate_needs_no_store(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, _ = session
    result = run_ctxtool("persist", "--truncate", "--max-chars", "1000", str(path), cwd=tmp_path)
    assert result.returncode == 0
    content = result_contents(_lines(result.stdout)[1])[0]
    assert len(content) <= 1000 and "chars truncated ...]" in content
    assert not (tmp_path / "ctxtool-store").exists()


def test_budget_auto_tightens_with_context_use(tmp_path: Path) -> None:
    path = tmp_path / "full.jsonl"
    usage = {"input_tokens": 150_000, "output_tokens": 10}
    assistant = cc_tool_use("toolu_a")
    assistant["message"]["usage"] = usage
    data = write_jsonl(path, [assistant, cc_results(("toolu_a", big_text(20_000)))])
    store = str(tmp_path / "s")
    fixed = run_ctxtool("persist", "--store", store, str(path))
    assert fixed.stdout == data
    auto = run_ctxtool("persist", "--budget", "auto", "--store", store, input=data)
    assert auto.returncode == 0, auto.stderr
    assert placeholder_path(result_contents(_lines(auto.stdout)[1])[0])
    assert b"persisting results over 15000 chars" in auto.stderr


def test_strict_fails_on_a_placeholder_it_cannot_read(tmp_path: Path) -> None:
    """A text that looks like a placeholder but is in no form restore knows (here: edited after
    persist) is left in place with a warning, and fails --strict."""
    text = ("<persisted-output>\nOutput too large (1MB). Full output saved to: "
            f"{tmp_path}/s/tool-results/toolu_a.txt\n\nPreview:\nabc\n</persisted-output>\nedited")
    path = tmp_path / "edited.jsonl"
    data = write_jsonl(path, [cc_results(("toolu_a", text))])
    lenient = run_ctxtool("restore", "--stats", str(path))
    assert lenient.returncode == 0 and lenient.stdout == data
    assert b"looks like a placeholder" in lenient.stderr
    assert json.loads(lenient.stderr[lenient.stderr.index(b"{"):])["unrecognized"] == 1
    strict = run_ctxtool("restore", "--strict", str(path))
    assert strict.returncode == 4 and strict.stdout == b""
    assert b"1 placeholder(s) could not be restored" in strict.stderr


def test_restore_missing_files(tmp_path: Path) -> None:
    gone = tmp_path / "s" / "tool-results" / "gone.txt"
    path = tmp_path / "p.jsonl"
    placeholder = (f"<persisted-output>Tool result saved to: {gone}\n\n"
                   "Use Read to view</persisted-output>")
    data = write_jsonl(path, [cc_results(("toolu_a", placeholder))])
    result = run_ctxtool("restore", str(path))
    assert result.returncode == 0 and result.stdout == data
    assert b"p.jsonl:1: tool result toolu_a: saved file" in result.stderr
    strict = run_ctxtool("restore", "--strict", str(path))
    assert strict.returncode == 4 and strict.stdout == b""
    assert b"ctxtool: error:" in strict.stderr


def test_restore_finds_a_moved_store(session: tuple[Path, bytes], tmp_path: Path) -> None:
    path, data = session
    persisted = run_ctxtool("persist", "--store", str(tmp_path / "old"), str(path)).stdout
    (tmp_path / "old").rename(tmp_path / "new")
    assert run_ctxtool("restore", input=persisted).stdout != data
    moved = run_ctxtool("restore", "--store", str(tmp_path / "new"), input=persisted)
    assert moved.returncode == 0 and moved.stdout == data


def test_bad_input_is_one_line_and_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"type":"user"}\n{not json}\n')
    for command in ("persist", "restore"):
        result = run_ctxtool(command, str(bad), cwd=tmp_path)
        assert result.returncode == 3
        assert result.stderr.startswith(b"ctxtool: error: ") and b"bad.jsonl:2" in result.stderr
        assert result.stderr.count(b"\n") == 1


def test_help_examples(session: tuple[Path, bytes], tmp_path: Path) -> None:
    for command in ("persist", "restore"):
        result = CliRunner().invoke(cli, [command, "--help"])
        assert result.exit_code == 0 and f"ctxtool {command}" in result.stdout
    path, data = session
    smaller = tmp_path / "smaller.jsonl"
    env = {"CTXTOOL_STORE": str(tmp_path / "s")}
    assert run_ctxtool("persist", str(path), "-o", str(smaller), env=env).returncode == 0
    full = run_ctxtool("restore", str(smaller), env=env)
    assert full.stdout == data


def test_style_choices_are_checked_and_completed(session: tuple[Path, bytes],
                                                 tmp_path: Path) -> None:
    """--style's choices are looked up when used (io.options.LazyChoice): a wrong one is a
    usage error naming them, and the shell completion offers them."""
    path, _ = session
    wrong = run_ctxtool("persist", "--style", "claude", str(path), cwd=tmp_path)
    assert wrong.returncode == 2 and wrong.stdout == b""
    assert b"'claude' is not one of 'claude-code', 'opencode', 'gemini'" in wrong.stderr
    completion = run_ctxtool(env={"_CTXTOOL_COMPLETE": "bash_complete",
                                  "COMP_WORDS": "ctxtool persist --style ", "COMP_CWORD": "3"})
    assert completion.stdout.split() == [b"plain,claude-code", b"plain,opencode",
                                         b"plain,gemini"]


# --- the corpus ----------------------------------------------------------------------------------

CORPUS_STYLES = {
    "50000": ["--max-chars", "50000"], "2000": ["--max-chars", "2000"], "1": ["--max-chars", "1"],
    # OpenCode's truncation keeps the first lines, which may start with "[" ("[master 17015f9]
    # docs: ...", a JSON array): restore must still see the placeholder
    "opencode": ["--style", "opencode", "--max-lines", "3", "--max-bytes", "200"],
}


@pytest.mark.parametrize("style", list(CORPUS_STYLES))
@pytest.mark.parametrize("transcript", corpus_params())
def test_corpus_round_trip_is_byte_identical(transcript: Path, style: str,
                                             tmp_path: Path) -> None:
    data = transcript.read_bytes()
    args = ["--on-invalid", "keep", "--store", str(tmp_path / "store"), "-q"]
    runner = CliRunner()
    options = CORPUS_STYLES[style]
    persisted = runner.invoke(cli, ["persist", *options, *args], input=data)
    if persisted.exit_code == 3 and b"unknown transcript format" in persisted.stderr_bytes:
        args += ["--format", "claude-code"]  # usage-only fixtures carry no 'type'
        persisted = runner.invoke(cli, ["persist", *options, *args], input=data)
    assert persisted.exit_code == 0, persisted.stderr
    back = runner.invoke(cli, ["restore", "--stats", *args], input=persisted.stdout_bytes)
    assert back.exit_code == 0, back.stderr
    assert back.stdout_bytes == data
    assert json.loads(back.stderr[back.stderr.index("{"):])["unrecognized"] == 0
    if style == "1" and b'"tool_result"' in data:
        assert persisted.stdout_bytes != data  # something was really moved out
