"""The summarizer of a backend named by :func:`ctxtool.llm.choose_backend`."""

from __future__ import annotations

from collections.abc import Mapping

from ctxtool.llm.base import Summarizer


def make_summarizer(backend: str, *, model: str | None = None, env: Mapping[str, str] | None = None,
                    timeout: float | None = None, window: int | None = None,
                    max_tokens: int = 16_000) -> Summarizer:
    """``offline``: :class:`ctxtool.core.summarizing.offline.OfflineSummarizer`; ``anthropic``: a
    Claude model (``model``, default the backend's) chunked to its window (``window``, default
    the model's). Backends are imported only when chosen (the SDK is not loaded offline)."""
    if backend == "offline":
        from ctxtool.core.summarizing.offline import OfflineSummarizer

        return OfflineSummarizer()
    from ctxtool.core.sizing.tokens import thresholds
    from ctxtool.core.summarizing.model import ModelSummarizer
    from ctxtool.llm.anthropic import DEFAULT_MODEL, DEFAULT_TIMEOUT, AnthropicModel

    name = model or DEFAULT_MODEL
    window = window or thresholds(model=name).window
    return ModelSummarizer(AnthropicModel(model=name, env=env, timeout=timeout or DEFAULT_TIMEOUT),
                           window=window, max_tokens=max_tokens)


__all__ = ["make_summarizer"]
