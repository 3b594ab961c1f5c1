"""Store files made durable in one batch, right before a transcript that points at them
replaces anything.

The guarantee (DESIGN: nothing lost): every file the store saved is on disk before the
transcript that references it - an -o file, an --in-place rewrite, an OpenCode database -
takes the place of the one that held the content. ``fsync`` after each file kept it at a price:
3,431 files, 3,431 journal commits, 1.84 s of a 7.1 s ``snip -o``. Nothing reads the files
before the output is replaced, so they only have to be on disk by then: the store records what
it wrote (:func:`defer`) and every replacement calls :func:`flush` first
(:func:`ctxtool.storage.atomic.atomic_writer`, the --in-place writer in io/live.py, the
database writer in io/database.py). A crash before that point leaves the old transcript, which
does not point at the new files: at worst files nobody references, as a crash mid-run always
could.

What is guaranteed, and by whom:

- POSIX ``fsync(fd)``: the file's data and the metadata needed to read it are on the storage
  device when it returns. It says nothing about the directory entry that names the file: that
  needs an ``fsync`` of the folder (which POSIX leaves to the implementation; Linux, the BSDs
  and macOS do it). Creating a file, ``link`` and ``rename`` are atomic to other processes, not
  durable. So after a batch of new files the order is: the files' data, the folders' entries
  (new folders included: their entries are in the folder above), then the output's own data
  (its writer fsyncs it) and only then its ``rename``.
- Linux ``syncfs(fd)`` writes back and waits for every dirty page and inode of the filesystem
  holding ``fd`` - the files' data and all the folders' entries at once, one journal commit
  instead of one per file - and reports writeback errors since Linux 5.8. It is not POSIX
  (POSIX ``sync`` need not even wait), and it also flushes what other processes wrote to that
  filesystem, so it is used only for a large batch (:data:`FEW` files or more): a few files
  are fsynced one by one, with their folders.

Paid in the background: the disk write-back of what a durable run writes (the output's data,
65 MB of store files on issue 19's store-heavy input) is wall time, and a final ``fsync`` and
``syncfs`` that start it only at the end make the run wait for all of it. While an output is
being written (:func:`watch`, from :func:`ctxtool.storage.atomic.atomic_writer`) a daemon thread
starts it every :data:`TICK` seconds: ``syncfs`` once the store has written a large batch,
``fdatasync`` of the output otherwise; both release the GIL, so the run goes on meanwhile, and
the kernel's flusher does the writing. That thread only gets ahead: :func:`flush` stops it and
does everything above as before, so the guarantee does not depend on it. What it could take
away is an error report: a write-back error reaches the one caller that asks first (``fsync``
reports it once per open file, ``syncfs`` once per file it is called through), so the thread
keeps the first error it sees and :func:`flush` raises it; and the store's folders are opened
for ``syncfs`` when the first file is written there (:func:`defer`), not at the end, so an error
the thread's write-back met between is still reported to them.

Not simulated: a power cut. Tests can kill the process right after a replacement (the
``CTXTOOL_TEST_CRASH`` hook below) and check the files, which shows the order and the content
but not what a disk cache does on power loss - that is the kernel's and the disk's part of the
contract above.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import threading
from collections.abc import Callable, Iterator

FEW = 64  # fewer files than this: fsync each (cheap, touches nobody else's data)
TICK = 0.2  # seconds between two write-backs the background thread starts
# test-only: the crash_point() named kills there: "after-replace", "after-stdout"; cleanup's
# "after-usage", and for OpenCode "opencode-archive-write" (half an export written),
# "opencode-delete" (rows deleted, not committed), "opencode-committed" (files not removed yet)
CRASH_ENV = "CTXTOOL_TEST_CRASH"

_pending: dict[str, list[str]] = {}  # folder -> names written there, not yet durable
_count = [0]  # files in _pending (read by the background thread: no walk over the dict)
_roots: set[str] = set()  # store roots (their new session folders' entries live there)
_handles: dict[int, int] = {}  # device -> an fd of a store folder there, for syncfs
_outputs: set[int] = set()  # fds of outputs being written (watch)
_errors: list[OSError] = []  # write-back errors the background thread met, for flush


def defer(folder: str, name: str, root: str | None = None) -> None:
    """Note a new file ``name`` in ``folder`` (below the store ``root``) that must be on disk
    before the next replacement (called once the file is linked to its name)."""
    names = _pending.get(folder)
    if names is None:
        names = _pending[folder] = []
        _hold(folder)
    names.append(name)
    _count[0] += 1
    if root is not None:
        _roots.add(root)


def discard() -> None:
    """Forget what is pending, unsynced (a new command starts; see cli/__init__.py)."""
    _Writeback.stop()
    _pending.clear()
    _count[0] = 0
    _roots.clear()
    _errors.clear()
    for fd in _handles.values():
        os.close(fd)
    _handles.clear()


def pending() -> int:
    """How many files wait for :func:`flush`."""
    return _count[0]


def flush() -> None:
    """Make every deferred file durable, with its name (see the module docstring). Raises
    OSError when that cannot be done: the caller must not commit anything then. Every commit
    of an output calls this first, stdout's staged copy included."""
    _Writeback.stop()
    if _errors:
        error = _errors[0]
        discard()
        raise error
    if not _pending:
        return
    folders = _folders()
    if pending() < FEW or not _syncfs_each(folders):
        for folder, names in _pending.items():
            for name in names:
                _fsync_path(os.path.join(folder, name))
        for folder in folders:
            fsync_folder(folder)
    discard()


