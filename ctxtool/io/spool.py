"""Inputs that can be read twice, for commands that need look-ahead (snip, microcompact...).

:func:`spooled_input` (:func:`spooled_inputs` for several) makes any input re-readable: a file
is opened again, seekable stdin (``< file``) is rewound, and a pipe is copied once to an anonymous
temp file. The :class:`FileSource` it yields is the transcript such a command's core reads
twice (a :class:`ctxtool.core.clearing.twopass.LazySource`): the first pass parses every line and notes
where each starts (16 bytes a line); the second parses only the lines the core asks for and
copies the bytes between them in big blocks, so it costs about as much as a copy.

:func:`run_two_pass` is :func:`ctxtool.io.streams.run_transform` for such commands. Output to
stdout is staged (:class:`Stage`) and copied out only once the transform succeeded, so a failure
half-way (a full disk while saving to the store) never leaves a truncated transcript on stdout:
what the run produced waits in a temp file, the bytes it left unchanged in the input files
themselves (read from there by the kernel at the end, never by Python).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO


from ctxtool.errors import StoreError
from ctxtool.io import batch, live, messages
from ctxtool.io.progress import bars_enabled, progress
from ctxtool.io.streams import (IOOptions, binary_stdin, binary_stdout, check_stdin, display_name,
                                 in_place_paths, is_rereadable, open_input, open_output)
from ctxtool.storage import durable
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import (BOM, bounded_chunks, bounded_lines, is_blank, is_truncated,
                                   iter_entries, write_entries)
from ctxtool.types import Entry

COPY_CHUNK = 1 << 20
CHANGED = "the input changed while it was read"


@dataclass(frozen=True)
class Spooled:
    """One input that can be opened any number of times."""

    name: str  # for messages: the path, or <stdin>
    path: str | None = None  # a file to open again
    handle: BinaryIO | None = None  # or a seekable stream to rewind
    start: int = 0

    @contextlib.contextmanager
    def open(self) -> Iterator[BinaryIO]:
        if self.path is not None:
            with open_input(self.path) as stream:
                yield stream
            return
        assert self.handle is not None
        self.handle.seek(self.start)
        yield self.handle

    @property
    def size(self) -> int | None:
        try:
            if self.path is not None:
                pinned = live.pinned(self.path)  # --in-place: the size it had at the start
                return pinned.size if pinned is not None else os.path.getsize(self.path)
            assert self.handle is not None
            return os.fstat(self.handle.fileno()).st_size - self.start
        except (OSError, ValueError):
            return None


@contextlib.contextmanager
def spooled_input(path: str, io: IOOptions, *, final: bool = True) -> Iterator[FileSource]:
    """``path`` (or ``-``) as a transcript that can be read more than once. A pipe on stdin is
    copied to an anonymous temp file, removed when the block ends; nothing is held in memory.
    ``final=False``: the output goes on with another input's (see :class:`FileSource`)."""
    with spool(path) as spooled:
        yield FileSource([spooled], io, final=final)


@contextlib.contextmanager
def spooled_inputs(paths: Iterable[str], io: IOOptions) -> Iterator[FileSource]:
    """Several inputs, one after the other, as one re-readable transcript."""
    with contextlib.ExitStack() as stack:
        yield FileSource([stack.enter_context(spool(path)) for path in paths], io)


@contextlib.contextmanager
def spool(path: str) -> Iterator[Spooled]:
    """One input that can be opened again: the file itself, rewound stdin, or a copy of a pipe.

    A path that cannot be read twice (a FIFO, ``<(cmd)``, ``/dev/stdin`` from a pipe, a
    character device) is opened once and copied, like a piped stdin: opening it again would
    give nothing (the pipe is drained) or block (a FIFO waits for a new writer)."""
    if path != "-":
        if not is_rereadable(path):
            with open_input(path) as stream, _copied(stream, path) as spooled:
                yield spooled
            return
        with open_input(path):  # fail early, with the usual message, if it cannot be read
            pass
        yield Spooled(name=path, path=path)
        return
    stdin = binary_stdin()
    start = _seekable_start(stdin)
    if start is not None:
        yield Spooled(name=display_name(path), handle=stdin, start=start)
        return
    with _copied(stdin, display_name(path)) as spooled:
        yield spooled


