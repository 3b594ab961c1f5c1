"""OpenCode's own database (OpenCode 1.2 and later): sessions read from and written back to
``$XDG_DATA_HOME/opencode/opencode.db`` (default ``~/.local/share/opencode/opencode.db``).

OpenCode keeps each session in three SQLite tables (learned from the database OpenCode 1.18.33
writes and from its source; other tables, such as ``event``, are left alone)::

    session(id, project_id, slug, directory, title, version, ..., time_created, time_updated)
    message(id, session_id, time_created, time_updated, data)   data: the info without id, sessionID
    part(id, message_id, session_id, time_created, time_updated, data)   data: without the three ids

A message as OpenCode loads it is ``{...data, id, sessionID}`` and a part ``{...data, id,
sessionID, messageID}``; :func:`read_session` gives the same entries ``ctxtool convert`` makes of
that session's ``opencode export``, byte for byte.

Reading opens the file read-only (``mode=ro``), which is safe while OpenCode runs (it uses WAL).
:func:`write_session` changes only the ``message`` and ``part`` rows whose content differs, in one
``BEGIN IMMEDIATE`` transaction, after keeping the rows it replaces beside the database
(:mod:`ctxtool.storage.opencode_backup`); a lock held too long, a schema ctxtool does not know,
or a row OpenCode changed since it was read stops it with nothing written.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from ctxtool.errors import InputError, StoreError
from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.opencode.export import SESSION_KEY, check_message, is_message, is_session_line, sort_messages
from ctxtool.storage import durable, opencode_backup
# finding the file needs no sqlite3: in a module of its own, which every command's input check
# imports (kept importable from here)
from ctxtool.storage.opencode_db_file import (
    DB_NAME, find_database, is_database, looks_like_database, not_sqlite,
)

BUSY_TIMEOUT = 5.0  # seconds to wait for OpenCode to finish a write before giving up
SCHEMA_HINT = "ctxtool knows the schema of OpenCode 1.2 to 1.18.33; use `opencode export` instead"
LOCK_HINT = "OpenCode is writing to it; try again when the session is idle"

# The ``migration`` table of OpenCode 1.18.33 (every earlier 1.x database holds a prefix of it).
# Writing needs each applied migration to be one of these: a newer schema is never guessed at.
KNOWN_MIGRATIONS = frozenset("""
20260127222353_familiar_lady_ursula 20260211171708_add_project_commands
20260213144116_wakeful_the_professor 20260225215848_workspace
20260227213759_add_session_workspace_id 20260228203230_blue_harpoon
20260303231226_add_workspace_fields 20260309230000_move_org_to_state
20260312043431_session_message_cursor 20260323234822_events 20260410174513_workspace-name
20260413175956_chief_energizer 20260423070820_add_icon_url_override 20260427172553_slow_nightmare
20260428004200_add_session_path 20260501142318_next_venus 20260504145000_add_sync_owner
20260507164347_add_workspace_time 20260510033149_session_usage
20260511000411_data_migration_state 20260511173437_session-metadata
20260601010001_normalize_storage_paths 20260601202201_amazing_prowler
20260602002951_lowly_union_jack 20260602182828_add_project_directories
20260603001617_session_message_projection_indexes 20260603040000_session_message_projection_order
20260603141458_session_input_inbox 20260603160727_jittery_ezekiel_stane
20260604172448_event_sourced_session_input 20260605003541_add_session_context_snapshot
20260605042240_add_context_epoch_agent 20260611035744_credential 20260611192811_lush_chimera
20260612174303_project_dir_strategy 20260622142730_simplify_session_context_epoch
20260622170816_reset_v2_session_state 20260622202450_simplify_session_input
""".split())

# The columns ctxtool reads and writes; a database without them is not one ctxtool knows.
COLUMNS = {
    "session": {"id", "project_id", "slug", "directory", "title", "version", "time_created",
                "time_updated"},
    "message": {"id", "session_id", "time_created", "time_updated", "data"},
    "part": {"id", "message_id", "session_id", "time_created", "time_updated", "data"},
}


# --- opening ---------------------------------------------------------------------------------------

@contextlib.contextmanager
def connect(path: Path, *, write: bool) -> Iterator[sqlite3.Connection]:
    uri = f"file:{quote(str(path.resolve()))}" + ("?mode=rw" if write else "?mode=ro")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise _storage_error(exc, path) from exc
    try:
        yield conn
    except sqlite3.Error as exc:
        raise _storage_error(exc, path) from exc
    finally:
        conn.close()


def _storage_error(exc: sqlite3.Error, path: Path) -> StoreError | InputError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError("the database is locked; nothing was changed", source=str(path),
                          hint=LOCK_HINT)
    if "not a database" in text:
        return not_sqlite(str(path))
    return StoreError(f"database error: {text}", source=str(path))


# --- the schema ------------------------------------------------------------------------------------

def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def check_schema(conn: sqlite3.Connection, path: Path, *, writing: bool) -> None:
    """Raise StoreError (exit 4) unless the tables hold the columns ctxtool uses and, to write,
    every migration applied is one of OpenCode 1.18.33's."""
    for table, needed in COLUMNS.items():
        missing = needed - _columns(conn, table)
        if missing:
            raise StoreError(f"unknown OpenCode database schema: table {table} lacks "
                             f"{', '.join(sorted(missing))}", source=str(path), hint=SCHEMA_HINT)
    if not writing:
        return
    if "id" not in _columns(conn, "migration"):
        raise StoreError("unknown OpenCode database schema: no migration table", source=str(path),
                         hint=SCHEMA_HINT)
    unknown = sorted({row[0] for row in conn.execute("SELECT id FROM migration")} - KNOWN_MIGRATIONS)
    if unknown:
        raise StoreError(f"unknown OpenCode database schema (migration {unknown[-1]}); "
                         "not writing to it", source=str(path), hint=SCHEMA_HINT)


