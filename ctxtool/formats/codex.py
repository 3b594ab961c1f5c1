"""Codex CLI rollouts: what its lines mean, as Anthropic-shaped blocks, and how to write them back.

Codex CLI (0.169.0 and 0.171.0 measured, see ``tests/fixtures/codex-0.171.0``) keeps each
session in ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (``CODEX_HOME``
defaults to ``~/.codex``), one ``{"timestamp", "ordinal", "type", "payload"}`` object per line:

- ``session_meta``: the session's ``id``, ``cwd``, ``cli_version`` and ``base_instructions``
  (sent in front of every request, never as an item);
- ``turn_context`` (model, cwd, policies), ``world_state``, ``token_usage_record``;
- ``response_item``: one item of the history as the Responses API has it - ``message`` (role
  developer/user/assistant, ``input_text``/``output_text`` parts), ``function_call`` (``name``,
  JSON ``arguments``, ``call_id``), ``function_call_output`` (``output`` paired by ``call_id``),
  ``custom_tool_call``/``custom_tool_call_output`` (free-text ``input``), ``reasoning``;
- ``event_msg``: events; ``token_count`` carries ``info.last_token_usage`` (the last model
  call: ``input_tokens`` *including* ``cached_input_tokens``, ``output_tokens``) and
  ``info.model_context_window``;
- ``compacted``: a compaction - ``message`` (the handoff summary, with Codex's prefix) and
  ``replacement_history`` (the items that replace every item before it). Codex follows it with
  copies of the last ``world_state`` and ``turn_context`` lines.

On ``codex exec resume`` Codex rebuilds the history from the file and sends it whole every turn
(no ``previous_response_id``): the items after the last ``compacted`` record, behind its
``replacement_history`` (or, for a record without one, the user messages before it and the
summary). So what a transform writes into the file is exactly what the model gets next.

Nothing here imports from ``ctxtool.core``: this module describes the format; transforms decide.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ctxtool.formats.adapter import (Clearer, FormatAdapter, LimitsLookup, Restorer, ResultSlot,
                                    SessionFile, SessionMarks, Usage, verdict_rows)
from ctxtool.formats.content import Block, parsed_arguments
from ctxtool.formats.json_spans import SpanError, object_spans
from ctxtool.formats.jsonl import loads_json
from ctxtool.formats.limits import AgentSettings
from ctxtool.formats.vacuum import LineEdit
from ctxtool.storage.session_dirs import project_directory

if TYPE_CHECKING:  # imported where summarize writes (formats/compaction.py)
    from ctxtool.formats.compaction import CompactionLines, CompactionWrite


NAME = "codex"
SCHEMA = "codex-rollout"

LINE_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg",
                        "compacted", "world_state", "token_usage_record"})
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
INSTRUCTION_ROLES = ("developer", "system")
# Codex's tools whose outputs may be cleared (its shell, file and search tools), as Claude Code's
# compactable set is for it
COMPACTABLE_TOOLS = frozenset({"exec_command", "write_stdin", "shell", "local_shell",
                               "shell_command", "read_file", "list_dir", "grep_files",
                               "view_image", "web_search", "apply_patch"})

# What Codex 0.169.0 sends in front of the items besides its base instructions (tool definitions
# and request fields), which no rollout line records: its first request of a session (the
# fixtures' fake Responses API counts characters / 4) was 9,622 tokens, of which the base
# instructions (20,751 characters) are 5,188 and the three items sent about 1,040.
UNRECORDED_SYSTEM_TOKENS = 3_400

# What Codex writes in front of a compaction summary (``compacted.message`` and the user message
# that ends ``replacement_history``), as 0.169.0 does; the model reads it, so ours says the same.
SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking"
    " process. You also have access to the state of the tools that were used by that language"
    " model. Use this to build on the work that has already been done and avoid duplicating"
    " work. Here is the summary produced by the other language model, use the information in"
    " this summary to assist with your own analysis:")

_CLAUDE_KEYS = ("uuid", "parentUuid", "sessionId", "isSidechain", "leafUuid", "messageId")

Block = dict[str, Any]


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


def _parts_text(content: Any) -> list[Block]:
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
        return (role if isinstance(role, str) else None), _parts_text(item.get("content"))
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
        return _parts_text(output)
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


# --- usage and window -----------------------------------------------------------------------------

def token_info(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """``payload.info`` of an ``event_msg`` ``token_count`` line, or None."""
    if entry.get("type") != "event_msg":
        return None
    payload = entry.get("payload")
    if not isinstance(payload, dict) or payload.get("type") != "token_count":
        return None
    info = payload.get("info")
    return info if isinstance(info, dict) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def usage_counts(entry: Mapping[str, Any]) -> tuple[str, int, int, int] | None:
    """(key, uncached input, cached input, output) of the last model call a ``token_count``
    line records, or None. Codex's ``input_tokens`` includes the cached ones (OpenAI's usage);
    they are split so that input + cache read is what the call was sent. A count of 0 input
    (Codex writes one right after a compaction, before any call) is no usage."""
    info = token_info(entry)
    last = info.get("last_token_usage") if info is not None else None
    if not isinstance(last, dict):
        return None
    prompt, cached = _count(last.get("input_tokens")), _count(last.get("cached_input_tokens"))
    if prompt <= 0:
        return None
    cached = min(cached, prompt)
    key = f"{entry.get('timestamp', '')}#{entry.get('ordinal', '')}"
    return key, prompt - cached, cached, _count(last.get("output_tokens"))


# payload fields of session_meta / turn_context that hold instructions (AGENTS.md, the system
# prompt), not usage: left out of a usage-only rollout
_INSTRUCTION_FIELDS = frozenset({"base_instructions", "instructions", "user_instructions",
                                 "developer_instructions"})


def usage_only(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The line as Codex usage tools (@ccusage/codex) read it, or None: ``session_meta`` and
    ``turn_context`` (the model) without their instruction text, ``token_count`` events whole."""
    payload = entry.get("payload")
    if entry.get("type") == "event_msg" and isinstance(payload, Mapping) \
            and payload.get("type") == "token_count":
        return dict(entry)
    if entry.get("type") not in ("session_meta", "turn_context"):
        return None
    if not isinstance(payload, Mapping):
        return dict(entry)
    return {**entry, "payload": {key: value for key, value in payload.items()
                                 if key not in _INSTRUCTION_FIELDS}}


