"""OpenCode's sessions in `ctxtool sessions` and in the session selectors: read from its
database ($XDG_DATA_HOME/opencode/opencode.db), with the figures `ctxtool estimate` gives."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import jsonschema
import pytest

from ctxtool.errors import ExitCode
from tests.conftest import ROOT, run_ctxtool
from tests.estimate_builders import assistant as cc_assistant
from tests.estimate_builders import usage
from tests.estimate_builders import user as cc_user
from tests.opencode_builders import T0, assistant, compaction, text, tool, user
from tests.opencode_db_builder import add_session, make_db
from tests.sessions.helpers import APP, write_session

SCHEMA = json.loads((ROOT / "schemas" / "sessions-report.schema.json").read_text())
TOKENS = {"input": 5000, "output": 100, "reasoning": 0, "cache": {"read": 20_000, "write": 0}}
BIG = "y" * 6000


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A Claude Code config folder with one session, and OpenCode's database with three
    sessions of OpenCode (one compacted, one a sub-agent's) in the default place under
    XDG_DATA_HOME."""
    claude = tmp_path / "claude"
    write_session(claude, APP, "cc000001-aaaa", [
        {**cc_user("Claude Code prompt"), "timestamp": "2025-12-29T09:20:30Z"},
        {**cc_assistant("ok", msg_id="m1", usage=usage(10, 0, 30_000, 5)),
         "timestamp": "2025-12-29T09:20:35Z"}], mtime=T0 / 1000 + 30)
    folder = tmp_path / "data" / "opencode"
    folder.mkdir(parents=True)
    db = make_db(folder / "opencode.db")
    add_session(db, [user(1, text("Refactor the parser")), assistant(
        2, 1, tool("cat a", output=BIG), finish="tool-calls", tokens=TOKENS),
        assistant(3, 1, text("read it")), user(4), assistant(5, 4, tokens=TOKENS)],
        session="ses_newest01", updated=T0 + 60_000, directory=APP, title="Parser refactor")
    add_session(db, [user(11, text("Old work")), assistant(12, 11, tokens=TOKENS),
                     user(13, compaction(auto=True)),
                     assistant(14, 13, text("the summary"), summary=True),
                     user(15, text("go on")), assistant(16, 15)],
                session="ses_compacted", updated=T0 + 10_000, directory="/elsewhere")
    add_session(db, [user(21)], session="ses_newest02child", updated=T0 + 90_000,
                parent_id="ses_newest01", directory=APP)
    return {"CLAUDE_CONFIG_DIR": str(claude), "XDG_DATA_HOME": str(tmp_path / "data"),
            "CTXTOOL_CACHE_DIR": str(tmp_path / "cache")}


