"""A small cache for ``ctxtool sessions``, so a listing reads again only what changed.

Counting compact boundaries is the one part of a listing whose cost grows with the transcripts
(a byte search over every file: about a second per 2 GB). Transcripts only grow, so for each
file the count up to its last complete line is kept with the file's identity (device, inode,
size, modification time): an unchanged file is not read again at all (its row is kept too), a
grown one is searched only from where the last search stopped, anything else (rewritten,
replaced, shrunk) from the start. The cache is an optimisation only: it lives in
``$CTXTOOL_CACHE_DIR`` (else ``$XDG_CACHE_HOME/ctxtool``, else ``~/.cache/ctxtool``),
``CTXTOOL_CACHE_DIR=off`` turns it off, and a cache that cannot be read or written is ignored.
OpenCode's sessions, read from its database, keep their rows under ``<db>#<id>``, with the update
times of the session and of its rows in place of a file's identity.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ctxtool.storage.atomic import write_bytes_atomic
from ctxtool.storage.cache_dir import cache_dir

CACHE_FILE = "sessions.json"


def cache_path(env: Mapping[str, str]) -> Path | None:
    """Where the cache lives, or None when turned off."""
    folder = cache_dir(env)
    return Path(folder) / CACHE_FILE if folder is not None else None


class Resume(NamedTuple):
    """Where to search from, and what was found before that offset."""

    offset: int
    found: int


def _identity(stat: os.stat_result) -> list[int]:
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns]


class ScanCache:
    """Per file path: its identity, a search's resume point, and its listing row.

    ``version`` names what produced the rows (a new ctxtool drops them all)."""

    def __init__(self, path: Path | None, version: str) -> None:
        self.path = path
        self.version = version
        self.files: dict[str, dict[str, Any]] = {}
        self.changed = False
        if path is None:
            return
        try:
            data = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        if isinstance(data, dict) and data.get("version") == version \
                and isinstance(data.get("files"), dict):
            self.files = data["files"]

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def row(self, path: str, stat: os.stat_result) -> dict[str, Any] | None:
        """The row kept for this file if it has not changed since."""
        return self.kept_row(path, _identity(stat))

    def kept_row(self, key: str, stamp: list[Any]) -> dict[str, Any] | None:
        """The row kept under ``key`` if it was recorded with the same ``stamp`` (what changes
        whenever the session does: a file's identity, a database session's update times)."""
        record = self.files.get(key)
        if isinstance(record, dict) and record.get("id") == stamp:
            row = record.get("row")
            return row if isinstance(row, dict) else None
        return None

    def keep_row(self, key: str, stamp: list[Any], row: dict[str, Any]) -> None:
        """A session's row that is not a file's search (OpenCode's database)."""
        entry = {"id": stamp, "row": row}
        if self.files.get(key) != entry:
            self.files[key] = entry
            self.changed = True

    def resume(self, path: str, stat: os.stat_result, key: str) -> Resume:
        """The offset and count to go on from for this file (``key``: what is searched)."""
        record = self.files.get(path)
        if not isinstance(record, dict) or not isinstance(record.get("id"), list) \
                or record.get("key") != key or len(record["id"]) != 4:
            return Resume(0, 0)
        dev, ino, size, mtime = record["id"]
        offset, count = record.get("offset", 0), record.get("count", 0)
        if [dev, ino] != [stat.st_dev, stat.st_ino] \
                or not isinstance(offset, int) or not isinstance(count, int):
            return Resume(0, 0)
        unchanged = (size, mtime) == (stat.st_size, stat.st_mtime_ns)
        grown = stat.st_size > size >= offset  # appended to: what was searched is still there
        return Resume(offset, count) if unchanged or grown else Resume(0, 0)

    def record(self, path: str, stat: os.stat_result, *, key: str, offset: int, count: int,
               row: dict[str, Any] | None = None) -> None:
        """``count`` hits of ``key`` before ``offset`` (the end of the last complete line),
        and the file's row."""
        entry = {"id": _identity(stat), "key": key, "offset": offset, "count": count,
                 "row": row}
        if self.files.get(path) != entry:
            self.files[path] = entry
            self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, orjson.dumps({"version": self.version,
                                                       "files": self.files}))
        except OSError:
            pass  # an optimisation only
