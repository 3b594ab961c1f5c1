"""What tells ``cleanup --store`` a folder is a store ctxtool made, and which of its folders
ctxtool wrote.

A store is recognised by this file alone, never by its name: a folder cleanup mistook for one
(a copy of this package in ``ctxtool-src``, a notes folder in ``$CTXTOOL_STORE``) would lose
everything in it. ctxtool writes the mark when it creates a store, or starts using an empty
folder as one; a folder that already held other things when first used stays unmarked, and
cleanup leaves it alone. Inside a marked store, a session folder is swept only when it holds
nothing but what ctxtool writes there (:func:`is_ours`): others may put things in it later.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

MARKER = ".ctxtool-store"
MARKER_TEXT = (b"This folder is a ctxtool store: tool results and transcripts ctxtool saved.\n"
               b"`ctxtool cleanup --store` only cleans folders that hold this file.\n")


# What ctxtool writes in a store (storage/store.py), by name: <session>/<kind>/<file>. A sweep
# removes a session folder only when everything in it has these names (see is_ours).
_NAME = r"[A-Za-z0-9_-]{1,128}"  # paths.safe_name
_TEMP = r"\.ctxtool-[A-Za-z0-9_]{8}\.tmp"  # a killed run's temp file (safe_fs, atomic)
KINDS = {  # folder -> the names ctxtool gives its files there
    "tool-results": re.compile(rf"{_NAME}(-[0-9a-f]{{12}})?\.(txt|json)|{_TEMP}"),
    "ctxtool-lines": re.compile(rf"[0-9a-f]{{40}}\.jsonl|{_TEMP}"),
    "transcripts": re.compile(rf"{_NAME}(-[0-9a-f]{{12}})?\.jsonl|{_TEMP}"),
    # vacuum: what it took out (by SHA-256) and the recipes restore rebuilds originals from
    "ctxtool-vacuum": re.compile(rf"[0-9a-f]{{64}}\.bin|recipe-[0-9a-f]{{64}}\.json|{_TEMP}"),
}
SESSION_NAME = re.compile(_NAME)


def is_ours(session: str) -> bool:
    """Whether the folder ``session`` of a store holds only what ctxtool writes there: folders
    of :data:`KINDS` holding regular files with ctxtool's names, nothing else, no symlink. A
    folder someone else made (``photos/``), or one they put a file of their own into, is not."""
    if not SESSION_NAME.fullmatch(os.path.basename(session)):
        return False
    try:
        with os.scandir(session) as kinds:
            for kind in kinds:
                names = KINDS.get(kind.name)
                if names is None or not kind.is_dir(follow_symlinks=False):
                    return False
                with os.scandir(kind.path) as files:
                    if not all(names.fullmatch(f.name) and f.is_file(follow_symlinks=False)
                               for f in files):
                        return False
    except OSError:
        return False
    return True


def is_marked(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds ctxtool's mark (a regular file, not a symlink)."""
    try:
        return stat.S_ISREG(os.lstat(os.path.join(folder, MARKER)).st_mode)
    except OSError:
        return False


def is_unclaimed(folder: Path) -> bool:
    """A folder ctxtool may claim as its store: missing, or an empty folder."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except FileNotFoundError:
        return True
    except OSError:
        return False


def mark(folder: Path) -> None:
    """Write the mark into ``folder`` (which exists); an existing mark is left as it is."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder / MARKER, flags, 0o600)
    except FileExistsError:
        return
    with contextlib.closing(os.fdopen(fd, "wb")) as handle:
        handle.write(MARKER_TEXT)