# --- reading ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SessionSummary:
    """One session of a database, for listing: newest first by ``updated`` (ms since 1970)."""

    id: str
    title: str
    directory: str
    updated: int
    parent_id: str | None = None


def list_sessions(path: str | os.PathLike[str]) -> list[SessionSummary]:
    """The sessions of a database, most recently updated first."""
    db = _need_database(path)
    with connect(db, write=False) as conn:
        check_schema(conn, db, writing=False)
        rows = conn.execute("SELECT id, title, directory, time_updated, parent_id FROM session "
                            "ORDER BY time_updated DESC, id DESC").fetchall()
    return [SessionSummary(*row) for row in rows]


def session_stamps(path: str | os.PathLike[str]) -> dict[str, list[Any]]:
    """Per session: what changes whenever OpenCode writes to it (its update time, the count and
    latest update time of its messages and of its parts), from the indexes and the rows'
    leading columns only: a listing keeps a session's figures while its stamp is the same."""
    db = _need_database(path)
    with connect(db, write=False) as conn:
        check_schema(conn, db, writing=False)
        conn.execute("BEGIN")
        stamps = {row[0]: [row[1]] for row in conn.execute("SELECT id, time_updated FROM session")}
        for table in ("message", "part"):
            for row in conn.execute(f"SELECT session_id, count(*), max(time_updated) FROM {table} "
                                    "GROUP BY session_id"):
                if row[0] in stamps:
                    stamps[row[0]] += [table, row[1], row[2]]
    return stamps


def _need_database(path: str | os.PathLike[str]) -> Path:
    db = find_database(path)
    if db is None:
        if Path(path).is_file():
            raise not_sqlite(str(path))
        raise InputError(f"no {DB_NAME} here", source=str(path),
                         hint="give ~/.local/share/opencode or the opencode.db in it")
    return db


