"""Opening inputs and outputs for every command: files or stdin, stdout or -o FILE, --in-place."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO


from ctxtool.errors import StoreError, UsageError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import OnInvalid, bounded_lines, iter_entries, write_entries
from ctxtool.io import batch, database, live, messages
from ctxtool.io.live import READ_BUFFER, LiveOptions
from ctxtool.io.progress import bars_enabled, byte_progress
from ctxtool.storage import marker
from ctxtool.storage.atomic import named_output
from ctxtool.storage.paths import claude_config_dir
from ctxtool.types import Entry

STDIN_NAME = "<stdin>"
_stdin: tuple[object, BinaryIO] | None = None  # (the sys.stdin.buffer wrapped, its wrapper)


def binary_stdin() -> BinaryIO:
    """The binary stdin (click's CliRunner swaps sys.stdin for a wrapper that has .buffer too).

    A real stdin is read through one READ_BUFFER reader of its own on the same descriptor (made
    once, never closing it; nothing reads ``sys.stdin.buffer`` before, so nothing is lost)."""
    global _stdin
    if sys.stdin is None:  # started with stdin closed (`<&-`): Python then sets it to None
        raise StoreError("cannot read the input: stdin is closed",
                         hint="give FILE arguments, or redirect stdin from a file")
    buffer = sys.stdin.buffer
    if _stdin is not None and _stdin[0] is buffer:
        return _stdin[1]
    try:
        fd = buffer.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stdin (tests): read it as it is
        return buffer
    reader = open(fd, "rb", buffering=READ_BUFFER, closefd=False)  # noqa: SIM115 - kept open
    _stdin = (buffer, reader)
    return reader


def binary_stdout() -> BinaryIO:
    if sys.stdout is None:  # started with stdout closed (`>&-`): Python then sets it to None
        raise StoreError("cannot write the output: stdout is closed",
                         hint="redirect stdout to a file or /dev/null, or give -o FILE")
    return sys.stdout.buffer


@dataclass(frozen=True)
class IOOptions:
    inputs: tuple[str, ...] = ()
    output: str | None = None
    in_place: bool = False
    format: str | None = None
    on_invalid: OnInvalid = "error"
    quiet: bool = False
    live: LiveOptions = LiveOptions()  # --force, --backup, --live-window (see io/live.py)

    @property
    def paths(self) -> tuple[str, ...]:
        return self.inputs or ("-",)


def display_name(path: str) -> str:
    return STDIN_NAME if path == "-" else path


def is_rereadable(path: str) -> bool:
    """Whether opening ``path`` again gives the same bytes: a regular file (or what cannot be
    stat'ed, which the open then reports). A pipe, FIFO, socket or character device does not."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return True
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)


@contextlib.contextmanager
def open_input(path: str) -> Iterator[BinaryIO]:
    """A binary stream for a path or ``-``; unreadable inputs raise StoreError (exit 4)."""
    if path == "-":
        stdin = binary_stdin()
        yield stdin
        return
    session = database.input_bytes(path)  # an OpenCode database reads as one session's JSONL
    if session is not None:
        yield io.BytesIO(session)
        return
    pinned = live.pinned(path)
    if pinned is not None:  # an --in-place file: the bytes it had when the command started
        with pinned.open() as handle:
            yield handle
        return
    if os.path.isdir(path):
        raise StoreError("is a directory, not a transcript file", source=path)
    try:
        handle = open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise StoreError(f"cannot read: {exc.strerror or exc}", source=path) from exc
    with handle:
        yield handle


def _lines_with_progress(path: str, stream: BinaryIO) -> Iterable[bytes]:
    if path == "-" or not bars_enabled():
        return stream
    # bounded before the bar, which would otherwise read a line of any length
    return byte_progress(path, bounded_lines(stream, display_name(path)))


def iter_file_entries(path: str, io: IOOptions, *, warn: Callable[[str], None] = messages.warn,
                      exact_ints: bool = True, final: bool = True) -> Iterator[Entry]:
    """Entries of one input, read lazily; OS errors while reading become StoreError.
    ``warn`` receives framing warnings (validate passes a no-op: it reports them itself);
    ``exact_ints=False`` for commands that never write entries back; ``final=False`` when
    another input follows in the same output (both: see iter_entries)."""
    name = display_name(path)
    with open_input(path) as stream:
        try:
            yield from iter_entries(_lines_with_progress(path, stream), name,
                                    on_invalid=io.on_invalid, warn=warn, exact_ints=exact_ints,
                                    final=final)
        except OSError as exc:
            raise StoreError(f"cannot read: {exc.strerror or exc}", source=name) from exc


def iter_input_entries(io: IOOptions, *, exact_ints: bool = True) -> Iterator[Entry]:
    """All inputs one after the other, as one stream of entries (``exact_ints``: see
    :func:`iter_file_entries`)."""
    check_stdin(io)
    for index, path in enumerate(io.paths, 1):
        yield from iter_file_entries(path, io, exact_ints=exact_ints,
                                     final=index == len(io.paths))


def check_stdin(io: IOOptions) -> None:
    if "-" in io.paths and sys.stdin is not None and sys.stdin.isatty():
        raise UsageError("no input: give transcript files as arguments or pipe one on stdin",
                         hint="see --help for examples")


def read_transcript(io: IOOptions) -> tuple[str, Iterator[Entry]]:
    """(format, entries) for all inputs; the format is detected unless --format was given."""
    return detect_format(iter_input_entries(io), io.format)


@contextlib.contextmanager
def open_output(output: str | None, inputs: Iterable[str] = ()) -> Iterator[BinaryIO]:
    """stdout, or FILE written atomically (nothing is left behind if the command fails), with
    the mode of the input files it was made from (see :func:`output_mode`)."""
    if output in (None, "-"):
        yield binary_stdout()
        return
    into_database = database.output_writer(output)
    if into_database is not None:
        with into_database as handle:
            yield handle
        return
    pinned = live.pinned(output)
    if pinned is not None:  # --in-place: replaced only if nothing but appends happened meanwhile
        with pinned.replacing() as handle:
            yield handle
        return
    try:  # /dev/null, a FIFO, a symlink: written into or through, never replaced
        with named_output(output, mode=output_mode(output, inputs)) as handle:
            yield handle
    except OSError as exc:
        raise StoreError(f"cannot write: {exc.strerror or exc}", source=output) from exc


def output_mode(output: str, inputs: Iterable[str]) -> int | None:
    """The permissions of an -o file: those of the input files (the strictest, and never looser
    than the file it replaces), so a private session gives a private output; without an input
    file, 0600 in ctxtool's store or a Claude Code folder; else None (the usual umask)."""
    modes = [stat.S_IMODE(st.st_mode) for st in map(_stat, inputs)
             if st is not None and stat.S_ISREG(st.st_mode)]
    if not modes:
        return 0o600 if _private_place(output) else None
    mode = 0o7777
    for each in modes:
        mode &= each
    existing = _stat(output)
    return mode & stat.S_IMODE(existing.st_mode) if existing is not None else mode


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path) if path != "-" else None
    except (OSError, ValueError):
        return None


