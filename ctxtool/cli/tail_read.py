"""Reading a transcript's last lines into ``estimate``'s figure (see core/sizing/session_tail.py).

Kept apart from the session listing so ``ctxtool statusline``, which runs on every message of a
Claude Code session, imports only this.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO, NamedTuple

import orjson

from ctxtool.core.sizing.estimate import EstimateReport
from ctxtool.core.sizing.session_tail import estimate_tail, first_chain, last_timestamp, split_tail
from ctxtool.formats.adapter import SessionMarks
from ctxtool.formats.registry import adapter_for
from ctxtool.storage.tail import iter_head_lines, iter_lines_reversed

HEAD_BYTES = 64 << 10


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


class TailOptions(NamedTuple):
    """What the tail estimate needs beyond the file (the statusline knows the window)."""

    model: str | None = None
    context_window: int | None = None
    env: Mapping[str, str] | None = None


def parse_line(line: bytes) -> dict[str, object] | None:
    return next(parse_lines([line]), None)


def marks_of(fmt: str) -> SessionMarks:
    marks = adapter_for(fmt).session_marks
    if marks is None:
        raise ValueError(f"{fmt} sessions are not read from their ends")
    return marks


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
    """:func:`tail_report` from a transcript's lines, last first (pulled only as far as
    needed). Only the lines the adapter's marks say could be a call or a compaction are parsed
    on the way."""
    marks = marks_of(fmt)

    def may_stop(line: bytes) -> bool:
        return marks.usage in line or marks.compaction in line

    def may_name_model(line: bytes) -> bool:
        return marks.model is not None and marks.model in line

    tail = split_tail(lines, parse=parse_line, may_stop=may_stop, chain=chain, fmt=fmt)
    report = estimate_tail(tail, before=lines if marks.model else (), parse=parse_line,
                           named=may_name_model, chain=chain, compactions=compactions, fmt=fmt,
                           source=source, model=options.model,
                           context_window=options.context_window, env=options.env)
    return report, last_timestamp(tail)
