"""The common view over formats: blocks, text, tool pairing and copy-on-write edits."""

from __future__ import annotations

import copy

from ctxtool.core.messages.blocks import (
    block_text, content_blocks, has_image, iter_tool_results, iter_tool_uses, pair_tools, role_of,
    tool_result_text, with_tool_result_content,
)

CC_USE = {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [
    {"type": "text", "text": "Reading."},
    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/x.py"}}]}}
CC_RESULT = {"type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)\n"}]},
    "toolUseResult": {"file": {"content": "print(1)\n"}}}
OAI_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "grep", "arguments": "{\"q\": \"x\"}"}}]}
OAI_TOOL = {"role": "tool", "tool_call_id": "call_1", "content": "match"}


def test_claude_code_blocks_and_roles() -> None:
    assert role_of(CC_USE, "claude-code") == "assistant"
    assert [b["type"] for b in content_blocks(CC_USE, "claude-code")] == ["text", "tool_use"]
    assert role_of({"type": "summary", "summary": "t"}, "claude-code") is None
    assert content_blocks({"type": "system", "content": "x"}, "claude-code") == []


def test_string_content_is_one_text_block() -> None:
    entry = {"type": "user", "uuid": "u", "message": {"role": "user", "content": "hi"}}
    assert content_blocks(entry, "claude-code") == [{"type": "text", "text": "hi"}]


def test_openai_tool_calls_map_to_tool_use_and_tool_result() -> None:
    (use,) = iter_tool_uses(OAI_CALL, "openai")
    assert (use.id, use.name, use.input) == ("call_1", "grep", {"q": "x"})
    (result,) = iter_tool_results(OAI_TOOL, "openai")
    assert (result.tool_use_id, result.content) == ("call_1", [{"type": "text", "text": "match"}])
    pairs = pair_tools([OAI_CALL, OAI_TOOL], "openai")
    assert pairs["call_1"][0] is not None and pairs["call_1"][1] is not None


def test_unparseable_openai_arguments_kept_as_string() -> None:
    call = {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}]}
    (use,) = iter_tool_uses(call, "openai")
    assert use.input == "{oops"


def test_pairing_reports_unpaired_sides() -> None:
    pairs = pair_tools([CC_USE], "claude-code")
    assert pairs["toolu_1"][1] is None
    pairs = pair_tools([CC_RESULT], "claude-code")
    assert pairs["toolu_1"][0] is None


def test_text_of_blocks() -> None:
    assert block_text({"type": "thinking", "thinking": "hmm"}) == "hmm"
    assert block_text({"type": "tool_use", "input": {"a": 1}}) == '{"a":1}'
    assert block_text({"type": "image", "source": {}}) == "[image]"
    assert block_text({"type": "redacted_thinking", "data": "xyz"}) == ""
    assert tool_result_text([{"type": "text", "text": "a"}, {"type": "image"}]) == "a\n[image]"
    assert has_image([{"type": "image"}]) and not has_image("text")


def test_tool_result_edit_is_copy_on_write() -> None:
    before = copy.deepcopy(CC_RESULT)
    new = with_tool_result_content(CC_RESULT, "claude-code", "toolu_1", "[cleared]")
    assert CC_RESULT == before  # the input entry is untouched
    assert new["message"]["content"][0]["content"] == "[cleared]"
    assert new["toolUseResult"] is CC_RESULT["toolUseResult"]  # unchanged parts are shared
    assert with_tool_result_content(CC_RESULT, "claude-code", "other", "x") is CC_RESULT


def test_openai_tool_result_edit() -> None:
    new = with_tool_result_content(OAI_TOOL, "openai", "call_1", [{"type": "text", "text": "t"}])
    assert new == {"role": "tool", "tool_call_id": "call_1", "content": "t"}
    assert OAI_TOOL["content"] == "match"
