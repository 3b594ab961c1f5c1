"""One row per session for ``ctxtool sessions``: what a session is about, read from its head
(project, first prompt, title) and its tail (last activity, context now; see
:mod:`ctxtool.core.sizing.session_tail`), never from the whole transcript.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxtool.core.messages.blocks import block_text, content_blocks
from ctxtool.core.sizing.estimate import EstimateReport
from ctxtool.types import CLAUDE_CODE

PROMPT_WIDTH = 160
# Claude Code's title records, by precedence: the user's /rename, then the generated title,
# then the older "summary" lines (first one written wins for those).
TITLE_KEYS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
# User text that is not a prompt: slash-command echoes, command output, reminders, caveats.
NOT_A_PROMPT = ("<command-", "<local-command-", "<system-reminder>", "Caveat:", "<bash-",
                "[Request interrupted")


@dataclass(frozen=True)
class SessionHead:
    """What the first lines of a transcript say."""

    session_id: str | None = None
    cwd: str | None = None
    first_prompt: str | None = None
    chain: bool | None = None  # isSidechain of the first entry that has one
    started: str | None = None  # timestamp of the first entry that has one
    title: str | None = None  # from title records among the entries read (old summary lines)


@dataclass(frozen=True)
class SessionInfo:
    """One session, as ``ctxtool sessions`` lists it (see schemas/sessions-report)."""

    id: str
    agent: str
    path: str
    project: str | None
    title: str | None
    first_prompt: str | None
    started: str | None
    last_activity: str | None
    size: int
    model: str | None
    context_tokens: int | None
    context_window: int | None
    compactions: int | None

    @property
    def label(self) -> str:
        """The title, else the first prompt, else ``-``."""
        return self.title or self.first_prompt or "-"

    @property
    def percent(self) -> float | None:
        if self.context_tokens is None or not self.context_window:
            return None
        return round(100.0 * self.context_tokens / self.context_window, 1)

    def as_record(self) -> dict[str, Any]:
        """The fields by name, as ``SessionInfo(**record)`` takes them back (the cache)."""
        return dict(vars(self))

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "agent": self.agent, "path": self.path, "project": self.project,
                "title": self.title, "first_prompt": self.first_prompt, "started": self.started,
                "last_activity": self.last_activity, "size": self.size, "model": self.model,
                "context_tokens": self.context_tokens, "context_window": self.context_window,
                "percent": self.percent, "compactions": self.compactions}


def one_line(text: str, width: int = PROMPT_WIDTH) -> str:
    """Whitespace collapsed, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def prompt_text(entry: Mapping[str, Any], fmt: str = CLAUDE_CODE) -> str | None:
    """The text a user typed, if ``entry`` is a real prompt (not a tool result, a compact
    summary, a meta line or a slash-command echo)."""
    if entry.get("type") != "user" or entry.get("isMeta") is True \
            or entry.get("isCompactSummary") is True:
        return None
    for block in content_blocks(dict(entry), fmt):
        if block.get("type") != "text":
            return None  # tool results, images first: not a typed prompt
        text = block_text(block).strip()
        if text and not text.startswith(NOT_A_PROMPT):
            return one_line(text)
    return None


def opencode_prompt(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The first thing typed in an OpenCode session: the first text part of a user message
    (parts OpenCode writes itself, marked ``synthetic`` or ``ignored``, left out)."""
    for entry in entries:
        info = entry.get("info")
        parts = entry.get("parts")
        if not isinstance(info, dict) or info.get("role") != "user" or not isinstance(parts, list):
            continue
        for part in parts:
            if not isinstance(part, dict) or part.get("type") != "text" \
                    or part.get("synthetic") or part.get("ignored"):
                continue
            text = part.get("text")
            if isinstance(text, str) and text.strip():
                return one_line(text)
    return None


def read_head(entries: Iterable[Mapping[str, Any]]) -> SessionHead:
    """Session id, cwd, first prompt, side-chain flag and start time from the first entries
    (pulled only until all are found), and a title among the entries passed over."""
    found: dict[str, Any] = {}
    titles = []
    for entry in entries:
        if getattr(entry, "invalid", False):
            continue
        if entry.get("type") in TITLE_KEYS:
            titles.append(entry)
        for key, field, kind in (("sessionId", "session_id", str), ("cwd", "cwd", str),
                                 ("isSidechain", "chain", bool), ("timestamp", "started", str)):
            value = entry.get(key)
            if field not in found and isinstance(value, kind) and value != "":
                found[field] = value
        if "first_prompt" not in found:
            prompt = prompt_text(entry)
            if prompt:
                found["first_prompt"] = prompt
        if len(found) == 5:
            break
    return SessionHead(**found, title=title_of(titles))


def title_of(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The session's title from its title records (custom, then generated, then summary);
    for each kind the last one read wins, except summaries (the first)."""
    titles: dict[str, str] = {}
    for entry in entries:
        kind = entry.get("type")
        key = TITLE_KEYS.get(kind) if isinstance(kind, str) else None
        value = entry.get(key) if key else None
        if isinstance(value, str) and value.strip() and not (kind == "summary" and kind in titles):
            titles[str(kind)] = one_line(value)
    return next((titles[k] for k in TITLE_KEYS if k in titles), None)


def session_info(*, session_id: str, path: str, size: int, head: SessionHead,
                 title: str | None, last_activity: str | None,
                 report: EstimateReport | None, agent: str = CLAUDE_CODE) -> SessionInfo:
    """The row for one session (``report``: the tail estimate, None when it failed)."""
    return SessionInfo(
        id=session_id, agent=agent, path=path, project=head.cwd, title=title,
        first_prompt=head.first_prompt, started=head.started,
        last_activity=last_activity or head.started, size=size,
        model=report.model if report else None,
        context_tokens=report.context_tokens if report else None,
        context_window=report.limits.window if report else None,
        compactions=report.compact_boundaries if report else None)


__all__ = ["SessionHead", "SessionInfo", "one_line", "opencode_prompt", "prompt_text",
           "read_head", "session_info", "title_of"]
