"""Removing old sessions from OpenCode's database (``opencode.db``), for ``ctxtool cleanup``.

A session goes with its child sessions (``parent_id``, a subagent's session), as OpenCode's
``Session.remove`` takes them: a *tree* is a root session and its descendants, dated by the
newest ``time_updated`` of its sessions, messages and parts. Every row keyed by one of its ids
(:data:`ctxtool.formats.opencode.layout.SESSION_TABLES`) goes in one ``BEGIN IMMEDIATE``
transaction: killed at any point, SQLite rolls it back and the tree is whole; committed, it is
gone whole. Its files in OpenCode's data folder go after the commit (killed in between, they are
files no session names any more).

Reading (:func:`scan`, :func:`measure`, :func:`read_exports`) uses a read-only connection and
one snapshot, so a dry run changes no byte of the database. Writing waits at most
``busy_timeout`` seconds for OpenCode to finish a write: a database another process is writing
raises :class:`DatabaseBusy` and nothing is changed. A tree that changed since it was measured
(OpenCode resumed it) raises :class:`TreeChanged`, nothing changed either.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtool.errors import StoreError
from ctxtool.formats.opencode.export import dumps_export, export_document
from ctxtool.formats.opencode.layout import (CONTENT_TABLES, SESSION_TABLES, side_file_rels,
                                             tool_output_rel)
from ctxtool.storage import durable
from ctxtool.storage.opencode_db import LOCK_HINT, check_schema, connect, read_entries

BUSY_TIMEOUT = 2.0  # seconds to wait for OpenCode's write to end before keeping everything
_CHUNK = 500  # ids per IN (...) list


class DatabaseBusy(StoreError):
    """Another process holds the database's write lock."""


class TreeChanged(StoreError):
    """The session tree changed since it was measured."""


@dataclass
class SideFile:
    rel: str  # relative to OpenCode's data folder
    bytes: int


@dataclass
class SessionTree:
    """A root session and its descendants, as one unit of cleanup."""

    id: str
    ids: list[str]  # the root first, then its descendants (parents before children)
    title: str
    directory: str
    last_ms: int  # newest time_updated of its rows, ms since 1970
    rows: dict[str, int] = field(default_factory=dict)  # table -> rows (once measured)
    bytes: int = 0  # its content rows' data and its side files (once measured)
    files: list[SideFile] = field(default_factory=list)  # side files found (once measured)
    protected: list[str] = field(default_factory=list)  # tool outputs a kept session names too
    stamp: list[Any] = field(default_factory=list)  # what changes when OpenCode writes to it

    @property
    def row_count(self) -> int:
        return sum(self.rows.values())


# --- the schema --------------------------------------------------------------------------------

def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def check_session_tables(conn: sqlite3.Connection, db: Path) -> list[str]:
    """The tables of :data:`SESSION_TABLES` this database has, in deletion order; StoreError
    when a table points at ``session`` or ``message`` that ctxtool does not know (a newer
    OpenCode's: removing a session would leave its rows, or fail)."""
    tables = _tables(conn)
    for table in sorted(tables):
        for row in conn.execute(f"PRAGMA foreign_key_list(`{table}`)"):
            if row[2] in ("session", "message") and table not in SESSION_TABLES:
                raise StoreError(f"unknown OpenCode database schema: table {table} is keyed by "
                                 f"{row[2]}; not removing sessions", source=str(db),
                                 hint="ctxtool knows OpenCode 1.2 to 1.18.33's tables")
    return [table for table in SESSION_TABLES if table in tables]


# --- planning ----------------------------------------------------------------------------------

def scan(db: Path) -> list[SessionTree]:
    """Every session tree of the database, newest activity first (read-only)."""
    with connect(db, write=False) as conn:
        check_schema(conn, db, writing=False)
        conn.execute("BEGIN")
        sessions = {row[0]: row for row in conn.execute(
            "SELECT id, parent_id, title, directory, time_updated FROM session")}
        newest = {ident: row[4] for ident, row in sessions.items()}
        for table in ("message", "part"):
            for ident, last in conn.execute(f"SELECT session_id, max(time_updated) FROM {table} "
                                            "GROUP BY session_id"):
                if ident in newest and isinstance(last, int):
                    newest[ident] = max(newest[ident], last)
    children: dict[str, list[str]] = defaultdict(list)
    for ident, row in sessions.items():
        if row[1] in sessions and row[1] != ident:
            children[row[1]].append(ident)
    trees = [_tree(root, sessions, children, newest) for root in _roots(sessions)]
    return sorted(trees, key=lambda tree: (-tree.last_ms, tree.id))


