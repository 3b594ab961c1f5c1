"""``ctxtool.load``: a transcript file (or open binary file) read into entries, format detected.

The Python counterpart of giving a FILE to a command: the same reader (unknown keys kept, an
unchanged entry written back byte for byte), the same format detection, the same errors
(:class:`ctxtool.InputError` naming file and line, :class:`ctxtool.StoreError` for a file that
cannot be read).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any, BinaryIO

from ctxtool.errors import StoreError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import iter_entries, write_entries
from ctxtool.storage.atomic import write_bytes_atomic
from ctxtool.types import Entry


@dataclass
class Transcript:
    """Entries read from one transcript, with the format they were detected as."""

    format: str
    entries: list[Entry] = field(default_factory=list)
    source: str = "<stream>"

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def load(path_or_file: str | os.PathLike[str] | IO[bytes], *, format: str | None = None,
         on_invalid: str = "error") -> Transcript:
    """Read a JSONL transcript: a path, or a file opened in binary mode. ``format`` forces one
    (``claude-code``, ``anthropic``, ``openai``, ``opencode``) instead of detecting it;
    ``on_invalid`` is the CLI's --on-invalid (error, skip or keep a line that is no JSON object)."""
    if isinstance(path_or_file, (str, os.PathLike)):
        name = os.fspath(path_or_file)
        try:
            with open(name, "rb") as handle:
                return _read(handle, name, format, on_invalid)
        except OSError as exc:
            raise StoreError(f"cannot read: {exc.strerror or exc}", source=name) from exc
    name = str(getattr(path_or_file, "name", "<stream>"))
    return _read(path_or_file, name, format, on_invalid)


def save(entries: Any, path_or_file: str | os.PathLike[str] | BinaryIO) -> int:
    """Write entries (a :class:`Transcript`, a list, a transform's generator) as JSONL: to a
    path atomically, or to a binary file. Returns the number of entries written."""
    if not isinstance(path_or_file, (str, os.PathLike)):
        return write_entries(entries, path_or_file)
    import io

    buffer = io.BytesIO()
    count = write_entries(entries, buffer)
    write_bytes_atomic(os.fspath(path_or_file), buffer.getvalue())
    return count


def _read(handle: IO[bytes], name: str, forced: str | None, on_invalid: str) -> Transcript:
    fmt, entries = detect_format(iter_entries(handle, name, on_invalid=on_invalid),  # type: ignore[arg-type]
                                 forced)
    return Transcript(format=fmt, entries=list(entries), source=name)
