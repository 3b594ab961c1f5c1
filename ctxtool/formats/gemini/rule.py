"""Where Gemini CLI compresses a session, as 0.61.0 decides it (docs/gemini-format.md).

Before a request, ``ChatCompressionService`` (chunk-JDPZ4CE3.js:335624) compresses when the last
prompt's size - the last reply's ``promptTokenCount``, the ``tokens.input`` its record keeps -
reaches ``model.compressionThreshold`` of the model's window (``tokenLimit``, 333183: 1,048,576,
256,000 for the Gemma 4 models). The threshold is the setting when it is a non-zero number,
else a remote experiment flag (none offline), else 0.5. A chat just resumed has no reply yet:
its last prompt size is Gemini's own estimate of the history alone (:func:`gemini_estimate`,
``estimateTokenCountSync``, 311196: a quarter token per ASCII character - the 0.33 constant
beside it is not used by default - 1.5 per other character) until the first reply.

Gemini's lines record no client version. The default has been 0.5 since 2025-11 (0.7 before,
in one-document sessions of older clients); every JSONL session (from April 2026, 0.39) is
under 0.5.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxtool.formats.adapter import verdict_rows
from ctxtool.formats.limits import Thresholds

WINDOW = 1_048_576  # tokenLimit's default and every Gemini model's
GEMMA_4_WINDOW = 256_000
GEMMA_4_MODELS = frozenset({"gemma-4-31b-it", "gemma-4-26b-a4b-it"})
DEFAULT_THRESHOLD = 0.5
RULE = "Gemini CLI 0.61"


CHARS_PER_TOKEN = 4
NON_ASCII_TOKENS = 1.5
FULL_HEURISTIC_CHARS = 100_000  # longer texts are counted by length alone
MEDIA_TOKENS = {"image/": 3_000, "application/pdf": 25_800}


def _js_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _text_tokens(text: str) -> float:
    if len(text) > FULL_HEURISTIC_CHARS:
        return len(text) / CHARS_PER_TOKEN
    ascii_chars = sum(1 for ch in text if ord(ch) <= 127)
    return ascii_chars / CHARS_PER_TOKEN + (len(text) - ascii_chars) * NON_ASCII_TOKENS


def _part_tokens(part: Any, depth: int) -> float:
    if not isinstance(part, Mapping):
        return 0.0
    if isinstance(part.get("text"), str):
        return _text_tokens(part["text"])
    response = part.get("functionResponse")
    if response:
        tokens = len(str(response.get("name") or "")) / CHARS_PER_TOKEN \
            if isinstance(response, Mapping) else 0.0
        body = response.get("response") if isinstance(response, Mapping) else None
        if isinstance(body, str):
            tokens += len(body) / CHARS_PER_TOKEN
        elif body is not None:
            tokens += len(_js_json(body)) / CHARS_PER_TOKEN
        nested = response.get("parts") if isinstance(response, Mapping) else None
        if isinstance(nested, list) and nested:
            tokens += gemini_estimate(nested, depth + 1)
        return tokens
    media = part.get("inlineData") or part.get("fileData")
    mime = str(media.get("mimeType") or "") if isinstance(media, Mapping) else ""
    for prefix, tokens in MEDIA_TOKENS.items():
        if mime.startswith(prefix):
            return float(tokens)
    return len(_js_json(part)) / CHARS_PER_TOKEN


def gemini_estimate(parts: Iterable[Any], depth: int = 0) -> int:
    """Gemini CLI's own estimate of parts (``estimateTokenCountSync``), which it takes for the
    last prompt's size when a resumed chat has had no reply yet."""
    if depth > 3:
        return 0
    return int(sum(_part_tokens(part, depth) for part in parts))


def token_limit(model: str | None) -> int:
    """The window Gemini CLI measures a model's context in."""
    return GEMMA_4_WINDOW if model in GEMMA_4_MODELS else WINDOW


def compress_at(window: int, threshold: float | None) -> int:
    """The prompt size from which Gemini compresses before the next request."""
    return int((threshold or DEFAULT_THRESHOLD) * window)


def thresholds(*, model: str | None, window: int | None) -> Thresholds:
    """Gemini CLI's points for ``model`` (``window`` overriding its window): it compresses at
    its default threshold and has no warning of its own; a prompt past the window fails."""
    size = window or token_limit(model)
    at = compress_at(size, None)
    return Thresholds(window=size, max_output=0, effective=size, auto_compact=at, warning=at,
                      blocking=size, rule=RULE)


@dataclass(frozen=True)
class GeminiCompression:
    """Gemini CLI's own verdict (``estimate`` reports it under ``gemini``)."""

    report_key: ClassVar[str] = "gemini"

    window: int
    threshold: float  # the one that applies
    source: str  # where it comes from: a settings file, or Gemini's default
    last_prompt: int | None  # the last recorded tokens.input, None before any reply
    resumed_prompt: int  # what a resume takes for it: Gemini's estimate of the history

    @property
    def usable(self) -> int:
        return compress_at(self.window, self.threshold)

    @property
    def compresses(self) -> bool:
        """In the running chat: before its next request."""
        return self.last_prompt is not None and self.last_prompt >= self.usable

    @property
    def compresses_on_resume(self) -> bool:
        """Before the first request of a resume (later ones go by the replies)."""
        return self.resumed_prompt >= self.usable

    def as_dict(self) -> dict[str, Any]:
        return {"window": self.window, "compression_threshold": self.threshold,
                "threshold_source": self.source, "compresses_at": self.usable,
                "last_prompt": self.last_prompt, "compresses_next": self.compresses,
                "resumed_prompt": self.resumed_prompt,
                "compresses_on_resume": self.compresses_on_resume}

    def rows(self, context: int) -> list[tuple[str, str]]:
        base = f"model.compressionThreshold {self.threshold:g} ({self.source}) of {self.window:,}"
        resume = "compresses" if self.compresses_on_resume else "does not compress"
        check = (f"on resume it counts the history as {self.resumed_prompt:,} tokens and "
                 f"{resume} before its first request")
        if self.last_prompt is not None:
            running = "compresses" if self.compresses else "does not compress"
            check = (f"last prompt {self.last_prompt:,} tokens: the running chat {running} "
                     f"before its next request; {check}")
        return verdict_rows("Gemini CLI", self.usable, context, base, check)


__all__ = ["DEFAULT_THRESHOLD", "GEMMA_4_WINDOW", "GeminiCompression", "RULE", "WINDOW",
           "compress_at", "gemini_estimate", "thresholds", "token_limit"]