def _roots(sessions: dict[str, tuple[Any, ...]]) -> list[str]:
    """Sessions whose parent is not in the database (a child outlives a parent only if
    OpenCode's own removal was cut short: it then stands as a tree of its own)."""
    return [ident for ident, row in sessions.items() if row[1] not in sessions or row[1] == ident]


def _tree(root: str, sessions: dict[str, tuple[Any, ...]], children: dict[str, list[str]],
          newest: dict[str, int]) -> SessionTree:
    ids, todo, seen = [], [root], set()
    while todo:
        ident = todo.pop(0)
        if ident in seen:
            continue
        seen.add(ident)
        ids.append(ident)
        todo.extend(sorted(children.get(ident, [])))
    _, _, title, directory, _ = sessions[root]
    return SessionTree(root, ids, str(title), str(directory), max(newest[i] for i in ids))


def tool_outputs(db: Path, data: str) -> dict[str, set[str]]:
    """Every tool-output file the database names -> the sessions naming it (a forked session
    copies its parts, so one file can have several)."""
    named: dict[str, set[str]] = defaultdict(set)
    with connect(db, write=False) as conn:
        for ident, path in conn.execute(
                "SELECT session_id, json_extract(data, '$.state.metadata.outputPath') FROM part "
                "WHERE data LIKE '%\"outputPath\"%'"):
            rel = tool_output_rel(data, path)
            if rel:
                named[rel].add(ident)
    return named


def measure(db: Path, data: str, trees: list[SessionTree],
            named: dict[str, set[str]] | None = None) -> None:
    """Fill in the rows, size, side files and stamp of ``trees`` (those about to go). A tool
    output that a session outside its tree names too (``named``: :func:`tool_outputs`) is
    protected: left in place, for OpenCode's own sweep of week-old outputs."""
    if not trees:
        return
    named = tool_outputs(db, data) if named is None else named
    with connect(db, write=False) as conn:
        conn.execute("BEGIN")
        tables = check_session_tables(conn, db)
        for tree in trees:
            tree.rows = _row_counts(conn, tables, tree.ids)
            tree.stamp = stamp(conn, tables, tree.ids)
            tree.bytes = _content_bytes(conn, tables, tree.ids)
            mine = {rel for rel, who in named.items() if who & set(tree.ids)}
            tree.protected = sorted(rel for rel in mine if named[rel] - set(tree.ids))
            rels = sorted(mine - set(tree.protected)) + [
                rel for created, slug, ident in _created_slugs(conn, tree.ids)
                for rel in side_file_rels(ident, created, slug)]
            tree.files = [found for found in (_side_file(data, rel) for rel in rels) if found]
            tree.bytes += sum(found.bytes for found in tree.files)


def _chunks(ids: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start:start + _CHUNK]


def _in(ids: list[str]) -> str:
    return ", ".join("?" * len(ids))


def _row_counts(conn: sqlite3.Connection, tables: list[str], ids: list[str]) -> dict[str, int]:
    counts = {}
    for table in tables:
        column = SESSION_TABLES[table]
        counts[table] = sum(conn.execute(f"SELECT count(*) FROM `{table}` WHERE `{column}` IN "
                                         f"({_in(chunk)})", chunk).fetchone()[0]
                            for chunk in _chunks(ids))
    return counts


def stamp(conn: sqlite3.Connection, tables: list[str], ids: list[str]) -> list[Any]:
    """What changes whenever OpenCode writes to one of these sessions: per table, the row count
    (and the newest ``time_updated`` where the table has one)."""
    found: list[Any] = []
    for table in tables:
        column = SESSION_TABLES[table]
        has_time = table in ("session", "message", "part", "todo", "session_share",
                             "session_message")
        what = "count(*), max(time_updated)" if has_time else "count(*), NULL"
        for chunk in _chunks(ids):
            found.append([table, *conn.execute(f"SELECT {what} FROM `{table}` WHERE `{column}` "
                                                f"IN ({_in(chunk)})", chunk).fetchone()])
    return found


def _content_bytes(conn: sqlite3.Connection, tables: list[str], ids: list[str]) -> int:
    total = 0
    for table in (t for t in CONTENT_TABLES if t in tables):
        column = SESSION_TABLES[table]
        for chunk in _chunks(ids):
            total += conn.execute(f"SELECT coalesce(sum(length(CAST(data AS BLOB))), 0) FROM "
                                  f"`{table}` WHERE `{column}` IN ({_in(chunk)})",
                                  chunk).fetchone()[0]
    return int(total)


