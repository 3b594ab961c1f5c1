"""Whether a path is OpenCode's database (``opencode.db``, or a folder holding it), told from the
file's first bytes without opening it as a database.

Every command asks this about each input (io/database.py), so it lives apart from
:mod:`ctxtool.storage.opencode_db`, whose sqlite3 and OpenCode modules are imported only when an
input is a database.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ctxtool.errors import InputError

if TYPE_CHECKING:  # pathlib where used: with urllib.parse and ipaddress, ~3 ms of start-up
    from pathlib import Path

DB_NAME = "opencode.db"
SQLITE_MAGIC = b"SQLite format 3\x00"


def is_database(path: str | os.PathLike[str]) -> bool:
    """True for a regular file that starts with SQLite's header."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def find_database(path: str | os.PathLike[str]) -> Path | None:
    """The database for a path: the file itself, or ``opencode.db`` in OpenCode's data folder
    (``~/.local/share/opencode``) or its parent; None when there is none."""
    folder = os.path.isdir(path)
    if not folder and not (os.path.isfile(path) and is_database(path)):
        return None  # a transcript, as every input of every command is asked (no pathlib)
    from pathlib import Path  # see the imports

    given = Path(path)
    if not folder:
        return given
    for candidate in (given / DB_NAME, given / "opencode" / DB_NAME):
        if is_database(candidate):
            return candidate
    return None


def looks_like_database(path: str) -> bool:
    """A path the user meant as a database (``*.db``) although it is no SQLite file."""
    return path.endswith(".db") and os.path.isfile(path) and not is_database(path)


def not_sqlite(path: str) -> InputError:
    return InputError("not an SQLite database (an OpenCode database starts with "
                      "'SQLite format 3')", source=path,
                      hint="give ~/.local/share/opencode/opencode.db or the folder holding it")


__all__ = ["DB_NAME", "SQLITE_MAGIC", "find_database", "is_database", "looks_like_database",
           "not_sqlite"]
