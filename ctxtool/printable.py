"""Text for people, safe to print: control characters shown as escapes.

Kept out of :mod:`ctxtool.cli` (which loads click): ``ctxtool statusline`` escapes its fields
before click would even be imported (:mod:`ctxtool.statusline`).
"""

from __future__ import annotations

# C0 and C1 controls, DEL, and the Unicode marks that reorder or hide text (bidi embeddings,
# overrides and isolates, line and paragraph separators): a transcript may hold any of them
_HIDDEN = [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, 0x2028, 0x2029,
           *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_ESCAPES = {code: (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}") for code in _HIDDEN}
_ESCAPES_KEEPING_LINES = {code: text for code, text in _ESCAPES.items() if code not in (9, 10)}


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\u202e``), so
    nothing read from a transcript (a prompt, a ``cwd``, a tool's ``file_path``) can move the
    cursor, retitle the window or clear the screen. Every line for people passes through here
    (tables on stdout, messages on stderr); JSON output is left exact. ``lines``: tabs and
    newlines stay (a message of several lines)."""
    return text.translate(_ESCAPES_KEEPING_LINES if lines else _ESCAPES)


__all__ = ["visible"]
