"""Which transcript format a stream of entries is in.

A command that does not handle the format found (:mod:`ctxtool.formats.unsupported`) stops
there with an error naming the first line.

Detected from the first entries that say something (up to :data:`PEEK` of them are buffered), so
a file whose first line is an ambiguous ``{"role": "user", "content": "hi"}`` is still told apart
by a later ``tool_calls`` or ``tool_use`` block. ``--format`` skips detection.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from ctxtool.errors import InputError, UsageError
from ctxtool.formats.documents import read_with
from ctxtool.formats.registry import adapter_for, format_names
from ctxtool.formats.unsupported import refuse
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, Entry, Format, location_of

PEEK = 64


def classify(entry: dict[str, Any]) -> Format | None:
    """The format one entry belongs to, or None when it gives no clue (empty, unknown keys):
    the first registered adapter that claims it, else the first that claims it weakly.
    Adapters are imported one by one as they are asked: a Claude Code transcript, claimed by
    the first, loads no other agent's module (each costs start-up time)."""
    for adapter in map(adapter_for, format_names()):
        if adapter.claims(entry):
            return adapter.name  # type: ignore[return-value]
    for adapter in map(adapter_for, format_names()):
        if adapter.claims_weakly(entry):
            return adapter.name  # type: ignore[return-value]
    return None


def reads_document(document: dict[str, Any]) -> bool:
    """Whether an agent reads this JSON object, a whole pretty-printed file, as one of its
    sessions (:meth:`~ctxtool.formats.capabilities.reading.ReadingAdapter.reads_document`:
    Gemini CLI's older ``session-*.json``). Asked by the reader (:mod:`ctxtool.formats.jsonl`)
    only for such a file."""
    return any(adapter_for(name).reads_document(document) for name in format_names())


read_with(reads_document)


def detect_format(entries: Iterable[Entry], forced: str | None = None) -> tuple[Format, Iterator[Entry]]:
    """Return the format and an iterator that still yields every entry (the peeked ones first)."""
    it = iter(entries)
    if forced:
        if forced not in format_names():
            raise UsageError(f"unknown format {forced!r}",
                             hint=f"use one of {', '.join(format_names())}")
        first = next(it, None)
        if first is not None:
            refuse(adapter_for(forced), first)
            it = itertools.chain([first], it)
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
    if found is not None:
        refuse(adapter_for(found), peeked[0])
    # plain dicts (the Python API) have no .invalid; only lines read from input can be invalid
    if found is None and weak is None and peeked and not any(
            getattr(e, "invalid", False) for e in peeked):
        first = peeked[0]
        typed = any(isinstance(e.get("type"), str) for e in peeked)
        raise InputError(
            "unknown transcript format: no line reads as Claude Code, Codex CLI, OpenCode, "
            "Gemini CLI or Anthropic/OpenAI messages" if typed else
            "unknown transcript format: entries have neither 'type' (Claude Code) nor 'role'"
            " (Anthropic/OpenAI messages)",
            source=first.source if isinstance(first, Entry) else None,
            lineno=first.lineno if isinstance(first, Entry) else None,
            hint=f"pass --format {'|'.join(format_names())}" if typed else
            "pass --format claude-code|anthropic|openai|opencode",
        )
    return fmt, itertools.chain(peeked, it)


def describe(entry: dict[str, Any]) -> str:
    """``file:line`` for messages about an entry, or ``entry`` when it was built, not read."""
    return location_of(entry) or "entry"
