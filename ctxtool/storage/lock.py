"""An exclusive, non-blocking lock file, so two cleanups never sweep the same folder at once.

The lock is an OS advisory lock (``flock``, or ``msvcrt.locking`` on Windows) on a file inside the
folder. The OS drops it when the process ends, however it ends, so a crashed run never leaves a
stale lock behind. A run that ends normally removes the file while it still holds the lock; a run
that took the lock on a file removed meanwhile (it opened the file just before that) sees the
path no longer names its file and starts over, so two runs never hold two different files.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from ctxtool.errors import OperationError, StoreError
from ctxtool.storage.safe_fs import NOFOLLOW, describe

LOCK_NAME = ".ctxtool-cleanup.lock"


def try_lock(fd: int) -> bool:
    # sys.platform rather than try/except ImportError: type checkers follow a platform check
    if sys.platform == "win32":  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _holder(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        os.lseek(fd, 0, os.SEEK_SET)
        pid = int(os.read(fd, 32).decode().strip() or "0")
        if pid:
            return f" (pid {pid})"
    return ""


@contextlib.contextmanager
def folder_lock(folder: str) -> Iterator[str]:
    """Hold ``folder/.ctxtool-cleanup.lock`` for the duration; OperationError (exit 1) when
    another process holds it. Yields the lock file's path."""
    path = os.path.join(folder, LOCK_NAME)
    fd = _locked_fd(path)
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())  # only informational: who holds it
        yield path
        with contextlib.suppress(OSError):
            os.unlink(path)  # still ours: held locks keep anyone else from taking it meanwhile
    finally:
        os.close(fd)


def _locked_fd(path: str) -> int:
    """An fd of ``path`` holding its lock, the file still at ``path`` once locked."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot create lock file: {describe(exc)}", source=path) from exc
        if not try_lock(fd):
            holder = _holder(fd)
            os.close(fd)
            raise OperationError(f"another cleanup is running{holder}", source=path,
                                 hint="wait for it to finish; the lock goes away with its process")
        if _same_file(fd, path):
            return fd
        os.close(fd)  # the previous holder removed it after we opened it: take the new one


def _same_file(fd: int, path: str) -> bool:
    try:
        at_path = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (at_path.st_dev, at_path.st_ino)
