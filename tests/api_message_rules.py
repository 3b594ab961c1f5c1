"""Structural rules the Anthropic Messages and OpenAI chat APIs enforce on a message list, as
checks that return the problems found (an empty list: the list could be sent as is).

Used by the filter-compacted / convert tests; written from the APIs' documented request rules,
independently of ctxtool.core.messages.convert.
"""

from __future__ import annotations

from typing import Any

import orjson

ANTHROPIC_BLOCK_KEYS = {
    "text": {"type", "text"},
    "image": {"type", "source"},
    "document": {"type", "source", "title", "context"},
    "tool_use": {"type", "id", "name", "input"},
    "tool_result": {"type", "tool_use_id", "content", "is_error"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def anthropic_problems(messages: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    previous_uses: list[str] = []
    for n, message in enumerate(messages):
        where = f"message {n}"
        if set(message) != {"role", "content"}:
            problems.append(f"{where}: keys {sorted(message)}")
        role = message.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"{where}: role {role!r}")
        expected = "user" if n % 2 == 0 else "assistant"
        if role != expected:
            problems.append(f"{where}: {role} where {expected} was due (roles must alternate, "
                            "user first)")
        blocks = _blocks(message)
        if not blocks:
            problems.append(f"{where}: empty content")
        problems += [f"{where}: {p}" for p in _block_problems(blocks, role)]
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        leading = [b.get("tool_use_id") for b in blocks[:len(results)]
                   if b.get("type") == "tool_result"]
        if role == "user":
            if sorted(map(str, results)) != sorted(previous_uses) or leading != results:
                problems.append(f"{where}: tool results {results} do not answer exactly the "
                                f"tool uses {previous_uses} first")
            previous_uses = []
        else:
            previous_uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    if previous_uses:
        problems.append(f"tool uses {previous_uses} have no result")
    if messages and messages[-1].get("role") == "assistant":
        last = _blocks(messages[-1])[-1]
        if last.get("type") == "text" and last["text"] != last["text"].rstrip():
            problems.append("final assistant message ends with whitespace")
    return problems


def _block_problems(blocks: list[dict[str, Any]], role: str | None) -> list[str]:
    problems = []
    for block in blocks:
        kind = block.get("type")
        allowed = ANTHROPIC_BLOCK_KEYS.get(str(kind))
        if allowed is None or not set(block) <= allowed:
            problems.append(f"block {kind} with keys {sorted(block)}")
        elif kind == "text" and not str(block.get("text", "")).strip():
            problems.append("empty text block")
        elif kind == "tool_use" and not isinstance(block.get("input"), dict):
            problems.append("tool_use input is not an object")
        elif kind in ("tool_use", "thinking", "redacted_thinking") and role != "assistant":
            problems.append(f"{kind} in a {role} message")
        elif kind in ("tool_result", "image", "document") and role != "user":
            problems.append(f"{kind} in a {role} message")
        elif kind == "tool_result" and isinstance(block.get("content"), list):
            problems += _block_problems(block["content"], "user")
    return problems


def openai_problems(messages: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    pending: set[str] = set()
    for n, message in enumerate(messages):
        where = f"message {n}"
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                problems.append(f"{where}: tool message for {message.get('tool_call_id')} "
                                "answers no pending call")
            pending.discard(message.get("tool_call_id"))  # type: ignore[arg-type]
            if not isinstance(message.get("content"), str):
                problems.append(f"{where}: tool content is not text")
            continue
        if pending:
            problems.append(f"{where}: {role} message before the results of {sorted(pending)}")
            pending = set()
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if message.get("content") is None and not calls:
                problems.append(f"{where}: assistant message with neither content nor calls")
            for call in calls:
                orjson.loads(call["function"]["arguments"])  # must be a JSON string
                if call.get("type") != "function" or not call.get("id"):
                    problems.append(f"{where}: bad tool call {call}")
                pending.add(call["id"])
        elif role in ("user", "system"):
            if not message.get("content"):
                problems.append(f"{where}: empty {role} content")
        else:
            problems.append(f"{where}: role {role!r}")
    if pending:
        problems.append(f"tool calls {sorted(pending)} have no result")
    return problems
