"""The first of two reads of a transcript ``summarize`` does not hold.

A transcript whose compaction writer needs nothing held (the adapter's ``compaction_streams``:
Claude Code) summarized offline with nothing kept verbatim (no ``--keep-last``,
``--keep-tokens`` or ``--restore-files``) needs from its history only what the summary is made
of, the context size, a digest of its bytes and what the writer reads of the main chain.
:func:`scan` reads the source once and gathers exactly that: every entry goes through a
:class:`ctxtool.core.sizing.meter.ContextMeter` and the digest, and every main-chain entry through
the adapter's compaction writer and a
:class:`ctxtool.core.summarizing.request.RequestBuilder` whose turns go straight into the summarizer's
:class:`ctxtool.llm.base.TurnSink` - nothing is kept but what the summary needs. The second read
(:meth:`ctxtool.core.clearing.twopass.LazySource.iter_parsing`) copies the input to the output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ctxtool.core.messages.repeats import FirstOfEach
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.core.summarizing.request import RequestBuilder
from ctxtool.formats.jsonl import iter_lines_out
from ctxtool.llm.base import StreamingSummarizer, Summarizer, TurnSink
from ctxtool.formats.compaction import CompactionWriter
from ctxtool.formats.registry import adapter_for


def streams(fmt: str, summarizer: Summarizer, *, keeps_messages: bool) -> bool:
    """Whether :func:`scan` can stand in for holding the transcript."""
    return (adapter_for(fmt).compaction_streams and isinstance(summarizer, StreamingSummarizer)
            and not keeps_messages)


@dataclass
class Scan:
    """What one read of the transcript gathered."""

    sink: TurnSink
    builder: RequestBuilder
    meter: ContextMeter
    writer: CompactionWriter  # the adapter's, fed the main chain
    digest: str = ""
    count: int = 0  # entries read
    messages: bool = False  # the chain read holds user or assistant entries
    sidechains: bool = False  # read the side chains too (a subagent's own transcript)
    notes: list[str] = field(default_factory=list)


def scan(source: Iterable[dict[str, Any]], fmt: str, summarizer: StreamingSummarizer, *,
         instructions: str | None, max_summary_tokens: int, sidechains: bool = False) -> Scan:
    """One read of ``source`` (see the module docstring). The main chain only, as
    :func:`ctxtool.core.summarizing.request.main_chain` chooses it: with ``sidechains`` every entry
    (for a file that turned out to hold no main-chain message)."""
    sink = summarizer.begin()
    builder = RequestBuilder(fmt, instructions=instructions,
                             max_summary_tokens=max_summary_tokens, sink=sink.add,
                             on_compaction=sink.compaction)
    found = Scan(sink, builder, ContextMeter(fmt), adapter_for(fmt).compaction_writer(),
                 sidechains=sidechains)
    sha = hashlib.sha256()
    first = FirstOfEach()  # later copies of an entry (same uuid) are read once
    for entry in source:
        found.count += 1
        found.meter.add(entry)
        for chunk in iter_lines_out((entry,)):
            sha.update(chunk)
        if getattr(entry, "invalid", False) or (entry.get("isSidechain") is True and not sidechains) \
                or not first(entry):
            continue
        found.messages = found.messages or entry.get("type") in ("user", "assistant")
        found.writer.add(entry)
        builder.add(entry)
    found.digest = sha.hexdigest()
    return found
