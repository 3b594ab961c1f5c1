"""Claude Code's own count of its context, as ``/context`` leaves it in the transcript.

2.1.332 writes the command's output as a ``system`` ``local_command`` line whose ``content`` is
the table (``<local-command-stdout>## Context Usage ...``) and whose ``contextUsage`` holds the
same figures (``total_tokens``, ``raw_max_tokens``, ``percentage``, ``model``, ``categories``:
name, tokens, kind). A line without ``contextUsage`` (and an ``isMeta`` user line starting
"## Context Usage", as the command's output is also given to the model) is read from the table:
``**Tokens:** 13.3k / 1m (1%)`` and the rows of "Estimated usage by category". ``estimate``
shows the last such figure beside its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

HEADING = "## Context Usage"
_TOKENS = re.compile(
    r"\*\*Tokens:\*\*\s*([\d.,]+[kKmM]?)\s*/\s*([\d.,]+[kKmM]?)\s*\((\d+(?:\.\d+)?)%\)")
_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*([\d.,]+[kKmM]?)\s*\|\s*[\d.]+%\s*\|\s*$")
_SCALE = {"k": 1_000, "m": 1_000_000}


def _amount(text: str) -> int:
    """``13.3k`` -> 13,300; ``1m`` -> 1,000,000; ``2,067`` -> 2,067."""
    text = text.replace(",", "").strip()
    scale = _SCALE.get(text[-1:].lower(), 1)
    return round(float(text.rstrip("kKmM")) * scale)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _structured(usage: Mapping[str, Any]) -> dict[str, Any] | None:
    tokens = _int(usage.get("total_tokens"))
    if tokens is None:
        return None
    categories = {str(c.get("name")): c["tokens"] for c in usage.get("categories") or []
                  if isinstance(c, Mapping) and _int(c.get("tokens")) is not None
                  and c.get("kind") in ("used", None)}  # what total_tokens adds up
    model = usage.get("model")
    return {"tokens": tokens, "window": _int(usage.get("raw_max_tokens")),
            "percent": usage.get("percentage") if isinstance(usage.get("percentage"),
                                                             (int, float)) else None,
            "model": model if isinstance(model, str) else None, "categories": categories,
            "exact": True}


def _from_table(text: str) -> dict[str, Any] | None:
    body = text.strip()
    body = body.removeprefix("<local-command-stdout>").lstrip()
    if not body.startswith(HEADING):
        return None
    found = _TOKENS.search(body)
    if found is None:
        return None
    categories: dict[str, int] = {}
    section = ""
    for line in body.splitlines():
        if line.startswith("### "):
            section = line[4:].strip().lower()
        elif section.startswith("estimated usage by category"):
            row = _ROW.match(line.strip())
            if row and row.group(1).lower() not in ("category", "free space",
                                                    "autocompact buffer"):
                categories[row.group(1)] = _amount(row.group(2))
    model = re.search(r"\*\*Model:\*\*\s*(\S+)", body)
    return {"tokens": _amount(found.group(1)), "window": _amount(found.group(2)),
            "percent": float(found.group(3)), "model": model.group(1) if model else None,
            "categories": categories, "exact": False}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content
                         if isinstance(b, Mapping) and b.get("type") == "text")
    return ""


def context_usage(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """Claude Code's ``/context`` figures on this line (module docstring), or None: ``tokens``,
    ``window``, ``percent``, ``model``, ``categories`` (name -> tokens) and ``exact`` (False:
    read from the rounded table)."""
    kind = entry.get("type")
    if kind == "system":
        if entry.get("subtype") != "local_command":
            return None
        usage = entry.get("contextUsage")
        if isinstance(usage, Mapping):
            return _structured(usage)
        return _from_table(_text(entry.get("content")))
    if kind == "user" and entry.get("isMeta") is True:
        message = entry.get("message")
        return _from_table(_text(message.get("content") if isinstance(message, Mapping) else None))
    return None


__all__ = ["HEADING", "context_usage"]