def context_window_of(entry: Mapping[str, Any]) -> int | None:
    """``model_context_window`` of a ``token_count`` line (Codex's effective window), or None."""
    info = token_info(entry)
    window = info.get("model_context_window") if info is not None else None
    return window if isinstance(window, int) and window > 0 else None


#: ``model_context_window`` in a token_count is this share of the model's window (Codex keeps the
#: rest in reserve: ``effective_context_window_percent``, 95 unless a model says otherwise)
EFFECTIVE_WINDOW_PERCENT = 95
#: Codex compacts when a turn's tokens reach this share of the model's window (its default
#: ``auto_compact_token_limit``; a lower ``model_auto_compact_token_limit`` in config.toml wins,
#: and no rollout line records one)
AUTO_COMPACT_PERCENT = 90


@dataclass(frozen=True)
class CodexLimits:
    """Where Codex compacts a session by its own rule (see :data:`AUTO_COMPACT_PERCENT`)."""

    report_key: ClassVar[str] = "codex"  # in the estimate report

    window: int  # model_context_window, as the last token_count records it
    model_window: int  # the model's whole window it is the share of
    usable: int  # Codex compacts when a turn's tokens reach this
    count: int | None  # the last token_count's last_token_usage.total_tokens

    @property
    def overflow(self) -> bool:
        return self.count is not None and self.count >= self.usable

    def as_dict(self) -> dict[str, Any]:
        return {"window": self.window, "model_window": self.model_window, "usable": self.usable,
                "count": self.count, "overflow": self.overflow}

    def rows(self, context: int) -> list[tuple[str, str]]:
        base = (f"{AUTO_COMPACT_PERCENT}% of the model's {self.model_window:,}, of which "
                f"{self.window:,} usable")
        if self.count is None:
            check = "no token count recorded yet"
        else:
            verdict = "compacts before its next turn" if self.overflow else "no compaction due"
            check = f"last turn {self.count:,} tokens, {verdict}"
        return verdict_rows("Codex", self.usable, context, base, check)


