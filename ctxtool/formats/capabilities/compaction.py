"""Compaction: how the agent records a compaction (a record line, messages its own rule reads,
or ctxtool's summary marker), where one starts the context over, when the agent compacts by its
own rule, and how ``summarize`` writes one in the agent's own lines (``filter-compacted``,
``summarize``, ``estimate``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ctxtool.formats.capabilities.reading import ReadingAdapter

if TYPE_CHECKING:
    from ctxtool.formats.compaction import CompactionWriter
    from ctxtool.formats.limits import AgentSettings

BOUNDARY = "boundary"
AGENT_RULE = "agent-rule"
MARKER = "marker"


class CompactionAdapter(ReadingAdapter):
    """Compaction records, the agent's own compaction rule, and the writer of one."""

    #: How the agent records a compaction, which decides how ``filter-compacted`` finds the
    #: context and how ``summarize`` writes one: :data:`BOUNDARY` (Claude Code: a
    #: ``compact_boundary`` line, then the summary), :data:`AGENT_RULE` (OpenCode: messages the
    #: agent's own rule reads, see :meth:`entries_sent`, :meth:`compaction_starts`) or
    #: :data:`MARKER` (plain message lists: a user message starting with ctxtool's summary
    #: marker replaces the head).
    compactions: ClassVar[str] = MARKER
    #: True when the agent's compaction is appended and every input line stays as it was, so
    #: ``summarize`` saves nothing first; False (plain message lists): the output replaces the
    #: input's lines, and the whole input is saved in the store before.
    summary_keeps_lines: ClassVar[bool] = False
    #: True when the :meth:`compaction_writer` needs no more of the input than its ``add`` sees
    #: (``items``/``head``/``main`` None): ``summarize`` may then read a re-readable input twice
    #: instead of holding it, when nothing is kept verbatim (Claude Code).
    compaction_streams: ClassVar[bool] = False

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        """True for a line that records a compaction and starts the context over (Claude Code's
        ``compact_boundary``)."""
        return False

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        """True for a message holding a compaction summary (counted as ``compact_summaries``)."""
        return False

    def is_completed_summary(self, entry: Mapping[str, Any]) -> bool:
        """For :data:`AGENT_RULE` agents: True for a summary message the agent starts its
        context from (OpenCode: a finished one); messages after it can be kept verbatim."""
        return self.is_summary_entry(entry)

    def compaction_starts(self, entries: Iterable[dict[str, Any]]) -> Iterator[tuple[int, str | None]]:
        """For :data:`AGENT_RULE` agents, read forward once: (index, ``file:line``) of the entry
        where each completed compaction's context starts (OpenCode: the compaction request a
        finished summary answered)."""
        return iter(())

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        """For :data:`AGENT_RULE` agents: the text of a compaction summary message, else None."""
        return None

    def is_compaction_request(self, entry: Mapping[str, Any]) -> bool:
        """True for a message the agent wrote itself as part of a compaction - to ask for one
        (OpenCode's compaction part), or to acknowledge its summary (Gemini CLI's "Got it.
        Thanks for the additional context!"): neither the user's words nor the model's."""
        return False

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        """The context size at which the agent compacts by its own rule for a ``window``-token
        model (OpenCode's usable tokens, Claude Code's auto-compact point for the version that
        wrote the session under ``settings``; ``summarize --auto`` uses it), or None when
        ctxtool's auto-compact threshold applies (the default reads no entry)."""
        return None

    def compaction_switched_off(self, kind: str, entries: Iterable[Mapping[str, Any]], *,
                                env: Mapping[str, str]) -> str | None:
        """The agent's own setting that turns off ``kind`` ("auto": its automatic compaction,
        which ``summarize --auto`` follows; "prune": its clearing of old tool output, which
        ``microcompact`` follows) for the session ``entries``, named for the notice; None when
        it is on (the default: an agent without switches). ``summarize --auto`` and
        ``microcompact`` ask only this: Claude Code's and OpenCode's adapters read their own
        environment variables, settings and config files."""
        return None

    def compaction_writer(self) -> CompactionWriter:
        """A fresh writer of one compaction in the agent's own lines (``summarize``: fed the
        input's main chain, then asked to write). The default is the plain message list's: the
        standing instructions of the head, a user message starting with ``marker`` holding
        ctxtool's continuation text (and the restored files), then the kept tail - the input
        is saved first (:attr:`summary_keeps_lines` False)."""
        from ctxtool.formats.compaction import MessageListWriter  # see the imports

        return MessageListWriter(self.is_instruction)
