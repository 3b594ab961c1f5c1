"""``summarize`` on OpenCode sessions: what OpenCode's own compaction writes.

OpenCode summarizes the messages it would send now (``filterCompacted``'s view: an earlier
summary, the tail it kept, what came after). Sessions of OpenCode 1.18 and later (by the version
the session records) get 1.18's own summarizer request
(:mod:`ctxtool.core.summarizing.opencode_prompt`: the conversation serialized into one prompt with
its Markdown template; the offline backend fills the same template); older ones keep ctxtool's
nine-section request. Then it appends, after the newest user message
(``SessionCompaction.create``/``process``, :func:`ctxtool.formats.opencode.session.append_compaction`):

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ctxtool.core.sizing.tokens import estimate_entry_tokens
from ctxtool.core.summarizing.opencode_prompt import agent_prompt
from ctxtool.core.summarizing.request import build_request, first_kept
from ctxtool.errors import InputError, UsageError
from ctxtool.formats.opencode.context import is_finished_summary
from ctxtool.formats.opencode.rule import session_version
from ctxtool.formats.opencode.session import (append_compaction, filter_compacted_opencode,
                                              is_older_session)
from ctxtool.formats.opencode.view import is_message, obj
from ctxtool.llm.base import SummaryRequest
from ctxtool.types import OPENCODE


@dataclass(frozen=True)
class OpenCodePlan:
    request: SummaryRequest
    tail: list[dict[str, Any]]  # kept verbatim after the summary (file order)
    reason: str | None = None  # why there is nothing to summarize


def _role(entry: Mapping[str, Any]) -> Any:
    return obj(entry.get("info")).get("role")


def _newer(view: list[dict[str, Any]], order: dict[int, int]) -> list[dict[str, Any]]:
    """The messages of the view written after its summary, in file order (all when none)."""
    summaries = [order[id(m)] for m in view if is_finished_summary(obj(m.get("info")))]
    since = max(summaries, default=-1)
    return sorted((m for m in view if order[id(m)] > since), key=lambda m: order[id(m)])


def _tail_start(newer: list[dict[str, Any]], keep_last: int, keep_tokens: int) -> int:
    """Index in ``newer`` of the first kept message (len(newer) when none), moved back to the
    user message that opens its turn."""
    start = first_kept(len(newer), keep_last, keep_tokens,
                       lambda k: estimate_entry_tokens(newer[k], OPENCODE))
    while 0 < start < len(newer) and _role(newer[start]) != "user":
        start -= 1
    return start


def plan_opencode(items: Sequence[dict[str, Any]], *, keep_last: int = 0, keep_tokens: int = 0,
                  restore_files: int = 0, instructions: str | None = None,
                  max_summary_tokens: int = 8000) -> OpenCodePlan:
    """What to summarize (OpenCode's view minus the kept tail) and what to keep."""
    if restore_files:
        raise UsageError("--restore-files does not apply to OpenCode sessions",
                         hint="OpenCode re-attaches no files after a compaction")
    order = {id(e): i for i, e in enumerate(items)}
    view = [e for e in filter_compacted_opencode(list(items)) if is_message(e)]
    newer = _newer(view, order)
    start = _tail_start(newer, keep_last, keep_tokens)
    tail = newer[start:]
    kept = {id(e) for e in tail}
    head = [e for e in view if id(e) not in kept]
    request = build_request(head, OPENCODE, instructions=instructions,
                            max_summary_tokens=max_summary_tokens)
    reason = None
    if not request.recent_turns:
        reason = "nothing to summarize: " + (
            "the kept tail holds every message" if newer and start == 0
            else "no messages since the last compaction"
            if newer or request.turns or request.prior_summaries else "no messages")
    if not is_older_session(session_version(items)):  # 1.18's own summarizer request, which
        # carries the earlier summary itself (merged into the template, never nested)
        request = replace(request, prior_summaries=(), history_missing=False,
                          agent_prompt=agent_prompt(head, instructions=instructions))
    return OpenCodePlan(request, tail, reason)


def opencode_output(items: list[dict[str, Any]], tail: list[dict[str, Any]], summary: str, *,
                    auto: bool, now: datetime | None, backend: str, model: str | None,
                    input_tokens: int = 0, output_tokens: int = 0) -> list[dict[str, Any]]:
    """``items`` unchanged, then the records of one OpenCode compaction holding ``summary``."""
    moment = now or datetime.now(timezone.utc)
    tokens = {"input": input_tokens, "output": output_tokens, "reasoning": 0,
              "cache": {"read": 0, "write": 0}}
    writer = {"providerID": "anthropic", "modelID": model} \
        if backend == "anthropic" and model else None  # offline: the session's own model
    tail_id = obj(tail[0].get("info")).get("id") if tail else None
    try:
        # an automatic compaction records overflow: false, as 1.18 writes it (a manual one none)
        return append_compaction(items, summary, auto=auto, overflow=False if auto else None,
                                 now_ms=int(moment.timestamp() * 1000),
                                 tail_start_id=tail_id if isinstance(tail_id, str) else None,
                                 tokens=tokens, model=writer)
    except ValueError as exc:  # OpenCode compacts after a user message; there is none
        raise InputError(f"cannot compact this OpenCode session: {exc}") from exc


__all__ = ["OpenCodePlan", "opencode_output", "plan_opencode"]
