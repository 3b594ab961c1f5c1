"""OpenCode's tool calls under Claude Code's names, for the code that reads tool calls by name.

OpenCode names its tools in lower case and their inputs in camelCase (``read`` with
``filePath``, ``edit`` with ``oldString``/``newString``, ``todowrite`` with ``todos``); Claude
Code's are ``Read`` with ``file_path``, ``Edit`` with ``old_string``... The summarizer's file and
todo tracking reads Claude Code's, so an OpenCode ``tool_use`` block is renamed before it gets
there (a view: new dicts, the transcript is not touched).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from ctxtool.formats.codex import patch_as_edit

CLAUDE_CODE_NAMES = {
    "read": "Read", "edit": "Edit", "write": "Write", "multiedit": "MultiEdit", "bash": "Bash",
    "grep": "Grep", "glob": "Glob", "list": "LS", "webfetch": "WebFetch",
    "websearch": "WebSearch", "todowrite": "TodoWrite", "todoread": "TodoRead", "task": "Task",
    "skill": "Skill",
}
# snip's tool sets on OpenCode sessions: each also matches the lower-case names, plus these tools
# of OpenCode's own (read, edit, write, grep, glob, list... are Claude Code's in lower case).
SNIP_TOOLS = {"read_tools": frozenset(), "write_tools": frozenset({"apply_patch"}),
              "search_tools": frozenset({"list", "codesearch"})}
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")
Options = TypeVar("Options")


def for_opencode(options: Options) -> Options:
    """snip's options (a dataclass with the tool sets of :data:`SNIP_TOOLS`) matching OpenCode's
    names too: each set's names in lower case, plus OpenCode's own tools of that kind (what the
    adapter's ``own_tool_names`` gives ``snip``)."""
    return dataclasses.replace(options, **{  # type: ignore[type-var]
        name: getattr(options, name) | {n.lower() for n in getattr(options, name)} | extra
        for name, extra in SNIP_TOOLS.items()})


def snake_keys(value: Any) -> Any:
    """``{"filePath": ..., "edits": [{"oldString": ...}]}`` with snake_case keys (nested)."""
    if isinstance(value, Mapping):
        return {_CAMEL.sub(r"_\1", str(k)).lower(): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


def as_claude_code_tool(block: dict[str, Any]) -> dict[str, Any]:
    """A ``tool_use`` block of an OpenCode tool with Claude Code's tool name and input keys;
    other blocks, and tools Claude Code has no name for, are returned as they are."""
    name = CLAUDE_CODE_NAMES.get(str(block.get("name") or ""))
    value = block.get("input")
    if block.get("type") == "tool_use" and block.get("name") == "apply_patch" \
            and isinstance(value, dict) and isinstance(value.get("patchText"), str):
        edit = patch_as_edit(value["patchText"], None)  # the patch format is Codex's
        return block if edit is None else {**block, "name": edit[0], "input": edit[1]}
    if block.get("type") != "tool_use" or name is None:
        return block
    return {**block, "name": name, "input": snake_keys(block.get("input"))}


__all__ = ["CLAUDE_CODE_NAMES", "SNIP_TOOLS", "as_claude_code_tool", "for_opencode", "snake_keys"]
