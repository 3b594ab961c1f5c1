"""Text as the offline summary's lines show it."""

from __future__ import annotations


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (its white space folded), cut to ``limit`` characters with ``...``."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3].rstrip() + "..."
