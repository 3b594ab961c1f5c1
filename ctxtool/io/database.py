"""OpenCode's database as an input of any command, and as the target of ``--in-place``.

A path that is an OpenCode database (or OpenCode's data folder holding ``opencode.db``) reads as
the JSONL of one session (``--session ID``, else the most recently updated one), exactly what
``ctxtool convert`` prints for it. The session read is kept for the rest of the command, so a
command that reads its input twice sees one snapshot, and ``--in-place`` writes back only what the
command changed, refusing rows OpenCode changed in between (:mod:`ctxtool.storage.opencode_db`).
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from ctxtool.errors import StoreError
from ctxtool.formats.jsonl import iter_entries, write_entries
from ctxtool.io import messages
from ctxtool.storage import durable
# every command asks whether its inputs are databases: that needs a file's first bytes, not
# sqlite3 and OpenCode's modules (storage/opencode_db.py), imported when one is
from ctxtool.storage.opencode_db_file import find_database, looks_like_database, not_sqlite

if TYPE_CHECKING:
    from pathlib import Path

_session: str | None = None
_in_place = False
_read: dict[str, tuple[Path, list[dict[str, Any]], bytes]] = {}  # input path -> what was read


def set_session(session_id: str | None, *, in_place: bool = False) -> None:
    """The session ``--session`` picks in a database (None: the most recently updated), and
    whether the command was asked to write its inputs back (only then is a database written)."""
    global _session, _in_place
    _session, _in_place = session_id, in_place
    _read.clear()


def input_bytes(path: str) -> bytes | None:
    """The JSONL of the chosen session when ``path`` is an OpenCode database or data folder,
    else None. A ``*.db`` file that is not SQLite is an error, not a transcript."""
    if path in _read:
        return _read[path][2]
    db = find_database(path)
    if db is None:
        if looks_like_database(path):
            raise not_sqlite(path)
        return None
    from ctxtool.storage import opencode_db  # see the imports

    entries = opencode_db.read_session(db, _session)
    buffer = io.BytesIO()
    write_entries(entries, buffer)
    _read[path] = (db, entries, buffer.getvalue())
    return _read[path][2]


def is_database(path: str) -> bool:
    """Whether ``path`` is (or holds) an OpenCode database."""
    return path in _read or find_database(path) is not None


def output_writer(path: str) -> contextlib.AbstractContextManager[BinaryIO] | None:
    """A writer that puts the JSONL written to it back into the database ``path`` was read
    from (``--in-place``), or None when ``path`` is no database."""
    if path in _read and _in_place:
        db, entries, _ = _read[path]
        return _write_back(path, db, entries)
    if find_database(path) is not None:
        raise StoreError("is an OpenCode database: ctxtool writes into it only with --in-place",
                         source=path, hint="write the JSONL elsewhere with -o FILE")
    return None


@contextlib.contextmanager
def _write_back(path: str, db: Path, expected: list[dict[str, Any]]) -> Iterator[BinaryIO]:
    buffer = io.BytesIO()
    with _write_back_started(db):
        yield buffer
    entries = iter_entries(buffer.getvalue().splitlines(keepends=True), path)
    durable.flush()  # the store files the rows point at first (storage/durable.py)
    from ctxtool.storage import opencode_db  # see the imports

    result = opencode_db.write_session(db, entries, expected=expected, source=path)
    durable.crash_point("after-replace")
    if not result.updated and not result.inserted:
        messages.info(f"{db}: session {result.session_id}: nothing changed")
        return
    messages.info(f"{db}: session {result.session_id}: {len(result.updated)} rows updated, "
                  f"{len(result.inserted)} added; backup {result.backup}")


@contextlib.contextmanager
def _write_back_started(db: Path) -> Iterator[None]:
    """While the command runs, the disk write-back of the store files the rows will point at
    starts in the background, as for -o (storage/durable.py; once the store wrote a large
    batch): the flush before the rows go in waits for the last part only. The rows are written
    at the end, by SQLite, so the output watched is the database file itself, unchanged until
    then (its fdatasync finds nothing to write)."""
    try:
        fd = os.open(db, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        yield  # write_session reports what is wrong with the file
        return
    try:
        with durable.watching(fd):
            yield
    finally:
        os.close(fd)


__all__ = ["input_bytes", "is_database", "output_writer", "set_session"]