@contextlib.contextmanager
def _copied(stream: BinaryIO, name: str) -> Iterator[Spooled]:
    """``stream`` copied once to an anonymous temp file (removed when the block ends)."""
    import tempfile  # here and below only: with shutil, random, bz2, lzma... ~4 ms of start-up

    with tempfile.TemporaryFile(prefix="ctxtool-stdin-") as spool_file:
        try:
            # bounded: an endless line (/dev/zero) stops at the maximum line length, exit 3
            for chunk in bounded_chunks(iter(lambda: stream.read(COPY_CHUNK), b""), name):
                spool_file.write(chunk)
        except OSError as exc:
            raise StoreError(f"cannot spool the input to a temp file: {exc.strerror or exc}",
                             source=name, hint="set TMPDIR to a folder with room") from exc
        yield Spooled(name=name, handle=spool_file, start=0)


def _seekable_start(stream: BinaryIO) -> int | None:
    """Where a seekable regular-file stdin starts, or None for a pipe or terminal."""
    try:
        if not stream.seekable():
            return None
        import stat

        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            return None
        return stream.tell()
    except (OSError, ValueError, AttributeError):
        return None


@dataclass
class LineTable:
    """Where each entry of one input starts (bytes), from a complete first read: what lets
    the second read copy untouched bytes in big blocks and seek to the lines it must parse."""

    linenos: array[int] = field(default_factory=lambda: array("q"))
    starts: array[int] = field(default_factory=lambda: array("q"))
    size: int = 0  # bytes accounted for by the entries' raw bytes
    partial_at: int | None = None  # where a truncated last line starts (Entry.partial)

    def add(self, entry: Entry) -> None:
        if entry.partial:
            self.partial_at = self.size
        self.linenos.append(entry.lineno)
        self.starts.append(self.size)
        self.size += len(entry.raw or b"")

    def span(self, lineno: int) -> tuple[int, int] | None:
        """Bytes [start, end) of the entries read from line ``lineno`` (several if glued)."""
        first = bisect_left(self.linenos, lineno)
        if first == len(self.linenos) or self.linenos[first] != lineno:
            return None
        after = bisect_right(self.linenos, lineno)
        return self.starts[first], self.starts[after] if after < len(self.starts) else self.size


class FileSource:
    """A transcript made of spooled inputs, read in order; iterate it as often as needed.
    Each framing warning (a bad or glued line) is given once, by whichever read meets the line
    first: the first read may stop early (format detection), so it cannot speak for all.
    Only the last input's truncated last line can end the output (unless ``final`` is False:
    another input's output follows); the others' are left out or, with --on-invalid keep,
    stay where they are (formats/jsonl.py, ``final``)."""

    def __init__(self, inputs: list[Spooled], io: IOOptions, *, final: bool = True) -> None:
        self.inputs = inputs
        self.io = io
        self.final = final
        self._warned: set[str] = set()
        self._tables: dict[int, LineTable] = {}  # input index -> table of a complete read
        # False when full reads only scan (what they write comes from iter_parsing, which
        # always parses exactly): skips the search for integers past 64 bits (iter_entries)
        self.exact_ints = True

    @property
    def name(self) -> str:
        return ", ".join(spooled.name for spooled in self.inputs)

    def __iter__(self) -> Iterator[Entry]:
        """Every entry, every line parsed (bad lines handled as --on-invalid says)."""
        for index, spooled in enumerate(self.inputs):
            table = LineTable()
            with spooled.open() as stream:
                for entry in self._guard(spooled, iter_entries(
                        self._lines(spooled, stream), spooled.name,
                        on_invalid=self.io.on_invalid, warn=self._warn_once,
                        exact_ints=self.exact_ints, final=self._ends_output(index))):
                    table.add(entry)
                    yield entry
            self._tables[index] = table  # reached only when the input was read to its end

    def _warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            messages.warn(message)

    def iter_parsing(self, lines: Collection[tuple[str, int]]) -> Iterator[Entry]:
        """Every entry again, parsing only ``lines``; the rest passes as opaque raw entries:
        big blocks copied by offset after a complete first read, else line by line. Warnings
        were given by the first read and are not repeated."""
        for index, spooled in enumerate(self.inputs):
            table = self._tables.get(index)
            wanted = sorted(n for source, n in lines if source == spooled.name)
            with spooled.open() as stream:
                if self.io.on_invalid == "skip":  # skipped lines must stay skipped: parse all
                    parsed = iter_entries(stream, spooled.name, on_invalid="skip")
                elif table is not None and table.size == spooled.size:
                    parsed = iter_spans(stream, spooled.name, table, wanted)
                else:
                    parsed = iter_lazy_entries(stream, spooled.name, lines)
                if not self._ends_output(index):
                    parsed = _cut_short(parsed, keep=self.io.on_invalid == "keep")
                yield from self._guard(spooled, self._entries_progress(spooled, parsed))

    def _ends_output(self, index: int) -> bool:
        """Whether input ``index`` is the last of the output: its truncated line may end it."""
        return self.final and index == len(self.inputs) - 1

    def _lines(self, spooled: Spooled, stream: BinaryIO) -> Iterable[bytes]:
        if not bars_enabled():
            return stream
        return progress(bounded_lines(stream, spooled.name), total=spooled.size,
                        desc=os.path.basename(spooled.name), unit="B", weight=len)

    def _entries_progress(self, spooled: Spooled, entries: Iterator[Entry]) -> Iterator[Entry]:
        if not bars_enabled():
            return entries
        return progress(entries, total=spooled.size, desc=os.path.basename(spooled.name),
                        unit="B", weight=entry_size)

    @staticmethod
    def _guard(spooled: Spooled, entries: Iterator[Entry]) -> Iterator[Entry]:
        try:
            yield from entries
        except OSError as exc:
            raise StoreError(f"cannot read: {exc.strerror or exc}", source=spooled.name) from exc


