"""What a summarizer backend is given, what it returns, and the protocols backends implement.

The core prepares a :class:`SummaryRequest` from a transcript (``ctxtool.core.summarizing.request``)
and hands it to a :class:`Summarizer`; it never knows which backend runs. Backends:
``ctxtool.core.summarizing.offline`` (deterministic, no network, the default) and a model behind
a :class:`Complete` function (``ctxtool.core.summarizing.model`` chunks and recovers; the calls
are ``ctxtool.llm.anthropic``'s, through the official SDK, imported only when used).

This module imports nothing but the standard library and :mod:`ctxtool.errors`, so the core can
depend on these types without pulling in any backend.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ctxtool.errors import LLMError

BREAKER_LIMIT = 3  # consecutive failed model calls before giving up (a run's circuit breaker)

# --- what a turn is --------------------------------------------------------------------------------

PROMPT = "prompt"  # words the user typed
COMMAND = "command"  # a slash command or a `!` shell command the user ran (text: "/name args")
CONTEXT = "context"  # text the harness added: isMeta entries, reminders, local command output
INTERRUPT = "interrupt"  # "[Request interrupted by user]"
TOOL_RESULTS = "tool_results"  # a user-role message carrying tool results
ASSISTANT = "assistant"  # the model's text, thinking and tool calls
QUEUED = "queued"  # words the user typed while the assistant was busy (Claude Code's queue)
USER_MESSAGE_KINDS = (PROMPT, COMMAND, QUEUED)


@dataclass(frozen=True)
class Turn:
    """One message of the conversation as a summarizer sees it.

    ``blocks`` are Anthropic-shaped (``text``, ``thinking``, ``tool_use``, ``tool_result``) and
    already cut for summarizing: a tool result holds at most a few thousand characters (its
    ``content`` is a string) and images are the text ``[image]``; a call's input or a result that
    was cut keeps its whole text beside it (``uncut_input``, ``uncut_content``) for the offline
    summary, which no prompt shows. ``text`` is the user's own words for prompts and commands
    (harness wrappers removed), empty otherwise.
    """

    role: str
    kind: str
    blocks: tuple[dict[str, Any], ...] = ()
    text: str = ""
    location: str | None = None  # file:line it came from
    timestamp: str | None = None

    @property
    def is_user_message(self) -> bool:
        return self.kind in USER_MESSAGE_KINDS


@dataclass(frozen=True)
class AgentPrompt:
    """The request an agent's own compaction sends its summarizer, made by that agent's adapter
    (OpenCode 1.18: the conversation serialized into one prompt with a Markdown template).

    A model backend sends it as it is, in one call: ``system``, then ``prompt`` as the only user
    message, no tools; the reply is the summary when every heading in ``headings`` starts one of
    its lines. The offline backend writes its nine sections and ``from_sections`` turns them
    into the agent's template.
    """

    system: str
    prompt: str
    headings: tuple[str, ...]
    from_sections: Callable[[str], str]

    def missing(self, reply: str) -> list[str]:
        """The headings that start no line of ``reply`` (with any number of ``#``)."""
        return [h for h in self.headings if not re.search(
            rf"^[ \t]*#+[ \t]*{re.escape(h.lstrip('#').strip())}\b", reply,
            re.MULTILINE | re.IGNORECASE)]


@dataclass(frozen=True)
class SummaryRequest:
    """Everything a backend needs to write the nine-section summary of a conversation.

    ``turns`` is the whole conversation in order. ``since`` is the index of the first turn after
    the last compaction: a model backend sends only ``turns[since:]`` together with
    ``prior_summaries`` (which already cover the earlier turns) and merges them; the offline
    backend reads every turn, because extracting is cheap and the user's earlier messages stay
    verbatim that way.
    """

    turns: tuple[Turn, ...]
    since: int = 0
    prior_summaries: tuple[str, ...] = ()
    # the first earlier summary came before any user message: the turns it covers are not in
    # ``turns`` (a transcript continued from a summary), so it is the only source for them
    history_missing: bool = False
    instructions: str | None = None
    max_summary_tokens: int = 8000
    cwd: str | None = None
    git_branch: str | None = None
    agent_prompt: AgentPrompt | None = None  # the agent's own summarizer request, when it has one

    @property
    def recent_turns(self) -> tuple[Turn, ...]:
        return self.turns[self.since:]


@dataclass
class SummaryResult:
    """The summary text (the nine sections, no scratchpad) and how it was obtained."""

    text: str
    backend: str
    model: str | None = None
    calls: int = 0  # API calls made (including failed ones)
    chunks: int = 1  # parts the conversation was summarized in
    dropped: int = 0  # turns left out because even alone they did not fit
    input_tokens: int = 0  # as reported by the API
    output_tokens: int = 0
    notes: list[str] = field(default_factory=list)  # recoveries worth telling the user about


# Wraps the loop over chunks (``cli/progress.progress`` fits): ``progress(steps, total)``.
Progress = Callable[[Iterable[int], int], Iterable[int]]


def no_progress(steps: Iterable[int], total: int) -> Iterable[int]:
    return steps


class Summarizer(Protocol):
    """A summary backend. ``name`` is what stderr and --stats report."""

    name: str

    @property
    def model(self) -> str | None:
        """The model that writes the summaries; None for a backend without one."""
        ...

    def summarize(self, request: SummaryRequest, *, progress: Progress = no_progress) -> SummaryResult:
        """The nine-section summary of ``request``. Raises LLMError when it cannot be made."""
        ...


class TurnSink(Protocol):
    """One summary made as the turns come, without holding them (:class:`StreamingSummarizer`)."""

    def add(self, turn: Turn) -> None:
        ...

    def compaction(self) -> None:
        """An earlier compaction ends here: the turns before it are covered by its summary."""
        ...

    def finish(self, request: SummaryRequest) -> SummaryResult:
        """The summary; ``request`` has every field but ``turns`` (they were given one by one)."""
        ...


@runtime_checkable
class StreamingSummarizer(Protocol):
    """A summarizer that can also read the turns one at a time, so a very long history is
    summarized in bounded memory (the offline backend)."""

    name: str

    def begin(self) -> TurnSink:
        ...


class TokenCounter(Protocol):
    """Exact token counts from a provider (``estimate --exact``): the shape of
    :func:`ctxtool.llm.anthropic.count_tokens`. Raises LLMError when it cannot count."""

    def __call__(self, messages: list[dict[str, Any]], *, system: str | None, model: str) -> int:
        ...


# --- what a model call can fail with ----------------------------------------------------------------


class PromptTooLong(LLMError):
    """The request did not fit the model's context window.

    ``input_tokens`` and ``limit`` are what the API reported, when it did (``prompt is too long:
    A tokens > C maximum``); ``max_tokens`` is set when the API said ``input length and max_tokens
    exceed context limit: A + B > C``, which a smaller ``max_tokens`` can fix.
    """

    def __init__(self, message: str, *, input_tokens: int | None = None,
                 max_tokens: int | None = None, limit: int | None = None) -> None:
        super().__init__(message)
        self.input_tokens = input_tokens
        self.max_tokens = max_tokens
        self.limit = limit


class BadReply(LLMError):
    """The model answered, but not with a usable summary (e.g. a section heading is missing)."""


@dataclass(frozen=True)
class Completion:
    """One model reply."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0


class Complete(Protocol):
    """One model call: a system prompt and a user message in, the reply text out. Raises
    PromptTooLong for context overflows and LLMError for anything else that failed."""

    def __call__(self, *, system: str, prompt: str, max_tokens: int) -> Completion:
        ...
