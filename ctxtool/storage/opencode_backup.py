"""The backup of a write into OpenCode's database: the rows the write replaces, as they were,
and the ids of the rows it adds - kept beside the database before anything changes, so its size
is that of what the write touches, not of the database (a whole copy of a 72 GB file per run was
the problem, not the cure).

``opencode.db.ctxtool-backup-<UTC time>.jsonl`` (to the millisecond: the names sort as the writes
came), one JSON object a line::

    {"backup": "ctxtool-opencode-rows", "version": 1, "database": "/abs/opencode.db",
     "session": "ses_...", "time": "2026-11-27T16:40:00Z"}
    {"table": "part", "id": "prt_...", "row": {"id": ..., "message_id": ..., "data": ...}}
    {"table": "message", "id": "msg_...", "row": null}          (a row the write added)

:func:`save` writes it (fsynced, under its final name only once complete) inside the write's
``BEGIN IMMEDIATE`` transaction, before the first change: the rows it holds are the committed
ones nobody can change meanwhile. A write killed after it leaves the database as it was (SQLite
rolls the transaction back) and a backup whose rows are those the database still holds.
:func:`put_back` (``ctxtool restore BACKUP``, :func:`ctxtool.storage.opencode_db.restore_backup`)
puts every row back as it was, every column, and removes the rows the write added, in one
transaction.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ctxtool.errors import InputError, StoreError
from ctxtool.storage import durable, sqlite_rows

if TYPE_CHECKING:  # sqlite3 where a database is opened (restore asks is_backup of every input)
    import sqlite3

KIND = "ctxtool-opencode-rows"
VERSION = 1
SUFFIX = ".ctxtool-backup"
TABLES = ("message", "part")  # parents first when putting back, children first when removing


def save(conn: sqlite3.Connection, db: Path, session_id: str,
         changes: Iterable[tuple[str, str, bool]]) -> Path:
    """Keep, beside ``db``, the rows ``changes`` (table, id, whether it exists) will replace, as
    ``conn``'s transaction sees them, and the ids of those it will add; the backup's path."""
    header = {"backup": KIND, "version": VERSION, "database": str(db.resolve()),
              "session": session_id,
              "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    lines = [orjson.dumps(header)]
    for table, ident, exists in changes:
        row = sqlite_rows.select(conn, table, "id = ?", (ident,)) if exists else [None]
        lines.append(orjson.dumps({"table": table, "id": ident, "row": row[0]}))
    target = _free_name(db)
    _write(db, target, b"\n".join(lines) + b"\n")
    return target


def _free_name(db: Path) -> Path:
    """``<name>.ctxtool-backup-<UTC time to the millisecond>.jsonl``, a millisecond later
    while taken: the names sort as the writes came, so undoing them newest first is
    ``ls -r``'s order."""
    ms = int(time.time() * 1000)
    while True:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"
        target = db.with_name(f"{db.name}{SUFFIX}-{stamp}.jsonl")
        if not target.exists():
            return target
        ms += 1


def _write(db: Path, target: Path, data: bytes) -> None:
    """``data`` under ``target``, on disk, with the database's owner, group and mode (root
    backing up a user's private database leaves a copy only they can read)."""
    partial = target.with_name(target.name + ".partial")
    try:
        with open(partial, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        st = os.stat(db)
        if (os.stat(partial).st_uid, os.stat(partial).st_gid) != (st.st_uid, st.st_gid):
            os.chown(partial, st.st_uid, st.st_gid)
        os.chmod(partial, st.st_mode & 0o7777)
        os.replace(partial, target)
        durable.fsync_folder(str(target.parent))
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise StoreError(f"cannot back the rows up: {exc.strerror or exc}", source=str(target),
                         hint="nothing was changed; free some space or check permissions") from exc


# --- reading it back ---------------------------------------------------------------------------

def is_backup(path: str) -> bool:
    """Whether ``path`` is a file :func:`save` wrote (told from its first line). Only a regular
    file is looked at: a pipe (``<(...)``, stdin) is read once, by the command."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return False
    return first.startswith(b'{"backup":"' + KIND.encode() + b'"')


@dataclass
class Restored:
    database: str
    session: str
    rows_put_back: int = 0
    rows_removed: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"database": self.database, "session": self.session,
                "rows_put_back": self.rows_put_back, "rows_removed": self.rows_removed}


def read(path: str) -> tuple[Path, Restored, list[dict[str, Any]]]:
    """The database a backup is for (the one named in it, or ``opencode.db`` beside the backup
    when that one is gone), an empty report, and its rows; InputError when it is no backup."""
    header, records = _read(path)
    db = Path(header["database"])
    if not db.is_file():
        db = Path(path).resolve().with_name(db.name)
    return db, Restored(str(db), str(header.get("session", ""))), records


def put_back(conn: sqlite3.Connection, records: list[dict[str, Any]], report: Restored,
             source: str) -> None:
    """The rows of a backup back in the database, in ``conn``'s transaction: the added ones
    removed (children first), the replaced ones as they were (parents first)."""
    for table in reversed(TABLES):
        for record in records:
            if record["table"] == table and record["row"] is None:
                report.rows_removed += sqlite_rows.delete(conn, table, record["id"])
    for table in TABLES:
        for record in records:
            if record["table"] == table and record["row"] is not None:
                sqlite_rows.put_back(conn, table, record["row"], source)
                report.rows_put_back += 1


def _read(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        lines = Path(path).read_bytes().splitlines()
    except OSError as exc:
        raise StoreError(f"cannot read the backup: {exc.strerror or exc}", source=path) from exc
    records = []
    for number, line in enumerate(lines, 1):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{number}: not JSON ({exc})", source=path) from exc
        if not isinstance(record, dict):
            raise InputError(f"{number}: not a JSON object", source=path)
        records.append(record)
    header = records[0] if records else {}
    if header.get("backup") != KIND or header.get("version") != VERSION \
            or not isinstance(header.get("database"), str):
        raise InputError("not a backup of OpenCode rows ctxtool knows", source=path)
    for number, record in enumerate(records[1:], 2):
        if record.get("table") not in TABLES or not isinstance(record.get("id"), str) \
                or not (record.get("row") is None or isinstance(record["row"], dict)):
            raise InputError(f"{number}: not a saved message or part row", source=path)
        if record["row"] is not None and record["row"].get("id") != record["id"]:
            raise InputError(f"{number}: the row's id is not {record['id']}", source=path)
    return header, records[1:]


__all__ = ["KIND", "Restored", "SUFFIX", "is_backup", "put_back", "read", "save"]