def _cut_short(entries: Iterable[Entry], *, keep: bool) -> Iterator[Entry]:
    """The second read of an input another follows: as the first read had it, its truncated
    last line is left out (the first read said so) or, with ``keep``, stays where it is."""
    for entry in entries:
        if entry.partial:
            if not keep:
                continue
            entry.partial = False
        yield entry


def iter_spans(stream: BinaryIO, source: str, table: LineTable,
               wanted: Iterable[int]) -> Iterator[Entry]:
    """The second read with a :class:`LineTable`: the lines numbered in ``wanted`` parsed, all
    other bytes as opaque entries of up to :data:`COPY_CHUNK` bytes (continuation blocks are
    marked ``glued`` so writers add no newline between them). From a file, those are
    :class:`Block` entries, read only when their bytes are asked for."""
    read: Callable[[int, int], bytes]
    blocks: Callable[[int, int, bool | None], Iterator[Entry]]
    file = InputFile.of(stream, source)
    if file is None:
        read = lambda _, length: stream.read(length)  # noqa: E731 - in order, from the stream
        blocks = functools.partial(_read_blocks, stream, source)
    else:
        read, blocks = file.read, functools.partial(_lazy_blocks, file, source)
    position = 0
    for lineno in wanted:
        span = table.span(lineno)
        if span is None or span[0] < position:
            continue
        yield from blocks(position, span[0], True)  # a line starts at span[0]: "\n" before it
        for entry in iter_entries([read(span[0], span[1] - span[0])], source, on_invalid="keep"):
            entry.lineno = lineno
            yield entry
        position = span[1]
    end = table.size if table.partial_at is None else max(table.partial_at, position)
    yield from blocks(position, end, True if end < table.size else None)  # None: the file's end
    if end < table.size:  # a truncated last line: its own entry, which writers put last
        for entry in iter_entries([read(end, table.size - end)], source, on_invalid="keep"):
            entry.lineno = table.linenos[-1]
            yield entry


def _read_blocks(stream: BinaryIO, source: str, start: int, end: int,
                 _: bool | None) -> Iterator[Entry]:
    first = True
    length = end - start
    while length > 0:
        block = stream.read(min(COPY_CHUNK, length))
        if not block:
            raise OSError(f"{CHANGED} (ended {length} bytes early)")
        length -= len(block)
        entry = Entry({}, raw=block, source=source, invalid=True)
        entry.glued, first = not first, False
        yield entry


