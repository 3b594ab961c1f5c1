"""What a session did to files, read back from its own tool calls and results.

Used twice: the offline summary lists every file read, edited or written (with counts and the
latest edit), and ``summarize --restore-files N`` re-attaches the latest content of the N files
touched most recently, the way Claude Code re-reads recent files after compacting.

The content comes from the transcript only - no file is read from disk, so the result does not
depend on where ctxtool runs or on what happened to the files since. It is the best the transcript
knows: a Write's content, a full Read's content (``toolUseResult.file.content``, or the result
text without its ``cat -n`` line numbers), with later Edits applied when their ``old_string`` is
found. A partial Read (offset/limit) is not a whole file and only counts as a read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxtool.core.messages.blocks import iter_tool_results, iter_tool_uses, tool_result_text

READ_TOOLS = ("Read",)
EDIT_TOOLS = ("Edit", "MultiEdit", "NotebookEdit")
WRITE_TOOLS = ("Write",)
_LINE_NUMBER = re.compile(r"^ *\d+(?:\t|\u2192)", re.MULTILINE)


@dataclass
class FileRecord:
    """One file the session touched."""

    path: str
    reads: int = 0
    edits: int = 0
    writes: int = 0
    last_index: int = -1  # entry index of the latest tool call on it
    content: str | None = None  # latest full content known from the transcript
    content_index: int = -1
    last_edit: dict[str, Any] | None = None  # input of the latest Edit/MultiEdit/Write
    failed: int = 0  # calls whose result was an error

    @property
    def changed(self) -> bool:
        return self.edits + self.writes > 0


@dataclass
class FileState:
    files: dict[str, FileRecord] = field(default_factory=dict)

    def record(self, path: str) -> FileRecord:
        if path not in self.files:
            self.files[path] = FileRecord(path)
        return self.files[path]

    def recent(self, count: int) -> list[FileRecord]:
        """The ``count`` files touched most recently, newest first."""
        ordered = sorted(self.files.values(), key=lambda r: r.last_index, reverse=True)
        return ordered[:count]


def file_path_of(name: str, value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    path = value.get("notebook_path") if name == "NotebookEdit" else value.get("file_path")
    return path if isinstance(path, str) and path else None


def strip_line_numbers(text: str) -> str:
    """The file text inside a Read result shown as ``cat -n`` (``   12\\tcode`` or ``12→code``)."""
    lines = text.split("\n")
    if not lines or not all(_LINE_NUMBER.match(line) for line in lines if line):
        return text
    return "\n".join(_LINE_NUMBER.sub("", line, count=1) for line in lines)


def _read_content(use_input: dict[str, Any], result_entry: dict[str, Any], content: Any) -> str | None:
    """The whole-file content a Read returned, or None for partial reads and errors."""
    if use_input.get("offset") or use_input.get("limit"):
        return None
    structured = result_entry.get("toolUseResult")
    if isinstance(structured, dict) and isinstance(structured.get("file"), dict):
        file = structured["file"]
        total, lines = file.get("totalLines"), file.get("numLines")
        if isinstance(file.get("content"), str) and (total is None or total == lines):
            return str(file["content"])
        return None
    text = tool_result_text(content)
    if text.startswith("<") or "<system-reminder>" in text[:200]:
        return None  # an error, a persisted-output wrapper or a reminder, not the file
    return strip_line_numbers(text)


def _apply_edit(content: str | None, name: str, use_input: dict[str, Any]) -> str | None:
    """``content`` with an Edit/MultiEdit applied, or None when it cannot be applied exactly."""
    if content is None or name == "NotebookEdit":
        return None
    edits = use_input.get("edits") if name == "MultiEdit" else [use_input]
    for edit in edits if isinstance(edits, list) else []:
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str) or old not in content:
            return None
        content = content.replace(old, new) if edit.get("replace_all") else content.replace(old, new, 1)
    return content


def collect_file_state(entries: Sequence[dict[str, Any]], fmt: str) -> FileState:
    """Every file the session read, edited or wrote, in one pass (tool results are looked up by
    tool_use id, so a result may come any time after its call)."""
    state = FileState()
    pending: dict[str, tuple[str, str, dict[str, Any], int]] = {}
    for index, entry in enumerate(entries):
        if getattr(entry, "invalid", False):
            continue
        for use in iter_tool_uses(entry, fmt, index):
            path = file_path_of(use.name, use.input)
            if path is None or use.name not in READ_TOOLS + EDIT_TOOLS + WRITE_TOOLS:
                continue
            pending[use.id] = (use.name, path, use.input if isinstance(use.input, dict) else {}, index)
            rec = state.record(path)
            rec.last_index = index
            if use.name in READ_TOOLS:
                rec.reads += 1
            elif use.name in EDIT_TOOLS:
                rec.edits += 1
                rec.last_edit = dict(use.input, tool=use.name)
            else:
                rec.writes += 1
                rec.last_edit = dict(use.input, tool=use.name)
        for result in iter_tool_results(entry, fmt, index):
            if result.tool_use_id in pending:
                _apply_result(state, pending.pop(result.tool_use_id), entry, result.content,
                              result.is_error, index)
    return state


def _apply_result(state: FileState, call: tuple[str, str, dict[str, Any], int],
                  entry: dict[str, Any], content: Any, is_error: bool, index: int) -> None:
    name, path, use_input, _ = call
    rec = state.record(path)
    if is_error:
        rec.failed += 1
        return
    if name in WRITE_TOOLS and isinstance(use_input.get("content"), str):
        new: str | None = use_input["content"]
    elif name in READ_TOOLS:
        new = _read_content(use_input, entry, content)
        if new is None:
            return  # a partial read does not tell us the file; keep what we knew
    else:
        structured = entry.get("toolUseResult")
        base = structured.get("originalFile") if isinstance(structured, dict) else None
        new = _apply_edit(base if isinstance(base, str) else rec.content, name, use_input)
    rec.content, rec.content_index = new, index
