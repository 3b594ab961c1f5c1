"""Transcript formats ctxtool recognises but cannot read yet: refused, never guessed.

A Gemini CLI session (``~/.gemini/tmp/<project>/chats/session-*.jsonl``) has ``type: "user"``
records that an agent reading Claude Code transcripts would take for its own: ``estimate`` then
counts only the assumed system prompt, and a transform changes nothing Gemini sends. The detector
(:mod:`ctxtool.formats.detect`) asks :func:`unsupported` of each entry it looks at before any
adapter claims it; a name means: stop with an error naming the line.

The lines of a Gemini CLI 0.61 session (docs/gemini-format.md has the evidence):

- the metadata line ``{sessionId, projectHash, startTime, lastUpdated, kind}`` — Gemini CLI's own
  test for it is the two strings ``sessionId`` and ``projectHash`` (no other agent writes
  ``projectHash``); the older one-document sessions start with the same two keys;
- ``{"$set": {...}}`` (metadata or the whole message list) and ``{"$rewindTo": id}``;
- message records ``{id, timestamp, type, content, ...}`` of type user, gemini, info, error or
  warning, which carry neither Claude Code's ``uuid``/``message`` nor a ``role``.
"""

from __future__ import annotations

from typing import Any

from ctxtool.errors import UnsupportedFormatError

GEMINI_CLI = "a Gemini CLI session"
_GEMINI_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})


def _gemini_line(entry: dict[str, Any]) -> str | None:
    """What makes ``entry`` a Gemini CLI line (for the error message), or None."""
    if isinstance(entry.get("sessionId"), str) and isinstance(entry.get("projectHash"), str):
        return "its metadata line"
    if len(entry) == 1 and (isinstance(entry.get("$set"), dict)
                            or isinstance(entry.get("$rewindTo"), str)):
        return f"a {next(iter(entry))!r} record"
    kind = entry.get("type")
    if (isinstance(kind, str) and kind in _GEMINI_TYPES and isinstance(entry.get("id"), str)
            and isinstance(entry.get("timestamp"), str) and "content" in entry
            and not any(key in entry for key in ("uuid", "message", "role"))):
        return f"a {kind!r} message record"
    return None


def unsupported(entry: dict[str, Any]) -> str | None:
    """``"<agent>'s session (<which line>)"`` when ``entry`` is a line of a format ctxtool
    recognises but does not read, else None."""
    what = _gemini_line(entry)
    return None if what is None else f"{GEMINI_CLI} ({what})"


def refuse(entry: dict[str, Any], *, source: str | None, lineno: int | None) -> None:
    """Raise :class:`UnsupportedFormatError` (exit 3) at ``source:lineno`` when ``entry`` is a
    line of a format ctxtool does not read."""
    what = unsupported(entry)
    if what is not None:
        raise UnsupportedFormatError(f"{what}: not supported yet", source=source, lineno=lineno,
                                     hint="ctxtool reads Claude Code, Codex CLI and OpenCode "
                                          "sessions and Anthropic/OpenAI message lists")
