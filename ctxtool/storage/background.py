"""Store files written by a thread while the run goes on, for outputs committed at the end.

A store-heavy ``snip``/``microcompact`` creates thousands of files: an ``O_TMPFILE`` open, a
write, a link and a close each, about a quarter of the run. Those system calls release the GIL,
so a thread can make them while the main thread parses; on two cores they overlap instead of
adding up. What makes that correct:

- Nothing that references a file may be readable before the file exists. Only outputs that are
  committed at the end may have their files written in the background: stdout staged in a temp
  file (cli/spool.py ``staged_output``), an ``-o`` file replaced by
  :func:`ctxtool.storage.atomic.atomic_writer`, an --in-place file (cli/live.py) or session
  in OpenCode's database (cli/database.py) replaced once the command ended. Each writes its
  block inside :func:`ctxtool.storage.durable.staged` (:func:`allowed`, then a flush); outside
  one every save is synchronous: an -o FIFO, and the store of a command that streams to stdout
  or keeps going after a failed save (persist: store.background False).
- Before any commit, every pending write is done and its error raised: the commit paths call
  :func:`ctxtool.storage.durable.flush`, which calls :func:`drain` first (``staged`` ends with
  it, so stdout's staged copy goes through the same hook).
- ``save()`` returns the file's path at once, so the thread only creates names the store knows
  to be free (not in the folder's listing when it was opened, see storage/store.py); one taken
  anyway (another process) is compared there: the same bytes are fine, others an error.
- Memory: at most :data:`LIMIT` bytes wait; the main thread blocks until there is room.
- An error (ENOSPC, EACCES, EIO...) is kept and raised on the main thread by the next
  :meth:`Writer.submit` or :func:`drain`, as the StoreError the synchronous path gives; nothing
  queued after it is written.
- An interrupted run leaves nothing: the thread is a daemon, :func:`abandon` stops it after the
  file it is writing, and an unnamed (``O_TMPFILE``) file that was not linked vanishes.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

LIMIT = 48 << 20  # bytes queued at most (memory goal: 150 MB peak on a 1 GB input)
WAKE_ITEMS = 32  # an idle thread is woken for this many files
WAKE = 1 << 20  # or this many bytes
HOLD_ENV = "CTXTOOL_TEST_HOLD_WRITES"  # test-only: the thread writes only when drained

_allowed = [0]  # depth of allowed() blocks open
_writers: list[Writer] = []  # writers with work possibly pending


def enabled() -> bool:
    """Whether a save may go to the background now (inside :func:`allowed`)."""
    return _allowed[0] > 0


@contextlib.contextmanager
def allowed() -> Iterator[None]:
    """A block whose output is committed only after :func:`drain` (see the module docstring).
    A block that fails stops the writers and drops what they had not written."""
    _allowed[0] += 1
    try:
        yield
    except BaseException:
        abandon()
        raise
    finally:
        _allowed[0] -= 1


def drain() -> None:
    """Wait until every queued file is written; raise the first error a writer met (StoreError
    or OSError). The writers stop (a later save starts a new one)."""
    try:
        while _writers:  # in the order they started: the first error is raised
            _writers[0].close()
            _writers.pop(0)
    except BaseException:
        abandon()
        raise


def abandon() -> None:
    """Stop every writer after the file it is writing, dropping the rest (an interrupted or
    failed run: nothing it wrote will be referenced by a committed output)."""
    while _writers:
        _writers.pop().stop()


class Writer:
    """One daemon thread calling ``write(item)`` for each submitted item, in order."""

    def __init__(self, write: Callable[[Any], None]) -> None:
        self._write = write
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._items: deque[tuple[Any, int]] = deque()
        self._queued = 0  # bytes submitted and not yet written
        self._busy = False
        self._stopping = False
        self._error: BaseException | None = None
        self._hold = os.environ.get(HOLD_ENV) == "1"
        self._thread = threading.Thread(target=self._run, name="ctxtool-store-writer",
                                        daemon=True)
        self._thread.start()
        _writers.append(self)

    def submit(self, item: Any, size: int) -> None:
        """Queue ``item`` (``size`` bytes); blocks while :data:`LIMIT` bytes wait. Raises the
        error a write met."""
        with self._lock:
            while self._queued and self._queued + size > LIMIT and self._error is None:
                self._hold = False  # test hold: a full queue is written all the same
                self._changed.notify_all()
                self._changed.wait()
            if self._error is not None:
                raise self._error
            self._items.append((item, size))
            self._queued += size
            if not self._busy and (len(self._items) >= WAKE_ITEMS or self._queued >= WAKE):
                self._changed.notify_all()  # not per item: each wake is a hand-over

    def wait(self) -> None:
        """Until everything submitted is written; raises the error a write met."""
        with self._lock:
            self._hold = False
            self._changed.notify_all()
            while (self._items or self._busy) and self._error is None:
                self._changed.wait()
            if self._error is not None:
                raise self._error

    def close(self) -> None:
        """:meth:`wait`, then stop the thread."""
        try:
            self.wait()
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop the thread after the item it is writing; what is still queued is dropped."""
        with self._lock:
            self._stopping = True
            self._items.clear()
            self._changed.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join()

    @property
    def running(self) -> bool:
        """False once stopped (drained, abandoned or failed: see :meth:`check`)."""
        return not self._stopping

    def check(self) -> None:
        """Raise the error a write met, if any."""
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        lock, changed, items = self._lock, self._changed, self._items
        while True:
            with lock:
                self._busy = False
                changed.notify_all()
                while (not items or self._hold) and not self._stopping:
                    changed.wait()
                if self._stopping:
                    return
                self._busy = True
                batch = list(items)
                items.clear()
            written = 0
            for item, size in batch:  # a batch at a time: fewer hand-overs of the lock
                if self._stopping:
                    return
                try:
                    self._write(item)
                except BaseException as exc:  # noqa: BLE001 - raised on the main thread
                    with lock:
                        self._error = exc
                        self._stopping = True
                        items.clear()
                        self._busy = False
                        changed.notify_all()
                    return
                written += size
            with lock:
                self._queued -= written
