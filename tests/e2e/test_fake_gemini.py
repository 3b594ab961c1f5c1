"""The fake Gemini API answers the three methods as the v1beta REST API does (no client needed):
streamed chunks as server-sent events, one JSON reply, a token count; the script goes to the
agent's own turns only."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from tests.e2e.fake_gemini import FakeGemini, call, request_chars, say

TOOLS = [{"functionDeclarations": [{"name": "read_file", "description": "read"}]}]
TURN = {"contents": [{"role": "user", "parts": [{"text": "What is in notes.txt?"}]}],
        "systemInstruction": {"parts": [{"text": "You are an agent."}]}, "tools": TOOLS}


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return reply.headers["content-type"], reply.read()


def events(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[len(b"data: "):]) for line in data.split(b"\r\n\r\n") if line]


def test_streamed_turns_take_the_script_and_side_requests_do_not() -> None:
    with FakeGemini() as api:
        api.push(call("read_file", {"file_path": "notes.txt"}, text="Reading."), say("Ten lines."))
        base = f"{api.url}/v1beta/models/gemini-x"
        kind, first = post(f"{base}:streamGenerateContent?alt=sse", TURN)
        _, side = post(f"{base}:generateContent", {"contents": TURN["contents"],
                                                   "generationConfig": {
                                                       "responseMimeType": "application/json"}})
        _, counted = post(f"{base}:countTokens", {"contents": TURN["contents"]})
        _, second = post(f"{base}:streamGenerateContent?alt=sse", TURN)
        _, other = post(f"{api.url}/v1beta/cachedContents", {})
    assert kind == "text/event-stream"
    chunks = events(first)
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert parts == [{"text": "Reading."},
                     {"functionCall": {"name": "read_file", "args": {"file_path": "notes.txt"}}}]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["usageMetadata"]["promptTokenCount"] == request_chars(TURN) // 4
    assert "complexity_score" in json.loads(
        json.loads(side)["candidates"][0]["content"]["parts"][0]["text"])
    assert json.loads(counted) == {"totalTokens": request_chars({"contents": TURN["contents"]}) // 4}
    assert events(second)[-1]["candidates"][0]["content"]["parts"] == [{"text": "Ten lines."}]
    assert json.loads(other) == {}
    assert api.turns() == [TURN, TURN]
    assert [r.path.rsplit(":", 1)[-1] for r in api.model_requests()] == [
        "streamGenerateContent", "generateContent", "countTokens", "streamGenerateContent"]
