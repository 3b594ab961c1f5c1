"""Token estimation, context windows and thresholds.

:func:`estimate_text_tokens` is a content-aware heuristic for Claude's tokenizer, calibrated by
``scripts/token_accuracy.py`` against real usage deltas in Claude Code transcripts (the prompt
growth between two consecutive API calls of a tool loop). One flat chars-per-token constant is
wrong for someone: English prose comes out near 5 characters per token, source code near 3, JSON
and line-numbered file listings 2-2.5, CJK text about 1 token per character. So the text is
counted by character class (letters, capitals, digits, newlines, runs of punctuation, CJK, other
non-ASCII) and each count weighted. Counting uses ``bytes.translate``/``bytes.count`` (C loops, no per-character
Python), and texts longer than :data:`SAMPLE_LIMIT` are measured on evenly spaced windows and
scaled, so the cost per text is bounded: ``estimate`` keeps up with 1 GB transcripts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxtool.core.blocks import block_text, content_blocks, tool_result_text

IMAGE_TOKENS = 2000

# Weights per counted feature, fitted on the corpus by `scripts/token_accuracy.py --fit`
# (weighted least squares over tool-loop steps, 1/3 of the files held out). Order = FEATURES.
# Spaces cost nothing extra (a space joins the word after it); a newline carries the
# indentation after it; a run of punctuation is about one token whatever its length.
FEATURES = ("letters", "capitals", "digits", "newlines", "punctuation_runs", "other_non_ascii")
WEIGHTS = (0.237, 0.158, 0.92, 1.005, 1.257, 0.456)
# CJK ideographs, kana, hangul, full-width forms: about one token per character, often more
# (chars/4 undercounts them 3-4x). Not in the corpus, so set from published measurements.
CJK_TOKENS_PER_CHAR = 1.1

# Longer texts are measured on SAMPLE_WINDOWS evenly spaced windows of SAMPLE_WIDTH characters
# and scaled: the cost per text stays bounded, the estimate moves by about 1% (measured).
SAMPLE_LIMIT = 2048
SAMPLE_WINDOWS = 4
SAMPLE_WIDTH = 512


def _table(mapping: dict[bytes, bytes], default: bytes) -> bytes:
    table = bytearray(default * 256)
    for chars, cls in mapping.items():
        for byte in chars:
            table[byte] = cls[0]
    return bytes(table)


# byte -> class: l lower, u upper, d digit, n newline, p punctuation, " " blank
_CLASSES = _table({b"abcdefghijklmnopqrstuvwxyz": b"l", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ": b"u",
                   b"0123456789": b"d", b" \t\r\x0b\x0c": b" ", b"\n": b"n"}, b"p")
# byte -> 1 for punctuation, 0 elsewhere: read as one big integer, a run of punctuation starts
# at each 1 byte whose predecessor is 0 (counted with shifts and bit_count, no Python loop)
_PUNCT_BITS = bytes(int(cls == ord("p")) for cls in _CLASSES)
_ASCII = bytes(range(0x80))
_NON_ASCII = bytes(range(0x80, 0x100))

# CJK characters are those in U+3040-30FF, 3400-4DBF, 4E00-9FFF, AC00-D7AF, F900-FAFF and
# FF00-FFEF, counted on UTF-16 code units with C loops (a regex over those ranges costs more,
# and compiling it costs 25 ms at start-up): a unit is CJK when its high byte lies wholly inside
# a range, or is one of the four high bytes a range covers in part (bit k in _PARTIAL_HIGH) and
# its low byte passes that range's cut (bit k in _PARTIAL_LOW).
_WHOLE_HIGH = bytes([*range(0x34, 0x4D), *range(0x4E, 0xA0), *range(0xAC, 0xD7), 0xF9, 0xFA])
_NOT_WHOLE_HIGH = bytes(b for b in range(256) if b not in _WHOLE_HIGH)
_PARTIAL_HIGH = bytes({0x30: 1, 0x4D: 2, 0xD7: 4, 0xFF: 8}.get(b, 0) for b in range(256))
_PARTIAL_LOW = bytes((b >= 0x40) | (b <= 0xBF) << 1 | (b <= 0xAF) << 2 | (b <= 0xEF) << 3
                     for b in range(256))


def cjk_count(text: str) -> int:
    """How many characters of ``text`` are CJK ideographs, kana, hangul or full-width forms."""
    units = text.encode("utf-16-be", "surrogatepass")
    high, low = units[0::2], units[1::2]
    partial = (int.from_bytes(high.translate(_PARTIAL_HIGH), "big")
               & int.from_bytes(low.translate(_PARTIAL_LOW), "big"))
    return len(high.translate(None, _NOT_WHOLE_HIGH)) + partial.bit_count()


def _counts(text: str) -> tuple[int, int, int, int, int, int, int, float]:
    """letters, capitals, digits, newlines, punctuation runs, other non-ASCII, CJK, and the
    scale from the (sampled) text measured to the whole text."""
    n = len(text)
    if n > SAMPLE_LIMIT:
        step = (n - SAMPLE_WIDTH) // (SAMPLE_WINDOWS - 1)
        text = "".join([text[i * step:i * step + SAMPLE_WIDTH] for i in range(SAMPLE_WINDOWS)])
    if text.isascii():
        raw, non_ascii, cjk = text.encode(), 0, 0
    else:
        # the ASCII characters, and the others on their own: the CJK search then runs over
        # a few dozen characters instead of the whole text
        encoded = text.encode("utf-8", "surrogatepass")
        raw = encoded.translate(None, _NON_ASCII)
        others = encoded.translate(None, _ASCII).decode("utf-8", "surrogatepass")
        non_ascii = len(others)
        cjk = cjk_count(others)
    classes = raw.translate(_CLASSES)
    upper = classes.count(b"u")
    # runs: every run starts and (unless it reaches the end) ends with a change of class
    punct = int.from_bytes(raw.translate(_PUNCT_BITS), "big")
    runs = ((punct ^ (punct >> 8)).bit_count() + (punct & 1)) // 2
    return (classes.count(b"l") + upper, upper, classes.count(b"d"), classes.count(b"n"), runs,
            non_ascii - cjk, cjk, n / len(text))


def text_features(text: str) -> tuple[tuple[float, ...], float]:
    """(counts in FEATURES order, CJK characters) of ``text``; long texts sampled and scaled."""
    if not text:
        return (0.0,) * len(FEATURES), 0.0
    *counts, cjk, scale = _counts(text)
    return tuple(c * scale for c in counts), cjk * scale


# Short texts repeat a lot (tool names, input keys, paths, commands): their estimates are
# remembered, so a transcript pays for each distinct one once.
SHORT_TEXT = 100
_SHORT_CACHE: dict[str, int] = {}
_SHORT_CACHE_SIZE = 50_000


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens of ``text`` as Claude's tokenizer would count it (0 for "")."""
    if len(text) > SHORT_TEXT:
        return _text_tokens(text)
    tokens = _SHORT_CACHE.get(text)
    if tokens is None:
        if len(_SHORT_CACHE) >= _SHORT_CACHE_SIZE:
            _SHORT_CACHE.clear()
        tokens = _SHORT_CACHE[text] = _text_tokens(text) if text else 0
    return tokens


