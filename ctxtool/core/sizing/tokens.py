"""Token estimation, context windows and thresholds.

:func:`estimate_text_tokens` is a content-aware heuristic for Claude's tokenizer, calibrated by
``scripts/token_accuracy.py`` against real usage deltas in Claude Code transcripts (the prompt
growth between two consecutive API calls of a tool loop). One flat chars-per-token constant is
wrong for someone: English prose comes out near 5 characters per token, source code near 3, JSON
and line-numbered file listings 2-2.5, CJK text about 1 token per character. So the text is
counted by character class (letters, capitals, digits, newlines, runs of punctuation, CJK, other
non-ASCII) and each count weighted. Counting uses ``bytes.translate`` and ``int.bit_count`` (C
loops, no per-character Python), and texts longer than :data:`SAMPLE_LIMIT` are measured on evenly
spaced windows and scaled, so the cost per text is bounded: ``estimate`` keeps up with 1 GB
transcripts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtool.core.messages.blocks import block_text, content_blocks, tool_result_text
from ctxtool.formats.adapter import FormatAdapter
from ctxtool.formats.limits import (  # re-exported: callers import them from here
    DEFAULT_WINDOW, IMAGE_TOKENS, LONG_WINDOW, AgentSettings, Thresholds, context_window,
)
from ctxtool.formats.registry import adapter_for


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


# Each text is counted on its UTF-8 bytes, translated to one byte of class flags per byte, read
# as one big integer: a class's count is the number of its flag bits set (``x & mask`` and
# ``int.bit_count``, C loops over 30-bit digits, no per-character Python; measured 20% less
# than a ``bytes.count`` pass per class). A character is counted at its first byte
# (continuation bytes are blank); a first byte from E3 to EF starts a character from U+3000 to
# U+FFFF: CJK symbols, kana, ideographs, hangul, full-width forms (and the rare symbols sharing
# those blocks), about one token each. A run of punctuation starts at each punctuation byte
# whose byte before is not one: the punctuation bytes less those following one.
_LETTER, _CAPITAL, _DIGIT, _NEWLINE, _PUNCT, _OTHER, _CJK = (1 << bit for bit in range(7))
_BLANK = 0


def _class_table() -> bytes:
    table = bytearray([_PUNCT] * 256)
    classes = {b" \t\r\x0b\x0c": _BLANK, b"\n": _NEWLINE, b"abcdefghijklmnopqrstuvwxyz": _LETTER,
               b"ABCDEFGHIJKLMNOPQRSTUVWXYZ": _LETTER | _CAPITAL, b"0123456789": _DIGIT,
               bytes(range(0x80, 0xC0)): _BLANK, bytes(range(0xC0, 0x100)): _OTHER,
               bytes(range(0xE3, 0xF0)): _CJK}
    for chars, code in classes.items():
        for byte in chars:
            table[byte] = code
    return bytes(table)


_CLASSES = _class_table()
# The (sampled) text measured is at most SAMPLE_LIMIT characters of at most 4 bytes: a mask that
# long covers every byte (``&`` stops at the shorter operand).
_LONGEST = 4 * SAMPLE_LIMIT
_LETTERS, _CAPITALS, _DIGITS, _NEWLINES, _PUNCTS, _OTHERS, _CJKS = (
    int.from_bytes(bytes([flag]) * _LONGEST, "little")
    for flag in (_LETTER, _CAPITAL, _DIGIT, _NEWLINE, _PUNCT, _OTHER, _CJK))
_NOT_CJK_START = bytes(b for b in range(256) if _CLASSES[b] != _CJK)


def cjk_count(text: str) -> int:
    """How many characters of ``text`` lie in U+3000-U+FFFF (CJK, kana, hangul, full-width)."""
    return len(text.encode("utf-8", "surrogatepass").translate(None, _NOT_CJK_START))


def _counts(text: str) -> tuple[int, int, int, int, int, int, int, float]:
    """letters, capitals, digits, newlines, punctuation runs, other non-ASCII, CJK, and the
    scale from the (sampled) text measured to the whole text."""
    n = len(text)
    if n > SAMPLE_LIMIT:
        step = (n - SAMPLE_WIDTH) // (SAMPLE_WINDOWS - 1)
        text = "".join([text[i * step:i * step + SAMPLE_WIDTH] for i in range(SAMPLE_WINDOWS)])
    flags = int.from_bytes(text.encode("utf-8", "surrogatepass").translate(_CLASSES), "little")
    other = cjk = 0
    if not text.isascii():
        other, cjk = (flags & _OTHERS).bit_count(), (flags & _CJKS).bit_count()
    punct = flags & _PUNCTS
    runs = punct.bit_count() - (punct & (punct << 8)).bit_count()  # << 8: the next byte
    return ((flags & _LETTERS).bit_count(), (flags & _CAPITALS).bit_count(),
            (flags & _DIGITS).bit_count(), (flags & _NEWLINES).bit_count(), runs, other, cjk,
            n / len(text))


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
    return blocks_tokens(content_blocks(entry, fmt))


def blocks_tokens(blocks: list[dict[str, Any]]) -> int:
    """:func:`estimate_entry_tokens` of a message whose content blocks are ``blocks`` (for a
    caller that has them already)."""
    if not blocks:
        return 0
    return MESSAGE_OVERHEAD + sum(estimate_block_tokens(b) for b in blocks)


# --- context windows and thresholds ----------------------------------------------------------------
# Each agent's, through its adapter (FormatAdapter.context_limits): Claude Code's by the version
# that wrote the transcript (ctxtool/formats/claude_code/rules.py), its newest rule by default.

_DEFAULT = FormatAdapter()  # where no format is known: ctxtool's default thresholds


def thresholds(*, model: str | None = None, context_window_override: int | None = None,
               max_output: int | None = None, env: Mapping[str, str] | None = None,
               fmt: str | None = None, version: str | None = None,
               settings: AgentSettings = None) -> Thresholds:
    """Thresholds for a model as the agent of ``fmt`` applies them (Claude Code: under the
    rule of the ``version`` that wrote the transcript and the ``settings`` it reads), with
    the environment variables Claude Code honours (``CLAUDE_CODE_MAX_OUTPUT_TOKENS``,
    ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``, ``DISABLE_COMPACT``...)."""
    adapter = adapter_for(fmt) if fmt else _DEFAULT
    return adapter.context_limits(model=model, window=context_window_override,
                                  max_output=max_output, env=env, version=version,
                                  settings=settings)
