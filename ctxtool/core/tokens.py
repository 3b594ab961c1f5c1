"""Token estimation, context windows and thresholds.

FIRST VERSION - the estimate issue calibrates the heuristic against real usage deltas
(scripts/token_accuracy.py). The public function is :func:`estimate_text_tokens`.
"""

from __future__ import annotations

IMAGE_TOKENS = 2000


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF
            or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF)


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens of ``text`` as Claude's tokenizer would count it."""
    if not text:
        return 0
    if text.isascii():
        return max(1, round(len(text) / 2.7))
    cjk = sum(1 for ch in text if _is_cjk(ch))
    return max(1, round(cjk * 1.1 + (len(text) - cjk) / 2.7))
