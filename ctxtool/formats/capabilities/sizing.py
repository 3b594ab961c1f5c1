"""Sizing: how full the context is - the usage the agent recorded (the anchor), what it sends
now (after its last compaction), what changes the context without being a message, and the
agent's own limits and overflow rule (``estimate``, ``statusline``, the meter)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from ctxtool.formats.capabilities.compaction import CompactionAdapter
from ctxtool.formats.content import Block

if TYPE_CHECKING:
    from datetime import datetime

    from ctxtool.formats.limits import AgentSettings, IdleCompaction, Thresholds


class Usage(NamedTuple):
    """One model call's usage, de-duplicated over its streamed lines. (A named tuple: one is
    built for every assistant line, and a tuple costs a fraction of a frozen dataclass.)"""

    key: tuple[str, str]
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def merged(self, other: Usage) -> Usage:
        """The largest snapshot of each counter (streamed lines repeat or grow them)."""
        if (other.input_tokens <= self.input_tokens
                and other.cache_creation_input_tokens <= self.cache_creation_input_tokens
                and other.cache_read_input_tokens <= self.cache_read_input_tokens
                and other.output_tokens <= self.output_tokens):
            return self  # a repeated snapshot (the common case): nothing to build
        return Usage(self.key, max(self.input_tokens, other.input_tokens),
                     max(self.cache_creation_input_tokens, other.cache_creation_input_tokens),
                     max(self.cache_read_input_tokens, other.cache_read_input_tokens),
                     max(self.output_tokens, other.output_tokens))

    def as_dict(self) -> dict[str, Any]:
        return {"message_id": self.key[0], "request_id": self.key[1] or None,
                "input_tokens": self.input_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
                "output_tokens": self.output_tokens, "prompt_tokens": self.prompt_tokens}


class ContextMark(NamedTuple):
    """What a line that is not a message does to the context (see
    :meth:`FormatAdapter.context_mark`): a compaction that restarts it (``kind`` "compact"), or
    a clearing that took ``saved`` tokens out of what the last call saw ("clear")."""

    kind: str  # COMPACT_MARK or CLEAR_MARK
    #: compact: the tokens every compaction so far took out (Claude Code's
    #: ``cumulativeDroppedTokens``), 0 when not recorded
    dropped_before: int = 0
    #: compact: the ids of the messages before it that it keeps by reference (spliced in after
    #: the summary), or None
    kept_ids: list[Any] | None = None
    #: compact: (head id, tail id) of a kept chain of messages, followed back from the tail by
    #: their parent ids, when no list is given; or None
    kept_segment: tuple[Any, Any] | None = None
    trigger: str | None = None  # compact: "auto"/"manual" as recorded
    pre_tokens: int | None = None  # compact: the context size it records before it
    saved: int = 0  # clear: the tokens it records as taken out


COMPACT_MARK = "compact"
CLEAR_MARK = "clear"


#: Looks a model's limits up in the agent's own config: (provider, model, variant) ->
#: ``{"context", "input", "output"}`` (see :meth:`FormatAdapter.configured_limits`).
LimitsLookup = Callable[[str | None, str | None, str | None], Mapping[str, int]]


class OverflowVerdict(Protocol):
    """The agent's own overflow verdict (see :meth:`FormatAdapter.overflow_rule`)."""

    #: the key the estimate report holds it under (``"opencode"``)
    report_key: ClassVar[str]

    @property
    def usable(self) -> int:
        """The context size at which the agent compacts."""
        ...

    def as_dict(self) -> dict[str, Any]:
        ...

    def rows(self, context: int) -> list[tuple[str, str]]:
        """What ``estimate`` shows of it, as (label, text) rows, with ``context`` the context
        size now (the rows replace Claude Code's auto-compact line)."""
        ...


def verdict_rows(agent: str, usable: int, context: int, rule: str,
                 check: str) -> list[tuple[str, str]]:
    """:meth:`OverflowVerdict.rows` as every agent's rule shows them: where ``agent`` compacts
    (``rule`` says how it works that out) and how far ``context`` is from it, then ``check``,
    the agent's own verdict on its last count."""
    return [("compacts at", f"{usable:,}  ({agent}: {rule}; {max(0, usable - context):,} to go)"),
            (f"{agent} check", check)]


class CompactionTracker(Protocol):
    """Follows compactions over a session read forward (see
    :meth:`FormatAdapter.compaction_tracker`)."""

    def note(self, entry: Mapping[str, Any], tokens: int) -> int | None:
        """Record one entry (its estimate: ``tokens``); when it completes a compaction, the
        tokens the context restarts from (what the compaction kept plus the summary), else
        None."""
        ...


