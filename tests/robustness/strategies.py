"""Plausible transcripts for property tests (hypothesis), and small builders the other robustness
tests share.

Three formats, generated as lists of plain dicts, then written as JSONL the way real writers do:
compact (Claude Code's ``JSON.stringify``, orjson), Python's ``json.dumps`` default spacing with
``\\uXXXX`` escapes, CRLF endings, a BOM, no final newline - so byte-identity properties see the
spellings a transform must leave alone.

* Claude Code: user prompts; streamed assistant responses written as several lines that share
  ``message.id`` and ``requestId`` (thinking, text, then 1-3 parallel ``tool_use`` lines); one
  user line per ``tool_result`` (string or block-list content, sometimes with a
  ``toolUseResult`` copy); compact boundaries followed by their ``isCompactSummary`` entry (the
  chain restarts at ``parentUuid: null``); side-chain turns with their own chain; and entries of
  types transforms must pass through (``file-history-snapshot``, ``summary`` titles).
* Anthropic Messages lists: user / assistant turns, parallel ``tool_use`` blocks answered by one
  user message holding every ``tool_result``.
* OpenAI chat lists: a system message, ``tool_calls`` with JSON ``arguments``, one ``tool``
  message per call.
* Both message lists sometimes hold a ``[ctxtool summary]`` user message (an earlier summarize).

Every generated transcript is well formed: each tool_use has exactly one tool_result after it,
and each ``parentUuid`` names an earlier entry - the invariants the properties check on output.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from ctxtool.formats.jsonl import dumps_json
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI

BOM = b"\xef\xbb\xbf"
START = datetime(2026, 1, 1, 9, 0, 0, tzinfo=timezone.utc)
FILES = ("/w/app/main.py", "/w/app/util.py", "/w/app/README.md", "/w/app/data/中文.txt")

# --- plain builders (no hypothesis) ---------------------------------------------------------------


def compact(value: dict[str, Any]) -> bytes:
    """One JSONL line the way Claude Code writes it (compact, UTF-8, key order kept)."""
    return dumps_json(value) + b"\n"


def jsonl(values: list[dict[str, Any]]) -> bytes:
    return b"".join(compact(v) for v in values)


def cc_entry(kind: str, uuid: str | None, parent: str | None, message: dict[str, Any] | None = None,
             *, session: str = "5f0c4c4e-0000-4000-8000-000000000001", cwd: str = "/w/app",
             second: int = 0, **extra: Any) -> dict[str, Any]:
    """A Claude Code entry with the envelope real transcripts carry."""
    entry: dict[str, Any] = {"parentUuid": parent, "isSidechain": False, "userType": "external",
                             "cwd": cwd, "sessionId": session, "version": "2.1.3",
                             "type": kind, "uuid": uuid,
                             "timestamp": _iso(START + timedelta(seconds=second))}
    if message is not None:
        entry["message"] = message
    entry.update(extra)
    return entry


def tool_use_message(msg_id: str, tool_id: str, name: str,
                     tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 12, "cache_read_input_tokens": 3000, "output_tokens": 40}}


def tool_result_message(tool_id: str, content: Any, *, is_error: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
    if is_error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# --- line spellings -------------------------------------------------------------------------------

STYLES: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "compact": lambda v: dumps_json(v),  # orjson, or the stdlib for integers past 64 bits
    "python": lambda v: json.dumps(v).encode(),  # ", " and ": " separators, \\uXXXX escapes
    "python-utf8": lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode(),
}


@dataclass(frozen=True)
class Transcript:
    """A generated transcript: its format, entries and the exact bytes they were written as."""

    fmt: str
    entries: list[dict[str, Any]]
    data: bytes


@st.composite
def spelled(draw: st.DrawFn, fmt: str, entries: list[dict[str, Any]]) -> Transcript:
    """``entries`` written as JSONL bytes: mostly compact lines, some in other spellings, maybe
    CRLF, a BOM, a blank line or no final newline."""
    weights = st.sampled_from(["compact"] * 6 + ["python", "python-utf8"])
    crlf = draw(st.booleans()) and draw(st.booleans())
    lines = []
    for value in entries:
        line = STYLES[draw(weights)](value) + (b"\r\n" if crlf else b"\n")
        if draw(st.integers(0, 19)) == 0:
            line += b"\n"  # a blank line after it
        lines.append(line)
    data = b"".join(lines)
    if data and draw(st.integers(0, 9)) == 0:
        data = BOM + data
    if data and draw(st.integers(0, 9)) == 0:
        data = data.rstrip(b"\r\n")
    return Transcript(fmt, entries, data)


# --- content --------------------------------------------------------------------------------------

# Text as tools print it: code, CJK, escapes JSON must handle (quotes, backslashes, control
# characters, U+2028), and long enough runs for persist / snip / microcompact to act on.
_ALPHABET = st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs"),
                          include_characters="\n\t\"\\\u2028\x00\x1f中文é")
short_text = st.text(_ALPHABET, min_size=1, max_size=40)
chunks = st.sampled_from(["def main():\n    return 0\n", "     1\u2192import os\n", "中文输出 ",
                          "path/with \"quotes\" and \\backslashes\\ ", "\x1b[31merror\x1b[0m\n",
                          "ok\n", "result line\r\n"])


@st.composite
def tool_output(draw: st.DrawFn) -> str:
    """A tool's text output: empty, a few words, or a few KB of repeated lines."""
    size = draw(st.sampled_from([0, 1, 1, 3, 40, 150, 600]))
    parts = draw(st.lists(chunks, min_size=min(size, 1), max_size=4)) or [""]
    return draw(short_text) + "".join(parts) * size


