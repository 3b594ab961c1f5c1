"""Tool calls of a conversation, paired with their results, for the offline summary."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxtool.formats.jsonl import dumps_json
from ctxtool.llm.base import Turn

_TASK_ID = re.compile(r"Task #(\w+)")


@dataclass
class ToolCall:
    """One tool call and, once seen, its result (already cut for summarizing)."""

    order: int
    id: str
    name: str
    input: Any
    turn: int = 0  # index of the assistant turn that made the call
    has_result: bool = False
    is_error: bool = False
    result: str = ""
    result_turn: int = -1  # index of the turn holding the result

    @property
    def target(self) -> str:
        """What the call worked on (a file, a command, a pattern), to match a retry to a failure."""
        if not isinstance(self.input, dict):
            return ""
        for key in ("file_path", "notebook_path", "command", "pattern", "url", "path"):
            value = self.input.get(key)
            if isinstance(value, str) and value:
                return value
        return ""


def tool_calls(turns: Sequence[Turn]) -> list[ToolCall]:
    """Every tool call in order, each with its result when the conversation holds it."""
    calls: list[ToolCall] = []
    by_id: dict[str, ToolCall] = {}
    for index, turn in enumerate(turns):
        for block in turn.blocks:
            kind = block.get("type")
            if kind == "tool_use":
                call = ToolCall(len(calls), str(block.get("id")), str(block.get("name") or ""),
                                block.get("input"), turn=index)
                calls.append(call)
                by_id[call.id] = call
            elif kind == "tool_result" and str(block.get("tool_use_id")) in by_id:
                call = by_id[str(block.get("tool_use_id"))]
                call.has_result = True
                call.is_error = bool(block.get("is_error"))
                call.result = str(block.get("content") or "")
                call.result_turn = index
    return calls


_ERROR_LINE = re.compile(r"error|exception|failed|fatal|denied|not found|no such|cannot|invalid",
                         re.IGNORECASE)
_STRONG_LINE = re.compile(r"^(?:FAILED|ERROR)\b|^[\w.]*(?:Error|Exception)\b|^error(?:\[\w+\])?:")
BOOKKEEPING = ("TodoWrite", "TaskCreate", "TaskUpdate", "TaskList")


def error_gist(text: str, limit: int) -> str:
    """The telling line of an error result: the last line that names an error (a traceback's
    exception, pytest's FAILED line), after the ``Exit code N`` it may start with."""
    text = re.sub(r"</?tool_use_error>", "", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "(no output)"
    exit_code = lines[0] if lines[0].startswith("Exit code") else ""
    rest = lines[1:] if exit_code else lines
    telling = [ln for ln in rest if _STRONG_LINE.search(ln)] or [
        ln for ln in rest if _ERROR_LINE.search(ln)]
    gist = telling[-1] if telling else rest[-1] if rest else ""
    line = f"{exit_code}: {gist}" if exit_code and gist else exit_code or gist
    return line if len(line) <= limit else line[:limit] + "..."


def describe_call(call: ToolCall, limit: int) -> str:
    """``Bash `pytest -q```, ``Edit /src/app.py``: a tool call in a few words."""
    data = call.input if isinstance(call.input, dict) else {}
    if call.name == "TodoWrite" and isinstance(data.get("todos"), list):
        return f"TodoWrite ({len(data['todos'])} items)"
    for key in ("file_path", "notebook_path", "command", "pattern", "url", "query",
                "description", "prompt", "subject", "skill"):
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            text = text if len(text) <= limit else text[:limit] + "..."
            return f"{call.name} `{text}`" if key in ("command", "pattern") else f"{call.name} {text}"
    if not data:
        return call.name
    text = dumps_json(data).decode()
    return f"{call.name} {text if len(text) <= limit else text[:limit] + '...'}"


def todo_state(calls: Sequence[ToolCall]) -> list[tuple[str, str]]:
    """(status, content) of the last todo list: the latest TodoWrite, updated by later
    TaskCreate/TaskUpdate calls (the task tools of newer Claude Code versions)."""
    tasks: dict[str, tuple[str, str]] = {}
    for call in calls:
        data = call.input if isinstance(call.input, dict) else {}
        if call.name == "TodoWrite" and isinstance(data.get("todos"), list):
            tasks = {str(i): (str(t.get("status") or "pending"), str(t.get("content") or ""))
                     for i, t in enumerate(data["todos"]) if isinstance(t, dict)}
        elif call.name == "TaskCreate" and not call.is_error:
            found = _TASK_ID.search(call.result)
            key = found.group(1) if found else str(len(tasks) + 1)
            tasks[key] = ("pending", str(data.get("subject") or data.get("description") or ""))
        elif call.name == "TaskUpdate" and str(data.get("taskId")) in tasks and not call.is_error:
            key = str(data.get("taskId"))
            status, content = tasks[key]
            status = str(data.get("status") or status)
            if status == "deleted":
                del tasks[key]
                continue
            tasks[key] = (status, str(data.get("subject") or content))
    return [task for task in tasks.values() if task[1]]
