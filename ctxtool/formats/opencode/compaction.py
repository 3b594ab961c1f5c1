"""``summarize`` on OpenCode sessions: what OpenCode's own compaction writes, and asks.

OpenCode summarizes the messages it would send now (``filterCompacted``'s view: an earlier
summary, the tail it kept, what came after). Sessions of OpenCode 1.18 and later (by the version
the session records) get 1.18's own summarizer request (:mod:`.prompt`: the conversation
serialized into one prompt with its Markdown template; the offline backend fills the same
template); older ones keep ctxtool's nine-section request. Then it appends, after the newest user
message (``SessionCompaction.create``/``process``, :func:`.session.append_compaction`):

* a user message holding a ``compaction`` part (``auto``: whether it was automatic; with a kept
  tail, ``tail_start_id`` = the first kept message);
* a finished ``summary: true`` assistant message whose text is the summary;
* for automatic compactions, the synthetic user message asking the agent to continue.

Every input line stays as it was, so nothing is lost; OpenCode's loader (and ``filter-compacted``)
then starts from the new compaction. A kept tail (``keep_last``/``keep_tokens``) holds only
messages newer than the earlier summary and starts at a user message, so the turn it belongs to
stays whole; OpenCode versions without ``tail_start_id`` ignore it and show only the summary.
OpenCode re-attaches no files after a compaction, so ``restore_files`` does not apply.
"""

from __future__ import annotations

from typing import Any

from ctxtool.errors import InputError
from ctxtool.formats.compaction import CompactionLines, CompactionWrite
from ctxtool.formats.opencode.prompt import agent_prompt
from ctxtool.formats.opencode.rule import session_version
from ctxtool.formats.opencode.session import append_compaction, is_older_session
from ctxtool.formats.opencode.view import obj
from ctxtool.llm.base import AgentPrompt

def summary_prompt(head: list[dict[str, Any]], entries: list[dict[str, Any]], *,
                   instructions: str | None) -> AgentPrompt | None:
    """1.18's own summarizer request for sessions of 1.18 and later (it carries the earlier
    summary itself, merged into the template, never nested); None for older ones."""
    if is_older_session(session_version(entries)):
        return None
    return agent_prompt(head, instructions=instructions)


class OpenCodeWriter:
    """Appends the records of one OpenCode compaction (module docstring)."""

    def add(self, entry: dict[str, Any]) -> None:
        pass  # the session is held: read whole when writing

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        items, tail = compaction.items, compaction.tail
        assert items is not None
        tokens = {"input": compaction.input_tokens, "output": compaction.output_tokens,
                  "reasoning": 0, "cache": {"read": 0, "write": 0}}
        writer = {"providerID": "anthropic", "modelID": compaction.model} \
            if compaction.backend == "anthropic" and compaction.model else None  # offline: the session's own model
        tail_id = obj(tail[0].get("info")).get("id") if tail else None
        try:
            # an automatic compaction records overflow: false, as 1.18 writes it (a manual one none)
            written = append_compaction(items, compaction.summary, auto=compaction.auto,
                                        overflow=False if compaction.auto else None,
                                        now_ms=compaction.now_ms,
                                        tail_start_id=tail_id if isinstance(tail_id, str) else None,
                                        tokens=tokens, model=writer)
        except ValueError as exc:  # OpenCode compacts after a user message; there is none
            raise InputError(f"cannot compact this OpenCode session: {exc}") from exc
        return CompactionLines(written[len(items):])


__all__ = ["OpenCodeWriter", "summary_prompt"]
