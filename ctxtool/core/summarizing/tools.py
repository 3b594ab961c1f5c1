"""Tool calls of a conversation, paired with their results, for the offline summary."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ctxtool.formats.jsonl import dumps_json

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
    intent: str = ""  # the assistant's words before the call (why it was made)
    known: frozenset[str] = frozenset()  # a rewritten file's names known before (its reads)
    uncut: Any = None  # the whole input when ``input`` was cut (a large Write), until its result

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


class TodoList:
    """The todo list as it stands: the latest TodoWrite, updated by later TaskCreate/TaskUpdate
    calls (the task tools of newer Claude Code versions). Fed call by call."""

    def __init__(self) -> None:
        self.tasks: dict[str, tuple[str, str]] = {}
        self.details: dict[str, str] = {}  # a task's description (TaskCreate's), by content

    def apply_call(self, call: ToolCall) -> bool:
        """Take a TodoWrite in (a whole new list); True when the list changed."""
        data = call.input if isinstance(call.input, dict) else {}
        if call.name != "TodoWrite" or not isinstance(data.get("todos"), list):
            return False
        self.tasks = {str(i): (str(t.get("status") or "pending"), str(t.get("content") or ""))
                      for i, t in enumerate(data["todos"]) if isinstance(t, dict)}
        return True

    def apply_result(self, call: ToolCall) -> bool:
        """Take a successful TaskCreate/TaskUpdate in (the id of a new task is in its result);
        True when the list changed."""
        data = call.input if isinstance(call.input, dict) else {}
        if call.is_error:
            return False
        if call.name == "TaskCreate":
            found = _TASK_ID.search(call.result)
            key = found.group(1) if found else str(len(self.tasks) + 1)
            subject = str(data.get("subject") or data.get("description") or "")
            self.tasks[key] = ("pending", subject)
            if data.get("subject") and data.get("description"):
                self.details[subject] = str(data["description"])
            return True
        key = str(data.get("taskId"))
        if call.name != "TaskUpdate" or key not in self.tasks:
            return False
        status, content = self.tasks[key]
        status = str(data.get("status") or status)
        if status == "deleted":
            del self.tasks[key]
        else:
            self.tasks[key] = (status, str(data.get("subject") or content))
        return True

    @property
    def items(self) -> list[tuple[str, str]]:
        """(status, content) of every task, in order."""
        return [task for task in self.tasks.values() if task[1]]
