"""Codex's history index (thread_history_1.sqlite) is reset for a rollout ctxtool rewrites in
place, and only then (ctxtool/storage/codex_history.py; the real client's side:
tests/e2e/test_codex_vacuum.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.storage import codex_history
from ctxtool.storage.codex_history import forget_thread, history_database
from tests.conftest import ROOT, run_ctxtool

FIXTURE = ROOT / "tests" / "fixtures" / "codex-0.171.0" / "tools.jsonl"
THREAD = "01a20b28-72e2-7ae2-9fb8-35827a60726d"  # the fixture's session
OTHER = "01a20b28-0000-7000-8000-000000000000"


def codex_home(tmp_path: Path, *, tables: tuple[str, ...] = codex_history.TABLES) -> Path:
    """A CODEX_HOME holding the fixture as a rollout and an index with rows of two threads."""
    home = tmp_path / ".codex"
    day = home / "sessions" / "2026" / "11" / "24"
    day.mkdir(parents=True)
    (day / f"rollout-2026-11-24T01-25-29-{THREAD}.jsonl").write_bytes(FIXTURE.read_bytes())
    with sqlite3.connect(home / codex_history.HISTORY_DB) as db:
        for table in tables:
            db.execute(f'CREATE TABLE "{table}" (thread_id TEXT, rollout_byte_offset INTEGER)')
            db.executemany(f'INSERT INTO "{table}" VALUES (?, ?)',
                           [(THREAD, 10), (THREAD, 20), (OTHER, 30)])
    return home


def rows(home: Path) -> dict[str, int]:
    with sqlite3.connect(home / codex_history.HISTORY_DB) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {thread: sum(db.execute(f'SELECT count(*) FROM "{t}" WHERE thread_id = ?',
                                       (thread,)).fetchone()[0] for t in tables)
                for thread in (THREAD, OTHER)}


def rollout(home: Path) -> Path:
    return next((home / "sessions").rglob("rollout-*.jsonl"))


def test_the_index_is_found_beside_the_sessions_folder(tmp_path: Path) -> None:
    home = codex_home(tmp_path)
    assert history_database(rollout(home)) == home / codex_history.HISTORY_DB
    archived = home / "archived_sessions" / "rollout-x.jsonl"
    assert history_database(archived) == home / codex_history.HISTORY_DB
    assert history_database(tmp_path / "elsewhere" / rollout(home).name) is None
    (home / codex_history.HISTORY_DB).unlink()
    assert history_database(rollout(home)) is None


def test_only_the_threads_rows_go_from_the_tables_there_are(tmp_path: Path) -> None:
    home = codex_home(tmp_path, tables=("thread_turns", "thread_history_projection_state"))
    assert forget_thread(home / codex_history.HISTORY_DB, THREAD) == 4
    assert rows(home) == {THREAD: 0, OTHER: 2}


def test_an_in_place_rewrite_resets_the_rollouts_index(tmp_path: Path) -> None:
    home = codex_home(tmp_path)
    proc = run_ctxtool("persist", "--in-place", "--force", "--max-chars", "100", "--store",
                       str(tmp_path / "store"), str(rollout(home)))
    assert proc.returncode == 0, proc.stderr
    assert rollout(home).read_bytes() != FIXTURE.read_bytes()
    assert rows(home) == {THREAD: 0, OTHER: 4}


def test_a_rewrite_that_changes_nothing_keeps_the_index(tmp_path: Path) -> None:
    home = codex_home(tmp_path)
    proc = run_ctxtool("persist", "--in-place", "--force", "--max-chars", "10000000",
                       str(rollout(home)))
    assert proc.returncode == 0, proc.stderr
    assert rows(home) == {THREAD: 8, OTHER: 4}


def test_an_index_codex_holds_leaves_the_rollout_as_it_was(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    home = codex_home(tmp_path)
    monkeypatch.setattr(codex_history, "BUSY_TIMEOUT", 0.1)
    holder = sqlite3.connect(home / codex_history.HISTORY_DB, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = CliRunner().invoke(cli, ["persist", "--in-place", "--force", "--max-chars",
                                          "100", "--store", str(tmp_path / "store"),
                                          str(rollout(home))])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 4, result.output
    assert "history index" in result.output and "nothing was replaced" in result.output
    assert rollout(home).read_bytes() == FIXTURE.read_bytes()
    assert rows(home) == {THREAD: 8, OTHER: 4}