@st.composite
def result_content(draw: st.DrawFn) -> Any:
    """tool_result content: a string (mostly) or a list of text blocks."""
    text = draw(tool_output())
    if draw(st.integers(0, 4)) == 0:
        return [{"type": "text", "text": text}, {"type": "text", "text": draw(short_text)}]
    return text


TOOLS = ("Read", "Read", "Grep", "Glob", "Bash", "Edit", "Write", "WebFetch", "mcp__docs__search",
         "Task")


@st.composite
def tool_input(draw: st.DrawFn, name: str) -> dict[str, Any]:
    made = draw(_tool_input(name))
    if draw(st.integers(0, 9)) == 0:  # an integer past 64 bits (orjson would make it a float)
        made["trace_id"] = draw(st.integers(2**64, 2**80) | st.integers(-2**80, -2**63 - 1))
    return made


@st.composite
def _tool_input(draw: st.DrawFn, name: str) -> dict[str, Any]:
    path = draw(st.sampled_from(FILES))
    if name == "Read":
        extra = draw(st.sampled_from([{}, {}, {"offset": 1, "limit": 50}]))
        return {"file_path": path, **extra}
    if name in ("Edit", "Write"):
        return {"file_path": path, "old_string": draw(short_text), "new_string": draw(short_text)}
    if name in ("Grep", "Glob"):
        return {"pattern": draw(st.sampled_from(["TODO", "def ", "*.py", "中文"])), "path": "/w/app"}
    if name == "Bash":
        return {"command": draw(st.sampled_from(["ls -la", "pytest -q", "git status"])),
                "description": draw(short_text)}
    return {"query": draw(short_text)}


# --- Claude Code ----------------------------------------------------------------------------------


@dataclass
class _Chain:
    """Writes Claude Code entries: uuids, the main chain, message and request ids, the clock."""

    session: str
    cwd: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    counter: int = 0
    second: int = 0
    last: str | None = None  # the main chain's newest uuid

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter:04d}"

    def uuid(self) -> str:
        self.counter += 1
        return f"{self.counter:08x}-0000-4000-8000-{self.counter:012x}"

    def add(self, kind: str, message: dict[str, Any] | None, *, parent: str | None = None,
            root: bool = False, sidechain: bool = False, **extra: Any) -> str:
        """Append an entry; its parent is ``parent``, none with ``root``, else the main chain."""
        uuid = self.uuid()
        self.second += 7
        chosen = None if root else parent or self.last
        entry = cc_entry(kind, uuid, chosen, message, session=self.session, cwd=self.cwd,
                         second=self.second, **extra)
        entry["isSidechain"] = sidechain
        self.entries.append(entry)
        if not sidechain:
            self.last = uuid
        return uuid


