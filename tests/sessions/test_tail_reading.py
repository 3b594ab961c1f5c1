"""Reading a transcript from its ends gives what reading it whole gives."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ctxtool.core.sizing.sessions import read_head
from ctxtool.formats.adapter import SessionFile
from ctxtool.io.session_files import count_compactions, read_session
from ctxtool.io.tail_read import parse_lines, tail_report
from ctxtool.types import CLAUDE_CODE
from ctxtool.storage.tail import (
    complete_length,
    head_lines,
    iter_head_lines,
    iter_lines_reversed,
    lines_backwards,
    lines_containing,
    mapped,
)
from tests.conftest import corpus_params
from tests.estimate_builders import (
    assistant,
    compact_boundary,
    compact_summary,
    microcompact_boundary,
    tool_result,
    tool_use,
    usage,
    user,
)
from tests.sessions.helpers import APP, full_estimate, generated, write_session

NOT_CLAUDE_CODE = ("12__cbfeaa512b__0__full.jsonl", "session-alpha__chat.jsonl")


@pytest.mark.parametrize("data", [
    b"", b"a\n", b"a", b"a\nb\nc\n", b"a\nb\nc", b"\n\na\n\n", b"x" * 300 + b"\n" + b"y" * 70,
    b"\n".join(b"%d" % i * (i % 37) for i in range(500)) + b"\n",
])
@pytest.mark.parametrize("block", [1, 7, 64, 1 << 16])
def test_reversed_lines_are_the_lines_backwards(data: bytes, block: int) -> None:
    forwards = io.BytesIO(data).readlines()
    assert list(iter_lines_reversed(io.BytesIO(data), block=block)) == forwards[::-1]


def test_head_lines_stop_after_the_limit_with_whole_lines() -> None:
    data = b"".join(b"%05d\n" % i for i in range(100))
    assert list(iter_head_lines(io.BytesIO(data), max_bytes=13)) == [b"00000\n", b"00001\n",
                                                                      b"00002\n"]


def test_lines_containing_returns_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"one\ntwo mark mark\nthree\nmark four")
    with open(path, "rb") as handle, mapped(handle) as buffer:
        assert list(lines_containing(buffer, b"mark")) == [b"two mark mark\n", b"mark four"]
        assert list(lines_containing(buffer, b"mark", start=4, end=18)) == [b"two mark mark\n"]
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with open(empty, "rb") as handle, mapped(handle) as buffer:
        assert buffer == b""
        assert list(lines_containing(buffer, b"mark")) == []


@pytest.mark.parametrize("data", [
    b"", b"a\n", b"a", b"a\nb\nc\n", b"a\nb\nc", b"\n\na\n\n", b"x" * 300 + b"\n" + b"y" * 70,
])
def test_mapped_lines_are_the_handle_lines(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as handle, mapped(handle) as buffer:
        assert list(lines_backwards(buffer)) == list(iter_lines_reversed(handle))
        for limit in (0, 1, 2, 5, 1 << 16):
            assert list(head_lines(buffer, max_bytes=limit)) == \
                list(iter_head_lines(handle, max_bytes=limit))
        assert complete_length(buffer) == len(data) - len(data.rsplit(b"\n", 1)[-1])


def _tail_of(path: Path, fmt: str = CLAUDE_CODE):
    with open(path, "rb") as handle:
        head = read_head(parse_lines(iter_head_lines(handle, max_bytes=65536)), fmt)
        with mapped(handle) as buffer:
            compactions, _ = count_compactions(buffer, head.chain, b'"compact_boundary"', fmt)
        report = tail_report(handle, chain=head.chain, fmt=fmt, compactions=compactions)[0]
    # the listing's reading, from one memory map
    listed = read_session(SessionFile(path.stem, path, ""), fmt)
    assert (listed.context_tokens, listed.compactions, listed.context_window, listed.model) \
        == (report.context_tokens, report.compact_boundaries, report.limits.window,
            report.model)
    return report


def _same(path: Path) -> None:
    full, tail = full_estimate(path), _tail_of(path)
    assert (tail.context_tokens, tail.compact_boundaries, tail.limits.window, tail.model,
            tail.status, tail.method) == (full.context_tokens, full.compact_boundaries,
                                          full.limits.window, full.model, full.status,
                                          full.method)


CASES = {
    "streamed call, tool result after it": [
        user("hi"), assistant("thinking about it", msg_id="m1", usage=usage(100, 50, 9000, 5)),
        assistant([tool_use("t1", "Read", file_path="/a.py")], msg_id="m1",
                  usage=usage(100, 50, 9000, 40)),
        tool_result("t1", "x = 1\n" * 500)],
    "boundary after the last call, nothing since": [
        user("hi"), assistant("ok", msg_id="m1", usage=usage(10, 0, 120_000, 5)),
        compact_boundary(), compact_summary("the summary")],
    "boundary, then a call": [
        user("hi"), assistant("ok", msg_id="m1", usage=usage(10, 0, 120_000, 5)),
        compact_boundary(), compact_summary("the summary"), user("go on"),
        assistant("fine", msg_id="m2", usage=usage(10, 0, 30_000, 5))],
    "microcompact after the call": [
        user("hi"), assistant("ok", msg_id="m1", usage=usage(10, 0, 90_000, 5)),
        microcompact_boundary(20_000), user("more")],
    "no usage at all": [user("hi"), user("again")],
    "side chain lines at the end": [
        user("hi"), assistant("ok", msg_id="m1", usage=usage(10, 0, 50_000, 5)),
        {**assistant("side", msg_id="m9", usage=usage(10, 0, 7_000, 5)), "isSidechain": True},
        {**user("side q"), "isSidechain": True}],
    "lines of one call around its tool results": [
        user("hi"), assistant([tool_use("t1", "Bash", command="ls")], msg_id="m1",
                              usage=usage(10, 0, 40_000, 3)),
        tool_result("t1", "a b c"),
        assistant([tool_use("t2", "Bash", command="pwd")], msg_id="m1",
                  usage=usage(10, 0, 40_000, 30)),
        tool_result("t2", "/home")],
    "past 200K": [user("hi"), assistant("ok", msg_id="m1", usage=usage(10, 0, 450_000, 5))],
}


@pytest.mark.parametrize("name", list(CASES))
def test_tail_matches_the_whole_file(tmp_path: Path, name: str) -> None:
    _same(write_session(tmp_path, APP, "s1", CASES[name]))


def test_a_line_cut_short_at_the_end_is_passed_over(tmp_path: Path) -> None:
    path = write_session(tmp_path, APP, "s1", CASES["streamed call, tool result after it"],
                         tail=b'{"type":"user","message":{"role":"us')
    _same(path)


def test_boundary_text_inside_a_string_or_a_nested_object_is_not_a_compaction(
        tmp_path: Path) -> None:
    entries = [user('look: "compact_boundary" and {"subtype":"compact_boundary"}'),
               {"type": "progress", "data": {"type": "system", "subtype": "compact_boundary"}},
               compact_boundary(), compact_summary("s")]
    path = write_session(tmp_path, APP, "s1", entries)
    with open(path, "rb") as handle, mapped(handle) as buffer:
        assert count_compactions(buffer, False, b'"compact_boundary"', CLAUDE_CODE)[0] == 1
    _same(path)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_sessions_match(tmp_path: Path, seed: int) -> None:
    _same(generated(tmp_path, APP, f"g{seed}", size=1_500_000, seed=seed))


@pytest.mark.parametrize("path", corpus_params())
def test_corpus_sessions_match(path: Path | None) -> None:
    assert path is not None
    if path.name.endswith(NOT_CLAUDE_CODE) or full_estimate(path).format != "claude-code":
        pytest.skip("not a Claude Code transcript")
    _same(path)
