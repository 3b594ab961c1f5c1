"""`ctxtool sessions` on a Claude Code config folder (CLAUDE_CONFIG_DIR)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from tests.conftest import ROOT, run_ctxtool
from tests.estimate_builders import assistant, compact_boundary, compact_summary, usage, user
from tests.sessions.helpers import APP, LIB, full_estimate, generated, write_session

SCHEMA = json.loads((ROOT / "schemas" / "sessions-report.schema.json").read_text())
T0 = 1_780_000_000  # 2026-05-28


def stamp(minutes: int) -> str:
    return f"2026-05-28T10:{minutes:02d}:00.000Z"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("claude")
    write_session(root, APP, "aaaa1111-old", [
        {"type": "summary", "summary": "Login bug fixed", "leafUuid": "x"},
        {**user("<command-name>/clear</command-name>"), "timestamp": stamp(1)},
        {**user("Fix the login bug\n  in auth.py"), "timestamp": stamp(2)},
        {**assistant("done", msg_id="m1", usage=usage(10, 0, 42_000, 5)), "timestamp": stamp(3)},
        ], mtime=T0)
    write_session(root, APP, "aaaa2222-new", [
        {**user("Write the release notes"), "timestamp": stamp(10)},
        {**assistant("ok", msg_id="m1", usage=usage(10, 0, 150_000, 5)), "timestamp": stamp(11)},
        {**compact_boundary(), "timestamp": stamp(12)},
        {**compact_summary("notes so far"), "timestamp": stamp(13)},
        {**assistant("more", msg_id="m2", usage=usage(10, 0, 30_000, 5)), "timestamp": stamp(14)},
        {"type": "ai-title", "aiTitle": "Generated title"},
        {"type": "custom-title", "customTitle": "Release notes v2"}], mtime=T0 + 600)
    write_session(root, LIB, "bbbb3333-lib", [
        {**user("Profile the parser"), "timestamp": stamp(5)}], mtime=T0 + 300)
    (root / "projects" / "-home-me-lib" / "agent-1234.jsonl").write_text(
        '{"type":"user","isSidechain":true}\n')  # a subagent file: not a session
    generated(root, LIB, "cccc4444-gen", size=600_000, seed=4)  # timestamps of 2026-01-24
    return root


def sessions(config: Path, *args: str, cwd: Path | None = None) -> list[dict]:
    proc = run_ctxtool("sessions", "--json", *args, env={"CLAUDE_CONFIG_DIR": str(config)},
                       cwd=cwd)
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    for row in rows:
        jsonschema.validate(row, SCHEMA)
    return rows


def test_lists_every_session_newest_first_with_its_facts(config: Path) -> None:
    rows = sessions(config)
    assert [r["id"] for r in rows] == ["aaaa2222-new", "bbbb3333-lib", "aaaa1111-old",
                                       "cccc4444-gen"]
    new, lib, old, gen = rows
    assert (new["project"], new["title"], new["first_prompt"]) == (
        APP, "Release notes v2", "Write the release notes")
    assert (new["compactions"], new["last_activity"]) == (1, stamp(14))
    assert old["title"] == "Login bug fixed"
    assert old["first_prompt"] == "Fix the login bug in auth.py"  # not the /clear echo
    assert lib["context_tokens"] is not None and lib["title"] is None
    assert gen["project"] == "/Users/dev/work/shop-api"  # the real cwd, not the folder slug


def test_figures_match_estimate_on_each_file(config: Path) -> None:
    for row in sessions(config):
        report = full_estimate(Path(row["path"]))
        assert (row["context_tokens"], row["compactions"], row["context_window"],
                row["model"]) == (report.context_tokens, report.compact_boundaries,
                                  report.limits.window, report.model), row["id"]
        assert row["percent"] == round(100 * report.context_tokens / report.limits.window, 1)


def test_project_since_and_limit(config: Path, tmp_path: Path) -> None:
    assert [r["id"] for r in sessions(config, "--project", LIB)] == ["bbbb3333-lib",
                                                                     "cccc4444-gen"]
    assert [r["id"] for r in sessions(config, "--limit", "2")] == ["aaaa2222-new",
                                                                   "bbbb3333-lib"]
    recent = sessions(config, "--since", "10m", "--now", "2026-05-28T10:20:00Z")
    assert [r["id"] for r in recent] == ["aaaa2222-new"]
    since = sessions(config, "--since", "2026-05-28T10:04:00Z")
    assert [r["id"] for r in since] == ["aaaa2222-new", "bbbb3333-lib"]


def test_project_dot_is_the_current_directory(config: Path, tmp_path: Path) -> None:
    here = tmp_path / "work"
    here.mkdir()
    write_session(config, str(here), "dddd5555-here", [user("from here")])
    try:
        assert [r["id"] for r in sessions(config, "--project", ".", cwd=here)] == [
            "dddd5555-here"]
    finally:
        for path in config.glob("projects/*/dddd5555-here.jsonl"):
            path.unlink()


def test_table(runner, config: Path) -> None:
    result = runner.invoke(cli, ["sessions"], env={"CLAUDE_CONFIG_DIR": str(config)})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("LAST ACTIVE") and len(lines) == 5
    assert "aaaa2222" in lines[1] and "Release notes v2" in lines[1] and "~" not in lines[1]
    assert " 1 " in lines[1]  # one compaction


def test_no_sessions_is_no_output(runner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["sessions"], env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert (result.exit_code, result.stdout) == (0, "")


def test_bad_since_is_a_usage_error(runner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["sessions", "--since", "yesterday"],
                           env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert result.exit_code == ExitCode.USAGE
    assert "--since" in result.stderr and "Traceback" not in result.stderr


def test_unreadable_session_is_a_warning(runner, tmp_path: Path) -> None:
    path = write_session(tmp_path, APP, "eeee", [user("hi")])
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("files are readable whatever their mode (running as root)")
        result = runner.invoke(cli, ["sessions"], env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    finally:
        path.chmod(0o600)
    assert result.exit_code == 0 and "cannot read" in result.stderr


def _rows(config: Path, cache: Path) -> dict[str, dict]:
    proc = run_ctxtool("sessions", "--json", env={"CLAUDE_CONFIG_DIR": str(config),
                                                  "CTXTOOL_CACHE_DIR": str(cache)})
    assert proc.returncode == 0, proc.stderr.decode()
    return {row["id"]: row for row in map(json.loads, proc.stdout.splitlines())}


def test_cache_keeps_rows_and_searches_only_what_was_appended(tmp_path: Path) -> None:
    config, cache = tmp_path / "claude", tmp_path / "cache"
    path = write_session(config, APP, "s1", [
        user("hi"), assistant("ok", msg_id="m1", usage=usage(10, 0, 50_000, 5)),
        compact_boundary(), compact_summary("s")])
    first = _rows(config, cache)
    assert first["s1"]["compactions"] == 1 and (cache / "sessions.json").is_file()
    assert _rows(config, cache) == first  # unchanged: the kept row
    with open(path, "ab") as out:  # appended to: the count goes on from where it stopped
        out.write(b'{"type":"system","subtype":"compact_boundary","isSidechain":false}\n'
                  b'{"type":"user","isSidechain":false,"message":{"role":"user","content":"x"}}\n')
    grown = _rows(config, cache)["s1"]
    assert grown["compactions"] == 2 == full_estimate(path).compact_boundaries
    assert grown["size"] == path.stat().st_size
    write_session(config, APP, "s1", [user("rewritten")])  # shorter, rewritten: searched anew
    assert _rows(config, cache)["s1"]["compactions"] == 0


def test_cache_can_be_turned_off(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    write_session(config, APP, "s1", [user("hi")])
    env = {"CLAUDE_CONFIG_DIR": str(config), "CTXTOOL_CACHE_DIR": "off",
           "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    proc = run_ctxtool("sessions", "--json", env=env)
    assert proc.returncode == 0 and b'"s1"' in proc.stdout
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()
