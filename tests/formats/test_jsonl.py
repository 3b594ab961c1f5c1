"""Line framing: every shape real files come in, and byte-identical identity round trips."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ctxtool.errors import InputError, UsageError
from ctxtool.formats import jsonl
from ctxtool.formats.jsonl import (bounded_chunks, bounded_lines, iter_entries, max_line_bytes,
                                   write_entries)
from ctxtool.types import Entry
from tests.conftest import corpus_params


def roundtrip(data: bytes, **kwargs: object) -> bytes:
    out = io.BytesIO()
    write_entries(iter_entries(io.BytesIO(data), "t.jsonl", **kwargs), out)  # type: ignore[arg-type]
    return out.getvalue()


@pytest.mark.parametrize("data", [
    b"",
    b'{"a":1}\n{"b":2}\n',
    b'{"a":1}\n{"b":2}',  # no final newline
    b'{"a":1}\r\n{"b":2}\r\n',  # CRLF
    b'\xef\xbb\xbf{"a":1}\n',  # BOM
    b'\n\n{"a":1}\n\n{"b":2}\n\n',  # blank lines everywhere
    b'{ "spaced" :  1 }\n',
    b"\n\n",
])
def test_identity_is_byte_identical(data: bytes) -> None:
    assert roundtrip(data) == data


def test_entries_keep_location_and_keys() -> None:
    entries = list(iter_entries(io.BytesIO(b'\n{"a":1,"zz":{"x":[1]}}\n{"b":2}\n'), "f.jsonl"))
    assert [dict(e) for e in entries] == [{"a": 1, "zz": {"x": [1]}}, {"b": 2}]
    assert [e.location for e in entries] == ["f.jsonl:2", "f.jsonl:3"]


def test_changed_entry_is_reserialized_and_newline_added_after_unterminated_line() -> None:
    entries = list(iter_entries(io.BytesIO(b'{"a":1}\n{"b":  2}'), "f"))
    out = io.BytesIO()
    write_entries([entries[0], {**entries[1], "c": 3}, {"d": 4}], out)
    assert out.getvalue() == b'{"a":1}\n{"b":2,"c":3}\n{"d":4}\n'


def test_top_level_mutation_drops_raw() -> None:
    (entry,) = iter_entries(io.BytesIO(b'{"a":  1}\n'), "f")
    entry["a"] = 2
    out = io.BytesIO()
    write_entries([entry], out)
    assert out.getvalue() == b'{"a":2}\n'


def test_glued_objects_are_split_with_a_warning() -> None:
    warnings: list[str] = []
    entries = list(iter_entries(io.BytesIO(b'{"a":1}{"b":2}\n{"c":3}\n'), "g.jsonl",
                                warn=warnings.append))
    assert [dict(e) for e in entries] == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert warnings and warnings[0].startswith("g.jsonl:1: 2 JSON objects on one line")


@pytest.mark.parametrize(("data", "lineno", "problem"), [
    (b'{"a":1}\n{"a":\n{"b":2}\n', 2, "invalid JSON"),
    (b'{"a":1}\n[1,2]\n', 2, "expected a JSON object, got an array"),
    (b'{"a":1}\n"str"\n', 2, "expected a JSON object, got a string"),
    (b'{"a":"\xff"}\n', 1, "invalid UTF-8"),
    (b'{"a":"\\ud800"}\n', 1, "lone surrogate"),
    (b'{\n  "a": 1\n}\n', 1, "pretty-printed JSON document"),
])
def test_bad_lines_raise_with_location(data: bytes, lineno: int, problem: str) -> None:
    with pytest.raises(InputError) as info:
        roundtrip(data)
    assert info.value.lineno == lineno
    assert problem in info.value.message
    assert info.value.format().startswith(f"t.jsonl:{lineno}: ")


def test_on_invalid_skip_and_keep() -> None:
    data = b'{"a":1}\nnot json\n{"b":2}\n'
    assert roundtrip(data, on_invalid="skip") == b'{"a":1}\n{"b":2}\n'
    assert roundtrip(data, on_invalid="keep") == data


def test_truncated_last_line_passes_through_with_warning() -> None:
    warnings: list[str] = []
    data = b'{"a":1}\n{"b":2,"c":"unfini'
    out = io.BytesIO()
    write_entries(iter_entries(io.BytesIO(data), "live.jsonl", warn=warnings.append), out)
    assert out.getvalue() == data
    assert "live.jsonl:2: truncated last line" in warnings[0]
    assert roundtrip(data, on_invalid="skip") == b'{"a":1}\n'


def test_invalid_kept_entries_are_marked() -> None:
    entries = list(iter_entries(io.BytesIO(b"junk\n"), "f", on_invalid="keep"))
    assert len(entries) == 1 and isinstance(entries[0], Entry) and entries[0].invalid
    assert dict(entries[0]) == {}


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_corpus_identity_round_trip(path: Path) -> None:
    data = path.read_bytes()
    assert roundtrip(data, on_invalid="keep") == data


def test_glued_objects_round_trip_byte_identical_and_split_when_changed() -> None:
    data = b'{"a":1} {"b":2}{"c":3}\n{"d":4}\n'
    assert roundtrip(data) == data
    entries = list(iter_entries(io.BytesIO(data), "g"))
    out = io.BytesIO()
    write_entries([entries[0], {**entries[1], "x": 1}, entries[2], entries[3]], out)
    assert out.getvalue() == b'{"a":1}\n{"b":2,"x":1}\n{"c":3}\n{"d":4}\n'


# --- the maximum line length ----------------------------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [
    ("", 256 << 20), ("1000", 1000), ("512M", 512 << 20), ("1g", 1 << 30), ("64KiB", 64 << 10),
    (" 2 MB ", 2 << 20)])
def test_max_line_bytes_reads_the_environment(value: str, expected: int) -> None:
    assert max_line_bytes({"CTXTOOL_MAX_LINE_BYTES": value}) == expected


@pytest.mark.parametrize("value", ["abc", "-5", "0", "1.5G", "12X"])
def test_a_bad_max_line_bytes_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="CTXTOOL_MAX_LINE_BYTES"):
        max_line_bytes({"CTXTOOL_MAX_LINE_BYTES": value})


@pytest.mark.parametrize("long_line", [4 << 20, 16, 100, 101, 102],
                         ids=["default-pieces", "small-pieces", "pieces-of-limit",
                              "pieces-of-limit+1", "pieces-of-limit+2"])
def test_bounded_lines_allows_exactly_the_limit(long_line: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of ``limit`` bytes (newline not counted) passes, one byte more is refused after
    ``limit + 1`` bytes were read, naming its line; a last line without newline counts the same.
    Small pieces: the BytesIO path for lines past LONG_LINE gives the same lines, also when a
    piece ends right at the limit or at the line's newline."""
    monkeypatch.setattr(jsonl, "LONG_LINE", long_line)
    ok = b"a" * 100 + b"\n" + b"b" * 100 + b"\n" + b"c" * 100
    assert list(bounded_lines(io.BytesIO(ok), "f", 100)) == ok.splitlines(keepends=True)
    assert list(bounded_lines(ok.splitlines(keepends=True), "f", 100)) == \
        ok.splitlines(keepends=True)
    edges = b"d" * 99 + b"\n" + b"e" * 100 + b"\n" + b"f" * 101 + b"\n"[:0]
    assert list(bounded_lines(io.BytesIO(edges[:-101]), "f", 100)) == \
        edges[:-101].splitlines(keepends=True)
    for data, line in [(b"a\n" + b"b" * 101 + b"\n", 2), (b"a\n" + b"b" * 101, 2),
                       (b"x" * 5000, 1)]:
        stream = io.BytesIO(data)
        with pytest.raises(InputError, match="line longer than 100 bytes") as caught:
            list(bounded_lines(stream, "f", 100))
        assert caught.value.location == f"f:{line}"
        assert stream.tell() <= len(data.split(b"\n")[0]) + 1 + 101 + 1  # stopped at the limit


def test_iter_entries_applies_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXTOOL_MAX_LINE_BYTES", "64")
    data = b'{"a":1}\n{"b":"' + b"x" * 100 + b'"}\n'
    with pytest.raises(InputError) as caught:
        list(iter_entries(io.BytesIO(data), "s.jsonl"))
    assert caught.value.location == "s.jsonl:2" and caught.value.exit_code == 3


def test_bounded_chunks_stops_an_endless_line_while_copying() -> None:
    """What spooling a pipe or character device copies: a run without newline longer than the
    limit, across chunks, stops the copy (exit 3) naming its line."""
    chunks = [b"a\nbb", b"b" * 50, b"\n" + b"c" * 60, b"c" * 41]
    with pytest.raises(InputError) as caught:
        list(bounded_chunks(chunks, "pipe", 100))
    assert caught.value.location == "pipe:3"
    assert list(bounded_chunks(chunks[:3], "pipe", 100)) == chunks[:3]
    assert list(bounded_chunks([b"x" * 100, b"\n"], "pipe", 100)) == [b"x" * 100, b"\n"]
