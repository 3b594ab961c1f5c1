"""The registered format adapters: the one place that knows which agents ctxtool reads.

Transforms get the adapter of the format they were given with :func:`adapter_for`; the detector
(:mod:`ctxtool.formats.detect`) asks :func:`adapters` in registration order which one claims an
entry. Adding an agent = writing its adapter (see :mod:`ctxtool.formats.adapter`) and adding it to
:func:`_builtin` below (or calling :func:`register` from outside).
"""

from __future__ import annotations

from ctxtool.formats.adapter import FormatAdapter

_ADAPTERS: dict[str, FormatAdapter] = {}


def _builtin() -> list[FormatAdapter]:
    """The adapters ctxtool ships, in detection order (the first whose ``claims`` is true
    wins). Imported here, not at the top, so an adapter module may import the registry."""
    from ctxtool.formats.anthropic import AnthropicAdapter
    from ctxtool.formats.claude_code.adapter import ClaudeCodeAdapter
    from ctxtool.formats.codex import CodexAdapter
    from ctxtool.formats.openai_chat import OpenAIChatAdapter
    from ctxtool.formats.opencode.adapter import OpenCodeAdapter
    return [ClaudeCodeAdapter(), CodexAdapter(), OpenCodeAdapter(), OpenAIChatAdapter(),
            AnthropicAdapter()]


def register(adapter: FormatAdapter) -> FormatAdapter:
    """Add (or replace) the adapter of ``adapter.name``; returns it."""
    _loaded()
    if not adapter.name:
        raise ValueError(f"{adapter!r} has no name")
    _ADAPTERS[adapter.name] = adapter
    return adapter


def _loaded() -> dict[str, FormatAdapter]:
    if not _ADAPTERS:
        for adapter in _builtin():
            _ADAPTERS[adapter.name] = adapter
    return _ADAPTERS


def adapter_for(fmt: str) -> FormatAdapter:
    """The adapter of format ``fmt`` (its ``--format`` name). KeyError for an unknown name:
    callers validate user input first (see :func:`ctxtool.formats.detect.detect_format`)."""
    try:
        return _ADAPTERS[fmt]
    except KeyError:
        return _loaded()[fmt]


def adapters() -> list[FormatAdapter]:
    """Every registered adapter, in detection order."""
    return list(_loaded().values())


def format_names() -> tuple[str, ...]:
    """The ``--format`` names, in detection order."""
    return tuple(_loaded())


__all__ = ["adapter_for", "adapters", "format_names", "register"]
