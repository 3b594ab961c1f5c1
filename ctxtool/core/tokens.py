"""Token estimation, context windows and thresholds.

FIRST VERSION - the estimate issue calibrates the heuristic against real usage deltas
(scripts/token_accuracy.py). The public function is :func:`estimate_text_tokens`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

IMAGE_TOKENS = 2000


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF
            or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF)


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens of ``text`` as Claude's tokenizer would count it."""
    if not text:
        return 0
    if text.isascii():
        return max(1, round(len(text) / 2.7))
    cjk = sum(1 for ch in text if _is_cjk(ch))
    return max(1, round(cjk * 1.1 + (len(text) - cjk) / 2.7))


# --- context windows and thresholds ----------------------------------------------------------------
# Claude Code v2.1.19 (seeds/000): effective = window - min(max_output, 20000); auto-compact =
# effective - 13000; warning = auto-compact - 20000; blocking = window - 3000.

DEFAULT_WINDOW = 200_000
LONG_WINDOW = 1_000_000
DEFAULT_MAX_OUTPUT = 32_000
SUMMARY_OUTPUT_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
WARNING_BUFFER = 20_000
BLOCKING_BUFFER = 3_000


@dataclass(frozen=True)
class Thresholds:
    """Token counts at which Claude Code warns, auto-compacts and blocks, for one model."""

    window: int
    max_output: int
    effective: int
    auto_compact: int
    warning: int
    blocking: int
    auto_compact_enabled: bool = True

    def as_dict(self) -> dict[str, int | bool]:
        return {"window": self.window, "max_output": self.max_output, "effective": self.effective,
                "auto_compact": self.auto_compact, "warning": self.warning,
                "blocking": self.blocking, "auto_compact_enabled": self.auto_compact_enabled}


def context_window(model: str | None, override: int | None = None) -> int:
    """200K by default; 1M for models named with a ``[1m]`` suffix (Claude Code's convention)."""
    if override:
        return override
    if model and re.search(r"\[1m\]\s*$", model, re.IGNORECASE):
        return LONG_WINDOW
    return DEFAULT_WINDOW


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name, "").strip()
    try:
        return int(float(value)) if value else None
    except ValueError:
        return None


def thresholds(*, model: str | None = None, context_window_override: int | None = None,
               max_output: int | None = None, env: Mapping[str, str] | None = None) -> Thresholds:
    """Thresholds for a model, honouring the Claude Code environment variables:
    ``CLAUDE_CODE_MAX_OUTPUT_TOKENS``, ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (percent of the
    effective window), ``CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE`` and ``DISABLE_AUTO_COMPACT``."""
    env = env or {}
    window = context_window(model, context_window_override)
    out = max_output or _env_int(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS") or DEFAULT_MAX_OUTPUT
    effective = window - min(out, SUMMARY_OUTPUT_RESERVE)
    auto = effective - AUTOCOMPACT_BUFFER
    pct = _env_int(env, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    if pct is not None and 0 < pct <= 100:
        auto = min(auto, effective * pct // 100)
    blocking = _env_int(env, "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE") or window - BLOCKING_BUFFER
    enabled = env.get("DISABLE_AUTO_COMPACT", "").strip().lower() not in ("1", "true", "yes")
    return Thresholds(window=window, max_output=out, effective=effective, auto_compact=auto,
                      warning=auto - WARNING_BUFFER, blocking=blocking,
                      auto_compact_enabled=enabled)
