"""Reading a transcript's ends for the session listing: lines parsed with orjson (many files),
the figure from :mod:`ctxtool.core.sizing.session_tail` (``ctxtool statusline`` reads its one
file with the stdlib instead: :mod:`ctxtool.statusline`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import BinaryIO

import orjson

from ctxtool.core.sizing import session_tail
from ctxtool.core.sizing.estimate import EstimateReport
from ctxtool.core.sizing.session_tail import HEAD_BYTES, TailOptions, first_chain, marks_of
from ctxtool.storage.tail import iter_head_lines, iter_lines_reversed


def parse_lines(lines: Iterable[bytes]) -> Iterator[dict[str, object]]:
    """The JSON objects among ``lines``; anything else (a line cut short by a session still
    being written, blank lines) is passed over."""
    for line in lines:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def parse_line(line: bytes) -> dict[str, object] | None:
    return next(parse_lines([line]), None)


def head_chain(handle: BinaryIO) -> bool | None:
    """The ``isSidechain`` flag of the first entry that has one (in the first 64 KB)."""
    return first_chain(parse_lines(iter_head_lines(handle, max_bytes=HEAD_BYTES)))


def tail_report(handle: BinaryIO, *, chain: bool | None, fmt: str, source: str | None = None,
                options: TailOptions = TailOptions(), compactions: int = 0,
                ) -> tuple[EstimateReport, str | None]:
    """``estimate``'s report (context now, window; ``compactions`` as given) from the last
    lines, and the last entry's timestamp."""
    return report_of_tail(iter_lines_reversed(handle), chain=chain, fmt=fmt, source=source,
                          options=options, compactions=compactions)


def report_of_tail(lines: Iterator[bytes], *, chain: bool | None, fmt: str,
                   source: str | None = None, options: TailOptions = TailOptions(),
                   compactions: int = 0) -> tuple[EstimateReport, str | None]:
    """:func:`ctxtool.core.sizing.session_tail.report_of_tail`, lines parsed with orjson."""
    return session_tail.report_of_tail(lines, parse=parse_line, chain=chain, fmt=fmt,
                                       source=source, options=options, compactions=compactions)


__all__ = ["HEAD_BYTES", "TailOptions", "head_chain", "marks_of", "parse_line", "parse_lines",
           "report_of_tail", "tail_report"]
