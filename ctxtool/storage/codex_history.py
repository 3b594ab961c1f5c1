"""Codex's index of where each turn of a rollout lies in the file, reset before ctxtool rewrites
the rollout in place.

Codex CLI 0.171.0 projects every rollout it opens into ``$CODEX_HOME/thread_history_1.sqlite``:
per thread the byte offset it has read up to (``thread_history_projection_state``), per turn
the byte offsets of its first and last lines (``thread_turns``) and its items (``thread_items``).
``thread/fork`` through a turn and ``thread/revert`` cut the rollout at those offsets. A
rewritten rollout's lines move and the offsets point into other lines: Codex refused to fork a
vacuumed rollout whose rows were left ("durable rollout shrank before projection"), and once
the file had grown past the old offsets it forked another history than the original's
(tests/e2e/test_codex_vacuum.py). Without the thread's rows, Codex projects the rollout again
from its first line the next time it opens the thread, as it does for a rollout it has never
seen, and the fork is the original's again.

Only rows of the one thread are deleted, in one transaction; a database or table that is not
there is nothing to do. The thread's other records (``state_5.sqlite``: its title, its path)
hold no offsets and stay.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from ctxtool.errors import StoreError

HISTORY_DB = "thread_history_1.sqlite"
SESSION_FOLDERS = ("sessions", "archived_sessions")
# the tables of thread_history_1.sqlite whose rows locate a thread's lines in its rollout
TABLES = ("thread_history_projection_state", "thread_turns", "thread_items",
          "thread_realtime_items")
BUSY_TIMEOUT = 5.0  # seconds to wait for a Codex write in progress


def history_database(rollout: Path) -> Path | None:
    """The history index of the CODEX_HOME a rollout lies in (``<home>/sessions/Y/M/D/`` or
    ``<home>/archived_sessions/``), or None when it lies in none or the index is not there."""
    for folder in rollout.parents:
        if folder.name in SESSION_FOLDERS:
            database = folder.parent / HISTORY_DB
            return database if database.is_file() else None
    return None


def forget_thread(database: Path, thread_id: str) -> int:
    """Delete the thread's rows from Codex's history index; how many went. StoreError when
    the database cannot be written (Codex holding it past the timeout, a damaged file)."""
    try:
        with contextlib.closing(sqlite3.connect(database, timeout=BUSY_TIMEOUT,
                                                isolation_level=None)) as db:
            present = {row[0] for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            db.execute("BEGIN IMMEDIATE")
            removed = 0
            for table in TABLES:
                if table in present:
                    removed += db.execute(f'DELETE FROM "{table}" WHERE thread_id = ?',
                                          (thread_id,)).rowcount
            db.execute("COMMIT")
            return removed
    except sqlite3.Error as exc:
        raise StoreError(f"cannot reset Codex's history index of thread {thread_id}: {exc}; "
                         "nothing was replaced", source=str(database)) from exc


__all__ = ["HISTORY_DB", "forget_thread", "history_database"]
