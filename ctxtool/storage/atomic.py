"""Atomic file writes: a temp file in the same folder, fsync, then rename over the target."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import stat
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from ctxtool.errors import StoreError
from ctxtool.storage import durable

if TYPE_CHECKING:  # pathlib where used: with urllib.parse and ipaddress, ~3 ms of start-up
    from pathlib import Path


STALE_AFTER = 3600.0  # seconds: a temp file this old belongs to no running command
MARK = "ctxtool-"  # in the name of every temp file temp_file makes (.NAME.ctxtool-XXXXXXXX.tmp)
# any target's temp file, or a store's (.ctxtool-XXXXXXXX.tmp): what a sweep of a folder takes
_MARKED = r"\.(?:.+\.)?" + MARK + r"[a-z0-9_]{8}\.tmp"
_swept: set[tuple[str, str]] = set()  # (folder, name pattern) already looked at
# Ctrl-C and the signals that end a command like it (cli/__init__.py), held back while a temp
# file is created
_HELD = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


def sweep_stale(folder: str | os.PathLike[str], *, prefix: str, suffix: str = ".tmp") -> int:
    """Remove the temp files a killed run left in ``folder``: regular files named exactly as
    :func:`temp_file` names them with this prefix and suffix (``tempfile`` adds 8 characters),
    or as it named them before they carried :data:`MARK` (then only this prefix's: such a name
    may be another program's), last modified over an hour ago. Once per folder and name pattern
    per process; returns how many went. Nothing else is touched."""
    unmarked = re.escape(prefix) + r"[a-z0-9_]{8}" + re.escape(suffix)
    return _sweep(folder, f"{unmarked}|{_MARKED}")  # one look at the folder, as before


def sweep_beside(path: str | os.PathLike[str]) -> int:
    """:func:`sweep_stale` for the temp files of ``path`` (cleanup, once it removed ``path``)."""
    folder, name = os.path.split(os.fspath(path))
    return sweep_stale(folder or ".", prefix=f".{name}.")


def _sweep(folder: str | os.PathLike[str], name: str) -> int:
    key = (os.path.abspath(folder), name)
    if key in _swept:
        return 0
    _swept.add(key)
    pattern = re.compile(name)
    removed = 0
    try:
        with os.scandir(folder) as entries:
            stale = [entry for entry in entries if pattern.fullmatch(entry.name)]
    except OSError:
        return 0
    for entry in stale:
        with contextlib.suppress(OSError):
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode) and time.time() - st.st_mtime > STALE_AFTER:
                os.unlink(entry.path)
                removed += 1
    return removed


@contextlib.contextmanager
def temp_file(folder: str | os.PathLike[str], *, prefix: str,
              suffix: str = ".tmp") -> Iterator[tuple[int, str]]:
    """``tempfile.mkstemp`` in ``folder`` (0600), named ``PREFIX`` + :data:`MARK` + 8 characters
    + ``SUFFIX``: ``(fd, path)``, the file removed when the block ends - a block that keeps it
    renames or links it away first. Ctrl-C (and SIGTERM, SIGHUP) is held back while the file is
    created, so one that comes right then is raised inside the block, where the cleanup already
    stands (raised between mkstemp and a ``try``, it would leave the file behind). Stale temp
    files that a killed run left there go first (sweep_stale)."""
    import tempfile  # here, not at the top: it costs 7 ms of every command's start-up

    sweep_stale(folder, prefix=prefix, suffix=suffix)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD) \
        if hasattr(signal, "pthread_sigmask") else None
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix + MARK, suffix=suffix, dir=folder)
    except BaseException:
        _release(held)
        raise
    try:
        _release(held)
        yield fd, tmp
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _release(held: set[int | signal.Signals] | None) -> None:
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None,
                  background: bool = True) -> Iterator[BinaryIO]:
    """Open a temp file beside ``path``; on success it replaces ``path``, on any error it is removed.

    ``mode`` sets the new file's permissions (for example 0o600); by default an existing file's
    mode is kept and a new file gets the usual umask-based mode. ``background``: while the block
    writes, the disk write-back of the file (and of the store files it will point at) is started
    by a thread every :data:`ctxtool.storage.durable.TICK` seconds, so the fsync at the end waits
    for the last part only (False for a small file written at once).
    """
    from pathlib import Path  # see the imports

    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    with contextlib.ExitStack() as stack:
        try:
            fd, tmp = stack.enter_context(temp_file(folder, prefix=f".{target.name}."))
        except OSError as exc:
            raise StoreError(f"cannot write {target}: {exc.strerror or exc}") from exc
        with os.fdopen(fd, "wb") as handle:
            with durable.watching(fd) if background else contextlib.nullcontext():
                yield handle
                handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else _mode_for(target))
        durable.flush()  # the store files it may point at: on disk before it replaces anything
        os.replace(tmp, target)
        durable.crash_point("after-replace")


@contextlib.contextmanager
def named_output(path: str | os.PathLike[str], *, mode: int | None = None,
                 background: bool = True) -> Iterator[BinaryIO]:
    """The writer of a file the user named (-o, --report, --timeline): what the name points at
    gets the bytes, never a regular file in its place. A device, FIFO or terminal is written
    into (a rename over /dev/full, done as root, would put a regular file there for every
    program on the machine); through a symlink, the file it names is replaced atomically and
    the link stays; a regular file (or a new name) is replaced atomically (:func:`atomic_writer`
    with ``mode`` and ``background``)."""
    real = os.path.realpath(path)
    try:
        kind = os.stat(real).st_mode
    except (OSError, ValueError):
        kind = None
    if kind is not None and not (stat.S_ISREG(kind) or stat.S_ISDIR(kind)):
        with open(real, "wb") as handle:
            yield handle
        return
    with atomic_writer(real, mode=mode, background=background) as handle:
        yield handle


def write_named(path: str | os.PathLike[str], data: bytes) -> None:
    """``data`` into a file the user named (see :func:`named_output`); StoreError if it fails."""
    try:
        with named_output(path, background=False) as handle:
            handle.write(data)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    try:
        with atomic_writer(path, mode=mode, background=False) as handle:
            handle.write(data)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from exc
