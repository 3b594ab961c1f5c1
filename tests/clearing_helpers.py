"""Builders for snip/microcompact tests: small Claude Code sessions, tool results of an exact
token size (as ctxtool estimates them), and an in-memory store implementing ResultStore."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson

from ctxtool.core.sizing.tokens import estimate_text_tokens

def text_with_tokens(tokens: int, tag: str = "") -> str:
    """Text that ctxtool estimates at exactly ``tokens`` tokens (``tag`` makes it unique).

    The body is one letter repeated: the estimate of such a text grows smoothly with its length
    (a periodic text would not, as long texts are estimated on sampled windows)."""
    if tokens == 0:
        return ""
    head = f"{tag}\n" if tag else ""

    def text(length: int) -> str:
        return head + "a" * length

    lo, hi = 0, 64
    while estimate_text_tokens(text(hi)) <= tokens:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # the longest body still at or under the target
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if estimate_text_tokens(text(mid)) <= tokens else (lo, mid)
    for length in range(max(0, lo - 200), lo + 200):
        if estimate_text_tokens(text(length)) == tokens:
            return text(length)
    raise AssertionError(f"could not build a text of exactly {tokens} tokens")


def text_with_chars(tokens: int, tag: str = "") -> str:
    """Text that Claude Code counts at exactly ``tokens`` tokens (characters / 4, its
    microcompact's count): ``4 * tokens`` characters, ``tag`` first."""
    head = f"{tag}\n" if tag else ""
    assert len(head) <= 4 * tokens or tokens == 0, "the tag is longer than the text"
    return (head + "a" * (4 * tokens - len(head))) if tokens else ""


class Session:
    """A Claude Code session built entry by entry, with a proper uuid chain."""

    def __init__(self, session_id: str = "sess-1", cwd: str = "/tmp/proj",
                 start: str = "2026-01-01T00:00:00Z") -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.clock = datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.entries: list[dict[str, Any]] = []
        self.calls = 0

    def _add(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        parent = self.entries[-1]["uuid"] if self.entries else None
        entry_uuid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.session_id}/{len(self.entries)}"))
        self.clock += timedelta(seconds=30)
        entry = {"parentUuid": parent, "isSidechain": False, "userType": "external",
                 "cwd": self.cwd, "sessionId": self.session_id, "version": "2.1.19",
                 "type": kind, **body, "uuid": entry_uuid,
                 "timestamp": self.clock.astimezone(timezone.utc).strftime(
                     "%Y-%m-%dT%H:%M:%S.000Z")}
        self.entries.append(entry)
        return entry

    def user(self, text: str) -> Session:
        self._add("user", {"message": {"role": "user", "content": text}})
        return self

    def assistant(self, text: str, usage: dict[str, int] | None = None) -> Session:
        message: dict[str, Any] = {"id": f"msg_{len(self.entries)}", "role": "assistant",
                                   "model": "claude-sonnet-4-5",
                                   "content": [{"type": "text", "text": text}]}
        if usage is not None:
            message["usage"] = usage
        self._add("assistant", {"message": message})
        return self

    def call(self, name: str, tool_input: dict[str, Any], result: Any, *,
             tool_id: str | None = None) -> str:
        """A tool_use (assistant entry) and its tool_result (user entry); returns the id."""
        self.calls += 1
        tool_id = tool_id or f"toolu_{self.calls:03d}"
        self._add("assistant", {"message": {
            "id": f"msg_{len(self.entries)}", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}})
        self._add("user", {"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": result}]},
            "toolUseResult": {"stdout": "..."}})
        return tool_id

    def sized_call(self, name: str, tokens: int, tool_input: dict[str, Any] | None = None) -> str:
        """A call whose result text is exactly ``tokens`` tokens."""
        tag = f"result {self.calls + 1} of {name}"
        return self.call(name, tool_input or {"command": f"step {self.calls + 1}"},
                         text_with_tokens(tokens, tag))

    def counted_call(self, name: str, tokens: int,
                     tool_input: dict[str, Any] | None = None) -> str:
        """A call whose result Claude Code counts at exactly ``tokens`` (characters / 4)."""
        tag = f"result {self.calls + 1} of {name}"
        return self.call(name, tool_input or {"command": f"step {self.calls + 1}"},
                         text_with_chars(tokens, tag))

    def compact(self, summary: str = "Summary of the work so far.") -> Session:
        boundary = self._add("system", {"subtype": "compact_boundary",
                                        "content": "Conversation compacted",
                                        "compactMetadata": {"trigger": "manual",
                                                            "preTokens": 100000}})
        boundary["logicalParentUuid"], boundary["parentUuid"] = boundary["parentUuid"], None
        self._add("user", {"message": {"role": "user", "content": summary},
                           "isCompactSummary": True, "isVisibleInTranscriptOnly": True})
        return self

    def jsonl(self) -> bytes:
        return b"".join(orjson.dumps(e) + b"\n" for e in self.entries)


class MemoryStore:
    """A ResultStore in memory (the core's tests need no filesystem)."""

    def __init__(self) -> None:
        self.files: dict[str, Any] = {}

    def save(self, content: str | list[Any], *, tool_use_id: str, session_id: str | None) -> str:
        path = self.path_for(content, tool_use_id=tool_use_id, session_id=session_id)
        self.files[path] = content
        return path

    def path_for(self, content: str | list[Any], *, tool_use_id: str,
                 session_id: str | None) -> str:
        return f"/mem/{session_id or 'default'}/tool-results/{tool_use_id}." + (
            "txt" if isinstance(content, str) else "json")

    def load(self, path: str) -> str | list[Any] | None:
        return self.files.get(path)


def result_contents(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """tool_use_id -> tool_result content, for Claude Code entries."""
    found: dict[str, Any] = {}
    for entry in entries:
        content = (entry.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[block["tool_use_id"]] = block.get("content")
    return found
