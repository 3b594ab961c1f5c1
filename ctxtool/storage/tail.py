"""Reading a transcript file from its ends, without reading it whole.

``sessions`` and ``statusline`` must cost the same on a 1 MB and a 1 GB transcript: they read
the first lines (the session's project and first prompt), the last lines backwards (the last API
usage and what follows it), and count compact boundaries with a byte search over a memory map
(no line is parsed except the few the search hits). The statusline reads its ends through the
file handle; the listing maps each file once and takes everything from the map.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO, TypeAlias

if TYPE_CHECKING:
    import mmap

BLOCK = 1 << 16  # backwards reads: most tails (the last call and its results) fit in one or two
Buffer: TypeAlias = "bytes | mmap.mmap"  # a whole file: bytes, or mapped (find, rfind, slices)


def iter_head_lines(handle: BinaryIO, *, max_bytes: int) -> Iterator[bytes]:
    """Complete lines from the start of ``handle`` until ``max_bytes`` have been read (the
    line that crosses the limit is still whole)."""
    handle.seek(0)
    read = 0
    while read < max_bytes:
        line = handle.readline()
        if not line:
            return
        read += len(line)
        yield line


def iter_lines_reversed(handle: BinaryIO, *, block: int = BLOCK) -> Iterator[bytes]:
    """The lines of ``handle`` from the last to the first (newline kept, as read forwards).
    Reads ``block`` bytes at a time from the end; holds one line plus one block."""
    end = handle.seek(0, os.SEEK_END)
    pending = b""  # the start of a line whose beginning lies in an earlier block
    while end > 0:
        start = max(0, end - block)
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
    if pending:
        yield pending


def lines_backwards(buffer: Buffer) -> Iterator[bytes]:
    """:func:`iter_lines_reversed` over a file already mapped: each line is one ``rfind`` and
    one copy, nothing else is read."""
    end = len(buffer)
    while end > 0:
        newline = buffer.rfind(b"\n", 0, end - 1)
        yield buffer[newline + 1:end]
        end = newline + 1


def head_lines(buffer: Buffer, *, max_bytes: int) -> Iterator[bytes]:
    """:func:`iter_head_lines` over a file already mapped."""
    at, size = 0, len(buffer)
    while at < max_bytes and at < size:
        newline = buffer.find(b"\n", at)
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


def lines_containing(buffer: Buffer, needle: bytes, *, start: int = 0,
                     end: int | None = None) -> Iterator[bytes]:
    """Each line holding ``needle`` (once per line) between offsets ``start`` and ``end`` (line
    starts; default: to the end), found by a byte search (see :func:`mapped`): the file is
    never split into lines or parsed."""
    stop = len(buffer) if end is None else end
    at = buffer.find(needle, start, stop)
    while at >= 0:
        begin = buffer.rfind(b"\n", start, at) + 1 or start
        after = buffer.find(b"\n", at, stop)
        after = stop if after < 0 else after + 1
        yield buffer[begin:after]
        at = buffer.find(needle, after, stop)


def complete_length(buffer: Buffer) -> int:
    """Bytes up to the end of the last complete line (a last line being written is not)."""
    return buffer.rfind(b"\n") + 1