def pick_session(conn: sqlite3.Connection, wanted: str | None, source: str) -> str:
    """``wanted`` when the database has it, else the most recently updated session."""
    if wanted is not None:
        if conn.execute("SELECT 1 FROM session WHERE id = ?", (wanted,)).fetchone() is None:
            newest = [r[0] for r in conn.execute(
                "SELECT id FROM session ORDER BY time_updated DESC LIMIT 3")]
            raise InputError(f"no session {wanted} in this database", source=source,
                             hint=f"newest sessions: {', '.join(newest) or 'none'}")
        return wanted
    row = conn.execute("SELECT id FROM session ORDER BY time_updated DESC, id DESC LIMIT 1").fetchone()
    if row is None:
        raise InputError("no sessions in this database", source=source)
    return str(row[0])


def read_session(path: str | os.PathLike[str], session_id: str | None = None) -> list[dict[str, Any]]:
    """One session as ctxtool's OpenCode entries: the ``{"session": ...}`` line, then each
    message with its parts, in OpenCode's order (``--session``'s default: the newest)."""
    db = _need_database(path)
    with connect(db, write=False) as conn:
        check_schema(conn, db, writing=False)
        conn.execute("BEGIN")  # one snapshot for all three tables
        chosen = pick_session(conn, session_id, str(db))
        return read_entries(conn, chosen, str(db))


def read_entries(conn: sqlite3.Connection, session_id: str, source: str) -> list[dict[str, Any]]:
    """One session's entries through an open connection (the caller's transaction)."""
    conn.row_factory = sqlite3.Row
    row = conn.execute("SELECT * FROM session WHERE id = ?", (session_id,)).fetchone()
    parts: dict[str, list[dict[str, Any]]] = {}
    for part in conn.execute("SELECT id, message_id, session_id, data FROM part WHERE "
                             "session_id = ? ORDER BY message_id, id", (session_id,)):
        record = {**_json(part["data"], source), "id": part["id"], "sessionID": part["session_id"],
                  "messageID": part["message_id"]}
        parts.setdefault(part["message_id"], []).append(record)
    messages = []
    for message in conn.execute("SELECT id, session_id, data FROM message WHERE session_id = ? "
                                "ORDER BY time_created, id", (session_id,)):
        entry = {"info": {**_json(message["data"], source), "id": message["id"],
                          "sessionID": message["session_id"]},
                 "parts": parts.get(message["id"], [])}
        check_message(entry, f"message {message['id']}", source)
        messages.append(entry)
    return [{SESSION_KEY: session_info(row, source)}, *sort_messages(messages)]


def _json(text: Any, source: str) -> Any:
    if text is None:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"a row holds invalid JSON ({exc})", source=source) from exc
    return value


