"""Where an agent's context warns, auto-compacts and blocks (:class:`Thresholds`), and the
model windows every agent starts from. Standard library only: the statusline's fast path reads
it. Each agent's own rule fills them in through its adapter
(:meth:`ctxtool.formats.adapter.FormatAdapter.context_limits`; Claude Code's by version:
:mod:`ctxtool.formats.claude_code.rules`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

IMAGE_TOKENS = 2_000  # an image in a tool result, as the agents count it
DEFAULT_WINDOW = 200_000
LONG_WINDOW = 1_000_000

#: An agent's own settings (Claude Code's: ``rules.Settings``), read by the command and handed
#: through to the agent's adapter unopened.
AgentSettings = Any


class Thresholds(NamedTuple):
    """Token counts at which the agent warns, auto-compacts and blocks for one model, under
    ``rule`` (Claude Code: the row of the ``version`` that wrote the transcript), with the
    settings and environment variables that moved them (``applied``)."""

    window: int
    max_output: int
    effective: int
    auto_compact: int
    warning: int
    blocking: int
    auto_compact_enabled: bool = True
    rule: str = "default"  # the agent's rule that applies (Claude Code: a row of its table)
    version: str | None = None
    applied: tuple[str, ...] = ()
    compaction_enabled: bool = True  # False under DISABLE_COMPACT

    def as_dict(self) -> dict[str, Any]:
        return {"window": self.window, "max_output": self.max_output, "effective": self.effective,
                "auto_compact": self.auto_compact, "warning": self.warning,
                "blocking": self.blocking, "auto_compact_enabled": self.auto_compact_enabled,
                "compaction_enabled": self.compaction_enabled, "rule": self.rule,
                "version": self.version, "settings": list(self.applied)}


class IdleCompaction(NamedTuple):
    """Whether and when the agent compacts a session left idle on its own (Claude Code 2.1.286+:
    once the one-hour prompt cache is 0.9 through its life, counted from the last reply, if
    the context holds at least ``min_tokens``). ``fires_at`` is None when it will not fire."""

    enabled: bool
    reason: str  # why not, or what it waits for
    min_tokens: int
    fires_at: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"enabled": self.enabled, "reason": self.reason, "min_tokens": self.min_tokens,
                "fires_at": _iso(self.fires_at)}


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.isoformat().replace("+00:00", "Z")


def context_window(model: str | None, override: int | None = None) -> int:
    """200K by default; 1M for models named with a ``[1m]`` suffix (Claude Code's convention)."""
    if override:
        return override
    if model and re.search(r"\[1m\]\s*$", model, re.IGNORECASE):
        return LONG_WINDOW
    return DEFAULT_WINDOW


def tool_result_tokens(content: Any, count: Callable[[str], int]) -> int:
    """A tool result's tokens as the agents count them when clearing: its text (text blocks,
    strings) by ``count``, :data:`IMAGE_TOKENS` per image, nothing for the block around it."""
    if isinstance(content, str):
        return count(content)
    if not isinstance(content, list):
        return 0
    total = 0
    for block in content:
        if isinstance(block, str):
            total += count(block)
        elif isinstance(block, Mapping):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                total += count(block["text"])
            elif block.get("type") == "image":
                total += IMAGE_TOKENS
    return total


__all__ = ["IMAGE_TOKENS", "tool_result_tokens", "DEFAULT_WINDOW", "LONG_WINDOW", "AgentSettings", "IdleCompaction", "Thresholds",
           "context_window"]
