"""Gemini's content parts seen as Anthropic-shaped blocks (a view, never written back).

A Gemini ``Part`` holds one of ``text`` (``thought: true`` for the model's reasoning),
``functionCall {id, name, args}``, ``functionResponse {id, name, response}``, ``inlineData
{mimeType, data}``, ``fileData {mimeType, fileUri}``, ``executableCode``,
``codeExecutionResult``. A record's ``content`` is a list of parts, or a string (model turns), or
one part.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxtool.formats.content import Block
from ctxtool.formats.json_text import dumps_json


def part_list(content: Any) -> list[Any]:
    """``content`` as a list of parts, as Gemini's ``ensurePartArray`` makes it (a string is
    one text part; a list's strings are text parts)."""
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    if isinstance(content, str):
        return [{"text": content}]
    return [] if content is None else [content]


def content_text(content: Any) -> str:
    """The text of a content (its text parts joined, as Gemini's ``partListUnionToString``
    reads text; other parts give nothing here)."""
    return "".join(str(p.get("text")) for p in part_list(content)
                   if isinstance(p, dict) and isinstance(p.get("text"), str))


_MARKERS = (("videoMetadata", "[Video Metadata]"), ("thought", None),
            ("codeExecutionResult", "[Code Execution Result]"),
            ("executableCode", "[Executable Code]"), ("fileData", "[File Data]"),
            ("functionCall", None), ("functionResponse", None), ("inlineData", None))


def _marker(part: Mapping[str, Any]) -> str | None:
    """What Gemini's verbose ``partToString`` writes for a part that is not plain text (a key
    present with any value, null too, makes the marker, as JavaScript's ``!== undefined`` does)."""
    for key, fixed in _MARKERS:
        if key not in part:
            continue
        value = part[key]
        if fixed is not None:
            return fixed
        if key == "thought":
            shown = ("true" if value is True else "false" if value is False
                     else "null" if value is None else value)
            return f"[Thought: {shown}]"
        if key in ("functionCall", "functionResponse"):
            name = value.get("name") if isinstance(value, Mapping) else None
            label = "Function Call" if key == "functionCall" else "Function Response"
            return f"[{label}: {name if name is not None else 'undefined'}]"
        mime = str(value.get("mimeType") or "unknown") if isinstance(value, Mapping) else "unknown"
        kind = next((label for prefix, label in (("audio/", "Audio"), ("video/", "Video"),
                                                 ("image/", "Image")) if mime.startswith(prefix)),
                    "Media")
        data = str(value.get("data") or "") if isinstance(value, Mapping) else ""
        return f"[{kind}: {mime}, {-(-len(data) * 3 // 4) / 1024:.1f} KB]"
    return None


def verbose_text(content: Any) -> str:
    """A content as Gemini's ``partListUnionToString`` writes it (text parts as their text,
    other parts as markers such as ``[Function Response: read_file]``): what it tests to tell a
    user record it does not send from one it does."""
    if not content:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(verbose_text(part) for part in content)
    if not isinstance(content, Mapping):
        return ""
    marker = _marker(content)
    if marker is not None:
        return marker
    text = content.get("text")
    return text if isinstance(text, str) else ""


def response_text(response: Any) -> str:
    """What a ``functionResponse.response`` says: its ``output`` when that is all it holds (the
    usual shape), else the response as compact JSON."""
    if isinstance(response, dict) and set(response) == {"output"} \
            and isinstance(response["output"], str):
        return response["output"]
    if isinstance(response, str):
        return response
    return dumps_json(response).decode()


def part_block(part: Any) -> Block | None:
    """One part as a block, or None for an empty one."""
    if isinstance(part, str):
        return {"type": "text", "text": part} if part else None
    if not isinstance(part, Mapping):
        return None
    if isinstance(part.get("text"), str):
        if part.get("thought") is True:
            return {"type": "thinking", "thinking": part["text"]}
        return {"type": "text", "text": part["text"]}
    call = part.get("functionCall")
    if isinstance(call, Mapping):
        return {"type": "tool_use", "id": str(call.get("id") or call.get("name") or ""),
                "name": str(call.get("name") or ""), "input": call.get("args") or {}}
    response = part.get("functionResponse")
    if isinstance(response, Mapping):
        return {"type": "tool_result",
                "tool_use_id": str(response.get("id") or response.get("name") or ""),
                "content": response_text(response.get("response"))}
    data = part.get("inlineData")
    if isinstance(data, Mapping) and str(data.get("mimeType") or "").startswith("image/"):
        return {"type": "image", "source": {"type": "base64", "media_type": data["mimeType"],
                                            "data": str(data.get("data") or "")}}
    if not part:
        return None
    return {"type": "text", "text": dumps_json(dict(part)).decode()}  # files, code: as sent


def parts_blocks(content: Any) -> list[Block]:
    return [block for block in map(part_block, part_list(content)) if block is not None]


def thought_parts(thoughts: Any) -> list[dict[str, Any]]:
    """A model record's ``thoughts`` (``{subject, description}``) as Gemini sends them back on
    resume: ``**subject** description`` thought parts."""
    parts: list[dict[str, Any]] = []
    for thought in thoughts if isinstance(thoughts, list) else ():
        if not isinstance(thought, Mapping):
            continue
        description = str(thought.get("description") or "")
        subject = thought.get("subject")
        parts.append({"text": f"**{subject}** {description}" if subject else description,
                      "thought": True})
    return parts


def call_parts(tool_calls: Any) -> list[dict[str, Any]]:
    """A model record's ``toolCalls`` as the ``functionCall`` parts Gemini sends (their
    results are not here: they are the user content that follows, :mod:`.history`)."""
    return [{"functionCall": {"id": call.get("id"), "name": call.get("name"),
                              "args": call.get("args")}}
            for call in tool_calls if isinstance(call, Mapping)] \
        if isinstance(tool_calls, list) else []


def result_parts(tool_calls: Any) -> list[Any]:
    """The parts Gemini sends for ``toolCalls[].result`` after the model turn on resume
    (``convertSessionToClientHistory``): a string result as ``{output}``, a list as its parts,
    an object as itself; calls without a result give nothing."""
    parts: list[Any] = []
    for call in tool_calls if isinstance(tool_calls, list) else ():
        result = call.get("result") if isinstance(call, Mapping) else None
        if not result:
            continue
        if isinstance(result, str):
            parts.append({"functionResponse": {"id": call.get("id"), "name": call.get("name"),
                                               "response": {"output": result}}})
        elif isinstance(result, list):
            parts.extend(part_list(result))
        else:
            parts.append(result)
    return parts


def model_parts(record: Mapping[str, Any]) -> list[Any]:
    """A ``gemini`` record's model turn as Gemini sends it: its content alone when that holds
    function calls or thoughts (a turn rewritten from history), else its thoughts, its content
    and a call per ``toolCalls`` entry."""
    content = part_list(record.get("content")) if record.get("content") else []
    if any(isinstance(p, Mapping) and (p.get("functionCall") or p.get("thought"))
           for p in content):
        return content
    return [*thought_parts(record.get("thoughts")), *content,
            *call_parts(record.get("toolCalls"))]


def model_blocks(record: Mapping[str, Any]) -> list[Block]:
    return parts_blocks(model_parts(record))


__all__ = ["call_parts", "content_text", "model_blocks", "model_parts", "part_block",
           "part_list", "parts_blocks", "response_text", "result_parts", "thought_parts",
           "verbose_text"]
