"""A tool call's JSON arguments string, read the same way by every format that stores one
(Codex CLI's ``function_call.arguments``, OpenAI chat's ``tool_calls[].function.arguments``):
parsed into the input object, or kept as the text itself when it cannot be read - never a crash."""

from __future__ import annotations

from typing import Any

import pytest

from ctxtool.formats.content import parsed_arguments
from ctxtool.formats.registry import adapter_for

# an integer no reader holds (orjson: infinity; the stdlib: over its 4,300-digit limit) beside
# one only the stdlib reads exactly, and a lone surrogate (encoding it is a ValueError that is
# not a JSONDecodeError: a reader catching only that one stopped there)
HUGE = '{"exact": 12345678901234567890, "n": ' + "7" * 5000 + "}"
SURROGATE = '{"path": "a\ud800b"}'


def codex_call(arguments: str) -> dict[str, Any]:
    return {"timestamp": "2026-11-24T01:25:29.982Z", "type": "response_item",
            "payload": {"type": "function_call", "name": "exec_command", "arguments": arguments,
                        "call_id": "call_1"}}


def openai_call(arguments: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "exec_command", "arguments": arguments}}]}


CALLS = {"codex": codex_call, "openai": openai_call}


@pytest.mark.parametrize("fmt", list(CALLS))
@pytest.mark.parametrize("arguments", [HUGE, SURROGATE], ids=["huge-integer", "lone-surrogate"])
def test_unreadable_arguments_stay_text(fmt: str, arguments: str) -> None:
    role, blocks = adapter_for(fmt).role_and_blocks(CALLS[fmt](arguments))
    assert role == "assistant"
    assert [(b["type"], b["id"], b["input"]) for b in blocks if b["type"] == "tool_use"] == [
        ("tool_use", "call_1", arguments)]


@pytest.mark.parametrize("fmt", list(CALLS))
def test_readable_arguments_are_parsed_exactly(fmt: str) -> None:
    _, blocks = adapter_for(fmt).role_and_blocks(
        CALLS[fmt]('{"cmd": "cat notes.txt", "id": 12345678901234567890}'))
    assert [b["input"] for b in blocks if b["type"] == "tool_use"] == [
        {"cmd": "cat notes.txt", "id": 12345678901234567890}]


def test_parsed_arguments() -> None:
    assert parsed_arguments(None) == {}
    assert parsed_arguments({"a": 1}) == {"a": 1}
    assert parsed_arguments("not json") == "not json"
    assert parsed_arguments("[1, 2]") == [1, 2]
