"""How much of an OpenCode session is in the model's context now, measured the way OpenCode does.

Three pieces used by the shared meter (:mod:`ctxtool.core.sizing.meter`) and the commands:

* :func:`context_entries` - the messages ``filterCompacted`` keeps, in file order (a command that
  must not count what a compaction took out of view scans only these);
* :class:`CompactionTracker` - the same cut found while streaming forward: when a finished
  summary answers a compaction request, the context restarts with that request, the retained tail
  (``tail_start_id``) and the summary;
* :func:`opencode_usage` and :func:`last_step_split` - the usage anchor: a finished assistant
  message's ``tokens`` (input + output + cache read + cache write, what ``isOverflow`` counts).
  Its tokens describe its last step only, so the results of that step's tool calls (written
  after the call) are not in them and are counted after the anchor.

A summary message is never an anchor: its tokens are the summarizing call's, over the history it
replaced (OpenCode skips its overflow check after one for the same reason).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ctxtool.formats.opencode.session import filter_compacted_opencode
from ctxtool.formats.opencode.view import is_message, message_blocks, obj, parts_of, string


def _info(entry: Mapping[str, Any]) -> dict[str, Any]:
    return obj(entry.get("info"))


def is_summary(info: Mapping[str, Any]) -> bool:
    return info.get("role") == "assistant" and bool(info.get("summary"))


def is_finished_summary(info: Mapping[str, Any]) -> bool:
    """A compaction summary that completed (OpenCode cuts only at those)."""
    return is_summary(info) and bool(info.get("finish")) and not info.get("error")


def compaction_request(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The compaction part of a user message asking for a compaction, else None."""
    if not is_message(entry) or _info(entry).get("role") != "user":
        return None
    return next((p for p in parts_of(entry) if p.get("type") == "compaction"), None)


def context_entries(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries OpenCode still sends after its last compaction, in file order; lines that
    are not messages (the session line) are kept. Buffers the session."""
    entries = list(entries)
    kept = {id(e) for e in filter_compacted_opencode(entries)}
    return [e for e in entries if id(e) in kept]


def completed_compactions(entries: Iterable[Mapping[str, Any]]) -> int:
    """How many finished summaries answer a compaction request (the cuts OpenCode can make)."""
    requests: set[Any] = set()
    count = 0
    for entry in entries:
        if not is_message(entry):
            continue
        info = _info(entry)
        if compaction_request(entry) is not None:
            requests.add(string(info.get("id")))
        elif is_finished_summary(info) and string(info.get("parentID")) in requests:
            count += 1
    return count


class CompactionTracker:
    """``filterCompacted`` while streaming forward, for a meter: remembers each message's
    estimate (one int per message) and says when a completed compaction restarts the context."""

    def __init__(self) -> None:
        self.order: list[Any] = []  # message ids in file order
        self.sizes: list[int] = []
        self.position: dict[Any, int] = {}
        self.requests: dict[Any, Any] = {}  # compaction request id -> its tail_start_id

    def note(self, entry: Mapping[str, Any], tokens: int) -> int | None:
        """Record one message; the tokens the context restarts from when it completes a
        compaction (request + retained tail + summary), else None. Lines that are not messages
        (the session line) are not counted."""
        if "info" not in entry:
            return None
        info = _info(entry)
        ident = string(info.get("id"))
        self.position[ident] = len(self.order)
        self.order.append(ident)
        self.sizes.append(tokens)
        request = compaction_request(entry)
        if request is not None:
            self.requests[ident] = string(request.get("tail_start_id"))
            return None
        parent = string(info.get("parentID"))
        if not (is_finished_summary(info) and parent in self.requests):
            return None
        start = self.position[parent]
        tail = self.position.get(self.requests[parent])
        if tail is not None and tail < start:
            start = tail
        return sum(self.sizes[start:])


def opencode_usage(entry: Mapping[str, Any]) -> tuple[str, int, int, int, int] | None:
    """(message id, input, cache write, cache read, output) of a finished assistant message that
    is not a summary, or None. ``tokens.total`` counts as input when nothing else is recorded."""
    if not is_message(entry):
        return None
    info = _info(entry)
    if info.get("role") != "assistant" or not info.get("finish") or is_summary(info):
        return None
    tokens = obj(info.get("tokens"))
    cache = obj(tokens.get("cache"))
    values = [_count(tokens.get("input")), _count(cache.get("write")), _count(cache.get("read")),
              _count(tokens.get("output"))]
    if not any(values):
        values[0] = _count(tokens.get("total"))
    if not any(values[:3]):
        return None
    return (str(info.get("id")), *values)  # type: ignore[return-value]


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and value > 0 else 0


def last_step_split(entry: Mapping[str, Any],
                    estimate: Callable[[dict[str, Any]], int]) -> tuple[int, int]:
    """(tokens the last step produced, tokens of that step's tool results) of an assistant
    message: its recorded usage covers the first, not the second. ``estimate`` sizes a block."""
    parts = parts_of(entry)
    starts = [i for i, p in enumerate(parts) if p.get("type") == "step-start"]
    step = parts[starts[-1]:] if starts else parts
    blocks = message_blocks({"info": _info(entry), "parts": step})
    results = sum(estimate(b) for b in blocks if b.get("type") == "tool_result")
    produced = sum(estimate(b) for b in blocks if b.get("type") != "tool_result")
    return produced, results


__all__ = ["CompactionTracker", "completed_compactions", "compaction_request",
           "context_entries", "is_finished_summary", "is_summary", "last_step_split",
           "opencode_usage"]
