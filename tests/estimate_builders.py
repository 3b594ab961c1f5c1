"""Small builders of Claude Code transcript entries for the estimate tests (plain dicts)."""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count(1)


def _uuid() -> str:
    return f"00000000-0000-4000-8000-{next(_ids):012d}"


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": _uuid(), "isSidechain": False,
            "message": {"role": "user", "content": text}, **extra}


def assistant(blocks: list[dict[str, Any]] | str, *, msg_id: str, request_id: str = "req_1",
              usage: dict[str, int] | None = None, model: str = "claude-sonnet-4-5-20250929",
              **extra: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks
    message: dict[str, Any] = {"id": msg_id, "role": "assistant", "model": model,
                               "content": content}
    if usage is not None:
        message["usage"] = usage
    return {"type": "assistant", "uuid": _uuid(), "isSidechain": False, "requestId": request_id,
            "message": message, **extra}


def usage(input_tokens: int = 0, cache_creation: int = 0, cache_read: int = 0,
          output: int = 0) -> dict[str, int]:
    return {"input_tokens": input_tokens, "cache_creation_input_tokens": cache_creation,
            "cache_read_input_tokens": cache_read, "output_tokens": output}


def tool_use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def tool_result(tool_id: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": _uuid(), "isSidechain": False,
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool_id, "content": content}]},
            **extra}


def compact_boundary(pre_tokens: int = 150_000) -> dict[str, Any]:
    return {"type": "system", "subtype": "compact_boundary", "uuid": _uuid(),
            "parentUuid": None, "isSidechain": False, "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens}}


def compact_summary(text: str) -> dict[str, Any]:
    return {"type": "user", "uuid": _uuid(), "isSidechain": False, "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True, "message": {"role": "user", "content": text}}


def microcompact_boundary(saved: int) -> dict[str, Any]:
    return {"type": "system", "subtype": "microcompact_boundary", "uuid": _uuid(),
            "isSidechain": False, "content": "Context microcompacted",
            "microcompactMetadata": {"trigger": "auto", "preTokens": 50_000,
                                     "tokensSaved": saved, "compactedToolIds": []}}


CODE = "".join(f"    {i:>4}\u2192    value_{i} = compute(items[{i}], key='k{i}')\n"
               for i in range(1, 200))
PROSE = ("The quick brown fox jumps over the lazy dog while the committee reviews the "
         "proposal and everyone waits patiently for a decision about the new library. ") * 20


def session() -> list[dict[str, Any]]:
    """A small tool-loop session: prompt, streamed response (two lines, one message.id), a Read
    result, a second call, a Bash result after it."""
    return [
        user("Please look at app.py and run the tests."),
        assistant([{"type": "thinking", "thinking": "I should read the file.", "signature": "s"}],
                  msg_id="msg_1", usage=usage(3, 20_000, 0, 5)),
        assistant([tool_use("toolu_1", "Read", file_path="/repo/app.py")], msg_id="msg_1",
                  usage=usage(3, 20_000, 0, 60)),
        tool_result("toolu_1", CODE, toolUseResult={"file": {"content": CODE * 2}}),
        assistant([tool_use("toolu_2", "Bash", command="pytest -q")], msg_id="msg_2",
                  request_id="req_2", usage=usage(2, 3_000, 20_003, 40)),
        tool_result("toolu_2", "3 passed in 0.12s\n" * 40),
    ]
