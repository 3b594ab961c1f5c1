"""What a Codex rollout records of its model calls: ``token_count`` events (the last call's
usage, the window Codex measures against), and the lines usage tools read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

def token_info(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """``payload.info`` of an ``event_msg`` ``token_count`` line, or None."""
    if entry.get("type") != "event_msg":
        return None
    payload = entry.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return None
    info = payload.get("info")
    return info if isinstance(info, dict) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def usage_counts(entry: Mapping[str, Any]) -> tuple[str, int, int, int] | None:
    """(key, uncached input, cached input, output) of the last model call a ``token_count``
    line records, or None. Codex's ``input_tokens`` includes the cached ones (OpenAI's usage);
    they are split so that input + cache read is what the call was sent. A count of 0 input
    (Codex writes one right after a compaction, before any call) is no usage."""
    info = token_info(entry)
    last = info.get("last_token_usage") if info is not None else None
    if not isinstance(last, dict):
        return None
    prompt, cached = _count(last.get("input_tokens")), _count(last.get("cached_input_tokens"))
    if prompt <= 0:
        return None
    cached = min(cached, prompt)
    key = f"{entry.get('timestamp', '')}#{entry.get('ordinal', '')}"
    return key, prompt - cached, cached, _count(last.get("output_tokens"))


# payload fields of session_meta / turn_context that hold instructions (AGENTS.md, the system
# prompt), not usage: left out of a usage-only rollout
_INSTRUCTION_FIELDS = frozenset({"base_instructions", "instructions", "user_instructions",
                                 "developer_instructions"})


def usage_only(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The line as Codex usage tools (@ccusage/codex) read it, or None: ``session_meta`` and
    ``turn_context`` (the model) without their instruction text, ``token_count`` events whole."""
    payload = entry.get("payload")
    if entry.get("type") == "event_msg" and isinstance(payload, Mapping) \
            and payload.get("type") == "token_count":
        return dict(entry)
    if entry.get("type") not in ("session_meta", "turn_context"):
        return None
    if not isinstance(payload, Mapping):
        return dict(entry)
    return {**entry, "payload": {key: value for key, value in payload.items()
                                 if key not in _INSTRUCTION_FIELDS}}


def context_window_of(entry: Mapping[str, Any]) -> int | None:
    """``model_context_window`` of a ``token_count`` line (Codex's effective window), or None."""
    info = token_info(entry)
    window = info.get("model_context_window") if info is not None else None
    return window if isinstance(window, int) and window > 0 else None