def _private_place(output: str) -> bool:
    """Whether ``output`` goes into a store ctxtool made or a Claude Code config folder."""
    folder = os.path.dirname(os.path.realpath(output))
    claude = os.path.realpath(claude_config_dir(os.environ))
    while True:
        if folder == claude or marker.is_marked(folder):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


Transform = Callable[[str, Iterator[Entry]], Iterable[dict[str, Any]]]


def in_place_paths(io: IOOptions) -> Iterator[str]:
    """The files --in-place rewrites, each pinned while the caller works on it (io/live.py:
    files that may be live sessions are skipped); it needs file arguments and no -o. Each is
    done on its own: the caller works on it inside ``batch.each`` (io/batch.py)."""
    if not io.inputs or "-" in io.inputs or io.output:
        raise UsageError("--in-place needs file arguments and no -o/--output")
    for path in io.inputs:
        if database.is_database(path):  # not pinned: a transaction guards it (io/database.py)
            yield path
            continue
        with batch.each(path, of=len(io.inputs)), live.pin(path, io.live) as pinned:
            if pinned is not None:
                yield path


def run_transform(io: IOOptions, transform: Transform) -> None:
    """Read, transform, write: to stdout / -o FILE, or back into each input with --in-place."""
    if not io.in_place:
        fmt, entries = read_transcript(io)
        with open_output(io.output, io.paths) as out:
            write_entries(transform(fmt, entries), out)
        return
    for path in in_place_paths(io):
        with batch.each(path, of=len(io.inputs)):
            fmt, entries = detect_format(iter_file_entries(path, io), io.format)
            with open_output(path) as out:
                write_entries(transform(fmt, entries), out)
