"""Model backends: which one runs (offline by default, Anthropic when a key is set) and the
model calls (opt-in, lazy): the Anthropic API (``anthropic.py``), or the user's own Claude Code
or Codex CLI (``claude_code.py``, ``codex.py``, over ``agent_cli.py``); the summarizers over
them live in ``core/summarizing``.

Importing this package never imports the ``anthropic`` SDK; the Anthropic backend imports it
the first time it makes a client. No agent is ever run unless asked for by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ctxtool.errors import UsageError

BACKENDS = ("auto", "offline", "anthropic", "claude-code", "codex")
LLM_ENV = "CTXTOOL_LLM"


def choose_backend(choice: str | None, env: Mapping[str, str] | None = None) -> str:
    """The backend for ``--llm`` (else ``$CTXTOOL_LLM``, else ``auto``): ``auto`` is anthropic
    when an Anthropic key is configured, offline otherwise (never an agent)."""
    from ctxtool.llm.anthropic import has_key

    env = os.environ if env is None else env
    value = (choice or env.get(LLM_ENV, "") or "auto").strip().lower()
    if value not in BACKENDS:
        raise UsageError(f"unknown LLM backend {value!r}", hint="use " + ", ".join(BACKENDS[:-1])
                         + " or " + BACKENDS[-1])
    if value == "auto":
        return "anthropic" if has_key(env) else "offline"
    return value


__all__ = ["BACKENDS", "LLM_ENV", "choose_backend"]
