"""A fake Gemini API (generativelanguage, v1beta) for the real Gemini CLI in e2e tests.

    with FakeGemini() as api:
        api.push(call("run_shell_command", {"command": "ls"}), say("done"))  # the agent's turns
        run gemini with GOOGLE_GEMINI_BASE_URL=api.url, GEMINI_API_KEY=...
        api.turns()      # the agent's own requests (bodies as sent), in order
        api.requests     # everything received: path, headers, body

- ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` answers with server-sent events,
  one ``data:`` line per chunk: the reply's parts, then a last chunk with ``finishReason`` and
  ``usageMetadata``. ``:generateContent`` answers the same reply as one JSON object.
  ``promptTokenCount`` is the request's size in characters / 4 unless a reply says otherwise,
  so the ``tokens.input`` Gemini CLI records moves with what it sent.
- ``:countTokens`` answers ``{"totalTokens": <characters / 4>}``.
- The agent's own turns are the streamed requests that declare tools; they take the scripted
  replies (:meth:`push`, built with :func:`say` and :func:`call`), then ``say(default_text)``.
  Side requests (a compression summary, a next-speaker or routing check, a title: no tools, or
  not streamed) get ``side_text`` and leave the script alone; a JSON-mode side request (one with
  ``responseMimeType: application/json``) gets ``side_json``.
- Any other route answers ``200 {}``. The HTTP side is :class:`tests.fake_anthropic.FakeAnthropic`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from tests.fake_anthropic import FakeAnthropic, Recorded, Reply, raw_reply

__all__ = ["FakeGemini", "Recorded", "Turn", "say", "call", "request_chars", "is_turn"]

_ids = itertools.count(1)
MODEL_VERSION = "gemini-2.5-pro"


@dataclass
class Turn:
    """One model turn: its parts, and the prompt tokens to report (None: the request's size)."""
    parts: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int | None = None


def say(text: str, *, input_tokens: int | None = None) -> Turn:
    """A model reply of text that ends the turn."""
    return Turn([{"text": text}], input_tokens)


def call(name: str, args: dict[str, Any], *, text: str = "") -> Turn:
    """A model turn that calls one function (optionally after a line of text)."""
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts.append({"functionCall": {"name": name, "args": args}})
    return Turn(parts)


def request_chars(body: dict[str, Any]) -> int:
    """Characters of what a request sends the model: system instruction, tools and contents."""
    return sum(len(json.dumps(body.get(key) or "", ensure_ascii=False))
               for key in ("systemInstruction", "tools", "contents"))


def is_turn(path: str, body: dict[str, Any]) -> bool:
    """One of the agent's own requests: streamed, with the tools declared."""
    return path.endswith(":streamGenerateContent") and bool(body.get("tools"))


def response(turn: Turn, prompt_tokens: int) -> dict[str, Any]:
    output = max(1, len(json.dumps(turn.parts)) // 4)
    return {"candidates": [{"content": {"role": "model", "parts": turn.parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output,
                              "totalTokenCount": prompt_tokens + output},
            "modelVersion": MODEL_VERSION, "responseId": f"resp_fake{next(_ids):04d}"}


def sse_chunks(turn: Turn, prompt_tokens: int) -> list[dict[str, Any]]:
    """The reply as the chunks the streaming API sends: one per part, usage on the last."""
    whole = response(turn, prompt_tokens)
    chunks = [{"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
               "modelVersion": MODEL_VERSION} for part in turn.parts[:-1]]
    last = {**whole, "candidates": [{**whole["candidates"][0],
                                     "content": {"role": "model", "parts": turn.parts[-1:]}}]}
    return [*chunks, last]


class FakeGemini(FakeAnthropic):
    """The server for one test (module docstring); the HTTP side is :class:`FakeAnthropic`'s,
    whose every route but the Messages API's comes to :meth:`other`."""

    def __init__(self, default_text: str = "Done.",
                 side_text: str = "Fake summary of the conversation so far.",
                 side_json: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.lenient = True
        self.default_text = default_text
        self.side_text = side_text
        # answers every JSON check the client makes: its model router, its next-speaker check
        self.side_json = side_json if side_json is not None else {
            "complexity_reasoning": "A simple request.", "complexity_score": 10,
            "reasoning": "The model answered; the user speaks next.", "next_speaker": "user"}

    def model_requests(self) -> list[Recorded]:
        return [r for r in self.requests if ":" in r.path.rsplit("/", 1)[-1]]

    def turns(self) -> list[dict[str, Any]]:
        """Bodies of the agent's own requests, in order."""
        return [r.body for r in self.requests if is_turn(r.path, r.body)]

    def other(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        method = path.rsplit(":", 1)[-1] if "/models/" in path else ""
        if method not in ("generateContent", "streamGenerateContent", "countTokens"):
            return super().other(path, headers, body)
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            if method == "countTokens":
                size = request_chars(body.get("generateContentRequest") or body)
                return Reply(200, {"totalTokens": size // 4})
            if is_turn(path, body):
                turn = self.script.popleft() if self.script else say(self.default_text)
            elif ((body.get("generationConfig") or {}).get("responseMimeType")
                  == "application/json"):
                turn = say(json.dumps(self.side_json))
            else:
                turn = say(self.side_text)
        tokens = turn.input_tokens if turn.input_tokens is not None else request_chars(body) // 4
        if method == "generateContent":
            return Reply(200, response(turn, tokens))
        data = b"".join(f"data: {json.dumps(chunk)}\r\n\r\n".encode()
                        for chunk in sse_chunks(turn, tokens))
        return raw_reply(data, content_type="text/event-stream")