def codex_limits(view: Iterable[Mapping[str, Any]], window: int) -> CodexLimits:
    """Codex's rule for a session whose ``model_context_window`` is ``window``."""
    model_window = window * 100 // EFFECTIVE_WINDOW_PERCENT
    count = None
    for entry in view:
        info = token_info(entry)
        last = info.get("last_token_usage") if info is not None else None
        total = last.get("total_tokens") if isinstance(last, dict) else None
        if isinstance(total, int) and total > 0:
            count = total
    return CodexLimits(window=window, model_window=model_window,
                       usable=model_window * AUTO_COMPACT_PERCENT // 100, count=count)


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


def as_line(item: dict[str, Any], like: Mapping[str, Any]) -> dict[str, Any]:
    """A ``response_item`` line holding ``item``, stamped like ``like`` (a view for sizing and
    summarizing what a compaction kept; never written)."""
    return {"timestamp": like.get("timestamp", ""), "type": "response_item", "payload": item}


def context_entries(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines whose items Codex sends next, in its order: after the last ``compacted``
    record, its ``replacement_history`` (as lines) then every line after it; a record without
    a replacement history keeps the user messages before it, then its summary (the record
    itself). Without a compaction: every line."""
    lines = list(entries)
    last = max((i for i, e in enumerate(lines) if is_compacted(e)), default=-1)
    if last < 0:
        return lines
    record = lines[last]
    history = replacement_history(record)
    if history is not None:
        return [as_line(item, record) for item in history] + lines[last + 1:]
    kept = [e for e in lines[:last] if (item_of(e) or {}).get("type") == "message"
            and (item_of(e) or {}).get("role") == "user"]
    return [*kept, record, *lines[last + 1:]]


def compaction_lines(summary: str, lead: list[dict[str, Any]], last_lines: Mapping[str, Any],
                     timestamp: str, tail: list[dict[str, Any]] | None = None,
                     ordinal: int | None = None) -> list[dict[str, Any]]:
    """What ``summarize`` appends so that Codex resumes from the summary: a ``compacted`` record
    (``message`` = Codex's prefix + the summary; ``replacement_history`` = the ``lead`` items
    (standing instructions), the summary as a user message as Codex writes its own, then the
    kept ``tail`` items), followed by copies of the last ``world_state`` and ``turn_context``
    lines (``last_lines`` by line type), as Codex does after its own compaction. ``ordinal``
    numbers them on from the file's last line, as Codex numbers its lines."""
    message = f"{SUMMARY_PREFIX}\n{summary}"
    summary_item = {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": message}]}
    payloads: list[tuple[str, Any]] = [("compacted", {
        "message": message, "replacement_history": [*lead, summary_item, *(tail or [])]})]
    payloads += [(kind, line["payload"]) for kind in ("world_state", "turn_context")
                 if isinstance(line := last_lines.get(kind), Mapping)]
    out: list[dict[str, Any]] = []
    for n, (kind, payload) in enumerate(payloads):
        line: dict[str, Any] = {"timestamp": timestamp}
        if ordinal is not None:
            line["ordinal"] = ordinal + n
        out.append({**line, "type": kind, "payload": payload})
    return out


def summary_lines(items: list[dict[str, Any]], head: list[dict[str, Any]],
                  tail: list[dict[str, Any]], summary: str, timestamp: str) -> list[dict[str, Any]]:
    """The lines appended to a rollout summarized up to ``head`` (``tail`` kept verbatim): the
    instructions still in view before it lead the replacement history (see
    :func:`compaction_lines`); every line of ``items`` stays in the file."""
    lead = [e["payload"] for e in context_entries(head) if is_instruction(e)]
    last = {e["type"]: e for e in items if e.get("type") in ("world_state", "turn_context")}
    kept = [item for e in tail if (item := item_of(e)) is not None]
    numbers = [n for e in items if isinstance(n := e.get("ordinal"), int)]
    return compaction_lines(summary, lead, last, timestamp, kept,
                            max(numbers) + 1 if numbers else None)


# --- store ----------------------------------------------------------------------------------------

def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (codex-rs ``find_codex_home``)."""
    env = os.environ if env is None else env
    home = env.get("CODEX_HOME")
    if home:
        return Path(home).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".codex"


# What ``codex delete --force <id>`` (Codex CLI 0.171.0) removes of a thread besides its
# rollout, per database under $CODEX_HOME, in the order cleanup removes it (what Codex rebuilds
# from the rollout first, the thread's own row last): (table, column naming the thread...).
# Seen removed on databases the real client wrote, rows planted in each table; the statements as
# its binary spells them ("DELETE FROM thread_spawn_edges WHERE parent_thread_id = ? OR
# child_thread_id = ?"). Left alone by it, so by cleanup: goals_1's
# thread_goal_continuation_deferrals, queue_1, and every other database.
THREAD_RECORDS: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    ("thread_history_1.sqlite", (("thread_items", ("thread_id",)),
                                 ("thread_realtime_items", ("thread_id",)),
                                 ("thread_turns", ("thread_id",)),
                                 ("thread_history_projection_state", ("thread_id",)))),
    ("goals_1.sqlite", (("thread_goals", ("thread_id",)),)),
    ("memories_1.sqlite", (("stage1_outputs", ("thread_id",)),)),
    ("logs_2.sqlite", (("logs", ("thread_id",)),)),
    ("state_5.sqlite", (("thread_dynamic_tools", ("thread_id",)),
                        ("thread_spawn_edges", ("parent_thread_id", "child_thread_id")),
                        ("thread_read_receipts", ("thread_id",)),
                        ("thread_attachments", ("thread_id",)),
                        ("guardian_review_feedback", ("thread_id",)),
                        ("threads", ("id",)))),
)


def session_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Codex keeps rollouts: ``<codex home>/sessions`` (and ``archived_sessions``)."""
    home = codex_home(env)
    return [home / "sessions", home / "archived_sessions"]


# User messages Codex writes itself in front of the user's first prompt (and after a
# compaction): the environment, AGENTS.md and skill instructions, shell commands the user ran,
# aborted turns, sub-agent notices. Its resume picker passes over them as these do.
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                    "<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
                    "<permissions instructions>")
# A rollout's name: rollout-<YYYY-MM-DDThh-mm-ss>-<id>.jsonl; the id is a UUID
ROLLOUT_PREFIX = "rollout-"
ID_LENGTH = 36
META_BYTES = 1 << 20  # the session_meta line (its base instructions: ~22 KB in 0.169.0)
SESSION_MARKS = SessionMarks(compaction=b'"compacted"', compaction_compact=b'"type":"compacted"',
                             usage=b'"token_count"', model=b'"turn_context"')  # no titles


def prompt_of(entry: Mapping[str, Any]) -> str | None:
    """The text of a user message the user typed (see :data:`CONTEXT_PREFIXES`), or None."""
    item = item_of(entry)
    if item is None or item.get("type") != "message" or item.get("role") != "user":
        return None
    texts = [b["text"].strip() for b in _parts_text(item.get("content")) if b["type"] == "text"]
    if any(text.startswith(CONTEXT_PREFIXES) for text in texts):
        return None
    return next((text for text in texts if text), None)


def rollout_id(name: str) -> str | None:
    """The session id a rollout's file name ends with, or None for another file."""
    if not name.startswith(ROLLOUT_PREFIX) or not name.endswith(".jsonl"):
        return None
    stem = name[:-len(".jsonl")]
    return stem[-ID_LENGTH:] if len(stem) > len(ROLLOUT_PREFIX) + ID_LENGTH else None


def meta_cwd(path: Path) -> str | None:
    """The ``cwd`` of a rollout's ``session_meta`` (its first line), or None."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(META_BYTES)
        entry = loads_json(line)
    except (OSError, ValueError):
        return None
    payload = entry.get("payload") if isinstance(entry, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) and entry.get("type") == "session_meta" \
        else None
    return cwd if isinstance(cwd, str) else None


def rollouts(env: Mapping[str, str], project: str | None = None, *,
             archived: bool = False) -> list[SessionFile]:
    """The rollouts under ``<codex home>/sessions`` (and ``archived_sessions`` when
    ``archived``); of ``project`` only when given (read from each one's first line)."""
    roots = session_roots(env)
    where = project_directory(project) if project else None
    found = []
    for root in roots if archived else roots[:1]:
        for folder, _, names in os.walk(root):
            for name in names:
                sid = rollout_id(name)
                if sid is None:
                    continue
                path = Path(folder) / name
                if where is None or meta_cwd(path) == where:
                    found.append(SessionFile(sid, path, f"codex {where or folder}"))
    return found


# --- the adapter ----------------------------------------------------------------------------------

class _Restarts:
    """The meter's compaction tracker: a ``compacted`` record restarts the context with what it
    keeps (its blocks are its replacement history, so its own estimate is that)."""

    def note(self, entry: Mapping[str, Any], tokens: int) -> int | None:
        return tokens if is_compacted(entry) else None


class _Writer:
    """Appends a ``compacted`` record (see :func:`summary_lines`); every input line stays."""

    def add(self, entry: dict[str, Any]) -> None:
        pass  # the input is held: read whole when writing

    def write(self, compaction: CompactionWrite) -> CompactionLines:
        from ctxtool.formats.compaction import CompactionLines  # see the imports

        assert compaction.items is not None and compaction.head is not None
        return CompactionLines(summary_lines(compaction.items, compaction.head, compaction.tail,
                                             compaction.summary, compaction.timestamp))


# --- tool calls as snip reads them ----------------------------------------------------------------
#
# Codex reads, searches and edits through its shell tool (``exec_command {"cmd": ...}``; older
# rollouts: ``shell {"command": [...]}``, ``local_shell_call``) and ``apply_patch``. snip's rules
# know Claude Code's tools (Read with file_path/offset/limit, Edit/Write, Grep/Glob/LS), so each
# call whose command says plainly what it does is seen as one of those; anything else (pipes,
# chains, scripts) is left as it is, which snip never clears as superseded.

_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.MULTILINE)
_SED_RANGE = re.compile(r"(\d+)(?:,(\d+))?p")
_OPERATORS = frozenset({"|", "||", "&&", ";", "&", "<", "<<", "(", ")", ">&", "<&", "|&"})
_REDIRECTS = (">", ">>")
_SEARCHES = {"grep": "Grep", "egrep": "Grep", "rg": "Grep", "ls": "LS", "find": "Glob",
             "fd": "Glob"}
_SHELLS = frozenset({"bash", "sh", "zsh"})


def shell_command(name: str, value: Any) -> str | None:
    """The shell command line a Codex tool call runs (``apply_patch``'s own call: its patch), or
    None."""
    if not isinstance(value, (dict, str)):
        return None
    if name == "apply_patch":
        text = value if isinstance(value, str) else value.get("input")
        return f"apply_patch {text}" if isinstance(text, str) else None
    if not isinstance(value, dict):
        return None
    command = value.get("cmd", value.get("command"))
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc"):
            return command[2]
        return shlex.join(command)
    return command if isinstance(command, str) else None


def shell_tool(command: str, workdir: str | None = None) -> tuple[str, dict[str, Any]] | None:
    """(Claude Code's tool name, its input) for a command that plainly reads part of a file
    (``cat``, ``nl``, ``head``, ``sed -n 'A,Bp'``), writes one (``apply_patch`` of one file,
    ``sed -i``, ``> FILE``) or searches (``grep``/``rg``, ``ls``, ``find``); else None."""
    if command.lstrip().startswith("apply_patch"):
        files = set(_PATCH_FILE.findall(command))
        return ("Edit", {"file_path": _path(files.pop(), workdir)}) if len(files) == 1 else None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if len(words) == 3 and words[0] in _SHELLS and words[1] in ("-c", "-lc"):
        return shell_tool(words[2], workdir)
    if not words or any(w in _OPERATORS for w in words):
        return None
    targets = [words[i + 1] for i, w in enumerate(words[:-1]) if w in _REDIRECTS]
    if targets:
        return ("Write", {"file_path": _path(targets[-1], workdir)}) if len(set(targets)) == 1 \
            else None
    program, args = words[0], words[1:]
    if program in _SEARCHES:
        return _SEARCHES[program], {}
    files = [a for a in args if not a.startswith("-")]
    if program in ("cat", "nl") and len(files) == 1 and (program == "nl" or files == args):
        return "Read", {"file_path": _path(files[0], workdir)}
    if program == "head":
        return _head(args, workdir)
    if program == "sed":
        return _sed(args, workdir)
    return None


def _head(args: list[str], workdir: str | None) -> tuple[str, dict[str, Any]] | None:
    count, rest = 10, list(args)
    if rest[:1] == ["-n"] and len(rest) > 1 and rest[1].isdigit():
        count, rest = int(rest[1]), rest[2:]
    elif rest and re.fullmatch(r"-n?\d+", rest[0]):
        count, rest = int(rest[0].lstrip("-n")), rest[1:]
    if len(rest) != 1 or rest[0].startswith("-") or count < 1:
        return None
    return "Read", {"file_path": _path(rest[0], workdir), "limit": count}


def _sed(args: list[str], workdir: str | None) -> tuple[str, dict[str, Any]] | None:
    files = [a for a in args[1:] if not a.startswith("-")]
    if any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        return ("Write", {"file_path": _path(args[-1], workdir)}) if files else None
    match = _SED_RANGE.fullmatch(args[1]) if len(args) == 3 and args[0] == "-n" else None
    if match is None or args[2].startswith("-"):
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if start < 1 or end < start:
        return None
    return "Read", {"file_path": _path(args[2], workdir), "offset": start,
                    "limit": end - start + 1}


def _path(path: str, workdir: str | None) -> str:
    if workdir and not posixpath.isabs(path):
        path = posixpath.join(workdir, path)
    return posixpath.normpath(path)


def snip_view(block: Block) -> Block:
    """A ``tool_use`` block of Codex under the Claude Code tool it amounts to (see above)."""
    if block.get("type") != "tool_use":
        return block
    value = block.get("input")
    command = shell_command(str(block.get("name") or ""), value)
    workdir = value.get("workdir") if isinstance(value, dict) else None
    seen = shell_tool(command, workdir if isinstance(workdir, str) else None) \
        if command is not None else None
    if seen is None:
        return block
    return {**block, "name": seen[0], "input": seen[1]}


# --- tool calls as the summarizer reads them ------------------------------------------------------
#
# The summary tracks files, tasks and commands by Claude Code's tool names: Codex's plan tool
# (``update_plan {"plan": [{"step", "status"}]}``) is its todo list, its shell tools run
# commands, and an ``apply_patch`` of one file is an edit of it (the lines the patch removes and
# adds, context lines on both sides), or a write when it adds the file.

_PATCH_LINE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$")


def patch_as_edit(patch: str, workdir: str | None) -> tuple[str, dict[str, Any]] | None:
    """(``Edit`` or ``Write``, its input) for a patch of one file; None for any other patch."""
    kind, path, old, new = "", "", [], []
    for line in patch.splitlines():
        header = _PATCH_LINE.match(line)
        if header:
            if path:
                return None  # a second file
            kind, path = header.groups()
        elif path and line[:1] in ("-", "+", " ") and not line.startswith("*** "):
            if line[:1] != "+":
                old.append(line[1:])
            if line[:1] != "-":
                new.append(line[1:])
    if not path or kind == "Delete":
        return None
    if kind == "Add":
        return "Write", {"file_path": _path(path, workdir), "content": "\n".join(new)}
    return "Edit", {"file_path": _path(path, workdir), "old_string": "\n".join(old),
                    "new_string": "\n".join(new)}


_EXIT = re.compile(r"^Process exited with code (\d+)|\"exit_code\":\s*(\d+)", re.MULTILINE)


def summary_view(block: Block) -> Block:
    """A ``tool_use`` block of Codex under the Claude Code tool it amounts to (see above); a
    ``tool_result`` of a command that exited non-zero marked as an error (Codex records the
    exit code in the output's text)."""
    if block.get("type") == "tool_result":
        content = block.get("content")
        code = _EXIT.search(content[:2000]) if isinstance(content, str) else None
        failed = code is not None and (code.group(1) or code.group(2)) != "0"
        return {**block, "is_error": True} if failed and not block.get("is_error") else block
    if block.get("type") != "tool_use":
        return block
    name, value = str(block.get("name") or ""), block.get("input")
    if name == "update_plan" and isinstance(value, dict) and isinstance(value.get("plan"), list):
        todos = [{"content": str(step.get("step") or ""), "status": str(step.get("status") or
                                                                         "pending")}
                 for step in value["plan"] if isinstance(step, dict)]
        return {**block, "name": "TodoWrite", "input": {"todos": todos}}
    command = shell_command(name, value)
    if command is None:
        return block
    workdir = value.get("workdir") if isinstance(value, dict) else None
    if command.startswith("apply_patch"):
        edit = patch_as_edit(command, workdir if isinstance(workdir, str) else None)
        return block if edit is None else {**block, "name": edit[0], "input": edit[1]}
    return {**block, "name": "Bash", "input": {"command": command}}


# --- vacuum ---------------------------------------------------------------------------------------

SUPERSEDED = "superseded compaction history"
VACUUM_MARK = "ctxtool_vacuumed"  # the payload key naming the original line (its SHA-256)
_TURN_STARTED, _ROLLED_BACK, _COMPACTED = b"task_started", b"thread_rolled_back", b'"compacted"'
_EMPTIED = ("replacement_history", "replacement_history_metadata")
# the base64 of an image's data URL, stored apart (under its own hash) when it is this long
_IMAGE = re.compile(rb"data:image/[A-Za-z0-9.+-]{1,40};base64,([A-Za-z0-9+/=]{1024,})")


def superseded_compactions(lines: Iterable[bytes]) -> list[LineEdit]:
    """One :class:`LineEdit` per ``compacted`` record whose ``replacement_history`` a later
    compaction of the same turn replaces: Codex never reads it again (docs/vacuum.md#codex).

    Codex rebuilds a thread's history from the newest compaction of a turn (resume: the newest
    of all; ``thread/fork`` through a turn and ``thread/revert`` before one: the newest of the
    turns kept), so an earlier compaction *in the same turn* is never the base; one that ends
    an earlier turn may be, and stays. A turn is what lies between two ``task_started`` events;
    compactions before the first one, and every one in a rollout with a ``thread_rolled_back``
    event (older Codex replays those by user message), are left alone."""
    edits: list[LineEdit] = []
    pending: LineEdit | None = None  # the newest compaction of this turn, emptied
    in_turn = False
    for index, line in enumerate(lines):
        if _TURN_STARTED in line and _line_kind(line) == ("event_msg", "task_started"):
            pending, in_turn = None, True
        elif _ROLLED_BACK in line and _line_kind(line) == ("event_msg", "thread_rolled_back"):
            return []
        elif in_turn and _COMPACTED in line and _line_kind(line) == ("compacted", None):
            emptied = _emptied_compaction(index, line)
            if emptied is False:
                continue  # no history of its own (an older record): it replaces nothing
            if pending is not None:
                edits.append(pending)
            pending = emptied or None
    return edits


def _line_kind(line: bytes) -> tuple[Any, Any] | None:
    try:
        entry = loads_json(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
        return None
    kind = entry["payload"].get("type") if entry.get("type") == "event_msg" else None
    return entry.get("type"), kind


def _emptied_compaction(index: int, line: bytes) -> LineEdit | None | bool:
    """The edit that empties a compaction's history (``[]``, Codex's own shape for a
    checkpoint that carries none) and names the original line; False when the record has no
    history list; None when it has one but cannot be edited safely (it still counts)."""
    text = line.decode("latin-1")
    try:
        top, _ = object_spans(text)
        payload_span = top["payload"]
        members, payload_end = object_spans(text, payload_span[0])
    except (SpanError, KeyError):
        return None
    history = members.get("replacement_history")
    if history is None or text[history[0]] != "[":
        return False
    if not line.endswith(b"\n") or VACUUM_MARK in members:
        return None
    cuts = sorted(members[key] for key in _EMPTIED
                  if key in members and text[members[key][0]] == "[")
    mark = f',"{VACUUM_MARK}":"sha256:{hashlib.sha256(line).hexdigest()}"'
    pieces, at = [], 0
    for start, end in cuts:
        pieces += [text[at:start], "[]"]
        at = end
    pieces += [text[at:payload_end - 1], mark, text[payload_end - 1:]]
    new = "".join(pieces).encode("latin-1")
    if not _only_history_emptied(line, new):
        return None
    return LineEdit(index, SUPERSEDED, new=new, payloads=_image_ranges(line))


def _only_history_emptied(line: bytes, new: bytes) -> bool:
    """What the edit must be, checked on the parsed JSON: the same record, its history lists
    empty, the mark added."""
    try:
        before, after = loads_json(line), loads_json(new)
    except ValueError:
        return False
    payload = dict(before["payload"])
    payload.update({key: [] for key in _EMPTIED if isinstance(payload.get(key), list)})
    payload[VACUUM_MARK] = after["payload"].get(VACUUM_MARK)
    return after == {**before, "payload": payload}


def _image_ranges(line: bytes) -> tuple[tuple[int, int], ...]:
    """The line cut around each image's base64 (an image repeated in many records is then
    stored once, under its hash); () when it holds none."""
    bounds = [edge for found in _IMAGE.finditer(line) for edge in found.span(1)]
    if not bounds:
        return ()
    edges = [0, *bounds, len(line)]
    return tuple((a, b) for a, b in zip(edges, edges[1:]) if a < b)


class CodexAdapter(FormatAdapter):
    """Codex CLI rollouts (module docstring). A tool output is its own line, as OpenAI chat's
    ``role: "tool"`` messages are; the context is what follows the last ``compacted`` record."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Codex CLI"
    schema: ClassVar[str | None] = SCHEMA
    reads_whole_session: ClassVar[bool] = True  # a compacted record decides what is sent
    compactable_tools: ClassVar[frozenset[str]] = COMPACTABLE_TOOLS
    names_tools_its_way: ClassVar[bool] = True
    summary_keeps_lines: ClassVar[bool] = True

    def claims(self, entry: Mapping[str, Any]) -> bool:
        return claims(entry)

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        item = item_of(entry)
        if item is not None:
            return item if item_role_and_blocks(item)[0] is not None else None
        return dict(entry["payload"]) if is_compacted(entry) else None

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        return role_and_blocks(entry)

    def with_message_content(self, entry: dict[str, Any], content: Any) -> dict[str, Any]:
        raise ValueError("a Codex line holds one item: use with_tool_result_content")

    def with_tool_result_content(self, entry: dict[str, Any], tool_use_id: str,
                                 content: Any) -> dict[str, Any]:
        found = tool_output(entry)
        if found is None or found[0] != tool_use_id:
            return entry
        return with_tool_output(entry, content)

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        found = tool_output(entry)
        return [] if found is None else [ResultSlot(-1, found[0], found[1])]

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        return with_tool_output(entry, changes[-1])

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        found = tool_output(entry)
        if found is None or not clearer.wants_result(found[0]):
            return entry
        text = clearer.result(found[0], found[1], entry)
        return entry if text is None else with_tool_output(entry, text)

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        found = tool_output(entry)
        if found is None:
            return entry
        content = restorer.result(found[1], found[0])
        return entry if content is found[1] else with_tool_output(entry, content)

    def compaction_tracker(self) -> _Restarts:
        return _Restarts()

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        return summary_of(entry) if is_compacted(entry) else None

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        return model_of(entry)

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        return session_id_of(entry)

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        if entry.get("type") != "session_meta":
            return None, None
        cwd = entry["payload"].get("cwd")
        return session_id_of(entry), cwd if isinstance(cwd, str) else None

    def is_instruction(self, entry: Mapping[str, Any]) -> bool:
        # session_meta holds the base instructions Codex sends in front of every request (and
        # names the session: a cut transcript still resumes)
        return is_instruction(entry) or entry.get("type") == "session_meta"

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        counts = usage_counts(entry)
        if counts is None:
            return None
        key, uncached, cached, output = counts
        return Usage((key, ""), uncached, 0, cached, output)

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return context_entries(entries)

    def system_sent(self, entries: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
        # the base instructions session_meta records go in front of every request, with the
        # tool definitions no line records
        meta = next((e for e in entries if e.get("type") == "session_meta"), None)
        text = base_instructions(meta) if meta is not None else ""
        return (text, UNRECORDED_SYSTEM_TOKENS) if text else None

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        return is_compacted(entry)

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        return is_compacted(entry)

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        return session_roots(env)

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        return codex_home(env)

    def snip_view(self, block: Block) -> Block:
        return snip_view(block)

    def claude_code_tool(self, block: Block) -> Block:
        return summary_view(block)

    def compaction_writer(self) -> _Writer:
        return _Writer()

    def configured_limits(self, view: list[dict[str, Any]],
                          lookup: LimitsLookup | None = None) -> Mapping[str, int]:
        """The window Codex itself measures against: the last ``token_count``'s
        ``model_context_window`` (its model's window less the share it keeps in reserve)."""
        window = next((w for e in reversed(view) if (w := context_window_of(e))), None)
        return {"context": window} if window else {}

    def overflow_rule(self, view: list[dict[str, Any]], *, window: int, context: int,
                      input_limit: int | None, output_limit: int | None,
                      env: Mapping[str, str] | None) -> CodexLimits | None:
        """Codex's own rule, measured against the window its token counts record (none
        recorded, e.g. ``--context-window`` on a rollout that has none: ctxtool's thresholds)."""
        recorded = self.configured_limits(view).get("context")
        return codex_limits(view, recorded) if recorded and recorded == window else None

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        """Where Codex compacts (``summarize --auto``): by the window its last token count
        records; none recorded, ctxtool's thresholds for ``window``."""
        recorded = None
        for entry in entries:
            recorded = context_window_of(entry) or recorded
        return codex_limits((), recorded).usable if recorded else None

    session_marks: ClassVar[SessionMarks | None] = SESSION_MARKS

    def session_files(self, env: Mapping[str, str], project: str | None = None, *,
                      archived: bool = False) -> list[SessionFile]:
        return rollouts(env, project, archived=archived)

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        return prompt_of(entry)

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterable[LineEdit]:
        return superseded_compactions(lines)

    def rewriting(self, path: Path) -> None:
        """A rollout's turns are indexed by byte offset in Codex's history database: the
        thread's rows go, so Codex indexes the rewritten file afresh (storage/codex_history)."""
        thread = rollout_id(path.name)
        if thread is None:
            return
        from ctxtool.storage.codex_history import forget_thread, history_database

        database = history_database(path)
        if database is not None:
            forget_thread(database, thread)


__all__ = ["CodexAdapter", "CodexLimits", "codex_limits", "NAME", "SCHEMA", "SUMMARY_PREFIX", "claims", "compaction_lines", "context_entries",
           "context_window_of", "is_compacted", "is_instruction", "item_role_and_blocks",
           "role_and_blocks", "session_id_of", "session_roots", "shell_command", "shell_tool",
           "snip_view", "summary_view", "tool_output", "usage_counts", "with_tool_output"]