def _created_slugs(conn: sqlite3.Connection, ids: list[str]) -> Iterator[tuple[Any, Any, str]]:
    for chunk in _chunks(ids):
        yield from conn.execute(f"SELECT time_created, slug, id FROM session WHERE id IN "
                                f"({_in(chunk)})", chunk)


def _side_file(data: str, rel: str) -> SideFile | None:
    try:
        st = os.lstat(os.path.join(data, rel))
    except OSError:
        return None
    return SideFile(rel, st.st_size) if stat.S_ISREG(st.st_mode) else None


# --- reading what goes -------------------------------------------------------------------------

def export_bytes(conn: sqlite3.Connection, session_id: str, source: str) -> bytes:
    """The session as ``opencode export <id>`` prints it."""
    return dumps_export(export_document(read_entries(conn, session_id, source), source=source))


def read_exports(db: Path, ids: list[str]) -> dict[str, bytes]:
    """Each session's export, from one read-only snapshot."""
    with connect(db, write=False) as conn:
        conn.execute("BEGIN")
        return {ident: export_bytes(conn, ident, str(db)) for ident in ids}


# --- removing ----------------------------------------------------------------------------------

@contextlib.contextmanager
def _write_lock(db: Path, busy_timeout: float) -> Iterator[sqlite3.Connection]:
    """A connection holding the database's write lock (``BEGIN IMMEDIATE``); DatabaseBusy when
    another process keeps it longer than ``busy_timeout`` seconds. The caller commits or rolls
    back; an exception rolls back."""
    with connect(db, write=True) as conn:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        begin_immediate(conn, db)
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def check_writable(db: Path, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
    """DatabaseBusy unless the write lock can be had now (taken and let go, nothing written):
    no archive is written of a tree that could not go, and the plan says so. A reader stays
    open meanwhile: the last connection to close checkpoints the WAL into the file, which a
    writer may do but a reader cannot, so not a byte of the database changes."""
    with connect(db, write=False) as reader:
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
        with _write_lock(db, busy_timeout) as conn:
            conn.execute("ROLLBACK")


def remove_tree(db: Path, tree: SessionTree, *, exports: dict[str, bytes] | None = None,
                busy_timeout: float = BUSY_TIMEOUT) -> dict[str, int]:
    """Delete every row of the tree in one transaction; the rows deleted per table.

    ``exports`` (the archive just written, per session) must still be what the database
    holds, else TreeChanged; without it, the tree's :func:`stamp` must be the one measured."""
    with connect(db, write=False) as conn:
        check_schema(conn, db, writing=True)
        tables = check_session_tables(conn, db)
    with _write_lock(db, busy_timeout) as conn:
        _check_unchanged(conn, db, tables, tree, exports)
        deleted = _delete(conn, tables, tree.ids)
        durable.crash_point("opencode-delete")  # tests: killed inside the transaction
        conn.execute("COMMIT")
    durable.crash_point("opencode-committed")  # tests: killed before its files go
    return deleted


def begin_immediate(conn: sqlite3.Connection, db: Path) -> None:
    """``BEGIN IMMEDIATE``, or DatabaseBusy when another process kept the write lock past the
    connection's busy timeout."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise DatabaseBusy("the database is busy (another process is writing to it); "
                               "nothing was changed", source=str(db), hint=LOCK_HINT) from exc
        raise


def _check_unchanged(conn: sqlite3.Connection, db: Path, tables: list[str], tree: SessionTree,
                     exports: dict[str, bytes] | None) -> None:
    if stamp(conn, tables, tree.ids) != tree.stamp:
        raise TreeChanged("changed since the scan", source=str(db))
    for ident, archived in (exports or {}).items():
        if export_bytes(conn, ident, str(db)) != archived:
            raise TreeChanged(f"{ident} changed since it was archived", source=str(db))


def _delete(conn: sqlite3.Connection, tables: list[str], ids: list[str]) -> dict[str, int]:
    deleted: dict[str, int] = {}
    for table in tables:
        column = SESSION_TABLES[table]
        deleted[table] = sum(conn.execute(f"DELETE FROM `{table}` WHERE `{column}` IN "
                                          f"({_in(chunk)})", chunk).rowcount
                             for chunk in _chunks(ids))
    return deleted


__all__ = ["BUSY_TIMEOUT", "DatabaseBusy", "SessionTree", "SideFile", "TreeChanged",
           "begin_immediate", "check_session_tables", "check_writable", "export_bytes", "measure",
           "read_exports", "remove_tree", "scan", "stamp", "tool_outputs"]
