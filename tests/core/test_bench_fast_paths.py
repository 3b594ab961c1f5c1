"""The shortcuts taken for speed give the same answers as the plain definitions they replace."""

from __future__ import annotations

import json
import re

import pytest

from ctxtool.core.sizing import tokens
from ctxtool.core.sizing.tokens import cjk_count, estimate_text_tokens, text_features
from ctxtool.formats.jsonl import exact_entry, iter_entries, loads_json

CJK = re.compile("[\u3000-\uffff]")  # CJK symbols, kana, ideographs, hangul, full-width forms
PAD = "x" * 5000  # makes a line long enough for the float walk in front of the digit search


def test_cjk_count_is_the_regex_count_for_every_code_point() -> None:
    every = "".join(chr(c) for c in range(0x110000))  # lone surrogates included
    assert cjk_count(every) == len(CJK.findall(every))
    edges = [0x2FFF, 0x3000, 0x3040, 0x30FF, 0x4E00, 0x9FFF, 0xAC00, 0xD7AF, 0xD800, 0xF900,
             0xFF0C, 0xFFEF, 0xFFFF, 0x10000, 0x1F600, 0x20000, 0xE9, 0x2192]
    for code in edges:
        assert cjk_count(chr(code) * 3) == 3 * len(CJK.findall(chr(code))), hex(code)


@pytest.mark.parametrize("text", [
    "Hello, Wörld → 中文（テスト）\n  x = [1, 2];; 😀 한국어\ud800 end...\n" * 7,
    # the most bytes measured at once (the longest text measured whole, 4 bytes a character):
    # its last character still counted
    "😀" * tokens.SAMPLE_LIMIT,
])
def test_class_counts_are_the_plain_counts(text: str) -> None:
    counts, cjk = text_features(text)
    named = dict(zip(tokens.FEATURES, counts))
    assert named["letters"] == sum(c.isascii() and c.isalpha() for c in text)
    assert named["capitals"] == sum(c.isascii() and c.isupper() for c in text)
    assert named["digits"] == sum(c.isascii() and c.isdigit() for c in text)
    assert named["newlines"] == text.count("\n")
    assert cjk == len(CJK.findall(text))
    assert named["other_non_ascii"] == sum(not c.isascii() for c in text) - cjk
    punct = re.findall(r"[!-/:-@\[-`{-~\x00-\x08\x0e-\x1f\x7f]+", text)
    assert named["punctuation_runs"] == len(punct)


@pytest.mark.parametrize("text, runs", [(",a,", 2), (",,", 1), ("a", 0), (",a", 1), ("a,", 1),
                                        ("a,,b;c", 2), ("(x);", 2), ("中,a", 1)])
def test_punctuation_runs_at_both_ends(text: str, runs: int) -> None:
    counts, _ = text_features(text)
    assert counts[tokens.FEATURES.index("punctuation_runs")] == runs


def test_short_texts_come_from_the_cache_unchanged() -> None:
    text = "Read /src/app.py"
    first = estimate_text_tokens(text)
    assert estimate_text_tokens(text) == first == tokens._text_tokens(text)
    assert estimate_text_tokens("") == 0


@pytest.mark.parametrize("line", [
    '{"a": 123456789012345678901234567890, "p": "%s"}' % PAD,
    '{"a": [1, {"b": -92233720368547758090}], "p": "%s"}' % PAD,
    '{"a": 1.5, "b": 98765432109876543210987, "p": "%s"}' % PAD,
    '{"s": "1234567890123456789012", "n": 7, "p": "%s"}' % PAD,
])
def test_long_lines_keep_big_integers_exact(line: str) -> None:
    expected = json.dumps(json.loads(line))  # dumps tells 1e29 from 10**29
    assert json.dumps(loads_json(line.encode())) == expected
    read_fast = next(iter_entries([line.encode() + b"\n"], "t.jsonl", exact_ints=False))
    assert json.dumps(exact_entry(read_fast)) == expected
    assert json.dumps(next(iter_entries([line.encode() + b"\n"], "t.jsonl"))) == expected
