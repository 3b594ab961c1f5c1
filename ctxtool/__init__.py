"""ctxtool: keep LLM agent transcripts inside their context window.

The public Python API. Every command is a function over an iterable of entries (dicts parsed
from JSONL lines, unknown keys kept), so the library composes the way the commands do::

    import ctxtool

    session = ctxtool.load("session.jsonl")          # entries, format detected
    report = ctxtool.estimate(session, fmt=session.format)
    print(report.context_tokens, "tokens in context now")

Importing ``ctxtool`` loads none of click, tqdm, jsonschema or anthropic; the functions below are
imported on first use, each from the module that holds it.
"""

from __future__ import annotations

import importlib
from typing import Any

from ctxtool.errors import CtxtoolError, ExitCode, InputError, LLMError, StoreError
from ctxtool.types import Entry

__version__ = "0.1.0"

# name -> module; resolved lazily so `import ctxtool` stays cheap (and so does importing any
# module of the package: `ctxtool statusline` runs with neither orjson nor click, see __main__)
_LAZY = {
    "estimate_text_tokens": "ctxtool.core.sizing.tokens",
    "detect_format": "ctxtool.formats.detect",
    "iter_entries": "ctxtool.formats.jsonl",
    "write_entries": "ctxtool.formats.jsonl",
    "load": "ctxtool.transcript",
    "save": "ctxtool.transcript",
    "Transcript": "ctxtool.transcript",
    "estimate": "ctxtool.core.sizing.estimate",
    "ContextMeter": "ctxtool.core.sizing.meter",
    "thresholds": "ctxtool.core.sizing.tokens",
    # each options class next to the function that takes it
    "persist": "ctxtool.core.clearing.persist",
    "PersistOptions": "ctxtool.core.clearing.persist",
    "restore": "ctxtool.core.clearing.restore",
    "snip": "ctxtool.core.clearing.snip",
    "SnipOptions": "ctxtool.core.clearing.snip",
    "microcompact": "ctxtool.core.clearing.microcompact",
    "MicrocompactOptions": "ctxtool.core.clearing.microcompact",
    "summarize": "ctxtool.core.summarizing.summarize",
    "SummarizeOptions": "ctxtool.core.summarizing.summarize",
    "plan_cut": "ctxtool.core.messages.filter_compacted",
    "filter_compacted": "ctxtool.core.messages.filter_compacted",
    "validate": "ctxtool.core.validating.validate",
    "to_anthropic": "ctxtool.core.messages.convert",
    "to_openai": "ctxtool.core.messages.convert",
    "ToolResultStore": "ctxtool.storage.store",
    "OfflineSummarizer": "ctxtool.core.summarizing.offline",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxtool' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "CtxtoolError", "Entry", "ExitCode", "InputError", "LLMError", "StoreError", "__version__",
    *_LAZY,
]
