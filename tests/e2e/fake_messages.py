"""A fake Anthropic Messages API for real agent clients (Claude Code, OpenCode) in e2e tests.

    with FakeMessages() as api:
        api.push(tool("Bash", {"command": "ls"}), say("done"))   # the agent's next turns
        run the client with env ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=anything
        api.turns()          # the agent's own requests (bodies as sent), in order
        api.requests         # everything received: path, headers, body

It is :class:`tests.fake_anthropic.FakeAnthropic` (same ``Reply``/``Recorded``, every request
logged) set up for a client rather than the SDK:

- ``POST /v1/messages`` streams server-sent events when the request has ``"stream": true`` and
  answers JSON otherwise. ``usage.input_tokens`` is the request's size (``tokens``: characters
  / 4 unless given; :func:`heuristic_tokens` counts as ctxtool's estimate does), so a session
  the client writes has usage that moves with what it sent.
- Scripted replies (:meth:`push`, built with :func:`say` and :func:`tool`) go only to the agent's
  own turns: requests that carry ``tools`` and are not a compaction. Side requests (titles, topic
  checks, quota probes) get a short text reply and do not use up the script. When the script is
  empty the agent gets ``say(default_text)``.
- A compaction request (the client's ``/compact``: its last user message asks for a summary of
  the conversation) gets :func:`summary_reply` with the nine sections Claude Code expects; one
  shaped like OpenCode 1.18's (a serialized ``<conversation>`` and a ``<template>``) gets
  :func:`template_reply`, the template's sections filled in.
- ``/v1/messages/count_tokens`` answers characters / 4; any other route answers ``200 {}``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from ctxtool.core.sizing.tokens import (estimate_entry_tokens, estimate_json_tokens,
                                        estimate_text_tokens)
from ctxtool.types import ANTHROPIC
from tests.fake_anthropic import FakeAnthropic, Recorded, Reply, summary_text

__all__ = ["FakeMessages", "Recorded", "Reply", "say", "tool", "summary_reply", "template_reply",
           "request_chars", "heuristic_tokens", "message_tokens"]

_ids = itertools.count(1)


def _message(content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {"id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": content, "stop_reason": stop,
            "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}


def say(text: str, *, usage: tuple[int, int] | None = None) -> Reply:
    """An assistant turn that answers with text and ends the turn; ``usage`` = (input, output)
    tokens to report instead of the request's size (to put a session at a chosen size)."""
    return _with_usage(Reply(200, _message([{"type": "text", "text": text}], "end_turn")), usage)


def _with_usage(reply: Reply, usage: tuple[int, int] | None) -> Reply:
    if usage is not None:
        reply.body["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1],
                               "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return reply


def tool(name: str, tool_input: dict[str, Any], *, text: str = "",
         tool_id: str | None = None) -> Reply:
    """An assistant turn that calls one tool (optionally after a line of text)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": tool_id or f"toolu_fake{next(_ids):04d}",
                   "name": name, "input": tool_input})
    return Reply(200, _message(blocks, "tool_use"))


def summary_reply(note: str = "fake summary") -> Reply:
    """The answer to a compaction request: analysis scratchpad, then the nine sections."""
    return Reply(200, _message([{"type": "text", "text": summary_text(note=note)}], "end_turn"))


TEMPLATE_SUMMARY = """## Objective
- {note}: what the user wants

## Important Details
- {note}: details

## Work State
### Completed
- {note}: done

### Active
- (none)

### Blocked
- (none)

## Next Move
1. {note}: next

## Relevant Files
- (none)"""


def template_reply(note: str = "fake summary") -> Reply:
    """The answer to an OpenCode 1.18 compaction request: its Markdown template, filled in."""
    return Reply(200, _message([{"type": "text", "text": TEMPLATE_SUMMARY.format(note=note)}],
                               "end_turn"))


def is_template_compaction(body: dict[str, Any]) -> bool:
    text = last_user_text(body)
    return "<conversation>" in text and "<template>" in text


def request_chars(body: dict[str, Any]) -> int:
    """Characters of what a request sends the model: system, tools and messages, as JSON."""
    return sum(len(json.dumps(body.get(key) or "", ensure_ascii=False))
               for key in ("system", "tools", "messages"))


def message_tokens(messages: list[dict[str, Any]]) -> int:
    """Messages API messages counted as ctxtool's estimate counts them (its token heuristic,
    fitted to Claude's tokenizer on real usage; no tokenizer is at hand offline)."""
    return sum(estimate_entry_tokens(m, ANTHROPIC) for m in messages)


def heuristic_tokens(body: dict[str, Any]) -> int:
    """A request's system prompt, tools and messages in ctxtool's token heuristic: as a
    tokenizer would count them, where characters / 4 undercounts digits and line-numbered
    listings two to four times."""
    system = body.get("system") or ""
    texts = [system] if isinstance(system, str) else [
        str(b.get("text", "")) for b in system if isinstance(b, dict)]
    return sum(map(estimate_text_tokens, texts)) + estimate_json_tokens(body.get("tools") or []) \
        + message_tokens(body.get("messages") or [])


def last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    if not messages:
        return ""
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


def is_compaction(body: dict[str, Any]) -> bool:
    text = last_user_text(body)
    return "summary of the conversation" in text and "<summary>" in text or (
        "Your task is to create a detailed summary" in text) or is_template_compaction(body)


class FakeMessages(FakeAnthropic):
    """The server for one test (module docstring). ``turns()`` lists the agent's requests."""

    def __init__(self, default_text: str = "Done.",
                 tokens: Callable[[dict[str, Any]], int] | None = None) -> None:
        super().__init__()
        self.lenient = True
        self.default_text = default_text
        self.tokens = tokens or (lambda body: request_chars(body) // 4)

    def turns(self) -> list[dict[str, Any]]:
        """Bodies of the agent's own requests (tools present, not a compaction), in order."""
        return [r.body for r in self.messages() if self.is_turn(r.body)]

    def compactions(self) -> list[dict[str, Any]]:
        return [r.body for r in self.messages() if is_compaction(r.body)]

    @staticmethod
    def is_turn(body: dict[str, Any]) -> bool:
        return bool(body.get("tools")) and not is_compaction(body)

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        size = self.tokens(body)
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            if path.endswith("/count_tokens"):
                return Reply(200, {"input_tokens": size})
            if is_template_compaction(body):
                reply = template_reply()
            elif is_compaction(body):
                reply = summary_reply()
            elif self.is_turn(body) and self.script:
                reply = self.script.popleft()
            else:
                reply = say(self.default_text if self.is_turn(body) else "Fake side reply.")
        message = dict(reply.body)
        if reply.status == 200 and message.get("type") == "message" and not (
                message.get("usage") or {}).get("input_tokens"):  # else: usage as scripted
            message["usage"] = {"input_tokens": size, "output_tokens": 1 + len(json.dumps(
                message.get("content"))) // 4, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0}
        return Reply(reply.status, message, reply.headers, reply.delay)
