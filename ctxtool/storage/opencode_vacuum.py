"""``ctxtool vacuum`` on OpenCode's database: the ``event`` rows OpenCode 1.18.33 never reads back
for a session go (to ctxtool's store first), then SQLite's ``VACUUM`` gives the freed pages back
to the filesystem. Why those rows are never read: docs/vacuum.md, with the source lines.

Which rows: every row of ``event`` but those of a session synced with a workspace (its
``event_sequence.owner_id`` or ``session.workspace_id`` set: workspace sync replays and serves
that log) and those of the v2 session engine (``session.next.*``, read back as its history).
``event_sequence`` stays: OpenCode numbers a session's next event from it.

Order, so that a failure or a kill at any point leaves the database untouched or complete:

1. refuse while another process has the database open (OpenCode keeps it open as long as it
   runs: :mod:`ctxtool.storage.open_files`) or holds its write lock (``BEGIN IMMEDIATE``,
   :class:`~ctxtool.storage.opencode_cleanup.DatabaseBusy`);
2. in that transaction, each session's rows go to the store as one JSONL blob (every column,
   content-addressed), then the recipe naming the blobs; only then are the rows deleted and the
   transaction committed (killed before the commit: SQLite rolls back, nothing changed);
3. ``VACUUM`` (one transaction of its own, into the WAL) and a ``TRUNCATE`` checkpoint: killed
   during either, the database holds every row as committed in step 2 and shrinks next time.

:meth:`OpenCodeVacuum.restore` puts every stored row back as it was (``ctxtool restore
--in-place opencode.db``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from ctxtool.errors import StoreError
from ctxtool.formats.vacuum import BlobKeeper, SessionSize
from ctxtool.storage import durable, sqlite_rows
from ctxtool.storage.open_files import holders
from ctxtool.storage.opencode_cleanup import BUSY_TIMEOUT, DatabaseBusy, begin_immediate
from ctxtool.storage.opencode_db import check_schema, connect

REASON = "event rows OpenCode never reads back"
KIND = "opencode-events"
# the rows that go: not the v2 engine's, not a workspace's (see the module docstring)
REMOVABLE = """
    FROM event e
    LEFT JOIN event_sequence q ON q.aggregate_id = e.aggregate_id
    LEFT JOIN session s ON s.id = e.aggregate_id
    WHERE e.type NOT LIKE 'session.next.%' AND q.owner_id IS NULL AND s.workspace_id IS NULL
"""
_CHUNK = 500


class OpenCodeVacuum:
    """OpenCode's :class:`ctxtool.formats.vacuum.DatabaseVacuum`."""

    def databases(self, env: Mapping[str, str]) -> list[Path]:
        from ctxtool.storage.session_dirs import opencode_database

        db = opencode_database(env)
        return [db] if db.is_file() else []

    def plan(self, path: Path) -> list[SessionSize]:
        with connect(path, write=False) as conn:
            check_schema(conn, path, writing=False)
            count, size = conn.execute(f"SELECT count(*), coalesce(sum({_ROW_BYTES}), 0) "
                                       f"{REMOVABLE}").fetchone() if _logs(conn, path) else (0, 0)
            sessions = conn.execute("SELECT count(*) FROM session").fetchone()[0]
        now = file_bytes(path)
        return [_entry(path, sessions, now, max(0, now - size), count)]

    def apply(self, path: Path, keeper: BlobKeeper) -> list[SessionSize]:
        refuse_if_open(path)
        before = file_bytes(path)
        with connect(path, write=True) as conn:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            check_schema(conn, path, writing=True)
            sessions = conn.execute("SELECT count(*) FROM session").fetchone()[0]
            count = _remove_events(conn, path, keeper) if _logs(conn, path) else 0
            if count:
                conn.execute("VACUUM")
                durable.crash_point("vacuum-vacuumed")  # tests: killed before the checkpoint
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return [_entry(path, sessions, before, file_bytes(path), count)]

    def restore(self, path: Path, keeper: BlobKeeper) -> int:
        """Every row the recipes for ``path`` name, back as it was; how many were missing (so a
        second ``restore --in-place`` of the database goes on to its tool outputs)."""
        recipes = [r for r in keeper.recipes() if r.get("kind") == KIND
                   and r.get("database") == str(path.resolve())]
        rows = [row for recipe in recipes for row in _stored_rows(recipe, keeper, path)]
        missing = 0
        with connect(path, write=True) as conn:
            check_schema(conn, path, writing=True)
            begin_immediate(conn, path)
            try:
                for row in rows:
                    missing += not sqlite_rows.put_back(conn, "event", row, str(path))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return missing


