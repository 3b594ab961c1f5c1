"""vacuum on OpenCode's database: the event rows OpenCode never reads back go to the store, the
file shrinks, `restore --in-place` puts them back row for row; refused while another process has
the database open or locked; killed at any point, the database is untouched or complete."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ctxtool_executable, run_ctxtool
from tests.opencode_builders import SESSION, assistant, text, user
from tests.opencode_db_builder import add_session, integrity, make_db

SNAPSHOT = "z" * 4000  # what a message.part.updated row repeats: the part as it was then


def _events(db: Path, session: str, count: int, *, owner: str | None = None,
            kind: str = "message.part.updated.1") -> None:
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO event_sequence VALUES (?, ?, ?)", (session, count - 1, owner))
    conn.executemany("INSERT INTO event VALUES (?, ?, ?, ?, ?)", [
        (f"evt_{session}_{n:05d}", session, n, kind,
         json.dumps({"sessionID": session, "part": {"id": f"prt_{n}", "text": SNAPSHOT + str(n)}}))
        for n in range(count)])
    conn.commit()
    conn.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A HOME whose OpenCode database holds a local session (500 events: they go), a workspace's
    session and a v2 engine's events (they stay)."""
    db = tmp_path / "data" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    make_db(db, records=True)
    add_session(db, [user(1), assistant(2, 1, text("hi"))])
    _events(db, SESSION, 500)
    add_session(db, [user(11)], session="ses_synced", updated=1)
    _events(db, "ses_synced", 5, owner="wrk_1")
    add_session(db, [user(21)], session="ses_next", updated=2)
    _events(db, "ses_next", 5, kind="session.next.prompted.1")
    return tmp_path


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
            "CLAUDE_CONFIG_DIR": str(home / "claude"), "CODEX_HOME": str(home / "codex")}


def _db(home: Path) -> Path:
    return home / "data" / "opencode" / "opencode.db"


def _all_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(db)
    try:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "ORDER BY name")}
    finally:
        conn.close()


def _size(db: Path) -> int:
    wal = Path(f"{db}-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def test_plan_changes_nothing_and_apply_takes_out_only_what_is_never_read(home: Path) -> None:
    db = _db(home)
    before = _all_rows(db)
    plan = run_ctxtool("vacuum", "--all", "--json", "--agent", "opencode", env=_env(home))
    assert plan.returncode == 0, plan.stderr
    record = json.loads(plan.stdout.splitlines()[0])
    assert record["removed"] == {"event rows OpenCode never reads back": 500}
    assert record["bytes_before"] - record["bytes_after"] > 500 * len(SNAPSHOT)
    assert _all_rows(db) == before

    size = _size(db)
    done = run_ctxtool("vacuum", "--all", "--apply", "--json", "--agent", "opencode",
                       env=_env(home))
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout.splitlines()[0])
    assert record["bytes_before"] == size and record["bytes_after"] == _size(db)
    assert _size(db) < size - 500 * len(SNAPSHOT)  # the file shrank: VACUUM gave pages back
    after = _all_rows(db)
    assert [r[1] for r in after["event"]] == ["ses_next"] * 5 + ["ses_synced"] * 5
    assert after["event_sequence"] == before["event_sequence"]  # the next event's number
    assert {t: r for t, r in after.items() if t != "event"} == \
        {t: r for t, r in before.items() if t != "event"}
    assert integrity(db) == "ok"
    # the rows went to the store first: one blob of the session's rows, one recipe
    kept = sorted(p.name for p in (db.parent / "ctxtool-store").rglob("*") if p.is_file())
    assert len([n for n in kept if n.endswith(".bin")]) == 1
    assert len([n for n in kept if n.startswith("recipe-")]) == 1

    back = run_ctxtool("restore", "--in-place", str(db), env=_env(home))
    assert back.returncode == 0, back.stderr
    assert b"500 row(s) vacuum removed put back" in back.stderr
    assert _all_rows(db) == before  # row for row, every column
    again = run_ctxtool("vacuum", "--all", "--apply", "--agent", "opencode", env=_env(home))
    assert again.returncode == 0 and len(_all_rows(db)["event"]) == 10


def test_a_database_another_process_has_open_is_left_alone(home: Path) -> None:
    db = _db(home)
    before, size = _all_rows(db), _size(db)
    # OpenCode idle: its connection open, no transaction
    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time; "
                               "c = sqlite3.connect(sys.argv[1]); "
                               "c.execute('SELECT 1 FROM session').fetchone(); "
                               "print('open', flush=True); time.sleep(60)", str(db)],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        done = run_ctxtool("vacuum", "--all", "--apply", "--agent", "opencode", env=_env(home))
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1, done.stderr  # the sweep goes on; this one entry failed
    assert f"(pid {holder.pid}) has the database open".encode() in done.stderr
    assert _all_rows(db) == before and _size(db) == size


def test_a_locked_database_is_left_alone(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer in this process (not seen in /proc: SQLite's lock is what stops it)."""
    from click.testing import CliRunner

    from ctxtool.cli import cli
    from ctxtool.storage import opencode_vacuum

    monkeypatch.setattr(opencode_vacuum, "BUSY_TIMEOUT", 0.1)
    for name, value in _env(home).items():
        monkeypatch.setenv(name, value)
    db = _db(home)
    before = _all_rows(db)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        done = CliRunner().invoke(cli, ["vacuum", "--all", "--apply", "--agent", "opencode"])
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert done.exit_code == 1, done.output
    assert "busy" in done.stderr
    assert _all_rows(db) == before


@pytest.mark.parametrize("where", ["vacuum-stored", "vacuum-deleted", "vacuum-vacuumed"])
def test_killed_at_each_step_the_database_is_untouched_or_complete(home: Path,
                                                                  where: str) -> None:
    db = _db(home)
    before = _all_rows(db)
    killed = run_ctxtool("vacuum", "--all", "--apply", "--agent", "opencode",
                         env={**_env(home), "CTXTOOL_TEST_CRASH": where})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert integrity(db) == "ok"
    after = _all_rows(db)
    if where == "vacuum-vacuumed":  # committed: complete, shrinking when run again
        assert len(after["event"]) == 10
    else:
        assert after == before
    back = run_ctxtool("restore", "--in-place", str(db), env=_env(home))
    assert back.returncode == 0, back.stderr
    assert _all_rows(db) == before


def test_killed_from_outside_at_any_moment(home: Path) -> None:
    """SIGKILL at staggered moments of a run on a bigger database: each time the database is
    whole, and either untouched or without the rows vacuum takes (and restore gives back)."""
    db = _db(home)
    _events(db, "ses_more", 3000)
    before = _all_rows(db)
    outcomes = set()
    for delay in (0.05, 0.2, 0.4, 0.6, 0.9, 1.3):
        proc = subprocess.Popen([*ctxtool_executable(), "vacuum", "--all", "--apply", "--agent",
                                 "opencode"], env={**os.environ, **_env(home)},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert integrity(db) == "ok"
        after = _all_rows(db)
        complete = len(after["event"]) == 10
        assert complete or after == before, delay
        outcomes.add(complete)
        if complete:
            assert run_ctxtool("restore", "--in-place", str(db), env=_env(home)).returncode == 0
            assert _all_rows(db) == before
    assert outcomes  # at least one run observed
