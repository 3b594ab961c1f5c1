"""The token heuristic: content-aware counts, CJK, sampling, blocks and entries."""

from __future__ import annotations

import pytest

import ctxtool
from ctxtool.core.sizing import tokens
from ctxtool.core.sizing.tokens import (
    IMAGE_TOKENS, estimate_block_tokens, estimate_entry_tokens, estimate_json_tokens,
    estimate_text_tokens, text_features,
)
from tests.estimate_builders import CODE, PROSE, tool_result, user


def test_public_function_is_exported() -> None:
    assert ctxtool.estimate_text_tokens is estimate_text_tokens
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("a") == 1


@pytest.mark.parametrize("text", ["中文文本测试一下，这是一个句子。" * 40,
                                  "日本語のテキストをテストしています。" * 40,
                                  "한국어 텍스트를 시험하고 있습니다" * 40])
def test_cjk_counts_about_one_token_per_character(text: str) -> None:
    per_char = estimate_text_tokens(text) / len(text)
    assert 0.85 <= per_char <= 1.5, per_char
    # chars/4 would give 0.25 per character: the complaint this heuristic answers
    assert estimate_text_tokens(text) > 3 * len(text) / 4


def test_prose_is_lighter_than_code_and_listings() -> None:
    prose_chars_per_token = len(PROSE) / estimate_text_tokens(PROSE)
    code_chars_per_token = len(CODE) / estimate_text_tokens(CODE)
    json_text = '{"id": 12345, "name": "widget", "tags": ["a", "b"], "price": 3.99}\n' * 50
    json_chars_per_token = len(json_text) / estimate_text_tokens(json_text)
    assert 3.6 <= prose_chars_per_token <= 5.5
    assert code_chars_per_token < prose_chars_per_token * 0.75
    assert json_chars_per_token < prose_chars_per_token * 0.75


def test_not_a_flat_ratio() -> None:
    symbols, prose = "1,2;3[4]5{6}7" * 31, PROSE[:403]
    assert len(symbols) == len(prose)
    # punctuation and digits cost far more than letters
    assert estimate_text_tokens(symbols) > 1.5 * estimate_text_tokens(prose)


def test_long_texts_are_sampled_but_scale_linearly() -> None:
    assert len(CODE) > tokens.SAMPLE_LIMIT
    one = estimate_text_tokens(CODE)
    ten = estimate_text_tokens(CODE * 10)
    assert ten == pytest.approx(10 * one, rel=0.05)
    counts, _ = text_features(CODE * 10)
    assert counts[tokens.FEATURES.index("newlines")] == pytest.approx(CODE.count("\n") * 10,
                                                                       rel=0.1)


def test_features_count_character_classes() -> None:
    counts, cjk = text_features("Abc 12\n(x);→中")
    named = dict(zip(tokens.FEATURES, counts))
    assert named == {"letters": 4, "capitals": 1, "digits": 2, "newlines": 1,
                     "punctuation_runs": 2, "other_non_ascii": 1}
    assert cjk == 1


def test_json_strings_count_as_the_text_they_hold() -> None:
    body = "line one\nline two\n" * 100
    escaped = estimate_text_tokens('{"content": "' + body.replace("\n", "\\n") + '"}')
    assert estimate_json_tokens({"content": body}) < escaped
    assert estimate_json_tokens({"content": body}) >= estimate_text_tokens(body)
    assert estimate_json_tokens([1, None, True]) > 0


def test_blocks() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "A" * 500_000}}
    assert estimate_block_tokens(image) == IMAGE_TOKENS
    text_result = {"type": "tool_result", "tool_use_id": "t", "content": "hello world"}
    with_image = {"type": "tool_result", "tool_use_id": "t",
                  "content": [{"type": "text", "text": "hello world"}, image]}
    assert estimate_block_tokens(with_image) == estimate_block_tokens(text_result) + IMAGE_TOKENS
    thinking = {"type": "thinking", "thinking": PROSE, "signature": "x" * 1000}
    assert estimate_block_tokens(thinking) > estimate_text_tokens(PROSE)  # passed back in full
    assert estimate_block_tokens({"type": "redacted_thinking", "data": "x" * 100}) == 0


def test_entry_counts_only_what_the_model_sees() -> None:
    plain = tool_result("toolu_1", "short output")
    with_copy = tool_result("toolu_1", "short output",
                            toolUseResult={"stdout": "short output" + "x" * 100_000})
    assert estimate_entry_tokens(plain, "claude-code") == estimate_entry_tokens(with_copy,
                                                                                "claude-code")
    assert estimate_entry_tokens({"type": "progress", "data": "x" * 1000}, "claude-code") == 0
    assert estimate_entry_tokens(user("hi"), "claude-code") > 0
    openai = {"role": "tool", "tool_call_id": "c1", "content": "short output"}
    assert estimate_entry_tokens(openai, "openai") == estimate_entry_tokens(plain, "claude-code")
