"""Model backends: which one runs (offline by default, Anthropic when a key is set) and the
Anthropic calls (opt-in, lazy); the summarizers over them live in ``core/summarizing``.

Importing this package never imports the ``anthropic`` SDK; the Anthropic backend imports it
the first time it makes a client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ctxtool.errors import UsageError

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


__all__ = ["BACKENDS", "LLM_ENV", "choose_backend"]