def _lazy_blocks(file: InputFile, source: str, start: int, end: int,
                 line_ends: bool | None) -> Iterator[Entry]:
    """Blocks of [start, end) not read yet; ``line_ends``: whether a line ends at ``end``
    (None: not known)."""
    position = start
    while position < end:
        stop = min(position + COPY_CHUNK, end)
        newline = line_ends if stop == end else None
        yield Block(file, position, stop - position, source, glued=position > start,
                    newline=newline)
        position = stop


class InputFile:
    """An input file read by offset through a descriptor of our own, closed when nothing
    refers to it any more (the :class:`Block` entries of the file, a :class:`Stage`'s plan):
    it stays open after the stream it was made from is closed."""

    __slots__ = ("fd", "base", "name")
    MOST_OPEN = 16  # staged stdout holds every input's until the end: the rest as before
    open_now = 0

    def __init__(self, fd: int, base: int, name: str) -> None:
        self.fd = fd
        self.base = base  # where the transcript starts in the file (a rewound stdin)
        self.name = name
        InputFile.open_now += 1

    @classmethod
    def of(cls, stream: BinaryIO, name: str) -> InputFile | None:
        """The file ``stream`` reads, from where it is now; None for what is no file read by
        descriptor (an OpenCode database's session in memory, an --in-place file's window),
        or when :data:`MOST_OPEN` are open already (then the stream is read as before)."""
        if cls.open_now >= cls.MOST_OPEN or not isinstance(getattr(stream, "raw", None),
                                                           io.FileIO):
            return None
        try:
            base = stream.tell()
            fd = os.dup(stream.fileno())
        except (OSError, ValueError):
            return None
        return cls(fd, base, name)

    def __del__(self) -> None:
        try:
            type(self).open_now -= 1
            os.close(self.fd)
        except Exception:  # noqa: BLE001, S110 - at interpreter exit: the process closes it
            pass

    def read(self, offset: int, length: int) -> bytes:
        """Bytes [offset, offset + length) of the transcript; StoreError if the file ends
        before (it changed since the first read measured it)."""
        data = os.pread(self.fd, length, self.base + offset)
        while len(data) < length:
            more = os.pread(self.fd, length - len(data), self.base + offset + len(data))
            if not more:
                raise StoreError(f"cannot read: {CHANGED} (ended {length - len(data)} bytes "
                                 "early)", source=self.name)
            data += more
        return data


class Block(Entry):
    """Unchanged bytes of a file input (:func:`iter_spans`): an opaque entry that reads its
    bytes only when ``raw`` is asked for, so that an output that copies by offset (staged
    stdout, see :class:`Stage`) never brings them into Python."""

    __slots__ = ("file", "offset", "length", "newline", "_raw", "_read")

    def __init__(self, file: InputFile, offset: int, length: int, source: str, *,
                 glued: bool, newline: bool | None) -> None:
        dict.__init__(self)
        self.file, self.offset, self.length = file, offset, length
        self.newline = newline  # whether the bytes end with "\n" (None: not known)
        self._read = False
        self.source, self.lineno, self.invalid = source, 0, True
        self.glued, self.partial = glued, False

    @property  # type: ignore[override]
    def raw(self) -> bytes | None:
        if not self._read:
            self._raw, self._read = self.file.read(self.offset, self.length), True
        return self._raw

    @raw.setter
    def raw(self, value: bytes | None) -> None:
        self._raw, self._read = value, True

    def ends_with_newline(self) -> bool:
        if self.newline is None:
            last = self.file.read(self.offset + self.length - 1, 1)
            self.newline = last == b"\n"
        return self.newline


def entry_size(entry: Entry) -> int:
    """The bytes an entry was read from (without reading a :class:`Block`'s)."""
    return entry.length if type(entry) is Block else len(entry.raw or b"")


