"""Filesystem primitives for cleanup that never follow a symlink and never leave their root.

Every path is given relative to a root folder. Removal descends from the root one component at a
time with ``O_NOFOLLOW`` directory handles and unlinks by name relative to the open parent (the
same technique as ``shutil.rmtree``'s fd-based walk), so a folder swapped for a symlink between the
scan and the removal makes that removal fail instead of reaching outside the root.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# fd-relative calls exist on Linux and macOS; elsewhere fall back to checked path operations
FD_SAFE = (os.scandir in os.supports_fd and os.unlink in os.supports_dir_fd
           and os.rmdir in os.supports_dir_fd and os.open in os.supports_dir_fd)


@dataclass(frozen=True)
class Stat:
    """What a file looked like when it was scanned or archived: removal skips it if it changed."""

    size: int
    mtime_ns: int
    is_dir: bool = False


@dataclass
class Removal:
    """Outcome of removing one path: bytes freed, paths left in place on purpose, errors."""

    bytes: int = 0
    kept: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)


def describe(exc: OSError) -> str:
    return exc.strerror or str(exc)


def open_nofollow(base: str, rel: str) -> int:
    """A read-only fd for the regular file ``base/rel``, refusing symlinks at every level."""
    parts = rel.split("/")
    dfd = _open_dir(base, parts[:-1])
    try:
        return os.open(parts[-1], os.O_RDONLY | NOFOLLOW, dir_fd=dfd) if FD_SAFE else \
            os.open(os.path.join(base, rel), os.O_RDONLY | NOFOLLOW)
    finally:
        if dfd >= 0:
            os.close(dfd)


def _open_dir(base: str, parts: list[str]) -> int:
    if not FD_SAFE:
        return -1
    fd = os.open(base, os.O_RDONLY | DIRECTORY)
    for name in parts:
        try:
            child = os.open(name, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def remove(base: str, rel: str, *, skip: frozenset[str] = frozenset(),
           expected: dict[str, Stat] | None = None) -> Removal:
    """Remove ``base/rel`` (a file, a symlink itself, or a whole folder) without following links.

    ``skip`` lists paths (relative to ``base``) to leave in place, with the folders above them.
    ``expected``, when given, is the manifest of an archive just written: only entries in it that
    still look the same are removed, so nothing that changed after archiving is lost.
    A path that is already gone counts as removed. Errors are collected, never raised.
    """
    result = Removal()
    parts = rel.split("/")
    try:
        dfd = _open_dir(base, parts[:-1])
    except FileNotFoundError:
        return result
    except OSError as exc:
        result.errors.append((rel, describe(exc)))
        return result
    try:
        _remove_entry(base, dfd, parts[-1], rel, skip, expected, result)
    finally:
        if dfd >= 0:
            os.close(dfd)
    return result


def _lstat(base: str, dfd: int, name: str, rel: str) -> os.stat_result:
    if dfd >= 0:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    return os.lstat(os.path.join(base, rel))


def _remove_entry(base: str, dfd: int, name: str, rel: str, skip: frozenset[str],
                  expected: dict[str, Stat] | None, result: Removal) -> bool:
    """Remove one entry; True when it is gone afterwards."""
    if rel in skip:
        result.kept.append(rel)
        return False
    try:
        st = _lstat(base, dfd, name, rel)
        if stat.S_ISDIR(st.st_mode):
            return _remove_dir(base, dfd, name, rel, skip, expected, result)
        if expected is not None and not _unchanged(expected.get(rel), st):
            result.errors.append((rel, "changed after it was archived; left in place"))
            return False
        if dfd >= 0:
            os.unlink(name, dir_fd=dfd)
        else:
            os.unlink(os.path.join(base, rel))
        result.bytes += st.st_size
        return True
    except FileNotFoundError:
        return True
    except OSError as exc:
        result.errors.append((rel, describe(exc)))
        return False


def _remove_dir(base: str, dfd: int, name: str, rel: str, skip: frozenset[str],
                expected: dict[str, Stat] | None, result: Removal) -> bool:
    if expected is not None and rel not in expected:
        result.errors.append((rel, "appeared after it was archived; left in place"))
        return False
    if dfd >= 0:
        sub = os.open(name, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=dfd)
        try:
            names = [entry.name for entry in os.scandir(sub)]
            gone = [_remove_entry(base, sub, child, f"{rel}/{child}", skip, expected, result)
                    for child in sorted(names)]
        finally:
            os.close(sub)
    else:
        path = os.path.join(base, rel)
        if os.path.islink(path):  # swapped for a link since the lstat above
            raise OSError(40, "is a symbolic link now", path)
        gone = [_remove_entry(base, -1, child, f"{rel}/{child}", skip, expected, result)
                for child in sorted(os.listdir(path))]
    if not all(gone):
        return False  # something inside stays (skipped, changed or failed): keep the folder
    if dfd >= 0:
        os.rmdir(name, dir_fd=dfd)
    else:
        os.rmdir(os.path.join(base, rel))
    return True


def _unchanged(before: Stat | None, now: os.stat_result) -> bool:
    return before is not None and before.size == now.st_size and before.mtime_ns == now.st_mtime_ns


def walk(base: str, rel: str) -> Iterator[tuple[str, os.stat_result]]:
    """``(rel path, lstat)`` of ``base/rel`` and, for a real folder, everything below it, parents
    first. Symlinks are reported, never entered. Unreadable folders raise OSError."""
    path = os.path.join(base, rel)
    st = os.lstat(path)
    yield rel, st
    if not stat.S_ISDIR(st.st_mode):
        return
    with os.scandir(path) as entries:
        children = sorted(entry.name for entry in entries)
    for child in children:
        yield from walk(base, f"{rel}/{child}")
