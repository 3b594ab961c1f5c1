"""``ctxtool cleanup`` over OpenCode's database, through the real entry point: the plan, the
removal of a session tree in every table, archives and usage, a database another process is
writing, and SIGKILL at each point of a removal (``CTXTOOL_TEST_CRASH``, storage/durable.py).

The database has OpenCode 1.18.33's tables (tests/opencode_db_builder.py): ``old`` (with a child
session ``kid``, 60 days idle), ``new`` (idle 10 days), ``live`` (active a minute ago).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ctxtool.formats.opencode.layout import SESSION_TABLES
from ctxtool.formats.schemas import load_schema
from ctxtool.storage.durable import CRASH_ENV
from tests.conftest import run_ctxtool
from tests.opencode_builders import ZERO
from tests.opencode_db_builder import add_records, add_session, make_db

NOW = 1_790_000_000_000  # ms; the runs' --now
NOW_ARG = "2026-09-21T14:13:20Z"
DAY = 86_400_000
VALIDATOR = jsonschema.Draft202012Validator(load_schema("cleanup-record"))
TREES = {"old": ["old", "kid"], "new": ["new"], "live": ["live"]}


def messages(session: str, start: int, output: str | None = None) -> list[dict[str, Any]]:
    def ident(kind: str, n: int) -> str:
        return f"{kind}_{session}_{n}"

    metadata = {"outputPath": output} if output else {}
    return [
        {"info": {"id": ident("msg", 1), "role": "user", "time": {"created": start}},
         "parts": [{"id": ident("prt", 1), "type": "text", "text": f"hello {session}"}]},
        {"info": {"id": ident("msg", 2), "role": "assistant", "time": {"created": start + 1},
                  "modelID": "claude-test", "providerID": "fake", "cost": 0.25,
                  "tokens": {**ZERO, "input": 100, "output": 7}},
         "parts": [{"id": ident("prt", 2), "type": "tool", "tool": "bash", "callID": "c1",
                    "state": {"status": "completed", "input": {}, "output": "...",
                              "metadata": metadata}}]},
    ]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    data = tmp_path / "home" / ".local" / "share" / "opencode"
    (data / "tool-output").mkdir(parents=True)
    db = make_db(data / "opencode.db", records=True)
    output = data / "tool-output" / "tool_old"
    output.write_text("the full output\n")
    os.utime(output, ((NOW - 61 * DAY) / 1000, (NOW - 61 * DAY) / 1000))  # written with it
    add_session(db, messages("old", NOW - 61 * DAY, str(output)), session="old",
                updated=NOW - 60 * DAY, time_created=NOW - 61 * DAY)
    add_session(db, messages("kid", NOW - 61 * DAY), session="kid", updated=NOW - 60 * DAY,
                parent_id="old", time_created=NOW - 61 * DAY)
    add_session(db, messages("new", NOW - 10 * DAY), session="new", updated=NOW - 10 * DAY)
    add_session(db, messages("live", NOW - 60_000), session="live", updated=NOW - 60_000)
    for session in ("old", "kid", "new", "live"):
        add_records(db, session, updated=NOW - 60 * DAY)
    return tmp_path / "home"


def db_of(home: Path) -> Path:
    return home / ".local" / "share" / "opencode" / "opencode.db"


def cleanup(home: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[Any], bytes]:
    proc = run_ctxtool("cleanup", "--agent", "opencode", "--older-than", "30d", "--now", NOW_ARG,
                       "--json", *args, env={"HOME": str(home), "XDG_DATA_HOME": "",
                                             **(env or {})})
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    for record in records:
        VALIDATOR.validate(record)
    return proc.returncode, records, proc.stderr


def rows(home: Path, session: str) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(db_of(home))
    try:
        return {table: sorted(conn.execute(f"SELECT * FROM {table} WHERE {column} = ?",
                                           (session,)).fetchall(), key=repr)
                for table, column in SESSION_TABLES.items()}
    finally:
        conn.close()


def all_rows(home: Path) -> dict[str, dict[str, list[tuple[Any, ...]]]]:
    return {session: rows(home, session) for ids in TREES.values() for session in ids}


def integrity(home: Path) -> str:
    conn = sqlite3.connect(db_of(home))
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def files_of(home: Path) -> dict[str, bytes]:
    """Every file of the data folder but SQLite's shared-memory index (``-shm``, and the empty
    ``-wal`` a reader makes when there is none: WAL mode reads need them)."""
    data = db_of(home).parent
    return {str(path.relative_to(data)): path.read_bytes()
            for path in sorted(data.rglob("*")) if path.is_file()
            and not path.name.endswith("-shm") and not (path.name.endswith("-wal")
                                                        and not path.stat().st_size)}


def test_the_plan_names_the_old_tree_and_changes_no_byte(home: Path) -> None:
    before = files_of(home)
    code, records, err = cleanup(home)
    assert code == 0, err
    assert files_of(home) == before
    by_session = {(r.get("session"), r["path"]): r for r in records if "path" in r}
    assert by_session[("old", "opencode.db")]["action"] == "delete"
    assert by_session[("old", "tool-output/tool_old")]["action"] == "delete"
    assert by_session[("new", "opencode.db")]["action"] == "keep"
    assert by_session[("live", "opencode.db")]["reason"].startswith("active")
    assert all(r.get("agent") == "opencode" for r in records if "path" in r)


def test_apply_removes_every_row_of_the_tree_and_its_files(home: Path, tmp_path: Path) -> None:
    kept = {session: rows(home, session) for session in ("new", "live")}
    code, records, err = cleanup(home, "--apply", "--archive", str(tmp_path / "archive"),
                                 "--keep-usage", str(tmp_path / "usage"))
    assert code == 0, err
    for session in TREES["old"]:
        assert not any(rows(home, session).values()), session
    assert {session: rows(home, session) for session in ("new", "live")} == kept
    assert integrity(home) == "ok"
    assert not (db_of(home).parent / "tool-output" / "tool_old").exists()
    archive = tmp_path / "archive"
    assert sorted(os.listdir(archive)) == ["kid.json", "old.json", "old.opencode-files.tar.gz"]
    document = json.loads((archive / "old.json").read_bytes())
    assert document["info"]["id"] == "old" and len(document["messages"]) == 2
    usage = tmp_path / "usage" / "opencode" / "old.jsonl"
    lines = [json.loads(line) for line in usage.read_bytes().splitlines()]
    assert [(line["sessionID"], line["tokens"]["input"], line["cost"]) for line in lines] == [
        ("old", 100, 0.25), ("kid", 100, 0.25)]
    assert stat.S_IMODE(usage.stat().st_mode) == 0o600
    restore = next(r["restore"] for r in records if r.get("path") == "opencode.db")
    assert "opencode import" in restore and str(archive / "old.json") in restore


@pytest.mark.parametrize("apply", [False, True])
def test_a_database_another_process_is_writing_is_kept_and_said_so(home: Path, tmp_path: Path,
                                                                   apply: bool) -> None:
    before = all_rows(home)
    writer = sqlite3.connect(db_of(home), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        code, records, err = cleanup(home, *(["--apply"] if apply else []),
                                     "--archive", str(tmp_path / "archive"))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert code == 0, err  # kept, not failed: the next run does it
    assert {r["reason"] for r in records if r.get("session") == "old"} == {
        "busy: OpenCode's opencode.db is locked by another process"}
    assert records[-1]["summary"]["kept"]["busy"] == 1
    assert apply or b"1 busy" in err  # an --apply run that changed nothing stays quiet
    assert all_rows(home) == before
    assert not (tmp_path / "archive").exists()  # no archive of what stays
    assert (db_of(home).parent / "tool-output" / "tool_old").exists()


@pytest.mark.parametrize("point", ["opencode-archive-write", "after-usage", "opencode-delete"])
def test_killed_during_a_removal_nothing_is_half_removed(home: Path, tmp_path: Path,
                                                         point: str) -> None:
    before, files = all_rows(home), files_of(home)
    archive, usage = tmp_path / "archive", tmp_path / "usage"
    args = ("--apply", "--archive", str(archive), "--keep-usage", str(usage))
    code, _, err = cleanup(home, *args, env={CRASH_ENV: point})
    assert code == -signal.SIGKILL, err
    assert integrity(home) == "ok"
    assert all_rows(home) == before  # rolled back: every row of every session is there
    assert files_of(home).keys() >= {"tool-output/tool_old"}
    # every archive that has its name is whole (a killed write leaves only a temp file)
    for path in archive.glob("*.json"):
        assert json.loads(path.read_bytes())["info"]["id"] == path.stem.split(".")[0]
    code, records, err = cleanup(home, *args)
    assert code == 0, err
    assert not any(rows(home, "old").values()) and not any(rows(home, "kid").values())
    assert json.loads((archive / "old.json").read_bytes())["info"]["id"] == "old"
    usage_lines = (usage / "opencode" / "old.jsonl").read_bytes().splitlines()
    assert len(usage_lines) == 2  # appended once, whatever the first run got to
    assert files != files_of(home)


def test_killed_after_the_commit_the_tree_is_gone_whole(home: Path) -> None:
    """Its tool output is then a file no session names: OpenCode's own sweep takes it once it
    is a week old (as it takes every tool output)."""
    code, _, err = cleanup(home, "--apply", env={CRASH_ENV: "opencode-committed"})
    assert code == -signal.SIGKILL, err
    assert integrity(home) == "ok"
    assert not any(rows(home, "old").values()) and not any(rows(home, "kid").values())
    assert rows(home, "new")["session"] and rows(home, "live")["session"]
    code, records, err = cleanup(home, "--apply")
    assert code == 0 and not [r for r in records if r.get("action") == "delete"], err
