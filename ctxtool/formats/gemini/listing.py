"""What ``ctxtool sessions`` shows of a Gemini CLI session, read from its records as the
client's own session list reads them (``getAllSessionFiles``): its title, first prompt and
project folder."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ctxtool.formats.gemini.history import is_ignored_user_text
from ctxtool.formats.gemini.parts import content_text, verbose_text

_WORKSPACE = re.compile(r"Workspace Directories:\*\*\n\s*- (.+)")


def session_title(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The ``summary`` the client's session summary service sets (``$set``, or the metadata
    line of a converted session); the last one read wins."""
    title = None
    for entry in entries:
        update = entry.get("$set")
        value = (update if isinstance(update, dict) else entry).get("summary")
        if isinstance(value, str) and value.strip():
            title = value
    return title


def session_prompt(entry: Mapping[str, Any]) -> str | None:
    """The text of the first prompt a record (or a checkpoint's list) holds, as the client's
    session list shows it: a user message it would resume, not a slash command, nor its own
    ``<session_context>``."""
    update = entry.get("$set")
    listed = update.get("messages") if isinstance(update, dict) else None
    for record in listed if isinstance(listed, list) else [entry]:
        if isinstance(record, dict) and record.get("type") == "user":
            text = content_text(record.get("content")).strip()
            if not is_ignored_user_text(text):
                return text
    return None


def session_cwd(entry: Mapping[str, Any]) -> str | None:
    """The project folder, the first of the workspace directories the ``<session_context>``
    message names (the start checkpoint holds it)."""
    update = entry.get("$set")
    listed = update.get("messages") if isinstance(update, dict) else None
    for record in listed if isinstance(listed, list) else ():
        if isinstance(record, dict) and record.get("type") == "user":
            found = _WORKSPACE.search(content_text(record.get("content")))
            if found:
                return found.group(1).strip()
    return None


def is_resumable(record: Mapping[str, Any]) -> bool:
    """Gemini's ``isResumableMessageRecord``: a user message it would send (not empty, not a
    slash command, not its own context), or a model turn with content, thoughts or calls."""
    text = verbose_text(record.get("content")).strip()
    if record.get("type") == "user":
        return not is_ignored_user_text(text)
    if record.get("type") == "gemini":
        return bool(text) or bool(record.get("toolCalls")) or bool(record.get("thoughts"))
    return False
