"""Codex CLI's rollout lines: which lines are Codex's, and what each one says - its Responses
item as Anthropic-shaped blocks, a ``compacted`` record's summary and history, the session and
model ``session_meta`` and ``turn_context`` name (the format: :mod:`ctxtool.formats.codex`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtool.formats.content import Block, parsed_arguments

NAME = "codex"
SCHEMA = "codex-rollout"

LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg",
                        "compacted", "world_state", "token_usage_record"})
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
INSTRUCTION_ROLES = ("developer", "system")
_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "isSidechain", "leafUuid", "messageId")


# --- detection ------------------------------------------------------------------------------------

def claims(entry: Mapping[str, Any]) -> bool:
    """True for a rollout line: a ``type`` and an object ``payload``, no Claude Code keys.

    Known line types are sure; an unknown type with a payload next to a ``timestamp`` is a line
    a newer Codex added (no other format has ``payload``)."""
    kind = entry.get("type")
    if not isinstance(kind, str) or not isinstance(entry.get("payload"), dict):
        return False
    if any(key in entry for key in _CLAUDE_KEYS):
        return False
    return kind in LINE_TYPES or "timestamp" in entry


# --- items ----------------------------------------------------------------------------------------

def item_of(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The Responses API item of a ``response_item`` line, or None."""
    if entry.get("type") != "response_item":
        return None
    payload = entry.get("payload")
    return payload if isinstance(payload, dict) else None


def parts_text(content: Any) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_image", "image"):
            blocks.append({"type": "image", "source": {"type": "url",
                                                      "url": str(part.get("image_url", ""))}})
        elif "text" in part:
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
    return blocks


def item_role_and_blocks(item: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
    """One Responses item as (role, Anthropic-shaped blocks): a message keeps its role, a tool
    call is an assistant ``tool_use``, its output a user ``tool_result``, reasoning ``thinking``.
    Other items (web searches, ghost snapshots...) are (None, [])."""
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        return (role if isinstance(role, str) else None), parts_text(item.get("content"))
    if kind in CALL_TYPES:
        arguments = item.get("arguments") if "arguments" in item else item.get("input")
        if kind == "local_shell_call":
            arguments = item.get("action")
        return "assistant", [{"type": "tool_use", "id": call_id_of(item),
                              "name": str(item.get("name") or kind), "input": parsed_arguments(arguments)}]
    if kind in OUTPUT_TYPES:
        return "user", [{"type": "tool_result", "tool_use_id": call_id_of(item),
                         "content": output_content(item.get("output"))}]
    if kind == "reasoning":
        texts = [str(p.get("text", "")) for p in item.get("summary") or [] if isinstance(p, dict)]
        texts += [str(p.get("text", "")) for p in item.get("content") or [] if isinstance(p, dict)]
        return "assistant", [{"type": "thinking", "thinking": "\n".join(texts)}]
    return None, []


def role_and_blocks(entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
    """A rollout line as (role, blocks): its response item, or a ``compacted`` record's summary
    as a user message (the model reads it as one); (None, []) for every other line."""
    item = item_of(entry)
    if item is not None:
        return item_role_and_blocks(item)
    if entry.get("type") == "compacted":
        history = replacement_history(entry)
        if history is None:  # the summary alone
            message = summary_of(entry)
            return "user", ([{"type": "text", "text": message}] if message else [])
        # what the record puts in front of what follows: every item it keeps, summary last
        return "user", [b for item in history for b in item_role_and_blocks(item)[1]]
    return None, []


def call_id_of(item: Mapping[str, Any]) -> str:
    return str(item.get("call_id") or item.get("id") or "")


def output_content(output: Any) -> Any:
    """A tool output as tool_result content: a string stays, content items become blocks, the
    older ``{"content": ..., "success": ...}`` object its content."""
    if isinstance(output, dict):
        output = output.get("content", "")
    if isinstance(output, list):
        return parts_text(output)
    return output if isinstance(output, str) else ("" if output is None else str(output))


def tool_output(entry: Mapping[str, Any]) -> tuple[str, Any] | None:
    """(call_id, output as recorded) of a ``function_call_output``/``custom_tool_call_output``
    line, or None."""
    item = item_of(entry)
    if item is None or item.get("type") not in OUTPUT_TYPES:
        return None
    return call_id_of(item), item.get("output")


def with_tool_output(entry: Mapping[str, Any], content: Any) -> dict[str, Any]:
    """A new line whose tool output is ``content`` (copy-on-write: ``entry`` is left as is).

    Codex takes a string output; a block list is written as its text, joined."""
    item = item_of(entry)
    assert item is not None and item.get("type") in OUTPUT_TYPES
    if not isinstance(content, str):
        content = "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b)
                            for b in content or [])
    new = dict(entry)
    new["payload"] = {**item, "output": content}
    return new


def is_instruction(entry: Mapping[str, Any]) -> bool:
    """A developer/system message: standing instructions Codex keeps in front."""
    item = item_of(entry)
    return item is not None and item.get("type") == "message" and item.get("role") in INSTRUCTION_ROLES


# --- what session_meta and turn_context name ------------------------------------------------------

def model_of(entry: Mapping[str, Any]) -> str | None:
    """The model a ``turn_context`` line names."""
    if entry.get("type") != "turn_context":
        return None
    payload = entry.get("payload")
    model = payload.get("model") if isinstance(payload, dict) else None
    return model if isinstance(model, str) else None


def session_id_of(entry: Mapping[str, Any]) -> str | None:
    if entry.get("type") != "session_meta":
        return None
    payload = entry.get("payload")
    sid = payload.get("id") if isinstance(payload, dict) else None
    return sid if isinstance(sid, str) and sid else None


def base_instructions(entry: Mapping[str, Any]) -> str:
    """The instructions a ``session_meta`` line records (sent before every request's items)."""
    if entry.get("type") != "session_meta":
        return ""
    payload = entry.get("payload")
    base = payload.get("base_instructions") if isinstance(payload, dict) else None
    text = base.get("text") if isinstance(base, dict) else base
    return text if isinstance(text, str) else ""


# --- compactions ----------------------------------------------------------------------------------

def is_compacted(entry: Mapping[str, Any]) -> bool:
    return entry.get("type") == "compacted" and isinstance(entry.get("payload"), dict)


def summary_of(entry: Mapping[str, Any]) -> str:
    payload = entry.get("payload")
    message = payload.get("message") if isinstance(payload, dict) else None
    return message if isinstance(message, str) else ""


def replacement_history(entry: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    payload = entry.get("payload")
    history = payload.get("replacement_history") if isinstance(payload, dict) else None
    return [i for i in history if isinstance(i, dict)] if isinstance(history, list) else None
