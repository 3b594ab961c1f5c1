"""Anthropic-shaped content blocks, whatever format they came from: their text and shape.

Every adapter (:mod:`ctxtool.formats.adapter`) shows its messages as such blocks; these helpers
read them without knowing the format.
"""

from __future__ import annotations

from typing import Any

from ctxtool.formats.json_text import dumps_json, loads_json

Block = dict[str, Any]


# What a tool call without a result gets when it must be answered (an interrupted call): the
# text OpenCode sends for one, and what ``convert`` writes.
INTERRUPTED = "[Tool execution was interrupted]"

def as_blocks(content: Any) -> list[Block]:
    """A message ``content`` (a string or a block list) as a list of blocks."""
    if isinstance(content, list):
        if _ONLY_DICTS(map(type, content)):  # the common case, checked in one C loop
            return list(content)
        return [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return []


_ONLY_DICTS = frozenset({dict}).issuperset


# --- text of blocks -------------------------------------------------------------------------------

def block_text(block: Block) -> str:
    """The text a model sees for one block (images and documents become short markers)."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "redacted_thinking":
        return ""
    if kind in ("tool_use", "server_tool_use"):
        value = block.get("input")
        return value if isinstance(value, str) else dumps_json(value).decode()
    if kind == "tool_result" or kind == "web_search_tool_result":
        return tool_result_text(block.get("content"))
    if kind == "image":
        return "[image]"
    if kind == "document":
        return "[document]"
    return ""


def tool_result_text(content: Any) -> str:
    """The text of a tool_result's content: the string itself, or its text blocks joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(b) if isinstance(b, dict) else str(b) for b in content)
    return dumps_json(content).decode()


def has_image(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "image" for b in content)



def parsed_arguments(value: Any) -> Any:
    """A tool call's arguments as an input object: a JSON string parsed; the string itself when
    it does not parse - not JSON, or JSON holding an integer the stdlib refuses to read (over
    4,300 digits: a ValueError, not a JSONDecodeError) - so such a call is kept as text, never a
    crash; None as ``{}``; any other value as it is."""
    if not isinstance(value, str):
        return value if value is not None else {}
    try:
        return loads_json(value.encode("utf-8"))
    except ValueError:  # orjson.JSONDecodeError is one too
        return value

__all__ = ["INTERRUPTED", "Block", "as_blocks", "block_text", "has_image", "parsed_arguments",
           "tool_result_text"]
