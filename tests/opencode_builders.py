"""Small builders for OpenCode message entries (``{"info", "parts"}``) used by the OpenCode tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "opencode"
SESSION = "ses_test"
T0 = 1_767_000_000_000
# OpenCode's config turning its prune on: since 1.4 it prunes (and so does microcompact) only
# when asked to (ctxtool.formats.opencode.switches)
PRUNE_ON = {"OPENCODE_CONFIG_CONTENT": '{"compaction": {"prune": true}}'}
ZERO = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}


def mid(n: int) -> str:
    return f"msg_{n:03d}"


def _parts(n: int, parts: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    return [{"id": f"prt_{n:03d}{k:02d}", "sessionID": SESSION, "messageID": mid(n), **p}
            for k, p in enumerate(parts)]


def user(n: int, *parts: dict[str, Any], created: int | None = None) -> dict[str, Any]:
    return {"info": {"id": mid(n), "sessionID": SESSION, "role": "user",
                     "time": {"created": created if created is not None else T0 + n * 1000},
                     "agent": "build", "model": {"providerID": "anthropic", "modelID": "claude-x"}},
            "parts": _parts(n, parts or (text(f"question {n}"),))}


def assistant(n: int, parent: int, *parts: dict[str, Any], finish: str | None = "stop",
              summary: bool = False, error: Any = None, tokens: dict[str, Any] | None = None,
              created: int | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"id": mid(n), "sessionID": SESSION, "role": "assistant",
                            "time": {"created": created if created is not None else T0 + n * 1000},
                            "parentID": mid(parent), "modelID": "claude-x",
                            "providerID": "anthropic", "mode": "build", "agent": "build",
                            "path": {"cwd": "/w", "root": "/w"}, "cost": 0,
                            "tokens": tokens or ZERO}
    if summary:
        info.update(mode="compaction", agent="compaction", summary=True)
    if finish is not None:
        info["finish"] = finish
    if error is not None:
        info["error"] = error
    return {"info": info, "parts": _parts(n, parts or (text(f"answer {n}"),))}


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": value, **extra}


def tool(call: str, name: str = "bash", output: str = "ok", *, status: str = "completed",
         compacted: int | None = None, **state: Any) -> dict[str, Any]:
    if status == "completed":
        body: dict[str, Any] = {"status": "completed", "input": {"command": call}, "output": output,
                                "title": call, "metadata": {},
                                "time": {"start": 1, "end": 2}}
        if compacted is not None:
            body["time"]["compacted"] = compacted
    elif status == "error":
        body = {"status": "error", "input": {"command": call}, "error": output,
                "time": {"start": 1, "end": 2}}
    elif status == "running":
        body = {"status": "running", "input": {"command": call}, "time": {"start": 1}}
    else:
        body = {"status": "pending", "input": {}, "raw": ""}
    body.update(state)
    return {"type": "tool", "callID": call, "tool": name, "state": body}


def compaction(auto: bool = False, tail: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "compaction", "auto": auto}
    if tail is not None:
        part["tail_start_id"] = tail
    return part


def ids(entries: list[dict[str, Any]]) -> list[str]:
    return [e["info"]["id"] for e in entries if "info" in e]
