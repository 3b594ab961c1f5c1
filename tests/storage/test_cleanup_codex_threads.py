"""When cleanup removes a Codex CLI rollout, Codex's own records of the thread go with it, as
``codex delete`` removes them (Codex 0.171.0: rows in state_5, thread_history_1, goals_1,
memories_1 and logs_2, and its line in session_index.jsonl), one transaction per database; a
database Codex is writing keeps the session whole; a kill at any point leaves every database with
all of the thread's rows or none, and the next run finishes. The tables are those the real client
creates (tests/e2e/test_cleanup_codex_threads.py checks against its own databases)."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

import orjson
import pytest

from ctxtool.formats.codex import THREAD_RECORDS
from ctxtool.storage.durable import CRASH_ENV
from tests.cleanup_trees import NOW, NOW_ARG
from tests.conftest import run_ctxtool
from tests.storage.test_cleanup_codex import DAYS, NEW_ID, OLD_ID, codex_home, rollout

ARCHIVED_ID = "01a20b26-0000-7000-8000-000000000003"
CHILD_ID = "01a20b26-0000-7000-8000-000000000009"


def make_databases(codex: Path, threads: list[str]) -> None:
    """Every table of THREAD_RECORDS, one row per thread in each (two in some), plus a table
    codex delete leaves alone."""
    for name, tables in THREAD_RECORDS:
        con = sqlite3.connect(codex / name)
        con.execute("PRAGMA journal_mode=WAL")  # as Codex keeps them
        for table, columns in tables:
            con.execute(f'CREATE TABLE "{table}" ({", ".join(columns)}, payload TEXT)')
            for thread in threads:
                values = [thread] + [CHILD_ID] * (len(columns) - 1)
                con.execute(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(values))}, ?)',
                            [*values, "x"])
                if table in ("thread_items", "logs"):
                    con.execute(f'INSERT INTO "{table}" VALUES (?, ?)', [thread, "second"])
        if name == "goals_1.sqlite":
            con.execute("CREATE TABLE thread_goal_continuation_deferrals (thread_id, payload)")
            con.executemany("INSERT INTO thread_goal_continuation_deferrals VALUES (?, 'x')",
                            [(thread,) for thread in threads])
        con.commit()
        con.close()
    (codex / "session_index.jsonl").write_text("".join(
        json.dumps({"id": thread, "thread_name": f"name {n}"}) + "\n"
        for n, thread in enumerate(threads)) + "not json\n")


def rows_of(codex: Path, thread: str) -> dict[str, int]:
    """table -> rows naming ``thread`` (by any of its thread columns)."""
    found = {}
    for name, tables in THREAD_RECORDS:
        con = sqlite3.connect(f"file:{codex / name}?mode=ro", uri=True)
        for table, columns in tables:
            where = " OR ".join(f'"{column}" = ?' for column in columns)
            found[f"{name}:{table}"] = con.execute(
                f'SELECT count(*) FROM "{table}" WHERE {where}', [thread] * len(columns)).fetchone()[0]
        con.close()
    index = (codex / "session_index.jsonl").read_bytes().splitlines()
    found["session_index.jsonl"] = sum(1 for line in index if line.startswith(b"{")
                                       and orjson.loads(line)["id"] == thread)
    return found


def home(tmp_path: Path) -> Path:
    codex = codex_home(tmp_path)  # OLD_ID 40 days old, NEW_ID 2 days
    archived = rollout(codex, "tools.jsonl", ARCHIVED_ID, NOW - 50 * DAYS)
    target = codex / "archived_sessions" / archived.name
    target.parent.mkdir(parents=True)
    archived.rename(target)
    make_databases(codex, [OLD_ID, NEW_ID, ARCHIVED_ID])
    return codex


def cleanup(codex: Path, *args: str, crash: str | None = None):  # type: ignore[no-untyped-def]
    env = {"HOME": str(codex.parent / "home"), "CODEX_HOME": str(codex)}
    if crash:
        env[CRASH_ENV] = crash
    return run_ctxtool("cleanup", "--agent", "codex", "--now", NOW_ARG, *args, env=env)


def rollouts(codex: Path, thread: str) -> list[Path]:
    return list(codex.rglob(f"rollout-*{thread}.jsonl"))


def test_apply_removes_the_threads_records_as_codex_delete_does(tmp_path: Path) -> None:
    codex = home(tmp_path)
    proc = cleanup(codex, "--apply")
    assert proc.returncode == 0, proc.stderr
    for gone in (OLD_ID, ARCHIVED_ID):  # archived sessions included
        assert not rollouts(codex, gone)
        assert set(rows_of(codex, gone).values()) == {0}, rows_of(codex, gone)
    kept = rows_of(codex, NEW_ID)
    assert rollouts(codex, NEW_ID) and min(kept.values()) >= 1, kept
    con = sqlite3.connect(codex / "goals_1.sqlite")  # codex delete leaves these: so do we
    assert con.execute("SELECT count(*) FROM thread_goal_continuation_deferrals").fetchone() == (3,)
    assert b"not json" in (codex / "session_index.jsonl").read_bytes()  # other lines as they were
    for name, _ in THREAD_RECORDS:
        con = sqlite3.connect(codex / name)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_dry_run_opens_no_database(tmp_path: Path) -> None:
    codex = home(tmp_path)
    before = {path.name: path.read_bytes() for path in codex.iterdir() if path.is_file()}
    proc = cleanup(codex)
    assert proc.returncode == 0, proc.stderr
    going = {orjson.loads(line).get("session") for line in proc.stdout.splitlines()
             if orjson.loads(line).get("action") == "delete"}
    assert going == {OLD_ID, ARCHIVED_ID}
    assert {path.name: path.read_bytes() for path in codex.iterdir() if path.is_file()} == before


def test_a_database_codex_is_writing_keeps_the_session_whole(tmp_path: Path) -> None:
    codex = home(tmp_path)
    writer = sqlite3.connect(codex / "state_5.sqlite", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # Codex in the middle of a write
    try:
        before = rows_of(codex, OLD_ID)
        proc = cleanup(codex, "--apply", "--json")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert proc.returncode == 0, proc.stderr  # kept and said so: not an error
    assert rows_of(codex, OLD_ID) == before and rollouts(codex, OLD_ID)
    records = [orjson.loads(line) for line in proc.stdout.splitlines()]
    kept = [r for r in records if r.get("session") == OLD_ID]
    assert kept and kept[0]["action"] == "keep" and "state_5.sqlite is locked" in kept[0]["reason"]
    assert records[-1]["summary"]["kept"]["busy"] >= 1


def test_a_database_that_is_not_one_is_an_error_and_the_session_stays(tmp_path: Path) -> None:
    codex = home(tmp_path)
    for suffix in ("-wal", "-shm"):
        (codex / f"logs_2.sqlite{suffix}").unlink(missing_ok=True)
    (codex / "logs_2.sqlite").write_bytes(b"this is not a database" * 100)
    proc = cleanup(codex, "--apply")
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert b"logs_2.sqlite" in proc.stderr
    assert rollouts(codex, OLD_ID) and rollouts(codex, ARCHIVED_ID)
    for name, table in (("state_5.sqlite", "threads"), ("thread_history_1.sqlite", "thread_turns")):
        con = sqlite3.connect(codex / name)  # no database was changed
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone() == (3,)


@pytest.mark.parametrize("crash", [
    "codex-delete-thread_history_1.sqlite",  # inside the first transaction
    "codex-delete-state_5.sqlite",  # every delete done, nothing committed
    "codex-commit-state_5.sqlite",  # history, goals, memories, logs committed; state not
    "codex-index",  # every database committed, the names not yet dropped
])
def test_killed_in_a_codex_removal_nothing_is_half_removed(tmp_path: Path, crash: str) -> None:
    codex = home(tmp_path)
    proc = cleanup(codex, "--apply", crash=crash)
    assert proc.returncode == -signal.SIGKILL
    for thread in (OLD_ID, ARCHIVED_ID):
        left = rows_of(codex, thread)
        for name, tables in THREAD_RECORDS:  # each database: all of the thread's rows or none
            counts = {left[f"{name}:{table}"] > 0 for table, _ in tables}
            assert len(counts) == 1, (crash, name, left)
        assert rollouts(codex, thread) or set(left.values()) == {0}  # the rollout goes last
    proc = cleanup(codex, "--apply")  # the next run finishes the job
    assert proc.returncode == 0, proc.stderr
    for thread in (OLD_ID, ARCHIVED_ID):
        assert not rollouts(codex, thread) and set(rows_of(codex, thread).values()) == {0}
    assert rollouts(codex, NEW_ID) and min(rows_of(codex, NEW_ID).values()) >= 1
