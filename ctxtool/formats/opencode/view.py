"""OpenCode messages seen as Anthropic-shaped blocks, the way OpenCode shows them to the model.

Mirrors ``MessageV2.toModelMessages`` (``packages/opencode/src/session/message-v2.ts``): ignored
text and text/plain or directory file parts are left out (their content already sits in a text
part), a compaction part reads "What did we do so far?", a tool part becomes a ``tool_use`` and
its ``tool_result`` (a part marked ``state.time.compacted`` shows
``[Old tool result content cleared]``, a pending or running one the error
``[Tool execution was interrupted]``), reasoning becomes ``thinking``, and an assistant message
that ended in an error (other than an abort that left content) is not shown at all.

:mod:`ctxtool.core.messages.blocks` uses this for ``fmt == "opencode"``; nothing here imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ctxtool.formats.content import INTERRUPTED

Block = dict[str, Any]
SESSION_KEY = "session"
CLEARED = "[Old tool result content cleared]"
COMPACTION_QUESTION = "What did we do so far?"
SUBTASK_TEXT = "The following tool was executed by the user"
_TEXT_FILES = ("text/plain", "application/x-directory")


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (records from disk are untrusted)."""
    return value if isinstance(value, dict) else {}


def array(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one (records from disk are untrusted)."""
    return value if isinstance(value, list) else []


def string(value: Any) -> str | None:
    """``value`` when it is a JSON string, else None: an id of another type names nothing (and
    a list or object could not be looked up in a set of ids)."""
    return value if isinstance(value, str) else None


def is_message(entry: Mapping[str, Any]) -> bool:
    """True for a ``{"info": {...}, "parts": [...]}`` message line."""
    return (not getattr(entry, "invalid", False) and isinstance(entry.get("info"), dict)
            and isinstance(entry.get("parts"), list))


def is_session_line(entry: Mapping[str, Any]) -> bool:
    """True for the ``{"session": {...}}`` line that carries the session record."""
    return (not getattr(entry, "invalid", False) and isinstance(entry.get(SESSION_KEY), dict)
            and "info" not in entry and "role" not in entry and "type" not in entry)


def session_id(entry: Mapping[str, Any]) -> str | None:
    """The ``info.sessionID`` of a message (where ctxtool files what it saves for it)."""
    value = obj(entry.get("info")).get("sessionID")
    return value if isinstance(value, str) else None


def parts_of(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for p in array(entry.get("parts")) if isinstance(p, dict)]


def message_blocks(entry: Mapping[str, Any]) -> list[Block]:
    """The blocks the model sees for one OpenCode message (a view; new dicts)."""
    if not is_message(entry):
        return []
    info = entry["info"]
    if info.get("role") == "user":
        return _user_blocks(parts_of(entry))
    if info.get("role") == "assistant":
        return _assistant_blocks(info, parts_of(entry))
    return []


def _user_blocks(parts: list[dict[str, Any]]) -> list[Block]:
    blocks: list[Block] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and not part.get("ignored"):
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "file" and part.get("mime") not in _TEXT_FILES:
            blocks.append(file_block(part))
        elif kind == "compaction":
            blocks.append({"type": "text", "text": COMPACTION_QUESTION})
        elif kind == "subtask":
            blocks.append({"type": "text", "text": SUBTASK_TEXT})
    return blocks


def _hidden_error(info: Mapping[str, Any], parts: list[dict[str, Any]]) -> bool:
    error = info.get("error")
    if not error:
        return False
    aborted = isinstance(error, dict) and error.get("name") == "MessageAbortedError"
    return not (aborted and any(p.get("type") not in ("step-start", "reasoning") for p in parts))


def _assistant_blocks(info: Mapping[str, Any], parts: list[dict[str, Any]]) -> list[Block]:
    if _hidden_error(info, parts):
        return []
    blocks: list[Block] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(part.get("text", ""))})
        elif kind == "reasoning":
            blocks.append(_thinking_block(part))
        elif kind == "tool":
            state = obj(part.get("state"))
            blocks.append({"type": "tool_use", "id": part.get("callID"), "name": part.get("tool"),
                           "input": state.get("input", {})})
            blocks.append(tool_result_block(part))
    return blocks


def _thinking_block(part: Mapping[str, Any]) -> Block:
    block: Block = {"type": "thinking", "thinking": str(part.get("text", ""))}
    signature = obj(obj(part.get("metadata")).get("anthropic")).get("signature")
    if isinstance(signature, str):
        block["signature"] = signature
    return block


def tool_result_block(part: Mapping[str, Any]) -> Block:
    """The ``tool_result`` OpenCode sends for a tool part, whatever its status."""
    state = obj(part.get("state"))
    status = state.get("status")
    content: Any = INTERRUPTED
    is_error = True
    if status == "completed":
        is_error = False
        if obj(state.get("time")).get("compacted"):
            content = CLEARED
        else:
            content = str(state.get("output", ""))
            attachments = [a for a in array(state.get("attachments")) if isinstance(a, dict)]
            if attachments:
                content = [{"type": "text", "text": content}, *map(file_block, attachments)]
    elif status == "error":
        metadata = obj(state.get("metadata"))
        if metadata.get("interrupted") is True and isinstance(metadata.get("output"), str):
            content, is_error = metadata["output"], False
        else:
            content = str(state.get("error", ""))
    return {"type": "tool_result", "tool_use_id": part.get("callID"), "content": content,
            "is_error": is_error}


def file_block(part: Mapping[str, Any]) -> Block:
    """An image (or, for other files, a document) block for a file part or attachment."""
    mime = str(part.get("mime") or "")
    url = str(part.get("url") or "")
    if url.startswith("data:") and "," in url:
        source: dict[str, Any] = {"type": "base64", "media_type": mime,
                                  "data": url.split(",", 1)[1]}
    else:
        source = {"type": "url", "url": url}
    return {"type": "image" if mime.startswith("image/") else "document", "source": source}


def iter_api_messages(entries: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Anthropic-shaped ``{"role", "content"}`` messages for OpenCode entries, split as the AI SDK
    does (``convertToModelMessages``): each step of an assistant message (parts between
    ``step-start`` parts) becomes an assistant message, followed by a user message holding the
    results of that step's tool calls. Messages with nothing to show are left out."""
    for entry in entries:
        if not is_message(entry):
            continue
        if entry["info"].get("role") == "user":
            blocks = message_blocks(entry)
            if blocks:
                yield {"role": "user", "content": blocks}
            continue
        step: list[dict[str, Any]] = []
        for part in [*parts_of(entry), {"type": "step-start"}]:
            if part.get("type") == "step-start" and step:
                yield from _step_messages(entry, step)
                step = []
            elif part.get("type") != "step-start":
                step.append(part)


def _step_messages(entry: Mapping[str, Any], parts: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    blocks = message_blocks({"info": entry["info"], "parts": parts})
    calls = [b for b in blocks if b["type"] != "tool_result"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    if calls:
        yield {"role": "assistant", "content": calls}
    if results:
        yield {"role": "user", "content": results}


# --- writing a tool result back into its part (copy-on-write) --------------------------------------

def with_tool_output(entry: dict[str, Any], call_id: str, content: Any, *,
                     text_of: Callable[[Any], str]) -> dict[str, Any]:
    """A new entry whose tool part ``call_id`` holds ``content`` as its output (or error text).

    A string becomes ``state.output`` (attachments go with the old content); a block list is
    split back into the output text and attachments. Pending and running parts have no output to
    replace and are left as they are. The input entry is not touched.
    """
    if not is_message(entry):
        return entry
    parts = list(entry["parts"])
    changed = False
    for index, part in enumerate(parts):
        if not (isinstance(part, dict) and part.get("type") == "tool" and part.get("callID") == call_id):
            continue
        state = _state_with(part.get("state"), content, text_of, entry["info"])
        if state is not None:
            parts[index] = {**part, "state": state}
            changed = True
    return {**entry, "parts": parts} if changed else entry


def _state_with(state: Any, content: Any, text_of: Callable[[Any], str],
                info: Mapping[str, Any]) -> dict[str, Any] | None:
    if not isinstance(state, dict):
        return None
    if state.get("status") == "completed":
        text, files = _split_content(content, text_of, state.get("attachments"), info)
        new = {k: v for k, v in state.items() if k != "attachments" or files}
        new["output"] = text
        if files:
            new["attachments"] = files
        return new
    return _with_text(state, text_of(content))


# --- the text of a tool part's result alone (attachments stay where they are) ----------------------

def _text_key(state: Mapping[str, Any]) -> tuple[str, ...] | None:
    """Where a part's result text lives: ``output``; for an error, ``metadata.output`` (a
    command interrupted after it printed) or ``error``; None for pending and running parts."""
    if state.get("status") == "completed":
        return ("output",)
    if state.get("status") == "error":
        metadata = obj(state.get("metadata"))
        if metadata.get("interrupted") is True and isinstance(metadata.get("output"), str):
            return ("metadata", "output")
        return ("error",)
    return None


def output_text(part: Mapping[str, Any]) -> str | None:
    """The result text of a tool part (what ``state.output`` or the error holds), or None for a
    part that has none (not a tool part, pending, running)."""
    state = obj(part.get("state")) if part.get("type") == "tool" else {}
    key = _text_key(state)
    if key is None:
        return None
    value = obj(state.get("metadata")).get("output") if len(key) == 2 else state.get(key[0])
    return value if isinstance(value, str) else str(value or "")


def _with_text(state: dict[str, Any], text: str) -> dict[str, Any] | None:
    key = _text_key(state)
    if key is None:
        return None
    if len(key) == 2:
        return {**state, "metadata": {**obj(state.get("metadata")), "output": text}}
    return {**state, key[0]: text}


def with_output_text(entry: dict[str, Any], call_id: str, text: str) -> dict[str, Any]:
    """A new entry whose tool part ``call_id`` has ``text`` as its result text; everything else
    (input, attachments, times, the compacted mark) is kept. Copy-on-write."""
    if not is_message(entry):
        return entry
    parts = list(entry["parts"])
    changed = False
    for index, part in enumerate(parts):
        if isinstance(part, dict) and part.get("type") == "tool" and part.get("callID") == call_id:
            state = _with_text(obj(part.get("state")), text)
            if state is not None:
                parts[index] = {**part, "state": state}
                changed = True
    return {**entry, "parts": parts} if changed else entry


def _split_content(content: Any, text_of: Callable[[Any], str], old: Any,
                   info: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    if not isinstance(content, list):
        return (content if isinstance(content, str) else text_of(content)), []
    texts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
    by_url = {a["url"]: a for a in array(old)
              if isinstance(a, dict) and isinstance(a.get("url"), str)}
    files = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in ("image", "document"):
            url = _block_url(block)
            files.append(by_url.get(url) or _attachment(block, url, info))
    return "\n".join(texts), files


def _block_url(block: Mapping[str, Any]) -> str:
    source = obj(block.get("source"))
    if source.get("type") == "base64":
        return f"data:{source.get('media_type', '')};base64,{source.get('data', '')}"
    return str(source.get("url") or "")


def _attachment(block: Mapping[str, Any], url: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """A FilePart for an attachment that is not in the part any more (ids derived from the url)."""
    import hashlib  # here, not at the top: it costs every command 5 ms of start-up

    source = obj(block.get("source"))
    mime = source.get("media_type") or ("image/png" if block.get("type") == "image" else "application/pdf")
    ident = "prt_" + hashlib.sha256(url.encode()).hexdigest()[:26]
    return {"id": ident, "sessionID": info.get("sessionID"), "messageID": info.get("id"),
            "type": "file", "mime": mime, "url": url}


__all__ = ["CLEARED", "COMPACTION_QUESTION", "INTERRUPTED", "SESSION_KEY", "SUBTASK_TEXT",
           "array", "file_block", "is_message", "obj", "is_session_line", "iter_api_messages",
           "message_blocks", "parts_of", "output_text", "session_id", "string",
           "tool_result_block", "with_output_text", "with_tool_output"]
