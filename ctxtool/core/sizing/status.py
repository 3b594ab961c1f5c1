"""The fields of a statusline: how full the context is, in the words a one-line display needs.

:func:`status_fields` turns an :class:`EstimateReport` (from the transcript's tail) and what
Claude Code's statusline JSON says (model name, window, cwd) into a flat dict for a
``str.format`` template; :func:`from_claude_json` covers the case without a transcript (a new
session): the last call's usage Claude Code reports, if any.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from ctxtool.core.sizing.tokens import Thresholds
from ctxtool.formats.limits import IdleCompaction

BAR_CELLS = 10
FULL, EMPTY = "█", "░"
WARNING_MARK = "⚠"


class StatusInput(NamedTuple):
    """What Claude Code's statusline (or hook) JSON tells, all optional."""

    transcript_path: str | None = None
    session_id: str | None = None
    cwd: str | None = None
    model_id: str | None = None
    model_name: str | None = None
    window: int | None = None  # context_window.context_window_size
    prompt_tokens: int | None = None  # context_window.current_usage: the last call's prompt


def _dig(data: Mapping[str, Any], *keys: str) -> Any:
    value: Any = data
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_status_input(data: Mapping[str, Any]) -> StatusInput:
    """The fields ctxtool uses from Claude Code's statusline JSON (2.1.x): ``transcript_path``,
    ``session_id``, ``cwd`` (or ``workspace.current_dir``), ``model.id``/``display_name`` and
    ``context_window`` (``context_window_size``; ``current_usage``: the last call's usage)."""
    usage = _dig(data, "context_window", "current_usage")
    prompt = None
    if isinstance(usage, Mapping):
        counts = [_int(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                                "cache_read_input_tokens")]
        prompt = sum(c or 0 for c in counts)
    return StatusInput(
        transcript_path=_str(data.get("transcript_path")),
        session_id=_str(data.get("session_id")),
        cwd=_str(data.get("cwd")) or _str(_dig(data, "workspace", "current_dir")),
        model_id=_str(_dig(data, "model", "id")),
        model_name=_str(_dig(data, "model", "display_name")),
        window=_int(_dig(data, "context_window", "context_window_size")) or None,
        prompt_tokens=prompt)


def human(tokens: int) -> str:
    """12345 -> 12.3K, 1234567 -> 1.23M."""
    if tokens >= 1_000_000:
        return f"{tokens / 1e6:.2f}M"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}K"
    return str(tokens)


def bar(used: int, window: int, cells: int = BAR_CELLS) -> str:
    full = min(cells, round(cells * used / window)) if window > 0 else 0
    return FULL * full + EMPTY * (cells - full)


def status_of(used: int, limits: Thresholds, compact_at: int) -> str:
    """ok / warning / auto_compact / blocking, as ``estimate`` reports it (``compact_at``:
    where the agent compacts, by Claude Code's thresholds or by the agent's own rule)."""
    if used >= limits.blocking:
        return "blocking"
    if used >= compact_at:
        return "auto_compact"
    # the warning keeps its distance below wherever the agent compacts (the thresholds put it
    # below their own auto-compact point, which an agent's own rule replaces)
    return "warning" if used >= limits.warning - limits.auto_compact + compact_at else "ok"


def idle_fields(idle: IdleCompaction | None, now: datetime) -> dict[str, str]:
    """``idle_at`` (local HH:MM) and ``idle_in`` (minutes from ``now``, 0 once past) of the
    agent's idle compaction; empty when it will not fire."""
    fires = idle.fires_at if idle is not None else None
    if fires is None:
        return {"idle_at": "", "idle_in": ""}
    left = max(0, int((fires - now).total_seconds() // 60))
    return {"idle_at": fires.astimezone().strftime("%H:%M"), "idle_in": f"{left}m"}


def status_fields(*, used: int, limits: Thresholds, model: str | None,
                  given: StatusInput, method: str, idle: IdleCompaction | None = None,
                  now: datetime | None = None, compact_at: int | None = None) -> dict[str, Any]:
    """The template fields (see ``ctxtool statusline --help``); ``now`` counts ``idle_in``;
    ``compact_at``: where the agent compacts by its own rule (default: the thresholds')."""
    compact_at = limits.auto_compact if compact_at is None else compact_at
    status = status_of(used, limits, compact_at)
    to_compact = max(0, compact_at - used)
    cwd = given.cwd or ""
    return {
        "model": given.model_name or model or given.model_id or "-",
        "model_id": given.model_id or model or "-",
        "tokens": human(used), "context_tokens": used,
        "window": human(limits.window), "window_tokens": limits.window,
        "percent": f"{100 * used / limits.window:.0f}" if limits.window else "0",
        "to_compact": human(to_compact), "to_compact_tokens": to_compact,
        "compact_at": human(compact_at), "compact_at_tokens": compact_at,
        "bar": bar(used, limits.window), "status": status,
        "marker": f" {WARNING_MARK}" if status != "ok" else "",
        "method": method, "cwd": cwd, "dir": os.path.basename(cwd.rstrip("/")) or cwd,
        "session": (given.session_id or "")[:8],
        **idle_fields(idle, now or datetime.now().astimezone()),
    }


__all__ = ["StatusInput", "bar", "human", "idle_fields", "read_status_input", "status_fields",
           "status_of"]