def watch(fd: int) -> None:
    """An output is being written to ``fd``: start its write-back (and the store's) in the
    background until :func:`unwatch` (see the module docstring)."""
    _outputs.add(fd)
    _Writeback.start()


def unwatch(fd: int) -> None:
    """Stop starting write-backs of ``fd`` (before it is closed); a write-back error met
    meanwhile is raised by the next :func:`flush`."""
    _Writeback.stop()
    _outputs.discard(fd)


@contextlib.contextmanager
def watching(fd: int) -> Iterator[None]:
    """:func:`watch` ``fd`` for the block, :func:`unwatch` after it, however it ends (and so
    before ``fd`` is closed, when the block is inside what closes it)."""
    watch(fd)
    try:
        yield
    finally:
        unwatch(fd)


def _hold(folder: str) -> None:
    """Keep an fd of the first store folder on each filesystem, for syncfs (opened now: a
    write-back error from here on is reported through it)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # flush opens what it needs, and reports what fails
    device = os.fstat(fd).st_dev
    if device in _handles:
        os.close(fd)
    else:
        _handles[device] = fd


class _Writeback:
    """The daemon thread that starts write-backs while an output is written (one at a time)."""

    thread: threading.Thread | None = None
    done = threading.Event()

    @classmethod
    def start(cls) -> None:
        if cls.thread is None:
            cls.done = threading.Event()
            cls.thread = threading.Thread(target=cls.run, args=(cls.done,),
                                          name="ctxtool-writeback", daemon=True)
            cls.thread.start()

    @classmethod
    def stop(cls) -> None:
        """Stop the thread, waiting for a write-back it is in (work the caller needs anyway)."""
        if cls.thread is not None:
            cls.done.set()
            cls.thread.join()
            cls.thread = None

    @staticmethod
    def run(done: threading.Event) -> None:
        while not done.wait(TICK):
            try:
                _write_back()
            except OSError as exc:
                _errors.append(exc)
                return


def _write_back() -> None:
    """One round: syncfs through the store's folders once it wrote a large batch (the outputs
    on those filesystems too), fdatasync of each output otherwise."""
    syncfs = _syncfs() if _count[0] >= FEW else None
    synced: set[int] = set()
    if syncfs is not None:
        for device, fd in list(_handles.items()):
            if syncfs(fd) != 0:
                raise _errno_error()
            synced.add(device)
    for fd in list(_outputs):
        if os.fstat(fd).st_dev not in synced:
            os.fdatasync(fd)


def _errno_error() -> OSError:
    import ctypes

    code = ctypes.get_errno()
    return OSError(code, os.strerror(code))


def _folders() -> list[str]:
    """The folders whose entries changed: each folder written to, the session folder above it
    and the store root (a new ``tool-results`` or session folder is an entry in those), and the
    root's parent (the root may be new too)."""
    found: dict[str, None] = {}
    for folder in _pending:
        found.setdefault(folder)
        found.setdefault(os.path.dirname(folder))
    for root in _roots:
        found.setdefault(root)
        found.setdefault(os.path.dirname(root))
    return list(found)


def fsync_folder(path: str) -> None:
    """fsync a folder; one that cannot be opened for reading (a parent of the store root the
    user may only pass through) or synced (a filesystem without folder fsync, EINVAL) is
    skipped: its entries are as durable as that filesystem makes them."""
    try:
        _fsync_path(path)
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EINVAL):
            raise


def _fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _syncfs_each(folders: list[str]) -> bool:
    """syncfs once per filesystem holding ``folders``; False when syncfs is not available
    (not Linux) or fails, so the caller falls back to fsync."""
    syncfs = _syncfs()
    if syncfs is None:
        return False
    done: set[int] = set()
    for device, fd in _handles.items():  # the store's folders, held since its first file
        if syncfs(fd) != 0:
            return False
        done.add(device)
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue  # a parent we may not open: its filesystem is synced through another
        try:
            device = os.fstat(fd).st_dev
            if device not in done:
                if syncfs(fd) != 0:
                    return False
                done.add(device)
        finally:
            os.close(fd)
    return bool(done)


_SYNCFS: list[Callable[[int], int] | None] = []


def _syncfs() -> Callable[[int], int] | None:
    """libc's syncfs (Linux), looked up once; None elsewhere."""
    if not _SYNCFS:
        function = None
        if os.uname().sysname == "Linux":
            import ctypes  # here: only a large batch needs it, not every command's start-up

            try:  # the symbols the process already has, libc's among them
                function = getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
            except OSError:
                function = None
            if function is not None:
                function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
        _SYNCFS.append(function)
    return _SYNCFS[0]


def crash_point(where: str) -> None:
    """Test-only: ``CTXTOOL_TEST_CRASH=where`` kills the process here with SIGKILL (no
    cleanup, no buffers flushed), as a crash would; unset, this does nothing."""
    if os.environ.get(CRASH_ENV) == where:
        os.kill(os.getpid(), signal.SIGKILL)


__all__ = ["CRASH_ENV", "FEW", "TICK", "crash_point", "defer", "discard", "flush",
           "fsync_folder", "pending", "unwatch", "watch"]
