"""The summarizer of a backend named by :func:`ctxtool.llm.choose_backend`."""

from __future__ import annotations

from collections.abc import Mapping

from ctxtool.llm.base import Summarizer


def make_summarizer(backend: str, *, model: str | None = None, env: Mapping[str, str] | None = None,
                    timeout: float | None = None, window: int | None = None,
                    max_tokens: int = 16_000) -> Summarizer:
    """``offline``: :class:`ctxtool.core.summarizing.offline.OfflineSummarizer`; ``anthropic``: a
    Claude model (``model``, default the backend's); ``claude-code`` / ``codex``: the user's own
    agent CLI (``model`` passed through, default the agent's own). Model summaries are chunked
    to ``window`` (default: the model's). Backends are imported only when chosen (the SDK is not
    loaded offline)."""
    if backend == "offline":
        from ctxtool.core.summarizing.offline import OfflineSummarizer

        return OfflineSummarizer()
    from ctxtool.core.sizing.tokens import thresholds
    from ctxtool.core.summarizing.model import Model, ModelSummarizer
    from ctxtool.llm.anthropic import DEFAULT_MODEL, DEFAULT_TIMEOUT

    seconds = timeout or DEFAULT_TIMEOUT
    calls: Model
    if backend == "claude-code":
        from ctxtool.llm.claude_code import ClaudeCodeModel

        calls = ClaudeCodeModel(model=model, env=env, timeout=seconds)
    elif backend == "codex":
        from ctxtool.llm.codex import CodexModel

        calls = CodexModel(model=model, env=env, timeout=seconds)
    else:
        from ctxtool.llm.anthropic import AnthropicModel

        calls = AnthropicModel(model=model or DEFAULT_MODEL, env=env, timeout=seconds)
    window = window or thresholds(model=calls.model).window
    return ModelSummarizer(calls, window=window, max_tokens=max_tokens)


__all__ = ["make_summarizer"]
