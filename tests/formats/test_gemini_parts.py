"""Gemini's verbose ``partToString``, read once (formats/gemini/parts.py) for the resume rules,
the session list and the compaction reader alike."""

from __future__ import annotations

import pytest

from ctxtool.formats.gemini.listing import is_resumable
from ctxtool.formats.gemini.parts import verbose_text


@pytest.mark.parametrize(("part", "shown"), [
    ({"text": "hi"}, "hi"),
    ({"thought": True, "text": "x"}, "[Thought: true]"),
    ({"thought": None}, "[Thought: null]"),
    ({"videoMetadata": None}, "[Video Metadata]"),
    ({"functionResponse": {"name": "read_file"}}, "[Function Response: read_file]"),
    ({"functionCall": None}, "[Function Call: undefined]"),
    ({}, ""),
])
def test_a_key_present_with_any_value_makes_the_marker(part: dict[str, object], shown: str) -> None:
    assert verbose_text([part]) == shown


def test_a_user_record_of_a_null_valued_part_is_resumable_as_gemini_tests_it() -> None:
    assert is_resumable({"type": "user", "content": [{"videoMetadata": None}]})
    assert not is_resumable({"type": "user", "content": [{"text": "  "}]})
    assert not is_resumable({"type": "user", "content": "/clear"})
