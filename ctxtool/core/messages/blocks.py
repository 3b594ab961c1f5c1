"""A common view over the message formats: messages, content blocks, tool uses and results.

Every format is seen as Anthropic-shaped blocks (``text``, ``thinking``, ``tool_use``,
``tool_result``, ``image``...), through the format's adapter (:mod:`ctxtool.formats.adapter`):
for Claude Code and Anthropic entries the blocks are the entry's own objects; OpenAI messages and
OpenCode parts are mapped to new block dicts on the fly (a view, never written back). Changing
content goes through :func:`with_tool_result_content`, which copies only what it changes and
writes the change back in the entry's own format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from ctxtool.formats.content import Block, block_text, has_image, tool_result_text
from ctxtool.formats.registry import adapter_for


def api_message(entry: dict[str, Any], fmt: str) -> dict[str, Any] | None:
    """The ``{"role", "content", ...}`` object of an entry, or None for non-message entries
    (see :meth:`ctxtool.formats.adapter.FormatAdapter.api_message`)."""
    return adapter_for(fmt).api_message(entry)


def role_of(entry: dict[str, Any], fmt: str) -> str | None:
    return adapter_for(fmt).role_and_blocks(entry)[0]


def content_blocks(entry: dict[str, Any], fmt: str) -> list[Block]:
    """The content of a message entry as a list of Anthropic-shaped blocks (a view)."""
    return adapter_for(fmt).role_and_blocks(entry)[1]


def role_and_blocks(entry: dict[str, Any], fmt: str) -> tuple[str | None, list[Block]]:
    """:func:`role_of` and :func:`content_blocks` at once (the message is looked up once)."""
    return adapter_for(fmt).role_and_blocks(entry)


# --- tool uses and results ------------------------------------------------------------------------

class ToolUse(NamedTuple):
    id: str
    name: str
    input: Any
    entry_index: int


class ToolResult(NamedTuple):
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
    return adapter_for(fmt).with_message_content(entry, content)


def with_tool_result_content(entry: dict[str, Any], fmt: str, tool_use_id: str,
                             content: Any) -> dict[str, Any]:
    """A new entry whose tool_result for ``tool_use_id`` holds ``content`` (copy-on-write), in
    the entry's own format (see
    :meth:`ctxtool.formats.adapter.FormatAdapter.with_tool_result_content`)."""
    return adapter_for(fmt).with_tool_result_content(entry, tool_use_id, content)


__all__ = [
    "Block", "ToolResult", "ToolUse",
    "api_message", "block_text", "content_blocks", "has_image", "iter_tool_results",
    "iter_tool_uses", "pair_tools", "role_of", "tool_result_text", "with_message_content",
    "with_tool_result_content",
]
