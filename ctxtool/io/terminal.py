"""What output for people needs to know about the terminal: is it one, how wide, colour or not.

Colour follows the usual conventions: only on a terminal, never with ``NO_COLOR`` set (to
anything), and ``FORCE_COLOR`` for tests and pagers that understand it. Styling is click's own
(``click.style``), so no table or colour library weighs on start-up.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

import click

from ctxtool.printable import visible  # where it lives: the statusline's fast path uses it


def is_terminal(stream: IO[Any] | None = None) -> bool:
    stream = sys.stdout if stream is None else stream
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):  # closed or detached
        return False


def colour_enabled(stream: IO[Any] | None = None) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or is_terminal(stream)


UNLIMITED = 10_000  # a file or a pipe: nothing to fit, lines stay whole (as ls -l's do)


def width() -> int:
    """Columns to fill: $COLUMNS, else the terminal's, else UNLIMITED (a file or pipe).

    The columns half of ``shutil.get_terminal_size((100, 24))``, whose module loads zlib, bz2
    and lzma: 2 ms of every table's start-up (``ctxtool estimate FILE | ...`` among them)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:  # AttributeError: no __stdout__ (None)
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or UNLIMITED
    return max(40, columns)


def shorten(text: str, room: int) -> str:
    """``text`` cut from the left to ``room`` characters (``…/cli/paths.go:805``): the end of a
    path, where the file name and line are, is what tells targets apart."""
    if len(text) <= room:
        return text
    if room <= 1:
        return "…"[:room]
    tail = text[-(room - 1):]
    cut = tail.find("/")
    if 0 <= cut < len(tail) - 1 and room - 1 - cut >= room // 2:
        tail = tail[cut:]  # start at a folder boundary when that keeps most of it
    return "…" + tail


def shorten_middle(text: str, room: int) -> str:
    """``text`` cut in the middle to ``room`` characters (``~/src/…/billing-api``): a path keeps
    where it starts and, with twice the room, what it ends with (the project's own folder)."""
    if len(text) <= room:
        return text
    if room <= 1:
        return "…"[:room]
    head = (room - 1) // 3
    return text[:head] + "…" + text[len(text) - (room - 1 - head):]


def fit_line(line: str, width: int, *, indent: int = 0) -> list[str]:
    """``line`` wrapped at spaces to ``width`` columns, continuation lines indented by
    ``indent`` (a label's column): a long value reads on as ``ls`` or ``git`` would wrap it."""
    if len(line) <= width:
        return [line]
    import textwrap  # only when a line is too long

    return textwrap.wrap(line, width, subsequent_indent=" " * indent, break_on_hyphens=False)


def size(count: float) -> str:
    """A size for people, the one style of every table and message: ``950 B``, ``40.1 KB``,
    ``1.0 MB`` (units of 1024; past 999.9 the next unit, so ``1022.3 KB`` reads ``1.0 MB``)."""
    if count < 1000:
        return f"{count:.0f} B"
    for unit in ("KB", "MB", "GB", "TB"):
        count /= 1024
        if round(count, 1) < 1000 or unit == "TB":
            return f"{count:.1f} {unit}"
    raise AssertionError("unreachable")


def paint(text: str, on: bool, **style: Any) -> str:
    return click.style(text, **style) if on else text