def iter_lazy_entries(lines: Iterable[bytes], source: str,
                      parse: Collection[tuple[str, int]]) -> Iterator[Entry]:
    """Entries of a stream parsing only the lines numbered in ``parse`` (as ``(source,
    lineno)``); every other line comes back unparsed as an opaque entry (``invalid=True``) that
    writers copy byte for byte (the fallback of :func:`iter_spans` without a table). Blank
    lines travel with the line before them (leading ones with the first), exactly as
    :func:`ctxtool.formats.jsonl.iter_entries` frames them."""
    pending = b""
    held: tuple[int, bytes] | None = None
    lineno = 0
    for line in lines:
        lineno += 1
        body = line[len(BOM):] if lineno == 1 and line.startswith(BOM) else line
        if is_blank(body):
            if held is None:
                pending += line
            else:
                held = (held[0], held[1] + line)
            continue
        if held is not None:
            yield from _lazy_entry(held, source, parse)
        held, pending = (lineno, pending + line), b""
    if held is not None:
        yield from _lazy_entry(held, source, parse, last=True)
    elif pending:
        yield Entry({}, raw=pending, source=source, lineno=lineno, invalid=True)


def _lazy_entry(held: tuple[int, bytes], source: str, parse: Collection[tuple[str, int]], *,
                last: bool = False) -> Iterator[Entry]:
    lineno, raw = held
    if (source, lineno) not in parse:
        entry = Entry({}, raw=raw, source=source, lineno=lineno, invalid=True)
        # a last line without newline may be a truncated one, which writers put last
        entry.partial = last and not raw.endswith(b"\n") and is_truncated(raw)
        yield entry
        return
    for entry in iter_entries([raw], source, on_invalid="keep"):
        entry.lineno = lineno
        yield entry


# --- running a two-pass transform -----------------------------------------------------------------

TwoPass = Callable[[str, FileSource], Iterable[dict[str, Any]]]


@contextlib.contextmanager
def staged_output(output: str | None, inputs: Iterable[str] = ()) -> Iterator[BinaryIO]:
    """Like :func:`ctxtool.io.streams.open_output`, but stdout gets the bytes only after the
    block succeeded: they are staged (a :class:`Stage`) until then."""
    if output not in (None, "-"):
        with open_output(output, inputs) as handle:
            yield handle
        return
    import tempfile  # see _copied

    with tempfile.TemporaryFile(prefix="ctxtool-out-") as temp, Stage(temp) as stage:
        yield stage  # type: ignore[misc]
        # as before any commit, what the store deferred goes to disk first (nothing today: the
        # store of a stdout run is not durable, its input still holds everything)
        durable.flush()
        stage.copy_out(binary_stdout())
        durable.crash_point("after-stdout")


