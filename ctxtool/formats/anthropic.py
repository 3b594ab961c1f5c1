"""The Anthropic Messages adapter: one ``{"role", "content"}`` message per line, content a string
or a list of blocks. The base adapter's defaults are this format's rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ctxtool.formats.adapter import FormatAdapter

# content block types only the Messages API has (an OpenAI message never holds them)
BLOCK_TYPES = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "image",
                         "document", "server_tool_use", "web_search_tool_result"})


def block_kinds(entry: Mapping[str, Any]) -> set[str]:
    """The ``type`` of each block of a message's content list (empty for string content)."""
    content = entry.get("content")
    if not isinstance(content, list):
        return set()
    return {kind for b in content if isinstance(b, dict) and isinstance(kind := b.get("type"), str)}


class AnthropicAdapter(FormatAdapter):
    name: ClassVar[str] = "anthropic"
    title: ClassVar[str] = "Anthropic Messages"
    schema: ClassVar[str | None] = "anthropic-message"
    blocks_kept: ClassVar[frozenset[str]] = frozenset({"document", "thinking", "redacted_thinking"})
    system_in_messages: ClassVar[bool] = False

    def claims(self, entry: Mapping[str, Any]) -> bool:
        return isinstance(entry.get("role"), str) and bool(block_kinds(entry) & BLOCK_TYPES)


__all__ = ["AnthropicAdapter", "BLOCK_TYPES", "block_kinds"]