@st.composite
def _assistant_turn(draw: st.DrawFn, chain: _Chain) -> None:
    """One streamed response (thinking, text, parallel tool calls) and the tool results."""
    msg_id, request = chain.next_id("msg_"), chain.next_id("req_")
    usage = {"input_tokens": draw(st.integers(1, 50)),
             "cache_creation_input_tokens": draw(st.integers(0, 5000)),
             "cache_read_input_tokens": draw(st.integers(0, 90000)),
             "output_tokens": draw(st.integers(1, 800))}

    written = []

    def line(block: dict[str, Any]) -> None:
        written.append(chain.add("assistant", {"id": msg_id, "type": "message",
                                               "role": "assistant", "model": "claude-sonnet-4-5",
                                               "content": [block], "stop_reason": None,
                                               "usage": usage}, requestId=request))

    if draw(st.integers(0, 3)) == 0:
        line({"type": "thinking", "thinking": draw(short_text), "signature": "c2lnbmF0dXJl"})
    if draw(st.booleans()):
        line({"type": "text", "text": draw(short_text)})
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(TOOLS))
        tool_id = chain.next_id("toolu_01")
        line({"type": "tool_use", "id": tool_id, "name": name, "input": draw(tool_input(name))})
        calls.append(tool_id)
    if not written:
        line({"type": "text", "text": draw(short_text)})
    for tool_id in calls:
        content = draw(result_content())
        extra: dict[str, Any] = {}
        if isinstance(content, str) and draw(st.booleans()):
            extra["toolUseResult"] = {"stdout": content, "stderr": "", "interrupted": False}
        failed = draw(st.integers(0, 9)) == 0
        chain.add("user", tool_result_message(tool_id, content, is_error=failed), **extra)


@st.composite
def claude_code_transcripts(draw: st.DrawFn, *, max_turns: int = 6) -> Transcript:
    session = draw(st.sampled_from(["5f0c4c4e-0000-4000-8000-000000000001",
                                    "0b28d950-c5c9-4543-a97c-635d487126df"]))
    chain = _Chain(session=session, cwd=draw(st.sampled_from(["/w/app", "/w/app/中文 dir"])))
    for turn in range(draw(st.integers(1, max_turns))):
        if turn and draw(st.integers(0, 3)) == 0:
            _compact_boundary(draw, chain)
        if draw(st.integers(0, 5)) == 0:
            _sidechain(draw, chain)
        if draw(st.integers(0, 6)) == 0:
            chain.entries.append({"type": "file-history-snapshot", "messageId": chain.uuid(),
                                  "snapshot": {"trackedFileBackups": {}, "timestamp":
                                               _iso(START)}, "isSnapshotUpdate": False})
        prompt = draw(st.one_of(short_text, st.builds(lambda t: [{"type": "text", "text": t}],
                                                      short_text)))
        chain.add("user", {"role": "user", "content": prompt})
        for _ in range(draw(st.integers(1, 3))):
            draw(_assistant_turn(chain))
    if draw(st.integers(0, 4)) == 0:
        chain.entries.insert(0, {"type": "summary", "summary": draw(short_text),
                                 "leafUuid": chain.last})
    return draw(spelled(CLAUDE_CODE, chain.entries))


