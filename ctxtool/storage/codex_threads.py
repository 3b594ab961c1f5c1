"""Codex CLI's own records of a thread, removed the way ``codex delete`` removes them.

Besides its rollout, Codex keeps a thread in databases under ``$CODEX_HOME`` (its index row in
``state_5.sqlite``, its paginated history in ``thread_history_1.sqlite``...: the list is
:data:`ctxtool.formats.codex.THREAD_RECORDS`). :func:`delete_thread_records` takes every database's write
lock first (``BEGIN IMMEDIATE``; one held by a running Codex makes it give up, changing
nothing), deletes the thread's rows in one transaction per database, then commits them in order:
what Codex rebuilds from the rollout first, the thread's index row last; then drops the thread's
lines from ``session_index.jsonl`` (the names /rename gives; rewritten atomically, under the
lock file Codex keeps beside it). Killed at any point, each database has all of the thread's
rows or none, and the rollout (removed after) is still there: Codex lists and resumes it again
(it re-indexes a rollout it finds), and the next cleanup finishes the job.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator

import orjson

from ctxtool.errors import StoreError
from ctxtool.formats.codex import THREAD_RECORDS
from ctxtool.storage import durable
from ctxtool.storage.atomic import write_bytes_atomic
from ctxtool.storage.lock import try_lock
from ctxtool.storage.safe_fs import NOFOLLOW, describe

SESSION_INDEX = "session_index.jsonl"

BUSY_TIMEOUT = 2.0  # seconds to wait for a lock another process holds (Codex's own are brief)
_BUSY = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED


class ThreadsBusy(Exception):
    """A database another process is writing: nothing was changed."""


def delete_thread_records(codex_home: str, thread: str) -> dict[str, int]:
    """Delete ``thread``'s rows from Codex's databases in ``codex_home``; rows deleted per
    database. ThreadsBusy when one is locked (then none changed); StoreError when one cannot be
    read or changed (none changed either)."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(_index_lock(codex_home))
        open_ = []
        for name, tables in THREAD_RECORDS:
            path = os.path.join(codex_home, name)
            if os.path.isfile(path) and not os.path.islink(path):
                connection = stack.enter_context(_connection(path, name))
                open_.append((name, connection, tables))
        removed = {name: _delete(connection, name, tables, thread)
                   for name, connection, tables in open_}
        for name, connection, _ in open_:
            durable.crash_point(f"codex-commit-{name}")  # tests: killed between the commits
            _run(connection, name, "COMMIT")
        durable.crash_point("codex-index")  # tests: killed before the names go
        removed[SESSION_INDEX] = _drop_from_index(codex_home, thread)
        return removed


@contextlib.contextmanager
def _index_lock(codex_home: str) -> Iterator[None]:
    """Codex's lock on its session index, when it keeps one (not created when absent)."""
    path = os.path.join(codex_home, f"{SESSION_INDEX}.lock")
    try:
        fd = os.open(path, os.O_RDWR | NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        yield
        return
    except OSError as exc:
        raise StoreError(f"cannot open: {describe(exc)}", source=path) from exc
    try:
        if not try_lock(fd):
            raise ThreadsBusy(f"Codex's {SESSION_INDEX} is locked by another process "
                              "(Codex running?); the session is kept")
        yield
    finally:
        os.close(fd)


def _drop_from_index(codex_home: str, thread: str) -> int:
    """Rewrite ``session_index.jsonl`` without the thread's lines (others byte for byte)."""
    path = os.path.join(codex_home, SESSION_INDEX)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise StoreError(f"cannot read: {describe(exc)}", source=path) from exc
    lines = data.splitlines(keepends=True)
    kept = [line for line in lines if _index_id(line) != thread]
    if len(kept) != len(lines):
        write_bytes_atomic(path, b"".join(kept))
    return len(lines) - len(kept)


def _index_id(line: bytes) -> object:
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return entry.get("id") if isinstance(entry, dict) else None


@contextlib.contextmanager
def _connection(path: str, name: str) -> Iterator[sqlite3.Connection]:
    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open Codex's database: {exc}", source=path) from exc
    try:
        _run(connection, name, "BEGIN IMMEDIATE")
        yield connection
    finally:
        connection.close()  # without COMMIT: rolled back


def _delete(connection: sqlite3.Connection, name: str,
            tables: tuple[tuple[str, tuple[str, ...]], ...], thread: str) -> int:
    present = {row[0] for row in _run(connection, name,
                                      "SELECT name FROM sqlite_master WHERE type = 'table'")}
    count = 0
    for table, columns in tables:
        if table in present:  # an older Codex lacks some
            where = " OR ".join(f'"{column}" = ?' for column in columns)
            count += _run(connection, name, f'DELETE FROM "{table}" WHERE {where}',
                          (thread,) * len(columns)).rowcount
    durable.crash_point(f"codex-delete-{name}")  # tests: killed inside the transaction
    return count


def _run(connection: sqlite3.Connection, name: str, sql: str,
         args: tuple[str, ...] = ()) -> sqlite3.Cursor:
    try:
        return connection.execute(sql, args)
    except sqlite3.OperationalError as exc:
        if getattr(exc, "sqlite_errorcode", None) in _BUSY or "locked" in str(exc):
            raise ThreadsBusy(f"Codex's {name} is locked by another process (Codex running?); "
                              "the session is kept") from exc
        raise StoreError(f"cannot remove the thread's records: {exc}", source=name) from exc
    except sqlite3.Error as exc:
        raise StoreError(f"cannot remove the thread's records: {exc}", source=name) from exc
