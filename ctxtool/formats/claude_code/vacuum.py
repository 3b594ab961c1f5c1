"""What ``vacuum`` takes out of a Claude Code transcript: entries written more than once.

A repeated ``/compact`` in one Claude Code process appends the history before the boundary
again, line for line (the same uuid, parentUuid and timestamp: an open bug in its tracker), then
the new boundary; a session compacted n times can hold its early history n times.

Claude Code's loader (2.1.332; docs/vacuum.md quotes it) keeps one entry per uuid in a ``Map``:
a copy sets the key it already holds, which keeps its place and, the bytes being the same, its
value. What a copy changes besides is the loader's "last row" state - the last row's uuid (the
leaf it resumes from when no checkpoint says otherwise), the trailing-snapshot count, the
checkpoint flags - and, for a copy of a compact boundary, the checkpoint itself (reset). So a
run of copies goes only when the line right after it is a row that sets that state again
itself: a user or assistant row of the main thread, or a compact boundary; and a run holding a
boundary copy only when that line is a boundary (it resets the checkpoint as the copy did).
This is the shape the repeated ``/compact`` leaves (copies, then the new boundary). Only lines
whose bytes are exactly those of an earlier line with a ``uuid`` count as copies; a line that
differs, however little, stays.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from ctxtool.formats.vacuum import LineEdit

REPEATED = "repeated entry"
# Lines are told apart by their bytes (a dict keyed by them: hashed once, compared exactly on a
# match), which holds the file's lines while it is read; past this many bytes of lines, by a
# 128-bit BLAKE2b digest instead, which costs three times the time and holds 16 bytes a line.
HELD_BYTES = 256 << 20
_UUID = b'"uuid"'  # in every line with a uuid, however it is spaced (a quote inside text is \")
_ROWS = frozenset({"user", "assistant", "system", "attachment"})  # rows the loader keys by uuid


def repeated_entries(lines: Iterable[bytes]) -> Iterator[LineEdit]:
    """A :class:`LineEdit` (``copy_of`` the first) for each line that repeats an earlier entry
    byte for byte, in runs the next line makes safe to take out (see the module docstring)."""
    first: dict[bytes, int] = {}
    kinds: dict[bytes, str | None] = {}  # of a repeated line: "boundary", "row" or None
    run: list[LineEdit] = []
    run_boundary = False
    held = 0
    for index, line in enumerate(lines):
        held += len(line)
        if held > HELD_BYTES and not held - len(line) > HELD_BYTES:  # crossed: digests now
            first = {_digest(key): at for key, at in first.items()}
            kinds = {_digest(key): kind for key, kind in kinds.items()}
        key = _key(line, digest=held > HELD_BYTES)
        if key is not None:
            seen = first.setdefault(key, index)
            if seen != index:
                if key not in kinds:
                    kinds[key] = _copy_kind(line)
                if kinds[key] is not None:
                    run.append(LineEdit(index, REPEATED, copy_of=seen))
                    run_boundary = run_boundary or kinds[key] == "boundary"
                    continue
        if run and _resets(line, boundary_needed=run_boundary):
            yield from run
        run, run_boundary = [], False


def _key(line: bytes, *, digest: bool) -> bytes | None:
    if _UUID not in line or not line.endswith(b"\n"):
        return None
    return _digest(line) if digest else line


def _digest(line: bytes) -> bytes:
    return hashlib.blake2b(line, digest_size=16).digest()


def _copy_kind(line: bytes) -> str | None:
    entry = _parsed(line)
    if entry is None or not isinstance(entry.get("uuid"), str) or entry.get("type") not in _ROWS:
        return None
    return "boundary" if _is_boundary(entry) else "row"


def _resets(line: bytes, *, boundary_needed: bool) -> bool:
    """Whether ``line`` is a row after which the loader's state is what it would be without
    the copies before it."""
    entry = _parsed(line)
    if entry is None or not isinstance(entry.get("uuid"), str) or entry.get("isSidechain") is True:
        return False
    if _is_boundary(entry):
        return True
    return not boundary_needed and entry.get("type") in ("user", "assistant")


def _is_boundary(entry: dict[str, Any]) -> bool:
    return entry.get("type") == "system" and entry.get("subtype") == "compact_boundary"


def _parsed(line: bytes) -> dict[str, Any] | None:
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return entry if isinstance(entry, dict) else None
