"""The OpenAI chat adapter: one Chat Completions message per line (``role`` system/developer/
user/assistant/tool), tool calls in ``tool_calls`` with JSON ``arguments``, each result a
``role: "tool"`` message of its own paired by ``tool_call_id``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ctxtool.formats.adapter import Clearer, FormatAdapter, Restorer, ResultSlot
from ctxtool.formats.anthropic import BLOCK_TYPES, block_kinds
from ctxtool.formats.content import Block, as_blocks, parsed_arguments, tool_result_text
from ctxtool.formats.jsonl import dumps_json

ROLES = ("system", "tool", "developer", "function")  # roles the Messages API does not have
PART_TYPES = frozenset({"image_url", "input_audio", "refusal", "file"})
INSTRUCTION_ROLES = ("system", "developer")


class OpenAIChatAdapter(FormatAdapter):
    name: ClassVar[str] = "openai"
    title: ClassVar[str] = "OpenAI chat"
    schema: ClassVar[str | None] = "openai-message"

    def claims(self, entry: Mapping[str, Any]) -> bool:
        role = entry.get("role")
        if not isinstance(role, str):
            return False
        if role in ROLES or "tool_calls" in entry or "tool_call_id" in entry:
            return True
        kinds = block_kinds(entry)
        return not kinds & BLOCK_TYPES and bool(kinds & PART_TYPES)

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        role = entry.get("role")
        if not isinstance(role, str):
            return None, []
        return role, openai_blocks(entry)

    def with_tool_result_content(self, entry: dict[str, Any], tool_use_id: str,
                                 content: Any) -> dict[str, Any]:
        # no tool_result blocks in this format: a block list is flattened to its text
        if entry.get("role") == "tool" and entry.get("tool_call_id") == tool_use_id:
            new = dict(entry)
            new["content"] = content if isinstance(content, str) else tool_result_text(content)
            return new
        return entry

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        if entry.get("role") != "tool":
            return []
        return [ResultSlot(-1, str(entry.get("tool_call_id") or ""), entry.get("content"))]

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        return {**entry, "content": changes[-1]}

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        """A ``role: "tool"`` message is the result; ``tool_calls`` hold the inputs."""
        if entry.get("role") == "tool":
            text = clearer.result(entry.get("tool_call_id"), entry.get("content"), entry)
            return entry if text is None else {**entry, "content": text}
        calls = entry.get("tool_calls")
        if not isinstance(calls, list):
            return entry
        new_calls = [_cleared_call(call, entry, clearer) for call in calls]
        if all(new is old for new, old in zip(new_calls, calls)):
            return entry
        return {**entry, "tool_calls": new_calls}

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        if entry.get("role") == "tool" and "content" in entry:
            content = restorer.result(entry["content"], str(entry.get("tool_call_id") or ""))
            return entry if content is entry["content"] else {**entry, "content": content}
        calls = entry.get("tool_calls")
        if not isinstance(calls, list):
            return entry
        new_calls = [_restored_call(call, restorer) for call in calls]
        if all(new is old for new, old in zip(new_calls, calls)):
            return entry
        return {**entry, "tool_calls": new_calls}

    def is_instruction(self, entry: Mapping[str, Any]) -> bool:
        return entry.get("role") in INSTRUCTION_ROLES


def _cleared_call(call: Any, entry: dict[str, Any], clearer: Clearer) -> Any:
    if not isinstance(call, dict) or not clearer.wants_input(call.get("id")):
        return call
    function = call.get("function")
    arguments = function.get("arguments") if isinstance(function, dict) else None
    parsed = parsed_arguments(arguments) if isinstance(arguments, str) else None
    if parsed is None or parsed is arguments:  # JSON null, or not readable: kept as it is
        return call
    assert isinstance(function, dict) and isinstance(arguments, str)
    # the arguments string itself is saved, so restore puts back its exact spelling
    replaced = clearer.tool_input(call["id"], str(function.get("name") or ""), parsed, arguments,
                                  entry)
    if replaced is None:
        return call
    return {**call, "function": {**function, "arguments": dumps_json(replaced).decode()}}


def _restored_call(call: Any, restorer: Restorer) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or "arguments" not in function:
        return call
    value = restorer.arguments(function["arguments"], str(call.get("id") or ""))
    if value is function["arguments"]:
        return call
    return {**call, "function": {**function, "arguments": value}}


def openai_blocks(message: Mapping[str, Any]) -> list[Block]:
    """An OpenAI message's content, tool calls and tool result as Anthropic-shaped blocks."""
    content = message.get("content")
    if message.get("role") == "tool":
        return [{"type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                 "content": _parts_as_blocks(content)}]
    blocks = _parts_as_blocks(content)
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        blocks.append({"type": "tool_use", "id": call.get("id"), "name": function.get("name"),
                       "input": parsed_arguments(function.get("arguments"))})
    return blocks


def _parts_as_blocks(content: Any) -> list[Block]:
    if not isinstance(content, list):
        return as_blocks(content)
    blocks: list[Block] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            blocks.append({"type": "image", "source": part.get("image_url")})
        elif isinstance(part, dict):
            blocks.append({"type": "text", "text": str(part.get("text", part.get("refusal", "")))})
    return blocks


__all__ = ["INSTRUCTION_ROLES", "OpenAIChatAdapter", "openai_blocks"]