def _compact_boundary(draw: st.DrawFn, chain: _Chain) -> None:
    boundary = chain.add("system", None, root=True, subtype="compact_boundary",
                         content="Conversation compacted", isMeta=False, level="info",
                         logicalParentUuid=chain.last,
                         compactMetadata={"trigger": draw(st.sampled_from(["manual", "auto"])),
                                          "preTokens": draw(st.integers(1000, 190000))})
    chain.add("user", {"role": "user", "content": "This session is being continued from a "
                       "previous conversation. Summary: " + draw(short_text)},
              parent=boundary, isCompactSummary=True, isVisibleInTranscriptOnly=True)


def _sidechain(draw: st.DrawFn, chain: _Chain) -> None:
    """A subagent's turn stored in the main file: its own chain, marked isSidechain."""
    first = chain.add("user", {"role": "user", "content": draw(short_text)}, root=True,
                      sidechain=True, agentId="a1b2c3")
    chain.add("assistant", {"id": chain.next_id("msg_"), "type": "message", "role": "assistant",
                            "model": "claude-haiku-4-5", "content": [{"type": "text",
                                                                     "text": draw(short_text)}],
                            "usage": {"input_tokens": 5, "output_tokens": 5}},
              parent=first, sidechain=True, agentId="a1b2c3")


# --- message lists --------------------------------------------------------------------------------


@st.composite
def anthropic_transcripts(draw: st.DrawFn, *, max_turns: int = 6) -> Transcript:
    messages: list[dict[str, Any]] = [{"role": "user", "content": draw(short_text)}]
    counter = 0
    for turn in range(draw(st.integers(1, max_turns))):
        if turn and draw(st.integers(0, 3)) == 0:
            summary = summary_message(draw(short_text))
            if isinstance(messages[-1]["content"], str):
                messages[-1] = summary
            else:  # never in place of the message answering tool calls
                messages.append(summary)
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(short_text)})
        results = []
        for _ in range(draw(st.integers(0 if blocks else 1, 3))):
            counter += 1
            name = draw(st.sampled_from(TOOLS))
            tool_id = f"toolu_{counter:03d}"
            blocks.append({"type": "tool_use", "id": tool_id, "name": name,
                           "input": draw(tool_input(name))})
            results.append({"type": "tool_result", "tool_use_id": tool_id,
                            "content": draw(result_content())})
        messages.append({"role": "assistant", "content": blocks})
        follow = draw(short_text)
        messages.append({"role": "user", "content": results + [{"type": "text", "text": follow}]
                         if results else follow})
    return draw(spelled(ANTHROPIC, messages))


@st.composite
def openai_transcripts(draw: st.DrawFn, *, max_turns: int = 6) -> Transcript:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."},
                                      {"role": "user", "content": draw(short_text)}]
    counter = 0
    for turn in range(draw(st.integers(1, max_turns))):
        if turn and draw(st.integers(0, 3)) == 0:
            messages[-1] = summary_message(draw(short_text))
        calls, answers = [], []
        for _ in range(draw(st.integers(0, 3))):
            counter += 1
            name = draw(st.sampled_from(TOOLS))
            call_id = f"call_{counter:03d}"
            calls.append({"id": call_id, "type": "function",
                          "function": {"name": name,
                                       "arguments": json.dumps(draw(tool_input(name)))}})
            answers.append({"role": "tool", "tool_call_id": call_id,
                            "content": draw(tool_output())})
        if calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            messages.extend(answers)
        messages.append({"role": "assistant", "content": draw(short_text)})
        messages.append({"role": "user", "content": draw(short_text)})
    return draw(spelled(OPENAI, messages))


def summary_message(text: str) -> dict[str, Any]:
    """A user message as ``ctxtool summarize`` writes it into a message list: where
    filter-compacted cuts."""
    return {"role": "user", "content": f"[ctxtool summary] This session is being continued. {text}"}


def transcripts(*, max_turns: int = 6) -> st.SearchStrategy[Transcript]:
    """A transcript in any of the three formats (Claude Code twice as often)."""
    return st.one_of(claude_code_transcripts(max_turns=max_turns),
                     claude_code_transcripts(max_turns=max_turns),
                     anthropic_transcripts(max_turns=max_turns),
                     openai_transcripts(max_turns=max_turns))
