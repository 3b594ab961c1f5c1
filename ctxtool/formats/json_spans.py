"""Where a member's value sits in the text of a JSON object, so an edit can replace that value
and leave every other byte of the line as the agent wrote it.

The text is a line's bytes decoded as Latin-1: one character per byte, so the indices found are
byte offsets. JSON's structure is ASCII and a multi-byte UTF-8 character is all bytes >= 0x80,
so no byte of one is taken for a quote, a brace or a backslash; the values read along the way
are not the real strings, only their extent matters here.
"""

from __future__ import annotations

import json

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class SpanError(ValueError):
    """The text is not the JSON object it should be (or repeats a key)."""


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _expect(text: str, at: int, chars: str) -> str:
    if at >= len(text) or text[at] not in chars:
        raise SpanError(f"expected one of {chars!r} at {at}")
    return text[at]


def object_spans(text: str, start: int = 0) -> tuple[dict[str, tuple[int, int]], int]:
    """The ``(start, end)`` of each member's value in the object that begins at ``start``
    (leading space skipped), by key, and the index just past the object's ``}``."""
    at = _skip(text, start)
    _expect(text, at, "{")
    spans: dict[str, tuple[int, int]] = {}
    at = _skip(text, at + 1)
    if _expect(text, at, '}"') == "}":
        return spans, at + 1
    while True:
        _expect(text, at, '"')
        try:
            key, at = _DECODER.raw_decode(text, at)
            at = _skip(text, at)
            _expect(text, at, ":")
            value_start = _skip(text, at + 1)
            _, at = _DECODER.raw_decode(text, value_start)
        except json.JSONDecodeError as exc:
            raise SpanError(str(exc)) from None
        if key in spans:
            raise SpanError(f"key {key!r} twice")
        spans[key] = (value_start, at)
        at = _skip(text, at)
        if _expect(text, at, ",}") == "}":
            return spans, at + 1
        at = _skip(text, at + 1)


def array_spans(text: str, start: int = 0) -> tuple[list[tuple[int, int]], int]:
    """The ``(start, end)`` of each element of the array that begins at ``start`` (leading
    space skipped), and the index just past its ``]``."""
    at = _skip(text, start)
    _expect(text, at, "[")
    spans: list[tuple[int, int]] = []
    at = _skip(text, at + 1)
    if at < len(text) and text[at] == "]":
        return spans, at + 1
    while True:
        try:
            _, end = _DECODER.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            raise SpanError(str(exc)) from None
        spans.append((at, end))
        at = _skip(text, end)
        if _expect(text, at, ",]") == "]":
            return spans, at + 1
        at = _skip(text, at + 1)


__all__ = ["SpanError", "array_spans", "object_spans"]