class SizingAdapter(CompactionAdapter):
    """Usage anchors, what is sent, context marks, limits and the agent's overflow rule."""

    #: True when the agent's context can only be known from the whole session (OpenCode: the
    #: last compaction decides what is sent), so transforms buffer it; False: they stream.
    reads_whole_session: ClassVar[bool] = False
    #: True when ``attachment`` lines record the texts the agent sent for them (``rendered``,
    #: Claude Code 2.1): the meter counts those texts.
    rendered_attachments: ClassVar[bool] = False

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        """The usage the agent recorded for the model call that wrote ``entry`` (the anchor of
        the context size), or None (no usage, a synthetic line, a format without usage)."""
        return None

    def results_after_usage(self, entry: Mapping[str, Any],
                            estimate: Callable[[Block], int]) -> int | None:
        """For an entry whose :meth:`usage_of` starts a new anchor: the tokens of what the entry
        holds after that model call (OpenCode: its last step's tool results, ``estimate`` sizing
        each block), the call's output being counted exactly by its usage; or None when the
        entry is the call's own output (its estimate counts with the anchor, Claude Code)."""
        return None

    def context_mark(self, entry: Mapping[str, Any]) -> ContextMark | None:
        """For a line that records a change of the context without being a message (Claude
        Code's ``compact_boundary`` and ``microcompact_boundary``): what it records, which the
        meter applies and the timeline marks; None for every other line (the default). Called
        for every line: return early on the common ones."""
        return None

    def own_context(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        """The agent's own count of its context when this line records one (Claude Code's
        ``/context`` output): ``tokens``, ``window``, ``percent``, ``model``, ``categories``
        (name -> tokens) and ``exact``; None (the default) for every other line. Called for
        the lines that are no model message and for the agent's meta user lines."""
        return None

    def is_bare_line(self, entry: Mapping[str, Any]) -> bool:
        """True for a line that holds nothing the context is sized by - no message, usage,
        model, context mark or compaction (Claude Code's progress and snapshot lines, a third
        of a real transcript) - so the estimator only notes its place in the chain of entries.
        Called for every line: a cheap test; False (the default) is always right."""
        return False

    def is_view_start(self, entry: Mapping[str, Any]) -> bool:
        """True for a line the agent rebuilds the whole conversation it sends from (Gemini CLI's
        checkpoint, a ``$set`` of the message list): with the session's first line, the lines
        from the last one to the end size the context as the whole file does. False (the
        default): an agent that reads its session whole needs all of it."""
        return False

    def system_sent(self, entries: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
        """What the agent sends in front of the messages that no message line holds, for a
        session whose lines record no usage to measure it by: (a text its lines record, sized
        like the messages; the tokens of what they do not record, such as tool definitions,
        measured from the agent's requests). None (the default): ctxtool's default figure."""
        return None

    def compaction_tracker(self) -> CompactionTracker | None:
        """A fresh tracker for one pass over a session when a compaction shows as messages (a
        summary answering a request, OpenCode) rather than as one record
        (:meth:`is_compaction_record`); None otherwise."""
        return None

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The entries the agent would send to the model now, in the order it sends them (what
        its last compaction left in view). Only called when :attr:`reads_whole_session`."""
        return list(entries)

    def entries_sent(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The entries the agent sends to the model now, in the order it sends them (OpenCode:
        the kept tail after the summary); lines that are not messages may be left out. Only
        called when :attr:`reads_whole_session`."""
        return list(entries)

    def dropped_messages(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """When :meth:`entries_sent` builds messages from the lines rather than picking lines
        (Gemini CLI's log): the messages the session held that the agent no longer sends (what
        its compactions took out of view), once each. Only called then."""
        return []

    def count_compactions(self, entries: Iterable[dict[str, Any]]) -> int:
        """How many compactions the session went through (for the estimate report). Only called
        when :attr:`reads_whole_session`."""
        return sum(1 for entry in entries if self.is_compaction_record(entry))

    def configured_limits(self, view: list[dict[str, Any]],
                          lookup: LimitsLookup | None) -> Mapping[str, int]:
        """The model's limits (``context``, ``input``, ``output``) from the agent's own config,
        found with ``lookup`` for the model the session (``view``: :meth:`entries_sent`) uses;
        empty when the agent has no such config or ``lookup`` is None."""
        return {}

    def overflow_rule(self, view: list[dict[str, Any]], *, window: int, context: int,
                      input_limit: int | None, output_limit: int | None,
                      env: Mapping[str, str] | None) -> OverflowVerdict | None:
        """The agent's own overflow verdict for the context now (reported beside ctxtool's
        thresholds, under its ``report_key``), or None when ctxtool's thresholds are the
        agent's (Claude Code). ``view``: :meth:`entries_sent`; ``context``: ctxtool's size."""
        return None

    def context_limits(self, *, model: str | None, window: int | None, max_output: int | None,
                       env: Mapping[str, str] | None, version: str | None = None,
                       settings: AgentSettings = None) -> Thresholds:
        """Where the context warns, auto-compacts and blocks for ``model`` (``window``
        overriding its window). ctxtool's default is Claude Code's rule (of ``version``, when
        a Claude Code version is known; its newest otherwise), without Claude Code's own
        settings files; Claude Code's adapter applies ``settings`` too."""
        from ctxtool.formats.claude_code.rules import thresholds  # pure, small: see rules.py

        return thresholds(version=version, model=model, window=window, max_output=max_output,
                          env=env)

    def idle_compaction(self, *, version: str | None, env: Mapping[str, str] | None,
                        settings: AgentSettings, last_reply: datetime | None,
                        context_tokens: int) -> IdleCompaction | None:
        """Whether and when the agent compacts the session on its own while it is idle (Claude
        Code 2.1.286+), for a transcript written by ``version`` whose last reply is at
        ``last_reply``; None for an agent that never does."""
        return None
