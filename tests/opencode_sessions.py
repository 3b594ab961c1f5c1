"""OpenCode sessions for the command tests: the export fixture as JSONL, and small sessions built
for one command each (large outputs, re-read files, usage on finished messages)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ctxtool.formats.opencode.export import entries_from_export, loads_document
from tests.opencode_builders import FIXTURE, SESSION, T0, assistant, text, tool, user

HEADER: dict[str, Any] = {"session": {"id": SESSION, "title": "test session"}}
EXPORT = FIXTURE / "export.json"
NOW = "2026-01-05T00:00:00Z"
NOW_MS = 1_767_571_200_000


def fixture_entries() -> list[dict[str, Any]]:
    """The export fixture (every part type, a pruned part, two compactions - the second keeping
    a tail - and a pending and a running tool call) as ctxtool's JSONL entries."""
    return entries_from_export(loads_document(EXPORT.read_bytes(), str(EXPORT)), str(EXPORT))


def jsonl(entries: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(e) + b"\n" for e in entries)


def write(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_bytes(jsonl(entries))
    return path


def lines(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def tools_of(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """callID -> tool part, over every message."""
    return {p["callID"]: p for e in entries for p in e.get("parts", []) if p.get("type") == "tool"}


def file_tool(call: str, name: str, path: str, output: str = "ok", **extra: Any) -> dict[str, Any]:
    """A read/edit/write part with OpenCode's camelCase input."""
    part = tool(call, name, output)
    part["state"]["input"] = {"filePath": path, **extra}
    return part


def tokens(input_: int = 0, output: int = 0, read: int = 0, write_: int = 0) -> dict[str, Any]:
    return {"input": input_, "output": output, "reasoning": 0, "cache": {"read": read, "write": write_}}


def big(tokens_: int) -> str:
    """Output of about ``tokens_`` tokens by OpenCode's chars/4 estimate, on many lines."""
    return ("lorem ipsum dolor sit amet " * 2 + "\n") * (tokens_ * 4 // 55 + 1)


def prune_session() -> list[dict[str, Any]]:
    """Two old turns with 30K-token bash outputs, then two protected turns."""
    return [HEADER,
            user(1), assistant(2, 1, tool("old1", "bash", big(30_000))),
            user(3), assistant(4, 3, tool("old2", "read", big(30_000))),
            user(5), assistant(6, 5, tool("new1", "bash", big(1_000))),
            user(7), assistant(8, 7, text("done"))]


def snip_session() -> list[dict[str, Any]]:
    """The same file read twice (the first read is superseded), then three small calls."""
    source = "".join(f"line {i} of app.py\n" for i in range(300))
    return [HEADER,
            user(1, text("read app.py")),
            assistant(2, 1, file_tool("r1", "read", "/w/app.py", source)),
            user(3, text("read it again")),
            assistant(4, 3, file_tool("r2", "read", "/w/app.py", source + "more\n")),
            user(5), assistant(6, 5, tool("b1"), tool("b2"), tool("b3"))]


def persist_session() -> list[dict[str, Any]]:
    """One 3000-line output (over OpenCode's 2000 lines), one small, one 60 KB on one line."""
    long = "\n".join(f"row {i}" for i in range(3000))
    return [HEADER, user(1),
            assistant(2, 1, tool("long", "bash", long), tool("small", "bash", "fine")),
            user(3), assistant(4, 3, tool("wide", "webfetch", "x" * 60_000))]


def usage_session() -> list[dict[str, Any]]:
    """A finished message with usage, then a step whose tool result came after its call."""
    return [HEADER, user(1),
            assistant(2, 1, text("looked"), tokens=tokens(1_000, 50, 20_000, 300)),
            user(3),
            assistant(4, 3, {"type": "step-start"}, tool("t1", "bash", big(2_000)),
                      finish=None, created=T0 + 9_000)]


__all__ = ["EXPORT", "HEADER", "NOW", "NOW_MS", "big", "file_tool", "fixture_entries", "jsonl",
           "lines", "persist_session", "prune_session", "snip_session", "tokens", "tools_of",
           "usage_session", "write"]
