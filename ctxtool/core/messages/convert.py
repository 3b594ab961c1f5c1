"""A transcript (or a view of one) as plain API message lists: Anthropic Messages or OpenAI chat.

``to_anthropic(entries, fmt)`` and ``to_openai(entries, fmt)`` turn Claude Code, Anthropic,
OpenAI or OpenCode entries into messages that can be sent to that API as they are. Both stream;
each stage holds at most one API response (the lines of one streamed assistant message and the
tool results between them) or one message.

What happens on the way, in order (every lossy step is listed, and counted in ConvertReport):

1. Only messages the model receives are kept: Claude Code ``user``/``assistant`` entries with a
   ``message``; everything else (system lines, compact boundaries, progress, attachments,
   file-history snapshots, titles) is dropped, and so are the UI-only API error notices
   (``isApiErrorMessage``). Bad input lines are skipped. OpenCode messages are seen the way
   OpenCode sends them (:func:`ctxtool.formats.opencode.view.iter_api_messages`). Selecting the
   thread (side chains) and the cut at a compaction is the caller's job (see
   :mod:`ctxtool.core.messages.filter_compacted`).
2. Assistant lines of one streamed response (same ``message.id``, possibly with tool results
   written between them) become one message, as Claude Code does before each API call.
3. Blocks are rebuilt with only the keys the API accepts (``caller``, ``cache_control``... go).
   Empty or whitespace-only text blocks are dropped (the API rejects them).
   Thinking: ``thinking="drop"`` (default) drops ``thinking``/``redacted_thinking`` blocks — their
   signatures only verify within the original request chain, and transcripts often carry redacted
   ones; ``thinking="keep"`` keeps those that still have a signature (Anthropic only; OpenAI chat
   has no place for them). Block types the target does not know (``server_tool_use``, web search
   results, ``tool_reference``...) are dropped; ``document`` blocks are dropped for OpenAI.
4. Consecutive messages of the same role are merged into one (the API wants alternating turns);
   in a user message, tool results are moved before any text, in the order of the tool calls.
5. Tool pairs are made whole: every tool_use gets its tool_result in the next user message; a
   tool_use without one gets ``{"is_error": true, "content": "[Tool execution was interrupted]"}``
   (as OpenCode does). A tool_result with no tool_use right before it (a view that starts mid-way,
   a duplicate) becomes a text block ``[tool result for ID]`` + its text.
6. Anthropic only: a list that would start with an assistant message gets a first user message
   ``[Earlier conversation not included]``; a final assistant message loses trailing whitespace
   (the API rejects it there). System messages from OpenAI input become user text ``[system] ...``.
7. OpenAI only: tool results become ``role: "tool"`` messages (text only: images in them become
   ``[image]``; ``is_error`` has no equivalent and is dropped — the text is kept); several text
   blocks of one assistant message are joined with a blank line; images in user messages become
   ``image_url`` parts (base64 as a ``data:`` URL).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxtool.core.messages.blocks import Block, api_message, content_blocks, role_of, tool_result_text
from ctxtool.formats.capabilities.converting import ConvertingAdapter
from ctxtool.formats.content import INTERRUPTED, as_blocks
from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.registry import adapter_for
from ctxtool.types import Entry

Thinking = Literal["drop", "keep"]
Message = dict[str, Any]  # {"role": ..., "content": [Anthropic-shaped blocks]}

# INTERRUPTED: "[Tool execution was interrupted]", as OpenCode sends for a result that is missing
NOT_INCLUDED = "[Earlier conversation not included]"
# The two API message shapes this module writes (their adapters, as convert targets, say which
# blocks they keep and where a system message goes): names of API shapes, not of agents.
ANTHROPIC_MESSAGES = "anthropic"
OPENAI_CHAT = "openai"


@dataclass
class ConvertReport:
    """What a conversion did; filled in while the output is consumed."""

    messages_out: int = 0
    streamed_lines_merged: int = 0  # assistant lines folded into an earlier line of their response
    same_role_merged: int = 0  # messages merged into the one before them
    interrupted_results: int = 0  # synthetic error results for tool_use blocks without a result
    orphan_results: int = 0  # tool_result blocks turned into text
    images_as_text: int = 0  # images in OpenAI tool results, replaced by "[image]"
    dropped_blocks: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"messages_out": self.messages_out,
                "streamed_lines_merged": self.streamed_lines_merged,
                "same_role_merged": self.same_role_merged,
                "interrupted_results": self.interrupted_results,
                "orphan_results": self.orphan_results, "images_as_text": self.images_as_text,
                "dropped_blocks": dict(sorted(self.dropped_blocks.items()))}


# --- 1-2: the messages the model receives ---------------------------------------------------------

def is_model_message(entry: dict[str, Any], fmt: str) -> bool:
    """True for an entry that is sent to the model as a message (see step 1 above)."""
    if getattr(entry, "invalid", False) or api_message(entry, fmt) is None:
        return False
    return not adapter_for(fmt).is_api_error(entry)


def _response_id(entry: dict[str, Any]) -> str | None:
    if entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    mid = message.get("id") if isinstance(message, dict) else None
    return mid if isinstance(mid, str) and mid else None


def _waits_in_response(entry: dict[str, Any]) -> bool:
    """What Claude Code lets sit between two lines of one response: tool results, non-messages."""
    if entry.get("type") != "user" or not isinstance(entry.get("message"), dict):
        return entry.get("type") != "assistant"
    blocks = as_blocks(entry["message"].get("content"))
    return bool(blocks) and all(b.get("type") == "tool_result" for b in blocks)


def merge_streamed(entries: Iterable[dict[str, Any]], *,
                   report: ConvertReport | None = None) -> Iterator[dict[str, Any]]:
    """Claude Code entries with the assistant lines of each streamed response merged into one.

    The merged entry is the first line with all the lines' blocks, the largest usage snapshot and
    the last stop_reason (the other lines' uuids disappear); a response of one line is left
    untouched. Buffers one response: its blocks, not its lines.
    """
    response: _Response | None = None
    held: list[dict[str, Any]] = []
    for entry in entries:
        if response is not None:
            if _response_id(entry) == response.id:
                response.add(entry["message"])
                continue
            if _waits_in_response(entry):
                held.append(entry)
                continue
            yield from _flush_response(response, held, report)
            response, held = None, []
        if _response_id(entry) is not None:
            response = _Response(entry)
        else:
            yield entry
    if response is not None:
        yield from _flush_response(response, held, report)


def _flush_response(response: _Response, held: list[dict[str, Any]],
                    report: ConvertReport | None) -> Iterator[dict[str, Any]]:
    if report is not None:
        report.streamed_lines_merged += response.lines - 1
    yield response.merged()
    yield from held


class _Response:
    """The lines of one streamed response, merged as they come: the blocks not seen before (in
    linear time: a response may be streamed as thousands of lines), the largest usage snapshot
    (the first of equal ones), the last stop_reason."""

    def __init__(self, first: dict[str, Any]) -> None:
        self.first = first
        self.id = _response_id(first)
        self.lines = 1
        self.blocks: list[Block] = []
        self.seen: dict[int, int] = {}  # hash of a frozen block -> index of the first block
        self.clashes: dict[int, list[int]] = {}  # more blocks of a hash, unequal to the first
        self.usage: dict[str, Any] | None = None
        self.stop: Any = None

    def add(self, message: dict[str, Any]) -> None:
        if self.lines == 1:  # a second line: only now is the first one's content looked at
            self._take(self.first["message"])
        self.lines += 1
        self._take(message)

    def _take(self, message: dict[str, Any]) -> None:
        for block in as_blocks(message.get("content")):
            if self._is_new(block):  # a line repeating an earlier block adds nothing
                self.blocks.append(block)
        usage = message.get("usage")
        if isinstance(usage, dict) and (self.usage is None
                                        or _output_tokens(usage) > _output_tokens(self.usage)):
            self.usage = usage
        if message.get("stop_reason"):
            self.stop = message["stop_reason"]

    def _is_new(self, block: Block) -> bool:
        """Is ``block`` equal (``==``) to none taken so far? Equal blocks freeze to equal
        values, so they share a hash."""
        key, at = hash(_frozen(block)), len(self.blocks)
        first = self.seen.setdefault(key, at)
        if first == at:
            return True
        if self.blocks[first] == block:
            return False
        others = self.clashes.setdefault(key, [])
        if any(self.blocks[index] == block for index in others):
            return False
        others.append(at)
        return True

    def merged(self) -> dict[str, Any]:
        if self.lines == 1:
            return self.first
        message = {**self.first["message"], "content": self.blocks}
        if self.usage is not None:
            message["usage"] = self.usage
        if self.stop:
            message["stop_reason"] = self.stop
        return {**self.first, "message": message}


def _frozen(value: Any) -> Hashable:
    """``value`` (JSON) as a hashable that equals another's exactly when the values are equal
    (``==``: ``1``, ``1.0`` and ``true`` alike, as the list search this replaces saw them)."""
    if isinstance(value, dict):
        return frozenset((key, _frozen(item)) for key, item in value.items())
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value  # type: ignore[no-any-return]


def _output_tokens(usage: dict[str, Any]) -> float:
    value = usage.get("output_tokens")
    return value if isinstance(value, (int, float)) else 0  # another type counts as none


def iter_api_messages(entries: Iterable[dict[str, Any]], fmt: str, *,
                      report: ConvertReport | None = None) -> Iterator[Message]:
    """``{"role": "user"|"assistant"|"system", "content": [blocks]}`` for each model message,
    streamed responses merged (steps 1-2). Blocks are the entries' own objects: do not mutate.
    OpenCode messages are split into steps as OpenCode does (:mod:`ctxtool.formats.opencode.view`)."""
    adapter = adapter_for(fmt)
    if adapter.converts_through_messages:
        yield from adapter.iter_api_messages(entries)
        return
    messages: Iterable[dict[str, Any]] = (e for e in entries if is_model_message(e, fmt))
    if adapter.streams_over_lines:
        messages = merge_streamed(messages, report=report)
    for entry in messages:
        role = role_of(entry, fmt)
        if role in ("system", "developer"):
            role = "system"
        elif role == "tool":
            role = "user"
        if role in ("user", "assistant", "system"):
            yield located({"role": role, "content": content_blocks(entry, fmt)}, entry)


def located(message: dict[str, Any], origin: dict[str, Any]) -> dict[str, Any]:
    """``message`` remembering the FILE:LINE of the entry it was made from (an Entry without raw
    bytes: writers serialize it like any dict), so an error about it - input nested too deeply
    to write back - names that line."""
    if isinstance(origin, Entry) and origin.lineno:
        return Entry(message, None, origin.source, origin.lineno)
    return message


# --- 3: clean blocks ------------------------------------------------------------------------------

def _clean_block(block: Block, target: ConvertingAdapter, thinking: Thinking,
                 report: ConvertReport) -> Block | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None
    if kind == "tool_use" and isinstance(block.get("id"), str):
        value = block.get("input")
        return {"type": "tool_use", "id": block["id"], "name": str(block.get("name") or ""),
                "input": value if isinstance(value, dict) else {"input": value}}
    if kind == "tool_result":
        result: Block = {"type": "tool_result", "tool_use_id": block.get("tool_use_id"),
                         "content": _clean_result_content(block.get("content"), report)}
        return {**result, "is_error": True} if block.get("is_error") else result
    if kind == "image":
        source = _image_source(block.get("source"))
        if source is not None:
            return {"type": "image", "source": source}
    elif kind == "document" and kind in target.blocks_kept and isinstance(block.get("source"), dict):
        return {k: block[k] for k in ("type", "source", "title", "context") if k in block}
    elif kind in ("thinking", "redacted_thinking") and kind in target.blocks_kept \
            and thinking == "keep":
        key = "signature" if kind == "thinking" else "data"
        if block.get(key):
            return {k: block[k] for k in ("type", "thinking", "signature", "data") if k in block}
    report.dropped_blocks[str(kind)] += 1
    return None


def _clean_result_content(content: Any, report: ConvertReport) -> str | list[Block]:
    if content is None:
        return ""
    if not isinstance(content, list):
        return content if isinstance(content, str) else tool_result_text(content)
    cleaned: list[Block] = []
    for inner in content:
        kind = inner.get("type") if isinstance(inner, dict) else "text"
        if kind == "text":
            text = inner.get("text") if isinstance(inner, dict) else str(inner)
            if isinstance(text, str) and text.strip():
                cleaned.append({"type": "text", "text": text})
        elif kind == "image" and _image_source(inner.get("source")) is not None:
            cleaned.append({"type": "image", "source": _image_source(inner["source"])})
        else:
            report.dropped_blocks[f"tool_result.{kind}"] += 1
    return cleaned


def _image_source(source: Any) -> dict[str, Any] | None:
    """An Anthropic image source; OpenAI ``image_url`` objects (``data:`` URLs too) are mapped."""
    if not isinstance(source, dict):
        return None
    if source.get("type") in ("base64", "url", "file"):
        return source
    url = source.get("url")
    if not isinstance(url, str):
        return None
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}


def _cleaned(messages: Iterable[Message], target: ConvertingAdapter, thinking: Thinking,
             report: ConvertReport) -> Iterator[Message]:
    for message in messages:
        blocks = [c for b in message["content"]
                  if (c := _clean_block(b, target, thinking, report)) is not None]
        role = message["role"]
        if role == "system" and not target.system_in_messages:
            role = "user"
            blocks = [{"type": "text", "text": "[system] " + b["text"]}
                      if b["type"] == "text" else b for b in blocks]
        if blocks:
            yield located({"role": role, "content": blocks}, message)


# --- 4-5: alternate roles, make tool pairs whole --------------------------------------------------

def _merge_roles(messages: Iterable[Message], report: ConvertReport) -> Iterator[Message]:
    """Consecutive messages of one role as one (step 4). A run's blocks are gathered in one
    list, copied once: a run of n messages costs n, not n squared (a million user lines in a
    row)."""
    held: Message | None = None
    merged: list[Block] | None = None  # held's blocks, once another message joined them
    for message in messages:
        if held is not None and held["role"] == message["role"]:
            if merged is None:
                merged = list(held["content"])
                held = located({"role": held["role"], "content": merged}, held)
            merged.extend(message["content"])
            report.same_role_merged += 1
            continue
        if held is not None:
            yield held
        held, merged = message, None
    if held is not None:
        yield held


def _pair_tools(messages: Iterable[Message], report: ConvertReport) -> Iterator[Message]:
    """Every tool_use answered in the next user message; stray results become text."""
    pending: list[str] = []  # tool_use ids of the assistant message just yielded
    for message in messages:
        if message["role"] == "user":
            yield _answered(message, pending, report)
            pending = []
            continue
        if pending:
            yield _answered({"role": "user", "content": []}, pending, report)
        pending = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        yield message
    if pending:
        yield _answered({"role": "user", "content": []}, pending, report)


def _answered(message: Message, pending: list[str], report: ConvertReport) -> Message:
    results: dict[str, Block] = {}
    rest: list[Block] = []
    wanted = set(pending)  # a set: a merged run may answer thousands of calls
    for block in message["content"]:
        tool_id = block.get("tool_use_id")  # any JSON value: only a string answers a call
        if block["type"] != "tool_result":
            rest.append(block)
        elif isinstance(tool_id, str) and tool_id in wanted and tool_id not in results:
            results[tool_id] = block
        else:
            report.orphan_results += 1
            text = tool_result_text(block["content"])
            rest.append({"type": "text", "text": f"[tool result for {block['tool_use_id']}]"
                                                 + (f"\n{text}" if text else "")})
    answers: list[Block] = []
    for tool_id in pending:
        if tool_id not in results:
            report.interrupted_results += 1
            results[tool_id] = {"type": "tool_result", "tool_use_id": tool_id,
                                "content": INTERRUPTED, "is_error": True}
        answers.append(results[tool_id])
    return located({"role": "user", "content": answers + rest}, message)


def _normalized(entries: Iterable[dict[str, Any]], fmt: str, target: str, thinking: Thinking,
                report: ConvertReport) -> Iterator[Message]:
    messages = iter_api_messages(entries, fmt, report=report)
    return _pair_tools(_merge_roles(_cleaned(messages, adapter_for(target), thinking, report),
                                    report), report)


# --- 6: Anthropic ---------------------------------------------------------------------------------

def to_anthropic(entries: Iterable[dict[str, Any]], fmt: str, *, thinking: Thinking = "drop",
                 report: ConvertReport | None = None) -> Iterator[dict[str, Any]]:
    """Anthropic Messages API messages (``{"role", "content"}``) for a transcript; streams,
    holding one message back (to trim a final assistant message)."""
    report = report if report is not None else ConvertReport()
    held: Message | None = None
    for message in _normalized(entries, fmt, ANTHROPIC_MESSAGES, thinking, report):
        if held is None and message["role"] == "assistant":
            held = {"role": "user", "content": [{"type": "text", "text": NOT_INCLUDED}]}
        if held is not None:
            report.messages_out += 1
            yield _anthropic_message(held)
        held = message
    if held is not None:
        if held["role"] == "assistant":
            held = _trimmed_end(held)
        if held["content"]:
            report.messages_out += 1
            yield _anthropic_message(held)


def _anthropic_message(message: Message) -> dict[str, Any]:
    blocks = message["content"]
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return located({"role": message["role"], "content": blocks[0]["text"]}, message)
    return located({"role": message["role"], "content": blocks}, message)


def _trimmed_end(message: Message) -> Message:
    blocks = list(message["content"])
    while blocks and blocks[-1]["type"] == "text":
        text = blocks[-1]["text"].rstrip()
        if text:
            blocks[-1] = {"type": "text", "text": text}
            break
        blocks.pop()
    return located({"role": message["role"], "content": blocks}, message)


# --- 7: OpenAI ------------------------------------------------------------------------------------

def to_openai(entries: Iterable[dict[str, Any]], fmt: str, *,
              report: ConvertReport | None = None) -> Iterator[dict[str, Any]]:
    """OpenAI chat completion messages for a transcript (streams, one message held)."""
    report = report if report is not None else ConvertReport()
    for message in _normalized(entries, fmt, OPENAI_CHAT, "drop", report):
        for out in _openai_messages(message, report):
            report.messages_out += 1
            yield located(out, message)


def _openai_messages(message: Message, report: ConvertReport) -> Iterator[dict[str, Any]]:
    blocks = message["content"]
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    if message["role"] == "system":
        yield {"role": "system", "content": "\n\n".join(texts)}
        return
    if message["role"] == "assistant":
        calls = [{"id": b["id"], "type": "function",
                  "function": {"name": b["name"], "arguments": dumps_json(b["input"]).decode()}}
                 for b in blocks if b["type"] == "tool_use"]
        out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        if calls:
            out["tool_calls"] = calls
        if texts or calls:
            yield out
        return
    for block in blocks:
        if block["type"] == "tool_result":
            yield {"role": "tool", "tool_call_id": block["tool_use_id"],
                   "content": _openai_result_text(block["content"], report)}
    parts = [p for b in blocks if (p := _openai_part(b, report)) is not None]
    if len(parts) == 1 and parts[0]["type"] == "text":
        yield {"role": "user", "content": parts[0]["text"]}
    elif parts:
        yield {"role": "user", "content": parts}


def _openai_result_text(content: str | list[Block], report: ConvertReport) -> str:
    if isinstance(content, str):
        return content
    report.images_as_text += sum(1 for b in content if b["type"] == "image")
    return "\n".join(b["text"] if b["type"] == "text" else "[image]" for b in content)


def _openai_part(block: Block, report: ConvertReport) -> dict[str, Any] | None:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    if block["type"] == "image":
        source = block["source"]
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        elif source.get("type") == "url":
            url = str(source.get("url"))
        else:  # a Files API reference: no OpenAI equivalent
            report.dropped_blocks["image"] += 1
            return None
        return {"type": "image_url", "image_url": {"url": url}}
    return None


def to_messages(entries: Iterable[dict[str, Any]], fmt: str, *, target: str,
                thinking: Thinking = "drop",
                report: ConvertReport | None = None) -> Iterator[dict[str, Any]]:
    """The messages of ``target`` (``anthropic``: :func:`to_anthropic`, ``openai``:
    :func:`to_openai`, which keeps no thinking) for a transcript."""
    return _TARGETS[target](entries, fmt, thinking, report)


_TARGETS: dict[str, Callable[..., Iterator[dict[str, Any]]]] = {
    ANTHROPIC_MESSAGES: lambda entries, fmt, thinking, report: to_anthropic(
        entries, fmt, thinking=thinking, report=report),
    OPENAI_CHAT: lambda entries, fmt, thinking, report: to_openai(entries, fmt, report=report),
}


__all__ = ["INTERRUPTED", "NOT_INCLUDED", "ConvertReport", "Message", "is_model_message",
           "iter_api_messages", "merge_streamed", "to_anthropic", "to_messages", "to_openai"]