class Stage:
    """stdout held back until a run succeeded, as a plan of spans to copy at the end: the bytes
    the run produced (changed lines...) are written to a temp file, the unchanged bytes of a
    file input (:class:`Block` entries that pass :meth:`track`) are noted by offset and copied
    from the input itself, never read into Python. The kernel copies each span (``sendfile``);
    where it refuses (stdout opened for appending, no descriptor), Python does."""

    def __init__(self, temp: BinaryIO) -> None:
        self._temp = temp
        self._staged = 0  # bytes written to the temp file
        self._plan: list[list[Any]] = []  # [InputFile or None (the temp file), offset, length]
        self._block: tuple[bytes, Block] | None = None  # the last Block's stand-in, and it

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, *exc: object) -> None:
        self._plan.clear()  # closes the inputs' descriptors nothing else holds

    def track(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``entries``, each :class:`Block` not read yet replaced by a stand-in whose bytes
        the writer writes as it would the block's (two bytes, ending with a newline as the
        block does); :meth:`write` recognizes them and plans the block instead."""
        for entry in entries:
            if type(entry) is Block and not entry._read:
                stand_in = bytes((0, 10 if entry.ends_with_newline() else 0))  # a new object
                self._block = (stand_in, entry)
                same = Entry({}, stand_in, entry.source, entry.lineno, True)
                same.glued = entry.glued
                yield same
            else:
                yield entry

    def write(self, data: bytes) -> int:
        planned = self._block
        if planned is not None and data is planned[0]:
            self._block = None
            block = planned[1]
            self._add(block.file, block.offset, block.length)
            return block.length
        self._temp.write(data)
        self._add(None, self._staged, len(data))
        self._staged += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def _add(self, file: InputFile | None, offset: int, length: int) -> None:
        if self._plan:
            last = self._plan[-1]
            if last[0] is file and last[1] + last[2] == offset:
                last[2] += length
                return
        self._plan.append([file, offset, length])

    def copy_out(self, out: BinaryIO) -> None:
        """Write the plan to ``out``, once every input is checked to still hold the bytes
        planned from it.

        Left open: an input truncated after this check and before its spans are copied ends
        the copy short, with part of the output already on stdout (the run still fails, with
        the same error). Bytes out cannot be taken back, and nothing stops another process
        from truncating a file we read; Claude Code only appends to a session. Bytes changed
        in place (not appended) are not seen, as they were not when read in the second pass."""
        self._temp.flush()
        self._check_inputs()
        out.flush()
        out_fd = _fileno(out)
        temp_fd = self._temp.fileno()
        for file, offset, length in self._plan:
            src, start = (temp_fd, offset) if file is None else (file.fd, file.base + offset)
            if out_fd is not None:
                sent = _send(out_fd, src, start, length)
                if sent is None:  # refused: Python copies this span and the rest
                    out_fd = None
                else:
                    start, length = start + sent, length - sent
            if out_fd is None:
                length -= _copy(out, src, start, length)
            if length:
                raise StoreError(f"cannot read: {CHANGED} (ended {length} bytes early)",
                                 source=file.name if file is not None else None)
        out.flush()

    def _check_inputs(self) -> None:
        ends: dict[InputFile, int] = {}
        for file, offset, length in self._plan:
            if file is not None:
                ends[file] = max(ends.get(file, 0), file.base + offset + length)
        for file, end in ends.items():
            size = os.fstat(file.fd).st_size
            if size < end:
                raise StoreError(f"cannot read: {CHANGED} (it has {end - size} bytes fewer "
                                 "than when it was read)", source=file.name)


def _fileno(stream: BinaryIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stdout (tests)
        return None


# sendfile's refusals that leave nothing copied: an O_APPEND output or one that takes no splice
# (Linux), an input it cannot read by offset, no sendfile at all, or (macOS) an output that is
# not a socket
_REFUSED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ESPIPE, errno.EXDEV,
            errno.ENOTSOCK}


def _send(out_fd: int, src: int, offset: int, length: int) -> int | None:
    """Bytes of ``src`` [offset, offset + length) sent to ``out_fd`` by the kernel: fewer when
    ``src`` ends early, None when the kernel refused before sending any."""
    sent = 0
    while sent < length:
        try:
            n = os.sendfile(out_fd, src, offset + sent, length - sent)
        except OSError as exc:
            if sent == 0 and exc.errno in _REFUSED:
                return None
            raise
        if n == 0:
            break
        sent += n
    return sent


def _copy(out: BinaryIO, src: int, offset: int, length: int) -> int:
    """Bytes of ``src`` [offset, offset + length) copied to ``out`` through Python."""
    copied = 0
    while copied < length:
        chunk = os.pread(src, min(COPY_CHUNK, length - copied), offset + copied)
        if not chunk:
            break
        out.write(chunk)
        copied += len(chunk)
    return copied


def source_format(source: FileSource, forced: str | None) -> str:
    """The format of a source, detected from its first entries unless ``forced``."""
    fmt, entries = detect_format(iter(source), forced)
    close = getattr(entries, "close", None)
    if close is not None:
        close()
    return fmt


def run_two_pass(io: IOOptions, transform: TwoPass) -> None:
    """Read, transform (the core reads the source twice), write: to stdout / -o FILE, or back
    into each input with --in-place."""
    if not io.in_place:
        check_stdin(io)
        with spooled_inputs(io.paths, io) as source:
            source.exact_ints = False  # the transform writes what iter_parsing reads
            fmt = source_format(source, io.format)
            with staged_output(io.output, io.paths) as out:
                entries = transform(fmt, source)
                if isinstance(out, Stage):
                    entries = out.track(entries)
                write_entries(entries, out)
        return
    for path in in_place_paths(io):
        with batch.each(path, of=len(io.inputs)), spooled_input(path, io) as source:
            source.exact_ints = False
            fmt = source_format(source, io.format)
            with open_output(path) as out:
                write_entries(transform(fmt, source), out)


__all__ = ["Block", "FileSource", "InputFile", "LineTable", "Spooled", "Stage", "iter_lazy_entries",
           "iter_spans", "run_two_pass", "source_format", "spool", "spooled_input",
           "spooled_inputs", "staged_output"]
