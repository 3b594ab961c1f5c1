"""A common view over the message formats: messages, content blocks, tool uses and results.

Every format is seen as Anthropic-shaped blocks (``text``, ``thinking``, ``tool_use``,
``tool_result``, ``image``...). For Claude Code and Anthropic entries the blocks are the entry's
own objects; OpenAI messages and OpenCode parts (see :mod:`ctxtool.formats.opencode.view`) are
mapped to new block dicts on the fly (a view, never written back). Changing content goes through
:func:`with_tool_result_content`, which copies only what it changes and writes the change back in
the entry's own format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from ctxtool.formats.content import as_blocks, block_text, has_image, tool_result_text
from ctxtool.formats.jsonl import loads_json
from ctxtool.formats.opencode import view as opencode_view
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI, OPENCODE

Block = dict[str, Any]
MESSAGE_TYPES = ("user", "assistant")


def api_message(entry: dict[str, Any], fmt: str) -> dict[str, Any] | None:
    """The ``{"role", "content", ...}`` object of an entry, or None for non-message entries.

    For OpenCode it is the message's ``info`` (role, id, time, tokens...); its content lives in
    the parts, seen through :func:`content_blocks`.
    """
    if fmt == CLAUDE_CODE:
        if entry.get("type") not in MESSAGE_TYPES:
            return None
        message = entry.get("message")
        return message if isinstance(message, dict) else None
    if fmt in (ANTHROPIC, OPENAI):
        return entry if isinstance(entry.get("role"), str) else None
    if fmt == OPENCODE:
        return entry["info"] if opencode_view.is_message(entry) else None
    return None


def role_of(entry: dict[str, Any], fmt: str) -> str | None:
    return role_and_blocks(entry, fmt)[0]


def content_blocks(entry: dict[str, Any], fmt: str) -> list[Block]:
    """The content of a message entry as a list of Anthropic-shaped blocks (a view)."""
    return role_and_blocks(entry, fmt)[1]


def role_and_blocks(entry: dict[str, Any], fmt: str) -> tuple[str | None, list[Block]]:
    """:func:`role_of` and :func:`content_blocks` at once (the message is looked up once)."""
    message = api_message(entry, fmt)
    if message is None:
        return None, []
    role = message.get("role")
    if role is None and fmt == CLAUDE_CODE:
        role = entry.get("type")
    role = role if isinstance(role, str) else None
    if fmt == OPENCODE:
        return role, opencode_view.message_blocks(entry)
    if fmt == OPENAI:
        return role, _openai_blocks(message)
    return role, as_blocks(message.get("content"))


def _openai_blocks(message: dict[str, Any]) -> list[Block]:
    content = message.get("content")
    if message.get("role") == "tool":
        return [{"type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                 "content": _openai_partsas_blocks(content)}]
    blocks = _openai_partsas_blocks(content)
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        blocks.append({"type": "tool_use", "id": call.get("id"), "name": function.get("name"),
                       "input": _parse_arguments(function.get("arguments"))})
    return blocks


def _openai_partsas_blocks(content: Any) -> list[Block]:
    if not isinstance(content, list):
        return as_blocks(content)
    blocks: list[Block] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "image_url":
            blocks.append({"type": "image", "source": part.get("image_url")})
        elif isinstance(part, dict):
            blocks.append({"type": "text", "text": str(part.get("text", part.get("refusal", "")))})
    return blocks


def _parse_arguments(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return loads_json(arguments.encode("utf-8"))
    except orjson.JSONDecodeError:
        return arguments


# --- tool uses and results ------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: Any
    entry_index: int


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    content: Any
    is_error: bool
    entry_index: int


def iter_tool_uses(entry: dict[str, Any], fmt: str, index: int = 0) -> Iterator[ToolUse]:
    for block in content_blocks(entry, fmt):
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            yield ToolUse(block["id"], str(block.get("name") or ""), block.get("input"), index)


def iter_tool_results(entry: dict[str, Any], fmt: str, index: int = 0) -> Iterator[ToolResult]:
    for block in content_blocks(entry, fmt):
        if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            yield ToolResult(block["tool_use_id"], block.get("content"),
                             bool(block.get("is_error")), index)


def pair_tools(entries: Iterable[dict[str, Any]], fmt: str) -> dict[str, tuple[ToolUse | None, ToolResult | None]]:
    """Map each tool id to its (tool_use, tool_result); either side is None when unpaired."""
    pairs: dict[str, tuple[ToolUse | None, ToolResult | None]] = {}
    for index, entry in enumerate(entries):
        for use in iter_tool_uses(entry, fmt, index):
            pairs[use.id] = (use, pairs.get(use.id, (None, None))[1])
        for result in iter_tool_results(entry, fmt, index):
            pairs[result.tool_use_id] = (pairs.get(result.tool_use_id, (None, None))[0], result)
    return pairs


# --- copy-on-write edits --------------------------------------------------------------------------

def with_message_content(entry: dict[str, Any], fmt: str, content: Any) -> dict[str, Any]:
    """A new entry whose message content is ``content``; the input entry is not touched."""
    if fmt == OPENCODE:
        raise ValueError("OpenCode content lives in parts: use with_tool_result_content or "
                         "ctxtool.formats.opencode.session")
    if fmt == CLAUDE_CODE:
        message = dict(entry["message"])
        message["content"] = content
        new = dict(entry)
        new["message"] = message
        return new
    new = dict(entry)
    new["content"] = content
    return new


def with_tool_result_content(entry: dict[str, Any], fmt: str, tool_use_id: str,
                             content: Any) -> dict[str, Any]:
    """A new entry whose tool_result for ``tool_use_id`` holds ``content`` (copy-on-write).

    For OpenAI ``role: "tool"`` messages the content is the message's own ``content``; a block
    list is flattened to its text, since that format has no tool_result blocks. For OpenCode the
    tool part's ``state.output`` (or error text) is rewritten; see
    :func:`ctxtool.formats.opencode.view.with_tool_output`.
    """
    if fmt == OPENCODE:
        return opencode_view.with_tool_output(entry, tool_use_id, content, text_of=tool_result_text)
    if fmt == OPENAI:
        if entry.get("role") == "tool" and entry.get("tool_call_id") == tool_use_id:
            new = dict(entry)
            new["content"] = content if isinstance(content, str) else tool_result_text(content)
            return new
        return entry
    message = api_message(entry, fmt)
    if message is None or not isinstance(message.get("content"), list):
        return entry
    blocks = list(message["content"])
    changed = False
    for i, block in enumerate(blocks):
        if (isinstance(block, dict) and block.get("type") == "tool_result"
                and block.get("tool_use_id") == tool_use_id):
            blocks[i] = {**block, "content": content}
            changed = True
    return with_message_content(entry, fmt, blocks) if changed else entry


__all__ = [
    "ANTHROPIC", "CLAUDE_CODE", "OPENAI", "OPENCODE", "Block", "ToolResult", "ToolUse",
    "api_message", "block_text", "content_blocks", "has_image", "iter_tool_results",
    "iter_tool_uses", "pair_tools", "role_of", "tool_result_text", "with_message_content",
    "with_tool_result_content",
]
