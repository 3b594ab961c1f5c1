"""Reading a transcript file from its ends, without reading it whole.

``sessions`` and ``statusline`` must cost the same on a 1 MB and a 1 GB transcript: they read
the first lines (the session's project and first prompt), the last lines backwards (the last API
usage and what follows it), and count compact boundaries with a byte search over a memory map
(no line is parsed except the few the search hits). The statusline reads its ends through the
file handle; the listing maps each file once and takes everything from the map.

Every reader here is bounded by :data:`WINDOW`, whatever the file holds (a transcript without
newlines, a line of hundreds of MB):

* the head ends at a line longer than :data:`WINDOW` (that line is not read: the head is the
  first 64 KB, which such a line crosses anyway);
* a backwards walk reads at most the last :data:`WINDOW` bytes: the line crossing the window's
  start, and everything before it, are not read (a session whose last 32 MiB hold no API call
  is sized from those 32 MiB alone);
* the byte search passes over a line longer than :data:`WINDOW` that holds the needle (it is
  not copied or parsed), and gives the pages it has searched back as it goes, so the process
  does not hold the whole file mapped.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO, TypeAlias

if TYPE_CHECKING:
    import mmap

BLOCK = 1 << 16  # backwards reads: most tails (the last call and its results) fit in one or two
# The Messages API takes at most 32 MB a request: a tail after the last call, or one line, longer
# than that could not have been sent as it is. Reading further costs memory in proportion to a
# broken or hostile file, so no reader here goes past it.
WINDOW = 32 << 20
SCAN = 8 << 20  # the byte search gives back the pages of each piece this long once searched
Buffer: TypeAlias = "bytes | mmap.mmap"  # a whole file: bytes, or mapped (find, rfind, slices)


def iter_head_lines(handle: BinaryIO, *, max_bytes: int, bound: int = WINDOW) -> Iterator[bytes]:
    """Complete lines from the start of ``handle`` until ``max_bytes`` have been read (the
    line that crosses the limit is still whole). A line longer than ``bound`` ends them unread
    past ``bound`` bytes."""
    handle.seek(0)
    read = 0
    while read < max_bytes:
        line = handle.readline(bound + 1)
        if not line or (len(line) > bound and not line.endswith(b"\n")):
            return
        read += len(line)
        yield line


def iter_lines_reversed(handle: BinaryIO, *, block: int = BLOCK,
                        window: int = WINDOW) -> Iterator[bytes]:
    """The lines of ``handle`` from the last to the first (newline kept, as read forwards),
    within the last ``window`` bytes (see the module's docstring). Reads ``block`` bytes at a
    time from the end; holds one line plus one block."""
    end = handle.seek(0, os.SEEK_END)
    floor = max(0, end - window - 1)  # one byte more: is the first line in the window whole?
    pending = b""  # the start of a line whose beginning lies in an earlier block
    while end > floor:
        start = max(floor, end - block)
        handle.seek(start)
        chunk = handle.read(end - start) + pending
        end = start
        cut = len(chunk)
        while True:
            newline = chunk.rfind(b"\n", 0, cut - 1) if cut > 0 else -1
            if newline < 0:
                break
            yield chunk[newline + 1:cut]
            cut = newline + 1
        if cut == len(chunk):  # inside one long line: read larger blocks (no quadratic copying)
            block *= 2
        pending = chunk[:cut]
    if pending and floor == 0:
        yield pending


def lines_backwards(buffer: Buffer, *, window: int = WINDOW) -> Iterator[bytes]:
    """:func:`iter_lines_reversed` over a file already mapped: each line is one ``rfind`` and
    one copy, nothing else is read."""
    end = len(buffer)
    floor = max(0, end - window)
    while end > floor:
        newline = buffer.rfind(b"\n", max(0, floor - 1), end - 1)
        if newline < 0 and floor > 0:
            return  # the line crossing the window's start
        yield buffer[newline + 1:end]
        end = newline + 1


def head_lines(buffer: Buffer, *, max_bytes: int, bound: int = WINDOW) -> Iterator[bytes]:
    """:func:`iter_head_lines` over a file already mapped."""
    at, size = 0, len(buffer)
    while at < max_bytes and at < size:
        newline = buffer.find(b"\n", at, at + bound + 1)
        if newline < 0 and size - at > bound:
            return
        end = size if newline < 0 else newline + 1
        yield buffer[at:end]
        at = end


@contextlib.contextmanager
def mapped(handle: BinaryIO) -> Iterator[Buffer]:
    """The whole file as a read-only memory map (``b""`` when empty): the listing searches
    and slices it without reading it or splitting it into lines. Transcripts are appended to
    or replaced by a rename, never truncated in place, so the map stays valid."""
    import mmap  # only the listing maps files: the statusline's start-up stays lighter

    try:
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file cannot be mapped
        yield b""
        return
    except OSError:  # a file system that cannot map: read it (rare, costs the whole file)
        handle.seek(0)
        yield handle.read()
        return
    with view:
        yield view


def _release(buffer: Buffer, start: int, end: int) -> None:
    """Unmap the whole pages of ``buffer[start:end]`` from this process (a no-op for bytes, or
    where the system has no MADV_DONTNEED): they stay in the page cache, and a later read of
    them maps them again. Without it a search of a 1 GB file leaves 1 GB resident."""
    import mmap

    advice = getattr(mmap, "MADV_DONTNEED", None)
    if advice is None or not isinstance(buffer, mmap.mmap):
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    last = end // mmap.PAGESIZE * mmap.PAGESIZE
    if last > first:
        buffer.madvise(advice, first, last - first)


def _find(buffer: Buffer, needle: bytes, start: int, stop: int) -> int:
    """``buffer.find(needle, start, stop)`` in pieces of :data:`SCAN`, each released once
    searched (see :func:`_release`)."""
    while start < stop:
        piece = min(stop, start + SCAN)
        found = buffer.find(needle, start, min(stop, piece + len(needle) - 1))
        _release(buffer, start, found if found >= 0 else piece)
        if found >= 0:
            return found
        start = piece
    return -1


def lines_containing(buffer: Buffer, needle: bytes, *, start: int = 0,
                     end: int | None = None, bound: int = WINDOW) -> Iterator[bytes]:
    """Each line holding ``needle`` (once per line) between offsets ``start`` and ``end`` (line
    starts; default: to the end), found by a byte search (see :func:`mapped`): the file is
    never split into lines or parsed. A line longer than ``bound`` is passed over."""
    stop = len(buffer) if end is None else end
    at = _find(buffer, needle, start, stop)
    while at >= 0:
        begin = buffer.rfind(b"\n", max(start, at - bound), at) + 1 or start
        after = _find(buffer, b"\n", at, stop)
        after = stop if after < 0 else after + 1
        if after - begin <= bound:
            yield buffer[begin:after]
        at = _find(buffer, needle, after, stop)


def complete_length(buffer: Buffer) -> int:
    """Bytes up to the end of the last complete line (a last line being written is not),
    searched backwards in pieces, each released once searched (see :func:`_release`)."""
    end = len(buffer)
    while end > 0:
        piece = max(0, end - SCAN)
        found = buffer.rfind(b"\n", piece, end)
        _release(buffer, found + 1 if found >= 0 else piece, end)
        if found >= 0:
            return found + 1
        end = piece
    return 0
