"""ctxtool: keep LLM agent transcripts inside their context window.

The public Python API. Importing ``ctxtool`` loads no click, tqdm, jsonschema or anthropic.

    >>> import ctxtool
    >>> ctxtool.estimate_text_tokens("hello world") > 0
    True
"""

from __future__ import annotations

from ctxtool.core.tokens import estimate_text_tokens
from ctxtool.errors import CtxtoolError, ExitCode, InputError, LLMError, StoreError
from ctxtool.formats.jsonl import iter_entries, write_entries
from ctxtool.types import Entry

__version__ = "0.1.0"

__all__ = [
    "CtxtoolError", "Entry", "ExitCode", "InputError", "LLMError", "StoreError",
    "__version__", "estimate_text_tokens", "iter_entries", "write_entries",
]
