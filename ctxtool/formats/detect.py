"""Which transcript format a stream of entries is in.

Detected from the first entries that say something (up to :data:`PEEK` of them are buffered), so
a file whose first line is an ambiguous ``{"role": "user", "content": "hi"}`` is still told apart
by a later ``tool_calls`` or ``tool_use`` block. ``--format`` skips detection.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from ctxtool.errors import InputError, UsageError
from ctxtool.types import (ANTHROPIC, CLAUDE_CODE, FORMATS, OPENAI, OPENCODE, Entry, Format,
                           location_of)

PEEK = 64

_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "isSidechain", "leafUuid", "messageId")
_OPENAI_ROLES = ("system", "tool", "developer", "function")  # roles the Messages API does not have
_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document",
                     "server_tool_use", "web_search_tool_result"}
_OPENAI_PARTS = {"image_url", "input_audio", "refusal", "file"}


def classify(entry: dict[str, Any]) -> Format | None:
    """The format one entry belongs to, or None when it gives no clue (empty, unknown keys)."""
    if "type" in entry and any(k in entry for k in _CLAUDE_KEYS):
        return CLAUDE_CODE
    if isinstance(entry.get("info"), dict) and isinstance(entry.get("parts"), list):
        return OPENCODE
    if isinstance(entry.get("session"), dict) and "role" not in entry and "type" not in entry:
        return OPENCODE  # the {"session": ...} line ctxtool convert writes before the messages
    role = entry.get("role")
    if not isinstance(role, str):
        return CLAUDE_CODE if isinstance(entry.get("type"), str) else None
    if role in _OPENAI_ROLES or "tool_calls" in entry or "tool_call_id" in entry:
        return OPENAI
    content = entry.get("content")
    if isinstance(content, list):
        kinds = {kind for b in content if isinstance(b, dict)
                 and isinstance(kind := b.get("type"), str)}
        if kinds & _ANTHROPIC_BLOCKS:
            return ANTHROPIC
        if kinds & _OPENAI_PARTS:
            return OPENAI
    return None


def detect_format(entries: Iterable[Entry], forced: str | None = None) -> tuple[Format, Iterator[Entry]]:
    """Return the format and an iterator that still yields every entry (the peeked ones first)."""
    it = iter(entries)
    if forced:
        if forced not in FORMATS:
            raise UsageError(f"unknown format {forced!r}", hint=f"use one of {', '.join(FORMATS)}")
        return forced, it  # type: ignore[return-value]
    peeked: list[Entry] = []
    found: Format | None = None
    weak: Format | None = None
    for entry in itertools.islice(it, PEEK):
        peeked.append(entry)
        kind = classify(entry)
        if kind is None:
            if weak is None and isinstance(entry.get("role"), str):
                weak = ANTHROPIC  # plain {"role","content"}: valid in both message formats
            continue
        found = kind
        break
    fmt = found or weak or CLAUDE_CODE
    # plain dicts (the Python API) have no .invalid; only lines read from input can be invalid
    if found is None and weak is None and peeked and not any(
            getattr(e, "invalid", False) for e in peeked):
        if not any(isinstance(e.get("type"), str) for e in peeked):
            first = peeked[0]
            raise InputError(
                "unknown transcript format: entries have neither 'type' (Claude Code) nor 'role'"
                " (Anthropic/OpenAI messages)",
                source=first.source if isinstance(first, Entry) else None,
                lineno=first.lineno if isinstance(first, Entry) else None,
                hint="pass --format claude-code|anthropic|openai|opencode",
            )
    return fmt, itertools.chain(peeked, it)


def describe(entry: dict[str, Any]) -> str:
    """``file:line`` for messages about an entry, or ``entry`` when it was built, not read."""
    return location_of(entry) or "entry"
