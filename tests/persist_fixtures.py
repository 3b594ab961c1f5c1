"""Small transcript builders shared by the persist/restore tests (no conftest changes needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ctxtool.formats.jsonl import iter_entries
from ctxtool.types import Entry

SESSION = "0b28d950-c5c9-4543-a97c-635d487126df"
CWD = "/Users/dev/work/my_app.v2"


def cc_tool_use(tool_id: str, name: str = "Read", *, uuid: str = "a1",
                input: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": uuid,
            "sessionId": SESSION, "cwd": CWD, "timestamp": "2026-01-24T06:33:36.804Z",
            "message": {"id": f"msg_{uuid}", "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": [{"type": "tool_use", "id": tool_id, "name": name,
                                     "input": input or {"file_path": "/x.py"}}],
                        "usage": {"input_tokens": 10, "output_tokens": 5}}}


def cc_results(*results: tuple[str, Any], uuid: str = "u1", session: str | None = SESSION,
               extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Claude Code user entry holding one tool_result per (tool_use_id, content)."""
    entry: dict[str, Any] = {"parentUuid": "a1", "isSidechain": False, "type": "user",
                             "uuid": uuid, "cwd": CWD, "timestamp": "2026-01-24T06:33:37.000Z"}
    if session is not None:
        entry["sessionId"] = session
    entry["message"] = {"role": "user", "content": [
        {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        for tool_id, content in results]}
    entry.update(extra or {})
    return entry


def anthropic_results(*results: tuple[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id,
                                         "content": content} for tool_id, content in results]}


def big_text(chars: int, *, line: str = "0123456789 line of output, 中文 too\n") -> str:
    """``chars`` characters of multi-line text (with CJK), deterministic."""
    return (line * (chars // len(line) + 1))[:chars]


def as_entries(dicts: list[dict[str, Any]], source: str = "t.jsonl") -> list[Entry]:
    """Entries as the reader makes them (with raw bytes), from compact JSON lines."""
    data = b"".join(orjson.dumps(d) + b"\n" for d in dicts)
    return list(iter_entries(data.splitlines(keepends=True), source))


def write_jsonl(path: Path, dicts: list[dict[str, Any]]) -> bytes:
    data = b"".join(orjson.dumps(d) + b"\n" for d in dicts)
    path.write_bytes(data)
    return data


def result_contents(entry: dict[str, Any]) -> list[Any]:
    content = entry["message"]["content"] if "message" in entry else entry["content"]
    return [b["content"] for b in content if b.get("type") == "tool_result"]
