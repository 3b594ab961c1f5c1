"""Which other processes have a file open: what tells a database OpenCode holds (its process keeps
``opencode.db``, ``-wal`` and ``-shm`` open for as long as it runs, idle or not) from one nobody
uses. SQLite's locks only show a process in the middle of a transaction.

Linux: every ``/proc/<pid>/fd/<n>`` link naming one of the files. Processes whose folders cannot
be read (another user's, without root) are not seen; where there is no ``/proc`` (macOS) nothing
is - callers say so in their documentation and still rely on SQLite's locks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

PROC = "/proc"


class Holder(NamedTuple):
    pid: int
    command: str  # its name (``/proc/<pid>/comm``), for the message
    path: str


def holders(paths: Iterable[str | os.PathLike[str]]) -> list[Holder]:
    """The processes other than this one with one of ``paths`` open."""
    wanted = {os.path.realpath(p) for p in paths}
    found: list[Holder] = []
    try:
        pids = [int(name) for name in os.listdir(PROC) if name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        if pid == os.getpid():
            continue
        fd_dir = f"{PROC}/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:  # gone, or another user's
            continue
        for fd in fds:
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if target in wanted:
                found.append(Holder(pid, _command(pid), target))
                break
    return found


def _command(pid: int) -> str:
    try:
        with open(f"{PROC}/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return "?"


__all__ = ["Holder", "holders"]
