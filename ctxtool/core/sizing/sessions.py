"""One row per session for ``ctxtool sessions``: what a session is about, read from its head
(project, first prompt, title) and its tail (last activity, context now; see
:mod:`ctxtool.core.sizing.session_tail`), never from the whole transcript.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxtool.core.sizing.estimate import EstimateReport
from ctxtool.formats.registry import adapter_for

PROMPT_WIDTH = 160


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


def prompt_text(entry: Mapping[str, Any], fmt: str) -> str | None:
    """The text a user typed, on one line, if ``entry`` is a real prompt of format ``fmt`` (see
    :meth:`ctxtool.formats.adapter.FormatAdapter.session_prompt`)."""
    text = adapter_for(fmt).session_prompt(entry)
    return one_line(text) if text else None


def first_prompt(entries: Iterable[Mapping[str, Any]], fmt: str) -> str | None:
    """The first prompt typed among ``entries``."""
    return next((p for e in entries if (p := prompt_text(e, fmt))), None)


def read_head(entries: Iterable[Mapping[str, Any]], fmt: str) -> SessionHead:
    """Session id, cwd, first prompt, side-chain flag and start time from the first entries
    (pulled only until all are found), and a title among the entries passed over."""
    adapter = adapter_for(fmt)
    found: dict[str, Any] = {}
    read = []
    for entry in entries:
        if getattr(entry, "invalid", False):
            continue
        read.append(entry)
        session, cwd = adapter.session_and_cwd(entry)
        for field, value, kind in (("session_id", session, str), ("cwd", cwd, str),
                                   ("chain", entry.get("isSidechain"), bool),
                                   ("started", adapter.timestamp_of(entry), str)):
            if field not in found and isinstance(value, kind) and value != "":
                found[field] = value
        if "first_prompt" not in found:
            prompt = prompt_text(entry, fmt)
            if prompt:
                found["first_prompt"] = prompt
        if len(found) == 5:
            break
    return SessionHead(**found, title=title_of(read, fmt))


def title_of(entries: Iterable[Mapping[str, Any]], fmt: str) -> str | None:
    """The session's title among ``entries`` (see
    :meth:`ctxtool.formats.adapter.FormatAdapter.session_title`), on one line."""
    title = adapter_for(fmt).session_title(entries)
    return one_line(title) if title else None


def session_info(*, session_id: str, path: str, size: int, head: SessionHead,
                 title: str | None, last_activity: str | None,
                 report: EstimateReport | None, agent: str) -> SessionInfo:
    """The row for one session (``report``: the tail estimate, None when it failed)."""
    return SessionInfo(
        id=session_id, agent=agent, path=path, project=head.cwd, title=title,
        first_prompt=head.first_prompt, started=head.started,
        last_activity=last_activity or head.started, size=size,
        model=report.model if report else None,
        context_tokens=report.context_tokens if report else None,
        context_window=report.limits.window if report else None,
        compactions=report.compact_boundaries if report else None)


__all__ = ["SessionHead", "SessionInfo", "first_prompt", "one_line", "prompt_text", "read_head",
           "session_info", "title_of"]
