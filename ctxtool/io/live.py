"""``--in-place`` on sessions that may be live: nothing an agent writes meanwhile is lost.

Claude Code appends to a session's transcript while it runs (open, append, close for each
line). Rewriting such a file means reading it, transforming it and renaming a new file over it;
a line appended in between would be lost. So each ``--in-place`` file is *pinned* first:

* A file modified within the live window (``--live-window``, default 1h: the rule ``cleanup``
  applies to sessions) is skipped with a warning unless ``--force``; the other files go on and
  the exit status is not affected (a cron job over ``~/.claude/projects/*/*.jsonl`` skips the
  session that is open right now, and does it on a later run).
* Its inode, size and mtime are taken, and it stays open. Commands read only the bytes it had
  then (lines appended later are not half-read), through :func:`open_pinned`.
* Before the new file replaces it, whatever was appended meanwhile is copied to the end of the
  new file (whole lines; a line being written is waited for briefly) and the check repeats until
  the file holds still. If it changed any other way (replaced, shrunk, rewritten), nothing is
  replaced and the command exits 4 saying so.
* Right after the rename, bytes a writer still put into the old file (it opened the path just
  before the rename) are appended to the new one.
* An output byte-identical to what was read leaves the file alone: same inode, same
  modification time, no backup (``cleanup`` dates a session by its latest change: a daily
  in-place run that changes nothing must not keep it alive). The bytes are compared while they
  are written, and the new file is written only from the first difference on.
* The new file gets the old one's owner, group and mode before it takes its place (root
  rewriting another user's session must not make it root's); where the owner cannot be kept
  (not root, someone else's file), nothing is replaced and the command exits 4.
* ``--backup[=SUFFIX]`` keeps the original (a hard link, else a copy) as ``FILE.bak``; a
  backup is never overwritten: when ``FILE.bak`` exists, the next free of ``FILE.bak.1``,
  ``FILE.bak.2``... is used, one per run that changed the file.
* A symlink is followed: the file it names is rewritten, the link stays.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import BinaryIO

from ctxtool.clock import LIVE_WINDOW, format_age
from ctxtool.errors import StoreError, UsageError
from ctxtool.io import messages
from ctxtool.storage import durable
from ctxtool.storage.atomic import temp_file

# Transcript lines are long (tool results of 10-500 KB): with the default 8 KB buffer, reading a
# line costs a third of parsing it; with 4 MB most lines come out of the buffer in one piece.
# (Here, not in streams: streams reads live sessions through this module.)
READ_BUFFER = 4 << 20
LIVE_ENV = "CTXTOOL_LIVE_WINDOW"
BACKUP_SUFFIX = ".bak"
PARTIAL_WAIT = 2.0  # seconds to wait for a line being appended to be finished
SETTLE = 0.2  # seconds: a last look at the old file after the swap, for a writer caught in it
FINGERPRINT = 64 << 10  # the last bytes read, compared again before replacing
COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class LiveOptions:
    """How --in-place treats files that may be live (see the module docstring)."""

    force: bool = False
    backup: str | None = None  # a suffix, or None for no backup
    window: timedelta = LIVE_WINDOW


class LiveFile:
    """One pinned --in-place file: what was there at the start, held open."""

    def __init__(self, path: str, options: LiveOptions) -> None:
        self.path = path  # as given, for messages
        self.real = os.path.realpath(path)  # a symlink's target is what gets rewritten
        self.options = options
        self.fd = _open_regular(path, self.real)
        st = os.fstat(self.fd)
        self.dev, self.ino, self.size = st.st_dev, st.st_ino, st.st_size
        self.mode = stat.S_IMODE(st.st_mode)
        self.owner = (st.st_uid, st.st_gid)
        self.mtime_ns = st.st_mtime_ns  # of the bytes up to self.copied
        self.copied = self.size  # bytes of the file the new one accounts for
        self.grew = False
        self.tail = self._read(max(0, self.size - FINGERPRINT), self.size)

    def close(self) -> None:
        os.close(self.fd)

    def idle_for(self) -> timedelta:
        return timedelta(seconds=time.time() - self.mtime_ns / 1e9)

    # --- reading what was there at the start --------------------------------------------------

    def open(self) -> BinaryIO:
        """The file's first :attr:`size` bytes (later appends are not read)."""
        return io.BufferedReader(_Window(self.fd, self.size), READ_BUFFER)

    def _read(self, start: int, end: int) -> bytes:
        parts = []
        while start < end:
            block = os.pread(self.fd, min(COPY_CHUNK, end - start), start)
            if not block:
                break
            parts.append(block)
            start += len(block)
        return b"".join(parts)

    # --- replacing it -------------------------------------------------------------------------

    @contextlib.contextmanager
    def replacing(self) -> Iterator[BinaryIO]:
        """A temp file beside the file; when the block succeeds, what was appended meanwhile is
        added and it replaces the file (StoreError, nothing replaced, if the file changed).
        Nothing is replaced either when the block wrote exactly the bytes read (see
        :class:`_Unchanged`)."""
        folder = os.path.dirname(self.real)
        try:
            with temp_file(folder, prefix=f".{os.path.basename(self.real)}.") as (fd, tmp):
                with os.fdopen(fd, "wb") as handle:
                    # the disk write-back of the file (and of the store files it will point
                    # at) starts in the background while it is written, as for -o
                    # (storage/atomic.py): the fsyncs below wait for the last part only
                    with durable.watching(fd):
                        compared = _Unchanged(handle, self)
                        yield compared  # type: ignore[misc]
                        if compared.same():  # the file stays as it is: same inode, mtime
                            self._check_unchanged()  # but a rewrite meanwhile is still told
                            return
                        handle.flush()
                    os.fsync(handle.fileno())  # the long part: before the last look
                    self._catch_up(handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                    self._keep_owner(handle.fileno())
                # the store files it points at on disk first (storage/durable.py); before the
                # last look, which keeps the window between that look and the swap short
                durable.flush()
                if self.options.backup:
                    self._backup(self.real + self.options.backup)
                self._check_unchanged()
                _tell_agents(self.real)
                os.replace(tmp, self.real)
                durable.crash_point("after-replace")
        except OSError as exc:
            raise StoreError(f"cannot write: {exc.strerror or exc}", source=self.path) from exc
        self._drain()

    def _keep_owner(self, fd: int) -> None:
        """The new file gets the old one's owner, group and mode (chown first: it may clear
        set-id bits). StoreError when the owner cannot be kept: nothing is replaced."""
        st = os.fstat(fd)
        if (st.st_uid, st.st_gid) != self.owner:
            try:
                os.fchown(fd, *self.owner)
            except PermissionError:
                raise StoreError(
                    f"cannot keep its owner and group ({self.owner[0]}:{self.owner[1]}): only "
                    "its owner or root can rewrite it; nothing was replaced",
                    source=self.path, hint="run as its owner, or write elsewhere with -o") \
                    from None
        os.fchmod(fd, self.mode)

    def _catch_up(self, out: BinaryIO) -> None:
        """Copy what was appended since the start (whole lines) until the file holds still."""
        deadline = time.monotonic() + PARTIAL_WAIT
        while True:
            st = self._check_unchanged()
            if st.st_size == self.copied:
                if st.st_mtime_ns == self.mtime_ns:
                    return
                self._settle_mtime(st)
                continue
            self.grew = True
            data = self._read(self.copied, st.st_size)
            whole = data.rfind(b"\n") + 1
            if whole == 0 and time.monotonic() < deadline:  # a line being written: wait for it
                time.sleep(0.01)
                continue
            if whole == 0:
                messages.warn(f"{self.path}: a line appended during the run was still "
                              "unfinished; passed through as it was")
                whole = len(data)
            out.write(data[:whole])
            self.copied += whole
            self.mtime_ns = st.st_mtime_ns

    def _settle_mtime(self, st: os.stat_result) -> None:
        """Same size, new mtime: an append caught half-way (the time is set before the size),
        or a rewrite. Give an append a moment to show; a rewrite is an error."""
        for _ in range(20):
            time.sleep(0.01)
            again = self._check_unchanged()
            if again.st_size != st.st_size:
                return
        raise self._changed("it was modified without growing")

    def _check_unchanged(self) -> os.stat_result:
        """The file's stat now; StoreError unless it is the same file, only appended to."""
        try:
            st = os.stat(self.real)
        except FileNotFoundError:
            raise self._changed("it was removed") from None
        if (st.st_dev, st.st_ino) != (self.dev, self.ino):
            raise self._changed("another file took its place")
        if st.st_size < self.copied:
            raise self._changed(f"it shrank from {self.copied} to {st.st_size} bytes")
        if self._read(max(0, self.size - FINGERPRINT), self.size) != self.tail:
            raise self._changed("bytes it held were rewritten")
        return st

    def _changed(self, how: str) -> StoreError:
        return StoreError(f"the file changed while it was rewritten ({how}); nothing was "
                          "replaced", source=self.path,
                          hint="run again; --backup keeps the original next to it")

    def _backup(self, target: str) -> None:
        """The original, kept as ``target`` (a hard link to it, else a copy), or as the first
        free of ``target.1``, ``target.2``...: an earlier run's backup is never overwritten."""
        with temp_file(os.path.dirname(target), prefix=f".{os.path.basename(target)}.") \
                as (fd, tmp):
            os.close(fd)
            os.unlink(tmp)
            try:
                os.link(self.real, tmp)
            except OSError:
                import shutil  # here only: shutil loads zlib, bz2, lzma, every command's start

                shutil.copy2(self.real, tmp)
                with contextlib.suppress(OSError):
                    os.chown(tmp, *self.owner)
            name, number = target, 0
            while True:
                try:
                    os.link(tmp, name)  # never over an existing name, unlike a rename
                    return
                except FileExistsError:
                    number += 1
                    name = f"{target}.{number}"

    def _drain(self) -> None:
        """Bytes written to the old file after the last look (a writer that opened it just
        before the swap) go to the end of the new one: whole lines, each batch added between
        two lines of whatever else writes to the new file by then."""
        deadline = time.monotonic() + PARTIAL_WAIT
        pause = 0.0
        while True:
            time.sleep(pause)
            size = os.fstat(self.fd).st_size
            data = self._read(self.copied, size)
            whole = data.rfind(b"\n") + 1
            if data and (whole == 0 and time.monotonic() < deadline):
                pause = 0.005  # a line still being written to the old file
                continue
            if data:
                whole = whole or len(data)
                self._append(data[:whole], deadline)
                self.copied += whole
                pause = 0.0 if whole < len(data) else pause
                continue
            if pause == SETTLE or not self.grew:
                return
            pause = SETTLE  # a live session: one more look once its writer had a moment

    def _append(self, data: bytes, deadline: float) -> None:
        """``data`` (whole lines) at the end of the new file, once it ends with a newline. One
        ``O_APPEND`` write, which Linux never interleaves with another writer's: the lines stay
        whole against writers that write a line at once (Claude Code). One that splits a line
        over several writes may start it between the check and the write (docs/internals.md)."""
        try:
            fd = os.open(self.real, os.O_RDWR | os.O_APPEND)
            try:
                while time.monotonic() < deadline:  # not in the middle of another's line
                    end = os.fstat(fd).st_size
                    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
                        break
                    time.sleep(0.001)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        except OSError as exc:
            raise StoreError(f"{len(data)} bytes appended to the file during the swap could not "
                             f"be added to the new one: {exc.strerror or exc} (they are in the "
                             "--backup copy, if any)", source=self.path) from exc


class _Unchanged:
    """The writer --in-place gets: bytes equal to the pinned file's, in order, are only
    compared (read back by offset); from the first difference on, the bytes read so far go to
    the new file and everything is written as it comes. So a run whose output equals its input
    writes nothing and leaves the file alone, and comparing costs one read of the file."""

    def __init__(self, out: BinaryIO, live: LiveFile) -> None:
        self.out, self.live = out, live
        self.original: BinaryIO | None = live.open()
        self.position = 0  # bytes compared equal so far

    def write(self, data: bytes) -> int:
        if self.original is not None:
            if self.original.read(len(data)) == data:
                self.position += len(data)
                return len(data)
            self._differ()
        return self.out.write(data)

    def flush(self) -> None:
        self.out.flush()

    def same(self) -> bool:
        """Whether the output was exactly the file's bytes; if not, the new file is complete."""
        if self.original is not None and self.position == self.live.size:
            return True
        if self.original is not None:
            self._differ()  # a shorter output: its bytes are still to be written
        return False

    def _differ(self) -> None:
        self.original = None
        start = 0
        while start < self.position:
            block = self.live._read(start, min(self.position, start + COPY_CHUNK))
            if not block:
                raise self.live._changed("it shrank")
            self.out.write(block)
            start += len(block)


class _Window(io.RawIOBase):
    """The first ``size`` bytes of an open file, read with pread (the fd's offset is not used)."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size, self.position = fd, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        want = min(len(buffer), self.size - self.position)
        if want <= 0:
            return 0
        if hasattr(os, "preadv"):  # straight into the buffer, no copy
            got = os.preadv(self.fd, [memoryview(buffer)[:want]], self.position)
        else:
            data = os.pread(self.fd, want, self.position)
            buffer[:len(data)] = data
            got = len(data)
        self.position += got
        return got

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def tell(self) -> int:
        return self.position


def _tell_agents(real: str) -> None:
    """Before the swap: an agent that indexes its file by byte offset (Codex) forgets the index,
    so it indexes the new file afresh; if it cannot, nothing is replaced (StoreError)."""
    from pathlib import Path

    from ctxtool.formats.registry import rewriting

    rewriting(Path(real))


def _open_regular(path: str, real: str) -> int:
    try:
        fd = os.open(real, os.O_RDONLY)
    except OSError as exc:
        raise StoreError(f"cannot read: {exc.strerror or exc}", source=path) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        if os.path.isdir(real):
            raise StoreError("is a directory, not a transcript file", source=path)
        raise UsageError(f"{path}: --in-place needs a regular file (this is a pipe or device)")
    return fd


# --- the files pinned by the running command ---------------------------------------------------

_pinned: dict[str, LiveFile] = {}


def pinned(path: str | None) -> LiveFile | None:
    """The pinned file for a path the command reads or writes, if it is one."""
    return _pinned.get(path) if path is not None else None


@contextlib.contextmanager
def pin(path: str, options: LiveOptions) -> Iterator[LiveFile | None]:
    """Pin ``path`` for the block (None: skipped, it may be live; a warning says so)."""
    live = LiveFile(path, options)
    try:
        idle = live.idle_for()
        if not options.force and idle < options.window:
            ago = "in the future" if idle < timedelta(0) else f"{format_age(idle)} ago"
            messages.warn(f"{path}: skipped: modified {ago}, within the live window "
                          f"({format_age(options.window)}), so it may be a session in use; "
                          "pass --force to rewrite it anyway")
            yield None
            return
        _pinned[path] = live
        try:
            yield live
        finally:
            _pinned.pop(path, None)
    finally:
        live.close()


__all__ = ["BACKUP_SUFFIX", "LIVE_ENV", "LiveFile", "LiveOptions", "pin", "pinned"]