def _number(value: Any) -> Any:
    """A REAL column as JavaScript prints it: 0.0 is ``0``."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def session_info(row: Mapping[str, Any], source: str = "") -> dict[str, Any]:
    """The session record OpenCode builds from its row (``opencode export``'s ``info``): the
    same keys in the same order, keys whose value is missing left out."""
    col = {k: row[k] for k in row.keys()}  # noqa: SIM118 - sqlite3.Row has keys(), not items()

    def get(name: str, parse: bool = False) -> Any:
        value = col.get(name)
        return _json(value, source) if parse and value is not None else value

    summary = None
    if any(get(k) is not None for k in ("summary_additions", "summary_deletions", "summary_files")):
        summary = {"additions": get("summary_additions") or 0,
                   "deletions": get("summary_deletions") or 0,
                   "files": get("summary_files") or 0, "diffs": get("summary_diffs", True)}
    model = get("model", True)
    revert = get("revert", True)
    info = {
        "id": col["id"], "slug": col["slug"], "projectID": col["project_id"],
        "workspaceID": get("workspace_id"), "directory": col["directory"], "path": get("path"),
        "parentID": get("parent_id"), "title": col["title"], "agent": get("agent"),
        "model": {"id": model.get("id"), "providerID": model.get("providerID"),
                  "variant": model.get("variant")} if isinstance(model, dict) else None,
        "version": col["version"], "summary": summary, "cost": _number(get("cost") or 0),
        "tokens": {"input": get("tokens_input") or 0, "output": get("tokens_output") or 0,
                   "reasoning": get("tokens_reasoning") or 0,
                   "cache": {"read": get("tokens_cache_read") or 0,
                             "write": get("tokens_cache_write") or 0}},
        "share": {"url": get("share_url")} if get("share_url") else None,
        "metadata": get("metadata", True),
        "revert": {"messageID": revert.get("messageID"), "partID": revert.get("partID") or None,
                   "snapshot": revert.get("snapshot"), "diff": revert.get("diff")}
        if isinstance(revert, dict) else None,
        "permission": get("permission", True),
        "time": {"created": col["time_created"], "updated": col["time_updated"],
                 "compacting": get("time_compacting"), "archived": get("time_archived")},
    }
    return _drop_missing(info)


def _drop_missing(value: Any) -> Any:
    """What ``JSON.stringify`` leaves out: keys whose value is undefined (None here, for the
    fields OpenCode sets to undefined when a column is NULL)."""
    if isinstance(value, dict):
        return {k: _drop_missing(v) for k, v in value.items() if v is not None}
    return value


# --- writing ---------------------------------------------------------------------------------------

@dataclass
class DatabaseWrite:
    """What :func:`write_session` did."""

    session_id: str = ""
    updated: list[str] = field(default_factory=list)  # ids of messages and parts rewritten
    inserted: list[str] = field(default_factory=list)
    unchanged: int = 0
    left: int = 0  # rows of the session the entries did not mention (kept)
    backup: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"session": self.session_id, "rows_updated": len(self.updated),
                "rows_inserted": len(self.inserted), "rows_unchanged": self.unchanged,
                "rows_left": self.left, "backup": self.backup}


@dataclass(frozen=True)
class _Row:
    table: str
    id: str
    message_id: str
    data: dict[str, Any]
    created: int


def _rows(entries: Iterable[Mapping[str, Any]], source: str) -> tuple[str, list[_Row]]:
    session: str | None = None
    rows: list[_Row] = []
    for entry in entries:
        if is_session_line(entry):
            session = session or entry[SESSION_KEY].get("id")
        elif is_message(entry):
            check_message(entry, "message", source)
            info = entry["info"]
            created = _created(info.get("time"))
            rows.append(_Row("message", info["id"], info["id"], _without(info, "id", "sessionID"),
                             created))
            session = session or info.get("sessionID")
            for part in entry["parts"]:
                rows.append(_Row("part", str(part.get("id")), info["id"],
                                 _without(part, "id", "sessionID", "messageID"), created))
    if not isinstance(session, str):
        raise InputError("no OpenCode session in the entries", source=source)
    return session, rows


def _created(value: Any) -> int:
    created = value.get("created") if isinstance(value, dict) else None
    return created if isinstance(created, int) else int(time.time() * 1000)


def _without(record: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in keys}


def write_session(path: str | os.PathLike[str], entries: Iterable[Mapping[str, Any]], *,
                  expected: Iterable[Mapping[str, Any]] | None = None,
                  source: str = "<input>", backup: bool = True) -> DatabaseWrite:
    """Write one session's entries back into the database at ``path``.

    Only ``message`` and ``part`` rows whose data differs are updated (new ones are inserted;
    rows the entries leave out stay). ``expected`` is the session as it was read: a row to be
    changed that OpenCode changed since then stops the write. Before the first change, the rows
    it replaces (and the ids of those it adds) are kept next to the database
    (``<name>.ctxtool-backup-<time>.jsonl``, kept; ``ctxtool restore`` puts them back). One
    transaction: any failure, or a kill, leaves the database as it was."""
    db = _need_database(path)
    session_id, rows = _rows(entries, source)
    before = {(r.table, r.id): r.data for r in _rows(expected, source)[1]} if expected else None
    report = DatabaseWrite(session_id=session_id)
    with connect(db, write=True) as conn:
        check_schema(conn, db, writing=True)
        conn.execute("BEGIN IMMEDIATE")
        try:
            changes = _plan(conn, session_id, rows, before, report, str(db))
            if changes:
                if backup:
                    report.backup = str(opencode_backup.save(
                        conn, db, session_id, [(r.table, r.id, exists) for r, exists in changes]))
                durable.crash_point("after-backup")
                _apply(conn, session_id, changes)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return report


def _plan(conn: sqlite3.Connection, session_id: str, rows: list[_Row],
          before: dict[tuple[str, str], Any] | None, report: DatabaseWrite,
          source: str) -> list[tuple[_Row, bool]]:
    """(row, exists) for every row to write; raises when the session moved under us."""
    if conn.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone() is None:
        raise InputError(f"no session {session_id} in this database", source=source,
                         hint="write a session back into the database it was read from")
    current: dict[tuple[str, str], Any] = {}
    for table in ("message", "part"):
        for ident, data in conn.execute(f"SELECT id, data FROM {table} WHERE session_id = ?",
                                        (session_id,)):
            current[(table, ident)] = data
    changes = []
    mentioned = set()
    for row in rows:
        key = (row.table, row.id)
        mentioned.add(key)
        stored = current.get(key)
        now = _json(stored, source) if stored is not None else None
        if now == row.data:
            report.unchanged += 1
            continue
        if before is not None and key in before and before[key] != now:
            raise StoreError(f"OpenCode changed {row.table} {row.id} since ctxtool read it; "
                             "nothing was written", source=source, hint="run the command again")
        changes.append((row, stored is not None))
        (report.updated if stored is not None else report.inserted).append(row.id)
    report.left = len(set(current) - mentioned)
    return changes


def restore_backup(path: str) -> opencode_backup.Restored:
    """Put the rows of the backup ``path`` (:mod:`ctxtool.storage.opencode_backup`) back into
    its database, in one transaction."""
    db, report, records = opencode_backup.read(path)
    with connect(db, write=True) as conn:
        check_schema(conn, db, writing=True)
        conn.execute("BEGIN IMMEDIATE")
        try:
            opencode_backup.put_back(conn, records, report, path)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return report


def _apply(conn: sqlite3.Connection, session_id: str, changes: list[tuple[_Row, bool]]) -> None:
    now = int(time.time() * 1000)
    # messages before their parts: a part row points at its message
    ordered = sorted(changes, key=lambda change: change[0].table != "message")
    for n, (row, exists) in enumerate(ordered):
        data = dumps_json(row.data).decode("utf-8")
        if exists:
            conn.execute(f"UPDATE {row.table} SET data = ?, time_updated = ? WHERE id = ?",
                         (data, now, row.id))
        elif row.table == "message":
            conn.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) "
                         "VALUES (?, ?, ?, ?, ?)", (row.id, session_id, row.created, now, data))
        else:
            conn.execute("INSERT INTO part (id, message_id, session_id, time_created, "
                         "time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
                         (row.id, row.message_id, session_id, row.created, now, data))
        if n == (len(ordered) - 1) // 2:
            durable.crash_point("mid-rows")  # tests: killed with half the rows written
    durable.crash_point("before-commit")  # tests: every row written, not committed


__all__ = ["BUSY_TIMEOUT", "DB_NAME", "DatabaseWrite", "KNOWN_MIGRATIONS", "SessionSummary",
           "check_schema", "connect", "find_database", "is_database", "list_sessions",
           "looks_like_database", "not_sqlite", "pick_session", "read_entries", "read_session",
           "restore_backup", "session_info", "session_stamps", "write_session"]
