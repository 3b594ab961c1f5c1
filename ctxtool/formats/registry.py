"""The registered format adapters: the one place that knows which agents ctxtool reads.

Transforms get the adapter of the format they were given with :func:`adapter_for`; the detector
(:mod:`ctxtool.formats.detect`) asks :func:`adapters` in detection order which one claims an
entry. Adding an agent = writing its adapter (see :mod:`ctxtool.formats.adapter`) and adding it to
:data:`BUILTIN` below (or calling :func:`register` from outside).

An adapter module is imported when its format is first asked for, not before: a command that
reads one agent's files (``statusline``: Claude Code's) loads that agent's adapter only; naming
the formats (``--format`` choices) loads none.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ctxtool.formats.adapter import FormatAdapter

if TYPE_CHECKING:
    from pathlib import Path

#: The adapters ctxtool ships, in detection order (the first whose ``claims`` is true wins):
#: format name -> (module, class). Each class's ``name`` is its key (a test checks it).
BUILTIN: dict[str, tuple[str, str]] = {
    "claude-code": ("ctxtool.formats.claude_code.adapter", "ClaudeCodeAdapter"),
    "codex": ("ctxtool.formats.codex.adapter", "CodexAdapter"),
    "opencode": ("ctxtool.formats.opencode.adapter", "OpenCodeAdapter"),
    "gemini": ("ctxtool.formats.gemini.adapter", "GeminiAdapter"),
    "openai": ("ctxtool.formats.openai_chat", "OpenAIChatAdapter"),
    "anthropic": ("ctxtool.formats.anthropic", "AnthropicAdapter"),
}

_REGISTERED: dict[str, FormatAdapter] = {}  # by register(): new formats, or a builtin replaced
_MADE: dict[str, FormatAdapter] = {}  # every adapter handed out so far (the fast path)


def register(adapter: FormatAdapter) -> FormatAdapter:
    """Add (or replace) the adapter of ``adapter.name``; returns it. A new format is detected
    after the builtin ones; a builtin one replaced keeps its place."""
    if not adapter.name:
        raise ValueError(f"{adapter!r} has no name")
    _REGISTERED[adapter.name] = _MADE[adapter.name] = adapter
    return adapter


def unregister(name: str) -> None:
    """Undo :func:`register` for ``name`` (a builtin format gets its own adapter back)."""
    _REGISTERED.pop(name, None)
    _MADE.pop(name, None)


def adapter_for(fmt: str) -> FormatAdapter:
    """The adapter of format ``fmt`` (its ``--format`` name). KeyError for an unknown name:
    callers validate user input first (see :func:`ctxtool.formats.detect.detect_format`)."""
    try:
        return _MADE[fmt]
    except KeyError:
        module, cls = BUILTIN[fmt]  # KeyError for an unknown name
        adapter = _MADE[fmt] = getattr(importlib.import_module(module), cls)()
        return adapter


def format_names() -> tuple[str, ...]:
    """The ``--format`` names, in detection order (no adapter imported)."""
    return (*BUILTIN, *(name for name in _REGISTERED if name not in BUILTIN))


def adapters() -> list[FormatAdapter]:
    """Every registered adapter, in detection order."""
    return [adapter_for(name) for name in format_names()]


def rewriting(path: Path) -> None:
    """Tell every agent that ``path`` is about to be replaced in place
    (:meth:`FormatAdapter.rewriting`)."""
    for adapter in adapters():
        adapter.rewriting(path)


__all__ = ["BUILTIN", "adapter_for", "adapters", "format_names", "register", "rewriting",
           "unregister"]
