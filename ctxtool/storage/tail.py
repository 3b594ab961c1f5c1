"""Reading a transcript file from its ends, without reading it whole.

``sessions`` and ``statusline`` must cost the same on a 1 MB and a 1 GB transcript: they read
the first lines (the session's project and first prompt), the last lines backwards (the last API
usage and what follows it), and count compact boundaries with a byte search over a memory map
(no line is parsed except the few the search hits).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import BinaryIO

BLOCK = 1 << 16  # backwards reads: most tails (the last call and its results) fit in one or two


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


def lines_containing(handle: BinaryIO, needle: bytes, *, start: int = 0,
                     end: int | None = None) -> Iterator[bytes]:
    """Each line holding ``needle`` (once per line) between offsets ``start`` and ``end`` (line
    starts; default: to the end), found by a byte search over a memory map: the file is never
    split into lines or parsed."""
    import mmap  # only the listing searches: the statusline's start-up stays lighter

    try:
        view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (ValueError, OSError):  # an empty file (or one that cannot be mapped): read it
        return  # only an empty file: nothing to find
    with view:
        stop = len(view) if end is None else end
        at = view.find(needle, start, stop)
        while at >= 0:
            begin = view.rfind(b"\n", start, at) + 1 or start
            after = view.find(b"\n", at, stop)
            after = stop if after < 0 else after + 1
            yield view[begin:after]
            at = view.find(needle, after, stop)


def complete_length(handle: BinaryIO) -> int:
    """Bytes up to the end of the last complete line (a last line being written is not)."""
    end = handle.seek(0, os.SEEK_END)
    while end > 0:
        start = max(0, end - BLOCK)
        handle.seek(start)
        newline = handle.read(end - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0
