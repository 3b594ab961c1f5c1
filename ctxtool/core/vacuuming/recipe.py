"""The recipe ``restore`` rebuilds a vacuumed file's original from, byte for byte.

A recipe is one JSON object::

    {"ctxtool_vacuum": 1, "format": "claude-code",
     "original": {"bytes": N, "sha256": H}, "vacuumed": {"bytes": M, "sha256": H2},
     "steps": [...]}

``steps`` walk the original's lines in order against the vacuumed file's lines:

* ``n`` (an integer): the next ``n`` lines of the vacuumed file, as they are;
* ``{"copy": k, "n": m}``: the vacuumed file's lines ``k`` .. ``k+m-1`` (from 0) again - lines
  the original held twice;
* ``{"line": [piece, ...], "skip": s}``: a line of the original made of pieces, each a string
  (its UTF-8 text) or ``{"sha256": digest}`` (bytes kept in the store); ``skip`` (0 or 1):
  the vacuumed file holds a new line in its place, passed over.

A vacuumed file may grow after the vacuum (the agent appends to a live session): its first
``vacuumed.bytes`` bytes are what the recipe was made for, and what follows them is copied after
the rebuilt original. The recipe is found by that prefix (:func:`matches`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ctxtool.errors import StoreError

VERSION = 1
KEY = "ctxtool_vacuum"

Piece = str | dict[str, str]
Loader = Callable[[str], bytes | None]


class RecipeBuilder:
    """Records, line by line, how the original maps onto the vacuumed file."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.steps: list[Any] = []
        self.original = hashlib.sha256()
        self.vacuumed = hashlib.sha256()
        self.original_bytes = 0
        self.vacuumed_bytes = 0
        self.out_lines = 0  # lines of the vacuumed file so far

    def kept(self, line: bytes) -> int:
        """An original line written unchanged; its index in the vacuumed file."""
        self._read(line)
        self._wrote(line)
        if self.steps and isinstance(self.steps[-1], int):
            self.steps[-1] += 1
        else:
            self.steps.append(1)
        return self.out_lines - 1

    def copied(self, line: bytes, at: int) -> None:
        """An original line left out: the same bytes as the vacuumed file's line ``at``."""
        self._read(line)
        last = self.steps[-1] if self.steps else None
        if isinstance(last, dict) and "copy" in last and last["copy"] + last["n"] == at:
            last["n"] += 1
        else:
            self.steps.append({"copy": at, "n": 1})

    def replaced(self, line: bytes, pieces: list[Piece], new: bytes | None) -> None:
        """An original line kept as ``pieces`` (its bytes in the store), replaced by ``new``
        (or left out: None)."""
        self._read(line)
        if new is not None:
            self._wrote(new)
        self.steps.append({"line": pieces, "skip": int(new is not None)})

    def _read(self, line: bytes) -> None:
        self.original.update(line)
        self.original_bytes += len(line)

    def _wrote(self, line: bytes) -> None:
        self.vacuumed.update(line)
        self.vacuumed_bytes += len(line)
        self.out_lines += 1

    def recipe(self) -> dict[str, Any]:
        return {KEY: VERSION, "format": self.fmt,
                "original": {"bytes": self.original_bytes,
                             "sha256": self.original.hexdigest()},
                "vacuumed": {"bytes": self.vacuumed_bytes,
                             "sha256": self.vacuumed.hexdigest()},
                "steps": self.steps}


def pieces_of(line: bytes, payloads: Iterable[tuple[int, int]],
              keep: Callable[[bytes], str], *, inline: bool = False) -> list[Piece]:
    """``line`` as recipe pieces: each payload range, and the whole line when there is none
    (unless ``inline``: then it stays in the recipe), goes to the store through ``keep`` (which
    returns its digest); the bytes between payloads stay in the recipe as text (in the store
    too when they are not UTF-8)."""
    ranges = list(payloads) or ([] if inline else [(0, len(line))])
    pieces: list[Piece] = []
    at = 0
    for start, end in ranges:
        if not at <= start < end <= len(line):
            raise ValueError(f"payload range {start}-{end} does not fit a line of {len(line)} "
                             "bytes in order")
        if start > at:
            pieces.append(_text_piece(line[at:start], keep))
        pieces.append({"sha256": keep(line[start:end])})
        at = end
    if at < len(line):
        pieces.append(_text_piece(line[at:], keep))
    return pieces


def _text_piece(data: bytes, keep: Callable[[bytes], str]) -> Piece:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"sha256": keep(data)}


# --- rebuilding ------------------------------------------------------------------------------

def matches(recipe: dict[str, Any], head: bytes) -> bool:
    """Whether ``head`` (a file's first ``recipe["vacuumed"]["bytes"]`` bytes) is what the
    recipe was made for."""
    vacuumed = recipe.get("vacuumed") or {}
    return (len(head) == vacuumed.get("bytes")
            and hashlib.sha256(head).hexdigest() == vacuumed.get("sha256"))


def is_recipe(value: Any) -> bool:
    return (isinstance(value, dict) and value.get(KEY) == VERSION
            and isinstance(value.get("steps"), list)
            and isinstance(value.get("original"), dict)
            and isinstance(value.get("vacuumed"), dict))


def rebuild(recipe: dict[str, Any], lines: Iterable[bytes], load: Loader,
            source: str) -> Iterator[bytes]:
    """The original's bytes, from the vacuumed file's ``lines`` (its first
    ``vacuumed.bytes`` only) and the stored pieces. Raises StoreError when a piece is missing
    or the result is not the original (its SHA-256 differs)."""
    wanted = _copied_lines(recipe["steps"])
    held: dict[int, bytes] = {}
    vacuumed = iter(lines)
    digest = hashlib.sha256()
    index = 0

    def take(count: int) -> Iterator[bytes]:
        nonlocal index
        for _ in range(count):
            line = next(vacuumed, None)
            if line is None:
                raise StoreError("the vacuumed file is shorter than its recipe", source=source)
            if index in wanted:
                held[index] = line
            index += 1
            yield line

    for step in recipe["steps"]:
        for line in _step_lines(step, take, held, load, source):
            digest.update(line)
            yield line
    if digest.hexdigest() != recipe["original"]["sha256"]:
        raise StoreError("the rebuilt file is not the original (its SHA-256 differs); the "
                         "store or the file was changed", source=source)


def _step_lines(step: Any, take: Callable[[int], Iterator[bytes]], held: dict[int, bytes],
                load: Loader, source: str) -> Iterator[bytes]:
    if isinstance(step, int):
        yield from take(step)
        return
    if "copy" in step:
        for at in range(step["copy"], step["copy"] + step["n"]):
            if at not in held:
                raise StoreError(f"recipe copies line {at}, not read yet", source=source)
            yield held[at]
        return
    yield b"".join(_piece_bytes(piece, load, source) for piece in step["line"])
    for _ in take(int(step.get("skip", 0))):
        pass


def _piece_bytes(piece: Piece, load: Loader, source: str) -> bytes:
    if isinstance(piece, str):
        return piece.encode("utf-8")
    data = load(piece["sha256"])
    if data is None:
        raise StoreError(f"stored piece {piece['sha256'][:16]}... is missing from the store",
                         source=source)
    return data


def _copied_lines(steps: list[Any]) -> set[int]:
    wanted: set[int] = set()
    for step in steps:
        if isinstance(step, dict) and "copy" in step:
            wanted.update(range(step["copy"], step["copy"] + step["n"]))
    return wanted