def listing(env: dict[str, str], *args: str) -> list[dict]:
    result = run_ctxtool("sessions", "--json", *args, env=env)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def estimate_of(env: dict[str, str], *args: str) -> dict:
    result = run_ctxtool("estimate", "--json", *args, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_opencode_sessions_are_listed_with_estimates_figures(home: dict[str, str]) -> None:
    rows = listing(home)
    for row in rows:
        jsonschema.validate(row, SCHEMA)
    # newest first across both agents; the sub-agent session is left out
    assert [(r["agent"], r["id"]) for r in rows] == [
        ("opencode", "ses_newest01"), ("claude-code", "cc000001-aaaa"),
        ("opencode", "ses_compacted")]
    db = str(Path(home["XDG_DATA_HOME"]) / "opencode" / "opencode.db")
    for row in (rows[0], rows[2]):
        report = estimate_of(home, db, "--session", row["id"])
        assert row["path"] == db
        assert (row["context_tokens"], row["compactions"], row["context_window"],
                row["model"]) == (report["context_tokens"], report["compact_boundaries"],
                                  report["thresholds"]["window"], report["model"])
        converted = run_ctxtool("convert", db, "--session", row["id"], env=home)
        assert row["size"] == len(converted.stdout)
    newest, compacted = rows[0], rows[2]
    assert (newest["project"], newest["title"], newest["first_prompt"]) == (
        APP, "Parser refactor", "Refactor the parser")
    assert newest["context_tokens"] >= 25_100  # anchored on the recorded tokens, not a guess
    assert newest["last_activity"].startswith("2025-12-29T09:21:00")
    assert compacted["compactions"] == 1 and compacted["project"] == "/elsewhere"
    table = run_ctxtool("sessions", env=home).stdout.decode()
    assert "ses_newe" in table and "Parser refactor" in table


def test_project_and_since_filter_opencode_sessions(home: dict[str, str]) -> None:
    assert [r["id"] for r in listing(home, "--project", "/elsewhere")] == ["ses_compacted"]
    recent = listing(home, "--since", "2025-12-29T09:20:40Z")
    assert [r["id"] for r in recent] == ["ses_newest01"]


def test_an_unchanged_session_is_not_read_again_a_changed_one_is(home: dict[str, str]) -> None:
    db = Path(home["XDG_DATA_HOME"]) / "opencode" / "opencode.db"
    first = {r["id"]: r for r in listing(home)}
    # break the stored part without touching any update time: the kept row is used
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE part SET data = 'not json' WHERE session_id = 'ses_compacted'")
    again = run_ctxtool("sessions", "--json", env=home)
    assert again.returncode == 0 and again.stderr == b""
    assert {r["id"]: r for r in map(json.loads, again.stdout.splitlines())} == first
    # OpenCode writes to it (a newer update time): read again, and the bad row is reported
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE part SET time_updated = time_updated + 1 "
                     "WHERE session_id = 'ses_compacted'")
    changed = run_ctxtool("sessions", "--json", env=home)
    assert changed.returncode == 0
    assert [json.loads(line)["id"] for line in changed.stdout.splitlines()] == [
        "ses_newest01", "cc000001-aaaa"]
    assert b"session ses_compacted left out" in changed.stderr


def test_a_database_that_cannot_be_read_leaves_claude_code_listed(
        home: dict[str, str]) -> None:
    (Path(home["XDG_DATA_HOME"]) / "opencode" / "opencode.db").write_bytes(b"not sqlite" * 10)
    result = run_ctxtool("sessions", "--json", env=home)
    assert result.returncode == 0
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["cc000001-aaaa"]
    assert b"OpenCode's sessions left out" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_selectors_name_opencode_sessions(home: dict[str, str]) -> None:
    db = str(Path(home["XDG_DATA_HOME"]) / "opencode" / "opencode.db")
    by_prefix = estimate_of(home, "ses_comp")
    assert by_prefix == estimate_of(home, db, "--session", "ses_compacted")
    # --latest: the most recent session of any agent, sub-agent sessions left out
    assert estimate_of(home, "--latest") == estimate_of(home, db, "--session", "ses_newest01")
    assert estimate_of(home, "--latest", "--project", "/elsewhere")["context_tokens"] == \
        by_prefix["context_tokens"]
    converted = run_ctxtool("convert", "ses_newest02", env=home)  # a sub-agent's, by its id
    assert converted.returncode == 0 and b'"id":"ses_newest02child"' in converted.stdout


def test_opencode_selector_errors(home: dict[str, str]) -> None:
    ambiguous = run_ctxtool("estimate", "ses_newest", env=home)
    assert ambiguous.returncode == ExitCode.USAGE and ambiguous.stdout == b""
    assert b"ses_newest01 (" in ambiguous.stderr and b"ses_newest02child" in ambiguous.stderr
    clash = run_ctxtool("estimate", "ses_comp", "--session", "ses_newest01", env=home)
    assert clash.returncode == ExitCode.USAGE and b"differ" in clash.stderr
    two = run_ctxtool("estimate", "ses_comp", "ses_newest01", env=home)
    assert two.returncode == ExitCode.USAGE and b"one session" in two.stderr
    # validate does not read OpenCode's database: OpenCode ids are unknown to it
    assert run_ctxtool("validate", "ses_comp", env=home).returncode == ExitCode.USAGE
