"""Filesystem primitives that never follow a symlink below a root and never leave it: cleanup's
removals and walks, and the tool-result store's folders (:class:`Folder`).

Every path is given relative to a root folder. Removal descends from the root one component at a
time with ``O_NOFOLLOW`` directory handles and unlinks by name relative to the open parent (the
same technique as ``shutil.rmtree``'s fd-based walk), so a folder swapped for a symlink between the
scan and the removal makes that removal fail instead of reaching outside the root.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ctxtool.storage.atomic import sweep_stale

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
TEMP_PREFIX = ".ctxtool-"  # the store's temp files, as atomic.temp_file named them before
DIRECTORY = getattr(os, "O_DIRECTORY", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
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


# --- folders under a root, for the store -----------------------------------------------------------

@dataclass
class Folder:
    """A folder reached from a root without following any symlink below it: an open directory fd
    where the platform has fd-relative calls (so a component swapped for a link later changes
    nothing), else the checked path. ``at(name)`` is what to pass with ``dir_fd=self.fd``."""

    path: str
    fd: int | None
    unnamed: bool = True  # create_exclusive may try O_TMPFILE here (False: the fs refused it)

    def at(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_folder(root: str, parts: Sequence[str], *, create: bool = False) -> Folder:
    """``root/part/part...``: the root itself may be reached through links (the user chose it),
    each part is opened with ``O_NOFOLLOW`` relative to the one above, created 0700 when missing
    and ``create``. Raises OSError: ELOOP/ENOTDIR when a part is a symlink or not a folder,
    FileNotFoundError when one is missing."""
    path = root
    if not FD_SAFE:  # checked path operations: a race can still swap a folder for a link
        for name in parts:
            path = os.path.join(path, name)
            if create:
                _mkdir_quiet(path, None)
            mode = os.lstat(path).st_mode
            if not stat.S_ISDIR(mode):
                raise OSError(errno.ELOOP if stat.S_ISLNK(mode) else errno.ENOTDIR,
                              "a symlink" if stat.S_ISLNK(mode) else "not a folder", path)
        return Folder(path, None)
    fd = os.open(root, os.O_RDONLY | DIRECTORY)
    try:
        for name in parts:
            path = os.path.join(path, name)
            if create:
                _mkdir_quiet(name, fd)
            child = _open_child(name, fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return Folder(path, fd)


def _open_child(name: str, fd: int) -> int:
    try:
        return os.open(name, os.O_RDONLY | DIRECTORY | NOFOLLOW, dir_fd=fd)
    except NotADirectoryError:  # Linux says ENOTDIR, not ELOOP, for a link with O_DIRECTORY
        if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, "a symlink", name) from None
        raise


def _mkdir_quiet(name: str, dir_fd: int | None) -> None:
    try:
        os.mkdir(name, 0o700, dir_fd=dir_fd)
    except FileExistsError:
        pass


def open_regular(folder: Folder, name: str) -> int | None:
    """A read-only fd for the regular file ``name`` in ``folder``; None when it does not exist.
    Raises OSError: ELOOP for a symlink, EINVAL (here) for a FIFO, device or folder.
    ``O_NONBLOCK``: a FIFO is refused, not waited on (regular files ignore the flag)."""
    flags = os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(folder.at(name), flags, dir_fd=folder.fd)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(22, "not a regular file", os.path.join(folder.path, name))
    return fd


#: Temp files create_exclusive made and has not yet removed (the named-temp path only). Its
#: cleanup runs in a ``finally``, but a Ctrl-C landing right after the open or inside that
#: ``finally`` skips it; the CLI calls :func:`remove_pending` on its way out after an interrupt.
_PENDING: set[str] = set()
UNNAMED = getattr(os, "O_TMPFILE", 0)  # Linux: a file with no name until it is linked
_PROC_FD = "/proc/self/fd"  # how an unnamed file is linked without CAP_DAC_READ_SEARCH
# errors of an O_TMPFILE open that mean "not here" (old kernel: EISDIR, as O_TMPFILE carries
# O_DIRECTORY; a filesystem without it: EOPNOTSUPP), not "cannot write here"
_NO_UNNAMED = frozenset({errno.EISDIR, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL})


def remove_pending() -> None:
    """Remove the temp files an interrupted :func:`create_exclusive` left (none is referenced:
    each becomes a store file only by a link to its final name)."""
    while _PENDING:
        try:
            os.unlink(_PENDING.pop())
        except OSError:
            pass


def create_exclusive(folder: Folder, name: str, data: bytes) -> bool:
    """Write ``data`` to a new file ``name`` in ``folder`` atomically, 0600; False when ``name``
    exists. Not fsynced: a durable caller defers that to one batch (storage/durable.py).

    Where the folder is held open and the system has ``O_TMPFILE`` (Linux, most filesystems),
    the file is written with no name and linked to ``name`` once complete: one directory entry
    made per file, and nothing to clean up when a run is killed or interrupted mid-write (the
    kernel frees a file nobody named). Elsewhere (or when the filesystem refuses ``O_TMPFILE``,
    remembered per folder) a named temp file does it, see :func:`_create_named`."""
    if UNNAMED and folder.fd is not None and folder.unnamed and _proc_fd():
        created = _create_unnamed(folder, name, data)
        if created is not None:
            return created
        folder.unnamed = False
    return _create_named(folder, name, data)


def _create_unnamed(folder: Folder, name: str, data: bytes) -> bool | None:
    """create_exclusive with ``O_TMPFILE``; None when the filesystem has no such files."""
    try:
        fd = os.open(".", os.O_WRONLY | UNNAMED | CLOEXEC, 0o600, dir_fd=folder.fd)
    except OSError as exc:
        if exc.errno in _NO_UNNAMED:
            return None
        raise  # ENOENT: the folder was removed (the store opens it again), EACCES, ENOSPC...
    try:
        _write_all(fd, data)
        # the umask may have taken bits off 0600; an fstat costs less than an fchmod, and the
        # umask cannot be read once for all (a program may change it between two saves)
        if os.fstat(fd).st_mode & 0o777 != 0o600:
            os.fchmod(fd, 0o600)
        try:
            os.link(f"{_PROC_FD}/{fd}", name, dst_dir_fd=folder.fd, follow_symlinks=True)
        except FileExistsError:
            return False
    finally:
        os.close(fd)  # unlinked, the file is gone with its last descriptor
    return True


_PROC_FD_THERE: list[bool] = []


def _proc_fd() -> bool:
    """Whether /proc/self/fd is there (a container may lack /proc), looked at once."""
    if not _PROC_FD_THERE:
        _PROC_FD_THERE.append(os.path.isdir(_PROC_FD))
    return _PROC_FD_THERE[0]


def _create_named(folder: Folder, name: str, data: bytes) -> bool:
    """create_exclusive with a temp file (``.ctxtool-XXXXXXXX.tmp``, the pattern
    :func:`ctxtool.storage.atomic.sweep_stale` removes when a killed run left one over an hour
    ago) hard-linked to its name, then removed."""
    sweep_stale(folder.path, prefix=TEMP_PREFIX)
    tmp = f"{TEMP_PREFIX}{secrets.token_hex(4)}.tmp"
    pending = os.path.join(folder.path, tmp)
    _PENDING.add(pending)  # before the open: an interrupt after it still finds the file
    try:
        try:
            fd = os.open(folder.at(tmp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW
                         | CLOEXEC, 0o600, dir_fd=folder.fd)
        except OSError:
            _PENDING.discard(pending)  # not created: no file of ours to remove
            raise
        try:  # os.write, not a file object: no buffer, no isatty/lseek/fstat per file
            _write_all(fd, data)
            os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
        return _link_or_rename(folder, tmp, name)
    finally:
        if pending in _PENDING:
            try:
                os.unlink(folder.at(tmp), dir_fd=folder.fd)
            except OSError:
                pass
            _PENDING.discard(pending)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _link_or_rename(folder: Folder, tmp: str, name: str) -> bool:
    try:
        os.link(folder.at(tmp), folder.at(name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
    except FileExistsError:
        return False
    except OSError as exc:
        # Filesystems without hard links: check, then rename (a race can still lose here).
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV,
                             errno.EMLINK):
            raise
        try:
            os.stat(folder.at(name), dir_fd=folder.fd, follow_symlinks=False)
            return False
        except FileNotFoundError:
            os.replace(folder.at(tmp), folder.at(name), src_dir_fd=folder.fd,
                       dst_dir_fd=folder.fd)
    return True


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
