"""Summarizer and token-counter backends: offline (default) and Anthropic (opt-in, lazy).

Importing this package never imports the ``anthropic`` SDK; the Anthropic backend imports it
the first time it makes a client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ctxtool.errors import UsageError
from ctxtool.llm.base import Summarizer

BACKENDS = ("auto", "offline", "anthropic")
LLM_ENV = "CTXTOOL_LLM"


def choose_backend(choice: str | None, env: Mapping[str, str] | None = None) -> str:
    """``offline`` or ``anthropic`` for ``--llm`` (else ``$CTXTOOL_LLM``, else ``auto``):
    ``auto`` is anthropic when an Anthropic key is configured, offline otherwise."""
    from ctxtool.llm.anthropic import has_key

    env = os.environ if env is None else env
    value = (choice or env.get(LLM_ENV, "") or "auto").strip().lower()
    if value not in BACKENDS:
        raise UsageError(f"unknown LLM backend {value!r}", hint="use auto, offline or anthropic")
    if value == "auto":
        return "anthropic" if has_key(env) else "offline"
    return value


def make_summarizer(backend: str, *, model: str | None = None, env: Mapping[str, str] | None = None,
                    timeout: float | None = None, window: int | None = None,
                    max_tokens: int = 16_000) -> Summarizer:
    """The summarizer for a backend chosen by :func:`choose_backend`."""
    if backend == "offline":
        from ctxtool.llm.offline import OfflineSummarizer

        return OfflineSummarizer()
    from ctxtool.core.tokens import thresholds
    from ctxtool.llm.anthropic import DEFAULT_MODEL, DEFAULT_TIMEOUT, AnthropicSummarizer

    name = model or DEFAULT_MODEL
    return AnthropicSummarizer(model=name, env=env, timeout=timeout or DEFAULT_TIMEOUT,
                               window=window or thresholds(model=name).window,
                               max_tokens=max_tokens)


__all__ = ["BACKENDS", "LLM_ENV", "choose_backend", "make_summarizer"]