_ROW_BYTES = "length(e.id) + length(e.aggregate_id) + length(e.type) + length(e.data) + 8"


def _entry(path: Path, sessions: int, now: int, after: int, count: int) -> SessionSize:
    return SessionSize(str(path), f"OpenCode database ({sessions} sessions)", now, after,
                       {REASON: count} if count else {})


def file_bytes(path: Path) -> int:
    """The database's size on disk: the file and its WAL."""
    return sum(os.stat(p).st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def refuse_if_open(path: Path) -> None:
    found = holders([path, f"{path}-wal", f"{path}-shm"])
    if found:
        who = ", ".join(f"{h.command} (pid {h.pid})" for h in found[:3])
        raise DatabaseBusy(f"{who} has the database open; nothing was changed", source=str(path),
                           hint="quit OpenCode (its TUI, `opencode serve`, a running `opencode "
                                "run`) and run vacuum again")


def _logs(conn: sqlite3.Connection, path: Path) -> bool:
    """Whether the database has OpenCode's event log (a database older than the log has
    nothing to take out); StoreError when its tables are not the ones ctxtool knows."""
    if not sqlite_rows.columns(conn, "event"):
        return False
    for table, needed in {"event": {"id", "aggregate_id", "seq", "type", "data"},
                          "event_sequence": {"aggregate_id", "owner_id"},
                          "session": {"workspace_id"}}.items():
        if not needed <= set(sqlite_rows.columns(conn, table)):
            raise StoreError(f"unknown OpenCode database schema: no {table} table with "
                             f"{', '.join(sorted(needed))}", source=str(path))
    return True


def _remove_events(conn: sqlite3.Connection, path: Path, keeper: BlobKeeper) -> int:
    """Store, then delete, the removable rows, in one transaction; how many went."""
    begin_immediate(conn, path)
    try:
        by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in sqlite_rows.select(conn, "event", f"id IN (SELECT e.id {REMOVABLE})", ()):
            by_session[row["aggregate_id"]].append(row)
        if not by_session:
            conn.execute("ROLLBACK")
            return 0
        blobs = {session: keeper.keep(b"".join(orjson.dumps(r) + b"\n" for r in rows))
                 for session, rows in sorted(by_session.items())}
        keeper.save_recipe(_recipe(path, blobs))
        durable.crash_point("vacuum-stored")  # tests: killed with the rows stored, not deleted
        ids = [row["id"] for rows in by_session.values() for row in rows]
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            conn.execute(f"DELETE FROM event WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        durable.crash_point("vacuum-deleted")  # tests: killed before the commit
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(ids)


def _recipe(path: Path, blobs: dict[str, str]) -> dict[str, Any]:
    listed = orjson.dumps(blobs, option=orjson.OPT_SORT_KEYS)
    return {"kind": KIND, "database": str(path.resolve()),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "vacuumed": {"sha256": hashlib.sha256(listed).hexdigest()}, "sessions": blobs}


def _stored_rows(recipe: Mapping[str, Any], keeper: BlobKeeper, path: Path) -> list[dict[str, Any]]:
    rows = []
    sessions = recipe.get("sessions")
    if not isinstance(sessions, dict):
        raise StoreError("a vacuum recipe without its sessions", source=str(path))
    for session, digest in sessions.items():
        data = keeper.load(str(digest))
        if data is None:
            raise StoreError(f"the stored event rows of {session} are missing ({digest[:16]}...)",
                             source=str(path), hint="point --store at the store vacuum used")
        for line in data.splitlines():
            row = orjson.loads(line)
            if not isinstance(row, dict) or row.get("aggregate_id") != session:
                raise StoreError(f"stored event rows of {session} are damaged", source=str(path))
            rows.append(row)
    return rows


__all__ = ["KIND", "OpenCodeVacuum", "REASON", "file_bytes", "refuse_if_open"]
