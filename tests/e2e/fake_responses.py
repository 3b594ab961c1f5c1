"""A fake OpenAI Responses API for the real Codex CLI in e2e tests.

    with FakeResponses() as api:
        api.push(call("exec_command", {"cmd": "ls"}), say("done"))   # the agent's next turns
        run codex with a provider base_url=api.url + "/v1", wire_api="responses"
        api.turns()      # the agent's own requests (bodies as sent), in order
        api.requests     # everything received: path, headers, body

- ``POST /v1/responses`` answers with the Responses API's server-sent events (Codex always
  streams): ``response.created``, one ``response.output_item.added``/``.done`` per output item
  (text also as ``response.output_text.delta``), then ``response.completed`` carrying ``usage``.
  ``usage.input_tokens`` is the request's size in characters / 4 unless a reply says otherwise,
  so the ``token_count`` events Codex writes move with what it sent.
- Scripted replies (:meth:`push`, built with :func:`say` and :func:`call`) go to the agent's own
  turns. A compaction request (Codex's local compaction: its last user message asks for a
  context checkpoint) gets :func:`say` of ``compaction_text`` and does not use up the script.
  When the script is empty the agent gets ``say(default_text)``.
- Any other route answers ``200 {}``. The HTTP side is :class:`tests.fake_anthropic.FakeAnthropic`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from tests.fake_anthropic import FakeAnthropic, Recorded, Reply, raw_reply

__all__ = ["FakeResponses", "Recorded", "Turn", "say", "call", "request_chars", "is_compaction"]

_ids = itertools.count(1)
COMPACTION_MARK = "CONTEXT CHECKPOINT COMPACTION"


@dataclass
class Turn:
    """One model turn: the output items, and the usage to report (None: the request's size)."""
    output: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int | None = None


def say(text: str, *, input_tokens: int | None = None) -> Turn:
    """An assistant message that ends the turn."""
    item = {"type": "message", "id": f"msg_fake{next(_ids):04d}", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}
    return Turn([item], input_tokens)


def call(name: str, arguments: dict[str, Any], *, text: str = "",
         call_id: str | None = None) -> Turn:
    """An assistant turn that calls one function tool (optionally after a line of text)."""
    items = say(text).output if text else []
    items.append({"type": "function_call", "id": f"fc_fake{next(_ids):04d}", "status": "completed",
                  "name": name, "arguments": json.dumps(arguments),
                  "call_id": call_id or f"call_fake{next(_ids):04d}"})
    return Turn(items)


def request_chars(body: dict[str, Any]) -> int:
    """Characters of what a request sends the model: instructions, tools and input, as JSON."""
    return sum(len(json.dumps(body.get(key) or "", ensure_ascii=False))
               for key in ("instructions", "tools", "input"))


def input_text(body: dict[str, Any]) -> str:
    """Every text of the request's input items, joined (what a test greps)."""
    return json.dumps(body.get("input") or [], ensure_ascii=False)


def last_user_text(body: dict[str, Any]) -> str:
    for item in reversed(body.get("input") or []):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))
    return ""


def is_compaction(body: dict[str, Any]) -> bool:
    return COMPACTION_MARK in last_user_text(body)


def sse_events(reply: Turn, model: str, input_tokens: int) -> list[tuple[str, dict[str, Any]]]:
    """A complete response as the (event, data) pairs the streaming Responses API sends."""
    rid = f"resp_fake{next(_ids):04d}"
    base = {"id": rid, "object": "response", "model": model, "output": []}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress"}})]
    output_tokens = 1
    for index, item in enumerate(reply.output):
        events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": index, "item": item}))
        for part in item.get("content") or []:
            if part.get("type") == "output_text":
                events.append(("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": item.get("id"),
                    "output_index": index, "content_index": 0, "delta": part["text"]}))
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": index, "item": item}))
        output_tokens += len(json.dumps(item)) // 4
    usage = {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": input_tokens + output_tokens}
    events.append(("response.completed", {"type": "response.completed", "response": {
        **base, "status": "completed", "output": reply.output, "usage": usage}}))
    return events


class FakeResponses(FakeAnthropic):
    """The server for one test (module docstring); the HTTP side is :class:`FakeAnthropic`'s,
    whose every route but the Messages API's comes to :meth:`other`."""

    def __init__(self, default_text: str = "Done.",
                 compaction_text: str = "Checkpoint: the fake summary of the work so far.") -> None:
        super().__init__()
        self.lenient = True
        self.default_text = default_text
        self.compaction_text = compaction_text

    def responses(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path.endswith("/responses")]

    def turns(self) -> list[dict[str, Any]]:
        """Bodies of the agent's own requests (not a compaction), in order."""
        return [b for b in self.responses() if not is_compaction(b)]

    def compactions(self) -> list[dict[str, Any]]:
        return [b for b in self.responses() if is_compaction(b)]

    def other(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        if not path.endswith("/responses"):
            return super().other(path, headers, body)
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            if is_compaction(body):
                turn = say(self.compaction_text)
            elif self.script:
                turn = self.script.popleft()
            else:
                turn = say(self.default_text)
        tokens = turn.input_tokens if turn.input_tokens is not None else request_chars(body) // 4
        data = b"".join(f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()
                        for event, payload in sse_events(turn, str(body.get("model")), tokens))
        return raw_reply(data, content_type="text/event-stream")
