"""The mark that tells ``cleanup --store`` a folder is a store ctxtool made.

A store is recognised by this file alone, never by its name or by what it holds: cleanup treats
every folder in a store as a session's saved results, so a folder it mistook for one (a copy of
this package in ``ctxtool-src``, a notes folder in ``$CTXTOOL_STORE``) would lose everything in it.
ctxtool writes the mark when it creates a store, or starts using an empty folder as one; a
folder that already held other things when first used stays unmarked, and cleanup leaves it alone.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

MARKER = ".ctxtool-store"
MARKER_TEXT = (b"This folder is a ctxtool store: tool results and transcripts ctxtool saved.\n"
               b"`ctxtool cleanup --store` only cleans folders that hold this file.\n")


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
