"""Which repeated Claude Code entries vacuum takes out: only runs of copies after which Claude
Code's loader is back in the state it would be in without them (formats/claude_code/vacuum.py)."""

from __future__ import annotations

import orjson

from ctxtool.formats.claude_code.vacuum import REPEATED, repeated_entries
from tests.vacuum.builders import boundary, entry


def removed(lines: list[bytes]) -> list[int]:
    return [edit.index for edit in repeated_entries(lines)]


def snapshot() -> bytes:
    return orjson.dumps({"type": "system", "subtype": "file_snapshot", "uuid": "f1",
                         "sessionId": "s"}) + b"\n"


def test_copies_before_the_next_boundary_go() -> None:
    lines = [entry(i) for i in range(6)] + [entry(0), entry(1), boundary(6)]
    edits = list(repeated_entries(lines))
    assert [(e.index, e.copy_of, e.reason) for e in edits] == [(6, 0, REPEATED), (7, 1, REPEATED)]


def test_copies_before_a_new_message_go() -> None:
    assert removed([entry(0), entry(1), entry(0), entry(2)]) == [2]


def test_copies_at_the_end_stay_they_are_the_last_row() -> None:
    assert removed([entry(0), entry(1), entry(0)]) == []


def test_copies_before_a_file_snapshot_stay() -> None:
    assert removed([entry(0), entry(1), entry(0), snapshot()]) == []


def test_a_boundary_copy_goes_only_before_a_boundary() -> None:
    head = [entry(0), boundary(1), entry(2)]
    assert removed(head + [boundary(1), entry(3)]) == []
    assert removed(head + [boundary(1), entry(0), boundary(4)]) == [3, 4]


def test_copies_without_a_uuid_or_of_other_types_stay() -> None:
    title = b'{"type":"ai-title","uuid":"t","aiTitle":"x","sessionId":"s"}\n'
    plain = b'{"type":"last-prompt","lastPrompt":"x","sessionId":"s"}\n'
    assert removed([title, plain, title, plain, entry(1)]) == []


def test_a_copy_whose_last_line_has_no_newline_stays() -> None:
    assert removed([entry(0), entry(1), entry(0).rstrip(b"\n")]) == []


def test_past_the_held_bytes_lines_are_told_apart_by_digest(monkeypatch) -> None:
    from ctxtool.formats.claude_code import vacuum

    lines = [entry(i) for i in range(6)] + [entry(0), entry(4), entry(6)]
    monkeypatch.setattr(vacuum, "HELD_BYTES", len(entry(0)) * 3)
    assert removed(lines) == [6, 7]