def _text_tokens(text: str) -> int:
    letters, capitals, digits, newlines, runs, other, cjk, scale = _counts(text)
    w_letter, w_capital, w_digit, w_newline, w_run, w_other = WEIGHTS
    tokens = (w_letter * letters + w_capital * capitals + w_digit * digits
              + w_newline * newlines + w_run * runs + w_other * other
              + CJK_TOKENS_PER_CHAR * cjk) * scale
    return max(1, round(tokens))


# --- blocks and entries ---------------------------------------------------------------------------

# What a block costs beyond its text, fitted with the weights (scripts/token_accuracy.py): a tool
# call's ids and framing, and the reminders Claude Code adds around tool results, come out at
# about 80 tokens per result (the fit puts nothing on the tool_use side); thinking passed back
# costs more than its visible (summarized) text. MESSAGE_OVERHEAD is the role framing.
TOOL_USE_OVERHEAD = 0
TOOL_RESULT_OVERHEAD = 81
THINKING_FACTOR = 1.7
MESSAGE_OVERHEAD = 4


def estimate_json_tokens(value: Any) -> int:
    """Estimated tokens of a JSON value (a tool_use input): strings are counted as the text
    they hold, so an escaped newline costs what a newline costs, plus keys and punctuation."""
    if isinstance(value, str):
        return estimate_text_tokens(value) + 1
    total = 1  # loops rather than sum() over generators: this runs for every tool input
    if isinstance(value, dict):
        for key, item in value.items():
            total += estimate_text_tokens(str(key)) + 2 + estimate_json_tokens(item)
        return total
    if isinstance(value, list):
        for item in value:
            total += estimate_json_tokens(item) + 1
        return total
    return 1 if value is None or isinstance(value, bool) else estimate_text_tokens(str(value))


def estimate_block_tokens(block: dict[str, Any]) -> int:
    """Estimated tokens of one Anthropic-shaped content block as the model sees it."""
    kind = block.get("type")
    if kind == "text":
        return estimate_text_tokens(str(block.get("text", "")))
    if kind == "image":
        return IMAGE_TOKENS
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return TOOL_RESULT_OVERHEAD + sum(
                estimate_block_tokens(b) if isinstance(b, dict)
                else estimate_text_tokens(str(b)) for b in content)
        return TOOL_RESULT_OVERHEAD + estimate_text_tokens(tool_result_text(content))
    if kind in ("tool_use", "server_tool_use"):
        return (TOOL_USE_OVERHEAD + estimate_text_tokens(str(block.get("name") or ""))
                + estimate_json_tokens(block.get("input")))
    if kind == "thinking":
        return round(THINKING_FACTOR * estimate_text_tokens(block_text(block)))
    return estimate_text_tokens(block_text(block))


def estimate_entry_tokens(entry: dict[str, Any], fmt: str) -> int:
    """Estimated tokens of an entry's message content (0 for entries the model never sees)."""
    blocks = content_blocks(entry, fmt)
    if not blocks:
        return 0
    return MESSAGE_OVERHEAD + sum(estimate_block_tokens(b) for b in blocks)


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
