"""How full the context window is, measured in one pass over a transcript.

:class:`ContextMeter` is the single rule every command uses to size "the context now":

* the **usage anchor** - the last real assistant API call's prompt (``input_tokens +
  cache_creation_input_tokens + cache_read_input_tokens``) plus what it produced - is taken as
  exact, and the heuristic estimate of every entry after it is added;
* without any usage (other formats, hand-made transcripts, or right after a compaction) it is
  the heuristic estimate of every entry plus a figure for the system prompt and tool
  definitions that a transcript never records: ``system_tokens`` when given, else what the
  session's own calls showed, else :data:`DEFAULT_SYSTEM_TOKENS`. For Claude Code that is the
  last call's prompt minus the estimate of the messages it was sent: the same call the
  estimate of the session is anchored on, so the estimate of a transform's output (snip,
  persist, microcompact) differs from it by what the transform took out and put in, nothing
  else. After a compaction it counts at most as the default: that residual also holds the
  estimate's error on the messages summarized away (58,011 "system" tokens on a corpus
  session whose system prompt is about 20K), and until the next call the default is what the
  end of the file gives too (``statusline``, ``sessions``: one figure everywhere).
  The first call would be a worse figure: Claude Code 2.1 loads tools on demand (its first call
  of a session sends about 7K tokens fewer than its later ones), MCP servers and CLAUDE.md
  change during a session, and a continued session's first call carries earlier content the
  file does not hold (a 2.0.76 session in the corpus: 152K). OpenCode keeps the first call's;
* Claude Code 2.1's ``attachment`` entries count with what they record was sent for them
  (``rendered``, :func:`attachment_tokens`): restored files and listings are reminders in the
  next call's messages;
* a compact boundary starts over, with the messages it keeps by reference
  (``compactMetadata.preservedMessages.uuids``, else the ``preservedSegment`` chain from its
  tail back to its head, which sit before it in the file; Claude Code splices them in after
  the summary) counted again;
* one uuid is one entry: a later copy of an entry (a repeated ``/compact`` in one Claude Code
  process writes the history again, :mod:`ctxtool.core.messages.repeats`) is skipped;
* a ``microcompact_boundary`` subtracts the ``microcompactMetadata.tokensSaved`` it records
  from the anchor taken before it (that API call still saw the full tool results; Claude Code
  keeps them in the file and clears them in memory).

Streamed responses are written as several assistant lines sharing ``message.id`` (and
``requestId``): they form one API call, with the largest usage snapshot kept. Recent Claude Code
versions record ``output_tokens`` from the first stream event only (1-10 tokens), so the call's
output is the larger of the recorded count and the estimate of its content. Lines from
``model: "<synthetic>"`` (local error notices) are never an anchor. Entries of a side chain
(``isSidechain`` different from the first entry's) are not part of this context and are skipped.

OpenCode sessions follow OpenCode (:mod:`ctxtool.formats.opencode.context`): the anchor is the last
finished assistant message's ``tokens`` (input + cache write + cache read + output; never a
summary's), the results of its last step's tool calls are counted after it, and a finished
summary answering a compaction request restarts the context with that request, the retained tail
and the summary (one int per message is remembered for that).

Recorded usage describes the transcript as the API saw it. A transform that shrinks content
before the last call without saying so (no boundary with ``tokensSaved``) leaves the anchor
stale; ``use_usage=False`` then estimates every entry instead.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ctxtool.core.messages.repeats import copy_key
from ctxtool.core.sizing.tokens import (estimate_block_tokens, estimate_entry_tokens,
                                        estimate_text_tokens)
from ctxtool.formats.adapter import COMPACT_MARK, ContextMark, Usage
from ctxtool.formats.registry import adapter_for

# Claude Code's system prompt plus its built-in tool definitions (and CLAUDE.md, MCP tools...):
# the first API call of a session minus the estimate of the messages before it, median over 28
# corpus sessions (13.6K-44K; Claude Code 1.0 ~15K, 2.1 ~26K). Override with --system-tokens.
DEFAULT_SYSTEM_TOKENS = 24_000

# Entries remembered for a boundary that keeps messages by reference: Claude Code keeps the last
# few messages before it, far fewer than this.
_RECENT_ENTRIES = 20_000


def usage_of(entry: dict[str, Any], fmt: str) -> Usage | None:
    """The usage the agent recorded for the call that wrote ``entry`` (a Claude Code assistant
    line, a finished OpenCode assistant message...), or None (no usage, synthetic, other
    formats): see :meth:`ctxtool.formats.adapter.FormatAdapter.usage_of`."""
    return adapter_for(fmt).usage_of(entry)


def attachment_tokens(entry: dict[str, Any]) -> int:
    """Claude Code 2.1's ``attachment`` entries (files restored after a compaction, tool and
    skill listings, the date, reminders) record what was sent for them as ``rendered``
    contents: the next call's prompt holds those texts, as user-message reminders."""
    rendered = entry.get("rendered")
    if not isinstance(rendered, list):
        return 0
    texts = [r.get("content") for r in rendered if isinstance(r, dict)]
    return sum(estimate_text_tokens(t) for t in texts if isinstance(t, str))


