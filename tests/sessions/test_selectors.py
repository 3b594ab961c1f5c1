"""Session ids, --latest, --project and Claude Code's hook JSON in place of a FILE argument."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from tests.conftest import run_ctxtool
from tests.estimate_builders import assistant, compact_boundary, compact_summary, usage, user
from tests.sessions.helpers import APP, LIB, write_session

T0 = 1_780_000_000
# every command that reads transcripts (sessions, statusline and cleanup do not)
TRANSCRIPT_COMMANDS = [n for n in cli.list_commands(None)  # type: ignore[arg-type]
                       if n not in ("sessions", "statusline", "cleanup")]


def body(text: str) -> list[dict]:
    return [user(text), assistant("ok", msg_id="m1", usage=usage(10, 0, 40_000, 5)),
            compact_boundary(), compact_summary("summary"), user("then " + text)]


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "claude"
    write_session(root, APP, "3f2a0001-aaaa", body("first"), mtime=T0)
    write_session(root, APP, "3f2b0002-bbbb", body("second"), mtime=T0 + 100)
    write_session(root, LIB, "9c000003-cccc", body("lib"), mtime=T0 + 50)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    return root


def source_of(result) -> str:
    return json.loads(result.stdout.splitlines()[0])["source"]


def test_a_unique_prefix_or_a_whole_id_names_the_file(runner, config: Path) -> None:
    for argument in ("3f2a", "3f2a0001-aaaa", "9c"):
        result = runner.invoke(cli, ["estimate", "--json", argument])
        assert result.exit_code == 0, result.stderr
        assert Path(source_of(result)).stem.startswith(argument)


def test_ambiguous_and_unknown_ids_are_usage_errors_naming_candidates(runner, config) -> None:
    ambiguous = runner.invoke(cli, ["estimate", "3f"])
    assert ambiguous.exit_code == ExitCode.USAGE and ambiguous.stdout == ""
    assert "ambiguous" in ambiguous.stderr
    assert "3f2a0001-aaaa" in ambiguous.stderr and "3f2b0002-bbbb" in ambiguous.stderr
    unknown = runner.invoke(cli, ["estimate", "deadbeef"])
    assert unknown.exit_code == ExitCode.USAGE and "no file or session named 'deadbeef'" in \
        unknown.stderr
    # --project narrows the candidates: the same prefix is unique in LIB, unknown in APP
    assert runner.invoke(cli, ["estimate", "--project", APP, "9c"]).exit_code == ExitCode.USAGE


def test_paths_stay_paths(runner, config: Path, tmp_path: Path) -> None:
    missing = runner.invoke(cli, ["estimate", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == ExitCode.STORAGE  # a path, not an id: cannot read, as before


def test_latest_with_and_without_project(runner, config: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    result = runner.invoke(cli, ["estimate", "--json", "--latest"])
    assert Path(source_of(result)).stem == "3f2b0002-bbbb"
    lib = runner.invoke(cli, ["estimate", "--json", "--latest", "--project", LIB])
    assert Path(source_of(lib)).stem == "9c000003-cccc"
    here = tmp_path / "here"
    here.mkdir()
    write_session(config, str(here), "77770004-dddd", body("here"), mtime=T0 - 100)
    monkeypatch.chdir(here)
    dot = runner.invoke(cli, ["estimate", "--json", "--latest", "--project", "."])
    assert Path(source_of(dot)).stem == "77770004-dddd"


def test_acceptance_commands(config: Path, tmp_path: Path) -> None:
    """`estimate <prefix>`, `summarize --latest`, `snip --latest --project .` through the
    real entry point."""
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    estimate = run_ctxtool("estimate", "--json", "9c", env=env)
    assert estimate.returncode == 0, estimate.stderr
    assert json.loads(estimate.stdout)["source"].endswith("9c000003-cccc.jsonl")
    summary = run_ctxtool("summarize", "--latest", "--now", "2026-06-01T00:00:00Z", env=env)
    assert summary.returncode == 0, summary.stderr
    assert b"then second" in summary.stdout and b"then first" not in summary.stdout
    here = tmp_path / "work"
    here.mkdir()
    write_session(config, str(here), "55550005-eeee", body("here"), mtime=T0 - 500)
    snip = run_ctxtool("snip", "--latest", "--project", ".", env=env, cwd=here)
    assert snip.returncode == 0, snip.stderr
    assert b"then here" in snip.stdout and b"then second" not in snip.stdout


def test_latest_and_files_do_not_mix(runner, config: Path, tmp_path: Path) -> None:
    both = runner.invoke(cli, ["estimate", "--latest", str(tmp_path / "x.jsonl")])
    assert both.exit_code == ExitCode.USAGE and "--latest" in both.stderr
    alone = runner.invoke(cli, ["estimate", "--project", APP])
    assert alone.exit_code == ExitCode.USAGE and "--project" in alone.stderr
    empty = runner.invoke(cli, ["estimate", "--latest", "--project", str(tmp_path)])
    assert empty.exit_code == ExitCode.USAGE and "no sessions" in empty.stderr


@pytest.mark.parametrize("name", TRANSCRIPT_COMMANDS)
def test_every_transcript_command_takes_ids_latest_and_hook_json(runner, config: Path,
                                                                name: str) -> None:
    extra = {"convert": ["--to", "anthropic"], "summarize": ["--now", "2026-06-01T00:00:00Z"]}
    args = [name, *extra.get(name, [])]
    for selector in (["--latest"], ["3f2b"]):
        result = runner.invoke(cli, [*args, *selector])
        assert result.exit_code in (0, ExitCode.INVALID_INPUT), (selector, result.stderr)
        assert "no file or session" not in result.stderr and "Traceback" not in result.stderr
    path = next(config.glob("projects/*/3f2b0002-bbbb.jsonl"))
    hook = orjson.dumps({"session_id": "3f2b0002-bbbb", "transcript_path": str(path),
                         "cwd": APP, "hook_event_name": "PreCompact", "trigger": "auto"})
    by_hook = runner.invoke(cli, args, input=hook + b"\n")
    by_file = runner.invoke(cli, [*args, str(path)])
    assert (by_hook.exit_code, by_hook.stdout) == (by_file.exit_code, by_file.stdout)


def test_hook_json_through_the_real_entry_point(config: Path) -> None:
    path = next(config.glob("projects/*/9c000003-cccc.jsonl"))
    hook = orjson.dumps({"session_id": "9c000003-cccc", "transcript_path": str(path),
                         "cwd": LIB, "model": {"id": "claude-opus-4-1"}})
    proc = run_ctxtool("estimate", "--json", input=hook)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["source"] == str(path)


def test_a_transcript_on_stdin_is_still_a_transcript(runner, config: Path) -> None:
    line = orjson.dumps({**user("mentions transcript_path"), "transcript_path": "/x"})
    result = runner.invoke(cli, ["estimate", "--json"], input=line + b"\n")
    assert result.exit_code == 0 and source_of(result) == "<stdin>"


def test_in_place_on_a_session_id(runner, config: Path) -> None:
    path = next(config.glob("projects/*/9c000003-cccc.jsonl"))
    before = path.read_bytes()
    result = runner.invoke(cli, ["persist", "--in-place", "--store", str(config / "st"), "9c00"])
    assert result.exit_code == 0, result.stderr
    assert path.read_bytes() == before  # rewritten in place (nothing large to persist)
    missing = runner.invoke(cli, ["persist", "--in-place", "nope"])
    assert missing.exit_code == ExitCode.USAGE
