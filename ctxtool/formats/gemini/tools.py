"""Gemini CLI's tool calls under Claude Code's names, for the code that reads tool calls by name.

Gemini CLI 0.61 names its tools its own way (chunk-JDPZ4CE3.js:280378-280413: ``read_file``
with ``file_path``, ``start_line``, ``end_line``; ``write_file``; ``replace`` with
``old_string``/``new_string``; ``run_shell_command`` with ``command``; ``write_todos`` with
``todos: [{description, status}]``...). The summarizer's file, command and todo tracking reads
Claude Code's (``Read`` with ``file_path``/``offset``/``limit``, ``Bash``, ``TodoWrite`` with
``todos: [{content, status}]``), so a Gemini ``tool_use`` block is renamed before it gets there
(a view: new dicts, the session is not touched).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ctxtool.formats.content import Block

CLAUDE_CODE_NAMES = {
    "read_file": "Read", "write_file": "Write", "replace": "Edit", "run_shell_command": "Bash",
    "glob": "Glob", "grep_search": "Grep", "list_directory": "LS", "web_fetch": "WebFetch",
    "google_web_search": "WebSearch", "write_todos": "TodoWrite",
}


def _read_input(value: Mapping[str, Any]) -> dict[str, Any]:
    """``read_file``'s 1-based ``start_line``/``end_line`` as Read's ``offset``/``limit``."""
    out = {k: v for k, v in value.items() if k not in ("start_line", "end_line")}
    start, end = value.get("start_line"), value.get("end_line")
    if isinstance(start, int):
        out["offset"] = start
    if isinstance(end, int):
        out["limit"] = end - (start if isinstance(start, int) else 1) + 1
    return out


def _todos_input(value: Mapping[str, Any]) -> dict[str, Any]:
    """``write_todos``' items (``description``, ``status``) as TodoWrite's (``content``)."""
    todos = value.get("todos")
    if not isinstance(todos, list):
        return dict(value)
    return {**value, "todos": [{**t, "content": t.get("description")} if isinstance(t, Mapping)
                               and "content" not in t else t for t in todos]}


def _dir_input(value: Mapping[str, Any]) -> dict[str, Any]:
    """``dir_path`` (list_directory, grep_search, glob) as Claude Code's ``path``."""
    out = dict(value)
    if "dir_path" in out and "path" not in out:
        out["path"] = out.pop("dir_path")
    return out


_INPUTS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "read_file": _read_input, "write_todos": _todos_input, "list_directory": _dir_input,
    "grep_search": _dir_input, "glob": _dir_input,
}


def as_claude_code_tool(block: Block) -> Block:
    """A ``tool_use`` block of a Gemini tool with Claude Code's tool name and input keys; other
    blocks, and tools Claude Code has no name for, as they are."""
    name = CLAUDE_CODE_NAMES.get(str(block.get("name") or ""))
    if block.get("type") != "tool_use" or name is None:
        return block
    value = block.get("input")
    convert = _INPUTS.get(str(block["name"]))
    if isinstance(value, Mapping) and convert is not None:
        value = convert(value)
    return {**block, "name": name, "input": value}


__all__ = ["CLAUDE_CODE_NAMES", "as_claude_code_tool"]
