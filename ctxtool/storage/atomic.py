"""Atomic file writes: a temp file in the same folder, fsync, then rename over the target."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ctxtool.errors import StoreError


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[BinaryIO]:
    """Open a temp file beside ``path``; on success it replaces ``path``, on any error it is removed.

    ``mode`` sets the new file's permissions (for example 0o600); by default an existing file's
    mode is kept and a new file gets the usual umask-based mode.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise StoreError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else _mode_for(target))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None) -> None:
    try:
        with atomic_writer(path, mode=mode) as handle:
            handle.write(data)
    except OSError as exc:
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from exc
