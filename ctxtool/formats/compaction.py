"""How ``summarize`` hands a compaction to an adapter's writer, and what it gets back: part of
the adapter interface (:meth:`ctxtool.formats.adapter.FormatAdapter.compaction_writer`), in a
module of its own so that commands which never summarize do not build these classes at start-up
(the names stay importable from :mod:`ctxtool.formats.adapter`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from uuid import UUID, uuid5

_NAMESPACE = UUID("6f1d3a52-5c7e-4f0b-9a51-7c2e8d0b4a10")  # ctxtool's uuid5 namespace

# The note asking the model to carry on after a summary, as Claude Code 2.1.332 writes it: what an
# automatic compaction gets unless the agent's writer chooses its own (its version's wording)
CONTINUE_NOTE = ("Continue the conversation from where it left off without asking the user any "
                 "further questions. Resume directly \u2014 do not acknowledge the summary, do "
                 "not recap what was happening, do not preface with \"I'll continue\" or "
                 "similar. Pick up the last task as if the break never happened.")


@dataclass(frozen=True)
class CompactionWrite:
    """What ``summarize`` gives an adapter's :class:`CompactionWriter`: the summary and what an
    agent records with a compaction. The transform decides what is summarized and sizes the
    result; the adapter writes it in its agent's own lines."""

    summary: str  #: the summary as the summarizer wrote it
    items: list[dict[str, Any]] | None  #: the whole input (None: read twice, not held)
    head: list[dict[str, Any]] | None  #: the input up to the cut: what the summary covers
    tail: list[dict[str, Any]]  #: the messages kept verbatim after the summary (file order)
    main: list[dict[str, Any]] | None  #: the input's main-chain entries (None: not held)
    timestamp: str  #: now, ISO 8601 in UTC with milliseconds
    now_ms: int  #: the same moment in epoch milliseconds
    auto: bool  #: an automatic compaction (``--auto``), not one asked for
    pre_tokens: int  #: ctxtool's size of the context before it
    duration_ms: int  #: how long the summary took
    digest: str  #: sha256 of the input's bytes (new lines' ids derive from it: same input, same bytes)
    #: (path, note) of each file to re-attach after the summary (``--restore-files``)
    restored: list[tuple[str, str]]
    backend: str  #: the summarizer (``offline``, ``anthropic``)
    model: str | None  #: its model, when it called one
    input_tokens: int  #: what the summary call cost
    output_tokens: int
    #: where the whole input was saved (adapters whose output does not keep the input's lines,
    #: see :attr:`FormatAdapter.summary_keeps_lines`), None otherwise or with no store
    transcript_saved: str | None
    marker: str  #: what the summary message of a plain message list starts with (the cut mark)
    #: ctxtool's text around the summary for the model: ``continuation(kept, path, closing)``
    #: (``kept``: messages stay verbatim after it; ``path``: a transcript to name, or None;
    #: ``closing``, optional: the note asking to carry on as the agent's version writes it, or
    #: None for none; when not given, :data:`CONTINUE_NOTE` for an automatic compaction)
    continuation: Callable[..., str]
    #: the transcript's path as given (``--transcript-path``), for ``continuation``
    transcript_path: str | None
    #: ctxtool's size of the context once ``lines`` are appended to the input
    context_after: Callable[[list[dict[str, Any]]], int]


@dataclass
class CompactionLines:
    """What a :class:`CompactionWriter` wrote."""

    lines: list[dict[str, Any]]  #: appended to the input (with ``replaces``: the whole output)
    replaces: bool = False  #: the output is ``lines`` alone (the input was saved first)
    restored: list[str] = field(default_factory=list)  #: paths of the files re-attached
    kept_messages: int | None = None  #: when fewer messages stay verbatim than were planned
    notes: list[str] = field(default_factory=list)  #: for the report


class CompactionWriter(Protocol):
    """Writes one compaction in the agent's own lines (see
    :meth:`FormatAdapter.compaction_writer`)."""

    def add(self, entry: dict[str, Any]) -> None:
        """Look at one entry of the input's main chain, in file order (all of them, before
        :meth:`write`; the only look at the input when it is not held)."""
        ...

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        ...


def derived_uuid(digest: str, what: str) -> str:
    """The id of a line a writer adds (``what`` names it), derived from the input's digest: the
    same input gives the same bytes."""
    return str(uuid5(_NAMESPACE, f"{digest}:{what}"))


class MessageListWriter:
    """The default :class:`CompactionWriter` (see
    :meth:`ctxtool.formats.adapter.FormatAdapter.compaction_writer`)."""

    def __init__(self, is_instruction: Callable[[Mapping[str, Any]], bool]) -> None:
        self.is_instruction = is_instruction  # the adapter's: what the head's instructions are

    def add(self, entry: dict[str, Any]) -> None:
        pass  # the head is held: its instructions are read from it

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        assert compaction.head is not None
        text = compaction.marker + " " + compaction.continuation(False, compaction.transcript_saved)
        message: dict[str, Any] = {"role": "user", "content": text}
        if compaction.restored:
            message["content"] = [{"type": "text", "text": text}] + [
                {"type": "text", "text": note} for _, note in compaction.restored]
        lead = [e for e in compaction.head if self.is_instruction(e)]
        return CompactionLines([*lead, message, *compaction.tail], replaces=True,
                               restored=[path for path, _ in compaction.restored])


__all__ = ["CompactionLines", "CompactionWrite", "CompactionWriter", "MessageListWriter",
           "derived_uuid"]
