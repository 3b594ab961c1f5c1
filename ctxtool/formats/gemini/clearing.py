"""Clearing and restoring tool results in a Gemini CLI session, in Gemini's own form.

Where a result is: a ``functionResponse`` part (``{id, name, response}``) in two places of the
records (docs/gemini-format.md, "A tool result is stored twice"): the ``toolCalls[].result`` of
the model record that made the call (a list of parts; a string result is sent as
``{output: result}``, an object as itself) and the ``user`` record that answered it. A line holds
one record, or a whole list of them (a checkpoint ``{"$set": {"messages": [...]}}``, the
one-document form's ``messages``). Every result of a line is a slot, numbered in that order.

What a result becomes: Gemini CLI 0.61's tool-output masking (``ToolOutputMaskingService``,
chunk-JDPZ4CE3.js:343034) saves ``JSON.stringify(response, null, 2)`` to a file and replaces the
response by ``{output: <snippet>}``::

    <tool_output_masked>
    <the saved text's first 250 characters>
    ... [TRUNCATED] ...
    <its last 250 characters>

    Output too large. Full output available at: /abs/path
    </tool_output_masked>

(the whole saved text when it is 500 characters or fewer). ctxtool writes the same snippet, so
a resumed request carries it, Gemini's own masking counts the part as masked already, and the
model is told where the whole output is. The saved text is exactly what Gemini writes to its
own files, and ``restore`` parses it back into the response object. Gemini previews a shell
command's output by its sections (``Output:``, ``Exit Code:``...); ctxtool previews every tool
by head and tail. A snippet is ctxtool's to restore when the file it names is a ctxtool store
file (a ``.txt`` in a ``tool-results`` folder); Gemini's own masked outputs (files in
``tool-outputs/session-<id>/``) are left as Gemini wrote them.

Where the files go: for a session in Gemini's own ``<project>/chats/``, its
``<project>/tool-outputs/session-<id>/`` (:func:`results_folder`), the folder Gemini keeps that
session's tool outputs in and deletes with it.

A changed record is written where it is: its line is rewritten (the checkpoint's list with it),
every other line staying byte-identical. ``persist`` moves an oversized result out of every line
that holds it, the earlier writes that Gemini no longer loads included; ``snip`` and
``microcompact`` choose among the records Gemini sends and change the lines those live in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ctxtool.formats.adapter import Clearer, Restorer, ResultSlot
from ctxtool.formats.gemini.records import METADATA, MESSAGE, SET, checkpoint_list, line_kind

if TYPE_CHECKING:
    from pathlib import Path  # the path a folder is built on is imported with it (no pathlib here)

MASKED_TAG = "tool_output_masked"
MASKED_OPEN = f"<{MASKED_TAG}>"
MASKED_CLOSE = f"</{MASKED_TAG}>"
AVAILABLE_AT = "Output too large. Full output available at: "
TRUNCATED = "\n... [TRUNCATED] ...\n"
PREVIEW_CHARS = 250  # head and tail of the saved text, each
TOOL_OUTPUTS = "tool-outputs"

# Gemini's masking rule (343037-343039, fixed in 0.61.0): the newest 50,000 tokens of tool
# output are protected, and it masks only when at least 30,000 more can go
PROTECTED_TOOL_TOKENS = 50_000
MIN_PRUNABLE_TOKENS = 30_000
#: tools whose outputs Gemini never masks (its EXEMPT_TOOLS)
EXEMPT_TOOLS = frozenset({"activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"})

#: Gemini's tools that do what Claude Code's compactable ones do (``--strategy claude-code`` on a
#: Gemini session clears these): read_file is Read, run_shell_command Bash, grep_search Grep...
COMPACTABLE_TOOLS = frozenset({"read_file", "read_many_files", "run_shell_command", "grep_search",
                               "glob", "list_directory", "google_web_search", "web_fetch",
                               "replace", "write_file"})
#: Gemini's own tools of snip's kinds (its read_file, grep_search, glob are in snip's sets)
SNIP_TOOLS = {"write_tools": frozenset({"replace"}),
              "search_tools": frozenset({"list_directory", "google_web_search",
                                         "search_file_content"})}
_OUTPUT_KEY = len('{"output":}')  # what {output: ...} adds around the output's JSON string

# persist (persist --style gemini): Gemini has no line limit of its own; the size limit is
# ctxtool's for every agent (50 KB, --max-bytes), measured on the text a file would hold
MAX_LINES = 1 << 62
MAX_BYTES = 50 * 1024

# a snippet holds up to 521 characters of preview, its tag and a path line of about 300
_WORTH_MASKING = 1_000
_STORE_FILE = r"(?P<path>/[^\n]*/tool-results/[^\n/]+\.txt)"  # a ctxtool store file
_MASKED = re.compile(re.escape(MASKED_OPEN) + r"\n.*\n\n" + re.escape(AVAILABLE_AT) + _STORE_FILE
                     + r"\n" + re.escape(MASKED_CLOSE), re.DOTALL)
_SAFE = re.compile(r"[^a-zA-Z0-9_-]")


# --- the saved text and the snippet ---------------------------------------------------------

def saved_text(response: Any) -> str:
    """What Gemini saves of a response: ``JSON.stringify(response, null, 2)`` (the same text)."""
    from ctxtool.formats.jsonl import dumps_json  # orjson: not for every line a statusline reads

    return dumps_json(response, indent=True).decode()


def preview(text: str) -> str:
    """Gemini's head-and-tail preview of a saved text (JavaScript counts UTF-16 units; ctxtool
    characters: they differ only past the Basic Multilingual Plane)."""
    if len(text) <= 2 * PREVIEW_CHARS:
        return text
    return f"{text[:PREVIEW_CHARS]}{TRUNCATED}{text[-PREVIEW_CHARS:]}"


def masked_snippet(text: str, path: str) -> str:
    """The ``<tool_output_masked>`` snippet for ``text`` saved at ``path``."""
    return f"{MASKED_OPEN}\n{preview(text)}\n\n{AVAILABLE_AT}{path}\n{MASKED_CLOSE}"


def part_tokens(content: Any) -> int:
    """A result as Gemini's masking counts it (``estimateTokenCountSync`` of the part: the
    response's JSON length / 4; its tool name's few characters left out), from the text the
    adapter shows for it (``parts.response_text``: the ``output``, else the response's JSON)."""
    from ctxtool.formats.json_text import dumps_json

    if not isinstance(content, str):
        return len(dumps_json(content)) // 4
    # the text is the output of {output: text} (the usual response) or the JSON of another
    return (len(dumps_json(content).decode()) + _OUTPUT_KEY) // 4


def is_masked(response: Any) -> bool:
    """Gemini's test (``isAlreadyMasked``): the saved text holds ``<tool_output_masked``."""
    return f"<{MASKED_TAG}" in saved_text(response)


# --- persist --style gemini (an OutputTruncation: formats/capabilities/clearing.py) ----------

def over_limits(text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> bool:
    """True when persist moves a result whose saved text is ``text``: over either limit, and
    long enough for its snippet to be shorter (Gemini masks only what that saves)."""
    if len(text) <= _WORTH_MASKING:
        return False
    return len(text.encode("utf-8")) > max_bytes or text.count("\n") + 1 > max_lines


def truncated_output(text: str, path: str, *, max_lines: int = MAX_LINES,
                     max_bytes: int = MAX_BYTES) -> str:
    """What stays of a result whose saved text ``text`` went to ``path``: the snippet."""
    return masked_snippet(text, path)


def persisted_path(text: str) -> str | None:
    """The ctxtool store file a snippet names, or None when ``text`` is not such a snippet."""
    if not text.startswith(MASKED_OPEN):
        return None
    match = _MASKED.fullmatch(text)
    return match.group("path") if match else None


def looks_persisted(text: str) -> bool:
    """True when ``text`` is a snippet naming a ctxtool store file, whether or not
    :func:`persisted_path` can read it (an edited one: ``restore --strict`` fails on it)."""
    return (text.startswith(MASKED_OPEN) and text.rstrip().endswith(MASKED_CLOSE)
            and "/tool-results/" in text)


# --- where results are in a line ----------------------------------------------------------------

# A result's new response (or None: unchanged), given (slot number, call id, tool name, response).
Edit = Callable[[int, str, str, Any], Any]


def _records(entry: Mapping[str, Any]) -> tuple[list[Any] | None, str | None]:
    """The records a line holds: ([the line], None) for a message record, (its list, the key
    holding it) for a checkpoint or the one-document form; (None, None) for anything else."""
    kind = line_kind(entry)
    if kind == MESSAGE:
        return [entry], None
    if kind == SET:
        listed = checkpoint_list(entry)
        return (listed, "$set") if listed is not None else (None, None)
    if kind == METADATA and isinstance(entry.get("messages"), list):
        return entry["messages"], "messages"
    return None, None


def _response_of(part: Any) -> tuple[str, str, Any] | None:
    call = part.get("functionResponse") if isinstance(part, dict) else None
    if not isinstance(call, dict) or "response" not in call:
        return None
    name = call.get("name")
    return str(call.get("id") or name or ""), str(name or ""), call["response"]


def _with_response(part: dict[str, Any], response: Any) -> dict[str, Any]:
    return {**part, "functionResponse": {**part["functionResponse"], "response": response}}


class _Walk:
    """Numbers the results of one line in order and rebuilds what an edit changed
    (copy-on-write: an unchanged record or line is returned as the same object)."""

    def __init__(self, edit: Edit) -> None:
        self.edit = edit
        self.slot = 0

    def parts(self, parts: list[Any]) -> list[Any]:
        new: list[Any] | None = None
        for i, part in enumerate(parts):
            found = _response_of(part)
            if found is None:
                continue
            response = self.edit(self.slot, *found)
            self.slot += 1
            if response is not None:
                new = new if new is not None else list(parts)
                new[i] = _with_response(part, response)
        return parts if new is None else new

    def call(self, call: Any) -> Any:
        result = call.get("result") if isinstance(call, dict) else None
        if isinstance(result, str) and result:  # sent as {output: result}
            response = self.edit(self.slot, str(call.get("id") or call.get("name") or ""),
                                 str(call.get("name") or ""), {"output": result})
            self.slot += 1
            if response is None:
                return call
            output = response.get("output") if isinstance(response, dict) else None
            return {**call, "result": output if set(response) == {"output"}
                    and isinstance(output, str) else [{"functionResponse": {
                        "id": call.get("id"), "name": call.get("name"), "response": response}}]}
        if isinstance(result, list):
            parts = self.parts(result)
            return call if parts is result else {**call, "result": parts}
        if isinstance(result, dict):  # one part
            parts = self.parts([result])
            return call if parts[0] is result else {**call, "result": parts[0]}
        return call

    def record(self, record: Any) -> Any:
        if not isinstance(record, dict):
            return record
        new = record
        content = record.get("content")
        if isinstance(content, list):
            parts = self.parts(content)
            if parts is not content:
                new = {**new, "content": parts}
        calls = record.get("toolCalls")
        if isinstance(calls, list):
            edited = [self.call(call) for call in calls]
            if any(a is not b for a, b in zip(edited, calls)):
                new = {**new, "toolCalls": edited}
        return new


def edited(entry: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """The line with every result ``edit`` changes replaced, copy-on-write; ``entry`` itself
    when nothing changed. ``edit`` sees the results in slot order."""
    records, key = _records(entry)
    if records is None:
        return entry
    walk = _Walk(edit)
    if key is None:
        return walk.record(entry)  # type: ignore[no-any-return]
    new = [walk.record(record) for record in records]
    if all(a is b for a, b in zip(new, records)):
        return entry
    if key == "messages":
        return {**entry, "messages": new}
    return {**entry, "$set": {**entry["$set"], "messages": new}}


def slot_content(response: Any) -> str:
    """A result as persist and restore see it: a snippet as it is (so a placeholder reads as
    one), anything else as the text Gemini would save."""
    output = response.get("output") if isinstance(response, dict) else None
    if isinstance(output, str) and set(response) == {"output"} and output.startswith(MASKED_OPEN):
        return output
    return saved_text(response)


def result_slots(entry: Mapping[str, Any]) -> list[ResultSlot]:
    found: list[ResultSlot] = []

    def note(slot: int, call_id: str, name: str, response: Any) -> None:
        found.append(ResultSlot(slot, call_id, slot_content(response)))

    edited(entry, note)  # type: ignore[arg-type]
    return found


def with_result_contents(entry: dict[str, Any], changes: Mapping[int, Any]) -> dict[str, Any]:
    """The line whose results at ``changes``' slots hold the new text (as ``{output}``)."""
    return edited(entry, lambda slot, *_: {"output": changes[slot]} if slot in changes else None)


def restored_response(text: Any) -> Any:
    """The response a saved text gives back, or None when it is not one (not JSON)."""
    if not isinstance(text, str):
        return None
    from ctxtool.formats.jsonl import loads_json  # see saved_text

    try:
        return loads_json(text.encode("utf-8"))
    except ValueError:
        return None


def cleared(entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
    """The line with the results ``clearer`` chose replaced by its text (``{output}``); a
    result Gemini masked already stays (its own test)."""
    def clear(slot: int, call_id: str, name: str, response: Any) -> Any:
        if not clearer.wants_result(call_id) or is_masked(response):
            return None
        text = clearer.result(call_id, saved_text(response), entry)
        return None if text is None else {"output": text}

    return edited(entry, clear)


def restored(entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
    """The line with every result whose ``output`` is a placeholder naming a saved file given
    its saved response back."""
    def put_back(slot: int, call_id: str, name: str, response: Any) -> Any:
        output = response.get("output") if isinstance(response, dict) else None
        if not isinstance(output, str) or set(response) != {"output"}:
            return None
        value = restorer.result(output, call_id)
        return None if value is output else restored_response(value)

    return edited(entry, put_back)


def snip_view(block: dict[str, Any]) -> dict[str, Any]:
    """A ``read_file`` call as snip reads a part of a file: Gemini's ``start_line``/``end_line``
    (1-based, inclusive) as ``offset``/``limit``; other calls as they are."""
    args = block.get("input")
    if block.get("name") != "read_file" or not isinstance(args, dict):
        return block
    start, end = args.get("start_line"), args.get("end_line")
    if not isinstance(start, int) and not isinstance(end, int):
        return block
    first = start if isinstance(start, int) and start > 1 else 1
    view = {k: v for k, v in args.items() if k not in ("start_line", "end_line")}
    view["offset"] = first
    if isinstance(end, int) and end >= first:
        view["limit"] = end - first + 1
    return {**block, "input": view}


# --- where the files go ---------------------------------------------------------------------------

def results_folder(file: str, session_id: str | None) -> Path | None:
    """``<project>/tool-outputs/session-<id>`` for a session file in Gemini's
    ``<project>/chats/`` (the session id as Gemini makes it safe for a file name), or None."""
    from pathlib import Path

    path = Path(file)
    if not session_id or path.parent.name != "chats" or not path.name.startswith("session-"):
        return None
    return path.parent.parent / TOOL_OUTPUTS / f"session-{_SAFE.sub('_', session_id)}"


__all__ = ["AVAILABLE_AT", "COMPACTABLE_TOOLS", "EXEMPT_TOOLS", "MASKED_OPEN", "MAX_BYTES",
           "MAX_LINES", "MIN_PRUNABLE_TOKENS", "PREVIEW_CHARS", "PROTECTED_TOOL_TOKENS",
           "SNIP_TOOLS", "cleared", "edited", "is_masked", "looks_persisted", "masked_snippet",
           "over_limits", "part_tokens", "persisted_path", "preview", "restored",
           "restored_response", "result_slots", "results_folder", "saved_text", "slot_content",
           "snip_view", "truncated_output", "with_result_contents"]
