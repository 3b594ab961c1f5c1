"""Every JSON line a command writes is valid by its own schema, on each agent's real-client
fixture: estimate --json, sessions --json, vacuum --json and cleanup --json (their --report: the
total record's figures),
through the real entry point, in a home folder that holds one agent's sessions where each agent
keeps them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest

from ctxtool.formats.schemas import load_schema
from tests.conftest import CLAUDE_CODE_FIXTURE, FIXTURES, ROOT, run_ctxtool
from tests.gemini_builders import write_session as write_gemini

CODEX = FIXTURES / "codex-0.171.0"
GEMINI = FIXTURES / "gemini-cli-0.61.0"
OPENCODE_DB = FIXTURES / "opencode-1.18.33" / "opencode.db"
OPENAI_LIST = ROOT / "tests" / "golden" / "filter-compacted" / "openai-list" / "input.jsonl"
ANTHROPIC_LIST = ROOT / "tests" / "golden" / "filter-compacted" / "to-anthropic" / "stdout.jsonl"
AGENTS = ["claude-code", "codex", "opencode", "gemini"]
OLD = 1_700_000_000  # every session's modification time: long inactive, so cleanup lists it
NOW = "2027-06-01T00:00:00Z"


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(name),
                                           format_checker=jsonschema.FormatChecker())


def assert_valid(schema: str, lines: bytes) -> list[dict]:
    """Every line a JSON object valid by ``schema``; each failure named with its line."""
    records = [json.loads(line) for line in lines.splitlines()]
    check = validator(schema)
    errors = [f"line {n}: {'/'.join(map(str, e.absolute_path))}: {e.message}"
              for n, record in enumerate(records, 1) for e in check.iter_errors(record)]
    assert not errors, "\n".join(errors)
    return records


def home_of(agent: str, tmp_path: Path) -> tuple[dict[str, str], list[Path]]:
    """An environment whose only sessions are ``agent``'s fixtures, placed where that agent
    keeps them; with the paths ``estimate`` reads (OpenCode's: its database)."""
    home = tmp_path / "home"
    env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "CODEX_HOME": str(home / ".codex"), "XDG_DATA_HOME": str(home / ".local" / "share"),
           "GEMINI_CLI_HOME": str(home), "CTXTOOL_CACHE_DIR": "off",
           "CTXTOOL_STORE": str(tmp_path / "store")}
    home.mkdir()
    if agent == "claude-code":
        project = home / ".claude" / "projects" / "-home-user-project"
        project.mkdir(parents=True)
        paths = [Path(shutil.copy(CLAUDE_CODE_FIXTURE, project))]
        shutil.copytree(CLAUDE_CODE_FIXTURE.with_suffix(""), project / CLAUDE_CODE_FIXTURE.stem)
    elif agent == "codex":
        paths = []
        for source in sorted(CODEX.glob("*.jsonl")):
            meta = json.loads(source.read_bytes().splitlines()[0])["payload"]
            folder = home / ".codex" / "sessions" / meta["timestamp"][:10].replace("-", "/")
            folder.mkdir(parents=True, exist_ok=True)
            stamp = meta["timestamp"][:19].replace(":", "-")
            paths.append(Path(shutil.copy(source, folder / f"rollout-{stamp}-{meta['id']}.jsonl")))
    elif agent == "opencode":
        folder = home / ".local" / "share" / "opencode"
        folder.mkdir(parents=True)
        paths = [Path(shutil.copy(OPENCODE_DB, folder))]
    else:
        paths = []
        for n, source in enumerate(sorted(GEMINI.glob("*.jsonl"))):
            name = f"session-2026-11-27T16-2{n}-5e551011.jsonl"
            paths.append(write_gemini(home, name, source.read_bytes(), project=f"proj{n}"))
    for path in home.rglob("*"):
        os.utime(path, (OLD, OLD))
    return env, paths


def ok(*args: str, env: dict[str, str]) -> bytes:
    proc = run_ctxtool(*args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_estimate_json(agent: str, tmp_path: Path) -> None:
    env, paths = home_of(agent, tmp_path)
    # OpenCode's: the session of its database
    args = ["--latest"] if agent == "opencode" else [str(p) for p in paths]
    records = assert_valid("estimate-report", ok("estimate", "--json", *args, env=env))
    assert len(records) == (1 if agent == "opencode" else len(paths))


@pytest.mark.parametrize(("path", "form"), [(OPENAI_LIST, "openai"),
                                            (ANTHROPIC_LIST, "anthropic")])
def test_estimate_json_of_a_message_list(path: Path, form: str) -> None:
    [record] = assert_valid("estimate-report", ok("estimate", "--json", str(path), env={}))
    assert (record["format"], record["messages"]) == (form, 5)


@pytest.mark.parametrize("agent", AGENTS)
def test_sessions_json(agent: str, tmp_path: Path) -> None:
    env, _ = home_of(agent, tmp_path)
    records = assert_valid("sessions-report", ok("sessions", "--json", "--now", NOW, env=env))
    assert records and {record["agent"] for record in records} == {agent}


@pytest.mark.parametrize("agent", AGENTS)
def test_vacuum_json_and_report(agent: str, tmp_path: Path) -> None:
    env, _ = home_of(agent, tmp_path)
    report = tmp_path / "report.json"
    for apply in ([], ["--apply"]):
        records = assert_valid("vacuum-record", ok(
            "vacuum", "--all", "--agent", agent, "--json", *apply, "--report", str(report),
            env=env))
        assert records[-1]["record"] == "total"
        # --report holds the total, without the record's own keys (it has no schema of its own)
        total = {k: v for k, v in records[-1].items() if k not in ("record", "action")}
        assert json.loads(report.read_text()) == total


@pytest.mark.parametrize("agent", AGENTS)
def test_cleanup_json_and_report(agent: str, tmp_path: Path) -> None:
    env, _ = home_of(agent, tmp_path)
    report = tmp_path / "report.json"
    archive = tmp_path / "archive"
    for apply in ([], ["--apply", "--archive", str(archive)]):
        records = assert_valid("cleanup-record", ok(
            "cleanup", "--agent", agent, "--json", "--now", NOW, "--older-than", "1d",
            *apply, "--report", str(report), env=env))
        assert len(records) > 1, records  # the sessions, then the summary
        # --report holds the summary, as the last record gives it (less the age it applied)
        summary = {k: v for k, v in records[-1]["summary"].items() if k != "older_than"}
        assert json.loads(report.read_text()) == summary