class ContextMeter:
    """Running size of the model's context over a stream of entries, in one pass.

    Feed every entry in file order with :meth:`add`; read :attr:`context_tokens` at any time.
    Memory is constant: nothing is buffered.

        meter = ContextMeter(fmt)
        for entry in entries:
            meter.add(entry)
            if meter.context_tokens > limits.warning: ...
    """

    def __init__(self, fmt: str, *, system_tokens: int | None = None,
                 use_usage: bool = True) -> None:
        self.fmt = fmt
        self.given_system = system_tokens  # None: what the session shows, else the default
        self.observed_system: int | None = None
        self.observing = True  # OpenCode: False once the first call was seen (or set)
        # Claude Code: estimate of the messages in context (since the last compaction), which
        # the next call's prompt holds besides the system prompt and tools
        self.content = 0
        self.dropped_before = 0  # cumulativeDroppedTokens of the last compact boundary seen
        # uuid -> (parentUuid, tokens), the newest _RECENT_ENTRIES. An OrderedDict: dropping
        # the oldest key of a plain dict (``del d[next(iter(d))]``) scans the holes the earlier
        # deletions left at its front, tens of microseconds a line once it is full
        self._recent: OrderedDict[str, tuple[Any, int, tuple[Any, ...]]] = OrderedDict()
        self.use_usage = use_usage  # False: estimate everything (content changed after the calls)
        self.anchor: Usage | None = None
        self.anchor_content = 0  # estimate of the anchor call's own output blocks
        self.saved = 0  # tokensSaved of microcompact boundaries after the anchor
        self.since_anchor = 0  # estimate of the entries after the anchor (or the boundary)
        self._chain: bool | None = None  # isSidechain value of the context being measured
        self.peak_prompt = 0  # the largest prompt a call recorded (read even when not used)
        adapter = adapter_for(fmt)
        self._usage_of = adapter.usage_of
        self._results_after_usage = adapter.results_after_usage
        # OpenCode: a finished summary answering a compaction request restarts the context
        self._compactions = adapter.compaction_tracker()
        # lines recording a compaction or a clearing (Claude Code's boundaries)
        self._context_mark = adapter.context_mark
        # Claude Code 2.1: attachment lines record the texts sent for them (rendered)
        self._rendered_attachments = adapter.rendered_attachments

    @property
    def system_tokens(self) -> int:
        """The system prompt and tools figure used when no usage anchors the count."""
        if self.given_system is not None:
            return self.given_system
        return DEFAULT_SYSTEM_TOKENS if self.observed_system is None else self.observed_system

    @property
    def context_tokens(self) -> int:
        """Tokens the model would see if it were called now (system prompt included)."""
        return self.base_tokens + self.since_anchor

    @property
    def base_tokens(self) -> int:
        """The part not estimated entry by entry: the anchor, or the assumed system prompt."""
        if self.anchor is None:
            return self.system_tokens
        output = max(self.anchor.output_tokens, self.anchor_content)
        return max(0, self.anchor.prompt_tokens + output - self.saved)

    @property
    def anchored(self) -> bool:
        return self.anchor is not None

    def in_context(self, entry: dict[str, Any]) -> bool:
        """False for entries of another chain (side chains mixed into a main transcript)."""
        flag = entry.get("isSidechain")
        if flag is not True and flag is not False:  # not a bool (isinstance costs more)
            return True
        if self._chain is None:
            self._chain = flag
        return flag == self._chain

    def follow_chain(self, flag: bool | None) -> None:
        """Measure the chain whose ``isSidechain`` is ``flag`` (the first entry's, when the
        entries fed start later in the file)."""
        self._chain = flag

    def reset(self) -> None:
        """Start over, as after a compaction: only what follows counts."""
        self.anchor, self.anchor_content, self.saved, self.since_anchor = None, 0, 0, 0

    def add(self, entry: dict[str, Any], *, tokens: int | None = None) -> int:
        """Account for one entry; returns its estimated tokens (0 when it is not in context).

        ``tokens`` passes the entry's estimate when the caller computed it already."""
        if getattr(entry, "invalid", False) or not self.in_context(entry) or self.repeated(entry):
            return 0
        return self.account(entry, tokens)

    def repeated(self, entry: dict[str, Any]) -> bool:
        """True for a copy of an entry already counted: its uuid is among the newest entries'
        (one uuid is one entry, :mod:`ctxtool.core.messages.repeats`; a copy further back
        than :data:`_RECENT_ENTRIES` entries is not caught)."""
        uuid = entry.get("uuid")
        if uuid.__class__ is not str:
            return False
        first = self._recent.get(uuid)
        return first is not None and first[2] == copy_key(entry)

    def account(self, entry: dict[str, Any], tokens: int | None = None) -> int:
        """:meth:`add` for an entry already known to be valid and in context."""
        mark = self._context_mark(entry)
        if mark is not None:  # a compaction or clearing record (Claude Code's boundaries)
            self.remember(entry, 0)  # a copy of it is not applied again
            self.apply(mark)
            return 0
        if tokens is None:
            tokens = estimate_entry_tokens(entry, self.fmt)
        if not tokens and entry.get("type") == "attachment" and self._rendered_attachments:
            tokens = attachment_tokens(entry)
        self.remember(entry, tokens)
        usage = self._usage_of(entry)
        if usage is not None:
            if usage.prompt_tokens > self.peak_prompt:
                self.peak_prompt = usage.prompt_tokens
            if not self.use_usage:
                usage = None
        if self._compactions is not None:
            restart = self._compactions.note(entry, tokens)
            if restart is not None:
                self.reset()
                self.since_anchor = restart
                return tokens
        if usage is None:
            self.since_anchor += tokens
        elif self.anchor is not None and usage.key == self.anchor.key:
            self.anchor = self.anchor.merged(usage)
            self.anchor_content += tokens
        elif (after := self._results_after_usage(entry, estimate_block_tokens)) is not None:
            # OpenCode: its tokens are its last step's call; that step's tool results came after
            # it. The final output count is recorded, so no estimate of it is needed
            self._observe_system(usage)
            self.anchor = usage
            self.anchor_content = 0
            self.since_anchor = after
            self.saved = 0
        else:
            self._observe_call(usage)
            self.anchor, self.anchor_content = usage, tokens
            self.saved = self.since_anchor = 0
        self.content += tokens
        return tokens

    def remember(self, entry: dict[str, Any], tokens: int) -> None:
        """Keep the entry's tokens and parent among the newest entries', for a boundary that
        keeps messages by reference. All :meth:`account` does for a line with no content."""
        uuid = entry.get("uuid")
        if uuid.__class__ is str:
            recent = self._recent
            recent[uuid] = (entry.get("parentUuid"), tokens, copy_key(entry))
            if len(recent) > _RECENT_ENTRIES:
                recent.popitem(last=False)

    def apply(self, mark: ContextMark) -> None:
        """A compaction restarts the context with what it keeps by reference; a clearing takes
        what it saved off the anchor taken before it."""
        if mark.kind == COMPACT_MARK:
            self.dropped_before = mark.dropped_before
            kept = self._preserved_tokens(mark)
            self.reset()
            self.since_anchor = self.content = kept
            # the last call's prompt less the estimate of its messages held the estimate's
            # error on the messages now summarized away, not only the system prompt: after a
            # compaction, until the next call, it counts at most as the default figure, which
            # is all the end of a file shows (statusline, sessions: one figure everywhere); a
            # session whose calls show a smaller system prompt keeps its own
            if self.observed_system is not None:
                self.observed_system = min(self.observed_system, DEFAULT_SYSTEM_TOKENS)
        elif self.anchor is not None:
            saved = mark.saved
            self.saved += saved
            # the anchor's call saw that much more than the file now holds (ctxtool's
            # boundaries: the file was cleared) or than the next call will see (Claude
            # Code's own: the file keeps the content, the next call does not)
            self.content = max(0, self.content - saved)
            if self.observed_system is not None and self.given_system is None \
                    and self._compactions is None:
                self.observed_system = max(0, self.observed_system - saved)

    def _observe_call(self, usage: Usage) -> None:
        """A new Claude Code call was sent the system prompt, the tools and the messages
        counted so far: the difference is the session's system figure as of this call."""
        if self.given_system is None and usage.prompt_tokens > self.content:
            self.observed_system = usage.prompt_tokens - self.content

    def _observe_system(self, usage: Usage) -> None:
        """OpenCode: the session's first call was sent the system prompt, the tools and the messages
        counted so far: the difference is the session's own system figure."""
        if self.observing and self.anchor is None and usage.prompt_tokens > self.since_anchor:
            self.observed_system = usage.prompt_tokens - self.since_anchor
            self.observing = False  # the first call is the cleanest: the fewest messages

    def _preserved_tokens(self, mark: ContextMark) -> int:
        """Estimated tokens of the messages a compaction keeps (see the module docstring)."""
        uuids, segment = mark.kept_ids, mark.kept_segment
        if uuids is None and segment is not None:
            head, current = segment
            walked: list[str] = []
            while isinstance(current, str) and current in self._recent and current not in walked:
                walked.append(current)
                if current == head:
                    uuids = walked
                    break
                current = self._recent[current][0]
            # a walk that never reaches the head keeps nothing, as Claude Code (and
            # filter-compacted) fall back then: a repeated /compact in one process points the
            # tail at a copy of the whole history before its previous boundary
        if uuids is None:
            return 0
        recent = self._recent
        return sum(recent[u][1] for u in set(uuids) if isinstance(u, str) and u in recent)


__all__ = ["DEFAULT_SYSTEM_TOKENS", "ContextMeter", "Usage", "usage_of"]
