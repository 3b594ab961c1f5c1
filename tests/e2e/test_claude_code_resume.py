"""The real Claude Code resumes what ctxtool wrote, and the request it then sends is checked.

For three corpus sessions of different Claude Code generations (1.0.x, 2.0.x, 2.1.x) and a
session the real client writes here (tool calls, a persisted output, its own ``/compact``), every
variant below is resumed once (``claude -p --resume ID continue``) against the fake Messages API,
and its first request is held to the Messages API's rules and to what the variant promises.
Module-scoped: each (session, variant) runs the client once and all assertions read that run.

The estimate check (:func:`test_the_estimate_moves_with_what_claude_code_sends`) compares like
with like. ctxtool estimates the file it wrote, before any resume; what Claude Code 2.1.330 then
sends is measured on its first request. Both sides count only the conversation:

- the system prompt and tools are the client's, not the file's: a corpus session's recorded
  usage holds the system prompt of the version that wrote it (1.0.108's, 2.1.38's...), and
  2.1.330 sends its own, split between ``system``, ``tools`` and ``role: system`` messages. So
  the estimate's conversation is ``context_tokens - system_tokens`` (the figure ctxtool derives
  from the session's last call, the one its estimate is anchored on), and the request's is its
  ``messages`` without the ``role: system`` ones and without the turn Claude Code adds on resume
  (its reminders and the ``continue`` prompt: not in the file);
- both are counted in one measure, ctxtool's token heuristic (:func:`message_tokens`): no
  tokenizer is at hand offline, the heuristic is fitted to Claude's counts, and characters / 4
  undercounts digits and numbered listings several times. The session written here gets its
  usage from the fake server in that measure too (:func:`heuristic_tokens`), as a corpus
  session's usage came from the real tokenizer.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.api_message_rules import anthropic_problems
from tests.conftest import CORPUS, run_ctxtool
from tests.e2e.claude_code import ClaudeCode
from tests.e2e.fake_messages import FakeMessages, heuristic_tokens, message_tokens, say, tool

# small main-chain sessions, one per generation of Claude Code
CORPUS_SESSIONS = {
    "1.0.108": "d-kimuson__claude-code-viewer/mock-global-claude-dir__projects__sample-project__"
               "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "2.0.76": "entireio__cli/a6__e4c2a0fbd1__0__full.jsonl",
    "2.1.38": "marot__spotter/test__fixtures__transcripts__tool_heavy.jsonl",
}
KEEP_TOKENS = 2000
VARIANTS: dict[str, list[list[str]]] = {
    "original": [],
    "summarize": [["summarize"]],
    "summarize --keep-last": [["summarize", "--keep-last", "4"]],
    "summarize --keep-tokens": [["summarize", "--keep-tokens", str(KEEP_TOKENS)]],
    "summarize --restore-files": [["summarize", "--restore-files", "2"]],
    "snip": [["snip"]],
    "microcompact": [["microcompact"]],
    "microcompact aggressive": [["microcompact", "--force", "--keep", "1", "--target", "0"]],
    "persist": [["persist"]],
    "persist low threshold": [["persist", "--max-chars", "400"]],
    "pipeline": [["persist", "--max-chars", "2000"], ["snip"],
                 ["microcompact", "--force", "--keep", "2", "--target", "0"]],
}
SUMMARY_START = "This session is being continued from a previous conversation"


@dataclass
class Resumed:
    data: bytes  # the session file Claude Code was given
    body: dict[str, Any]  # its first request after `--resume`
    returncode: int
    estimate: dict[str, Any]  # ctxtool's `estimate --json` of ``data``, before the resume
    stderr: str
    notes: str = ""  # what ctxtool said on stderr

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body["messages"]


def chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


API_EXTRAS = ("cache_control", "caller")  # block keys the API takes beyond the basic shapes


def without_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k not in API_EXTRAS}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def joined(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive user messages as one, as the Messages API takes them."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        content = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if out and message["role"] == "user" == out[-1]["role"]:
            out[-1]["content"] = out[-1]["content"] + content
        else:
            out.append({"role": message["role"], "content": list(content)})
    return out


def blocks(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [b for m in messages if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == kind]


def session_id_of(data: bytes) -> str:
    for line in data.splitlines():
        entry = orjson.loads(line)
        if isinstance(entry.get("sessionId"), str):
            return entry["sessionId"]
    raise AssertionError("no sessionId")


def ctxtool(args: list[str], data: bytes, store: Path) -> tuple[bytes, str]:
    proc = run_ctxtool(*args, "--store", str(store), input=data) if args[0] in (
        "persist", "snip", "microcompact") else run_ctxtool(*args, input=data)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr.decode()


def estimate_of(data: bytes) -> dict[str, Any]:
    proc = run_ctxtool("estimate", "--json", input=data)
    assert proc.returncode == 0, proc.stderr
    return orjson.loads(proc.stdout)


def estimated_conversation(report: dict[str, Any]) -> int:
    """ctxtool's context estimate less its system prompt and tools figure."""
    return int(report["context_tokens"]) - int(report["system_tokens"])


def resume_turn(message: dict[str, Any]) -> bool:
    """A message Claude Code adds when resuming: its prompt, its reminders (text only)."""
    content = message["content"]
    texts = [content] if isinstance(content, str) else [
        b.get("text") if b.get("type") == "text" else None for b in content]
    return message["role"] == "user" and all(
        isinstance(t, str) and (t == "continue" or t.startswith("<system-reminder>"))
        for t in texts)


def sent_conversation(body: dict[str, Any]) -> int:
    """Tokens (ctxtool's heuristic) of the conversation a request sends from the file: its
    messages without ``role: system`` ones and without the turn added on resume."""
    messages = [m for m in without_cache_control(body["messages"]) if m["role"] != "system"]
    while messages and resume_turn(messages[-1]):
        messages.pop()
    return message_tokens(messages)


# --- the sessions ------------------------------------------------------------------------------------

def fresh_session(claude_bin: str, root: Path) -> bytes:
    """A session the real client writes: tool calls, a persisted Bash output, its own /compact."""
    with FakeMessages(tokens=heuristic_tokens) as api:  # as the tokenizer: see the docstring
        cc = ClaudeCode(claude_bin, root, api)
        notes = cc.cwd / "notes.txt"
        notes.write_text("".join(f"line {n}: alpha beta gamma\n" for n in range(1, 200)))
        api.push(tool("Bash", {"command": "ls -la", "description": "List"}),
                 tool("Read", {"file_path": str(notes)}),
                 tool("Bash", {"command": "seq 1 11000", "description": "Numbers"}),
                 tool("Bash", {"command": "grep -c beta notes.txt", "description": "Count"}),
                 say("notes.txt has 199 lines."))
        first = cc.ask("What is in this project?")
        assert first.returncode == 0, first.stderr
        session = str(first.result["session_id"])
        api.push(tool("Read", {"file_path": str(notes), "limit": 50}), say("Read again."))
        assert cc.resume(session, "Read the first 50 lines again").returncode == 0
        assert cc.resume(session, "/compact").returncode == 0
        assert api.compactions(), "Claude Code's /compact sent no summary request"
        api.push(tool("Bash", {"command": "wc -l notes.txt", "description": "Count lines"}),
                 tool("Read", {"file_path": str(notes), "offset": 100, "limit": 80}),
                 tool("Bash", {"command": "seq 1 3000", "description": "Numbers"}),
                 tool("Read", {"file_path": str(notes)}),
                 tool("Bash", {"command": "seq 5000 7000", "description": "More numbers"}),
                 say("199 lines."))
        assert cc.resume(session, "Count the lines").returncode == 0
        return cc.session_path(session).read_bytes()


@pytest.fixture(scope="module", params=[*CORPUS_SESSIONS, "fresh"])
def source(request: pytest.FixtureRequest, claude_bin: str,
           tmp_path_factory: pytest.TempPathFactory) -> bytes:
    if request.param == "fresh":
        return fresh_session(claude_bin, tmp_path_factory.mktemp("fresh"))
    path = CORPUS / CORPUS_SESSIONS[request.param]
    if not path.is_file():
        pytest.skip(f"corpus session not found: {path}")
    return path.read_bytes()


@pytest.fixture(scope="module")
def resumed(source: bytes, claude_bin: str,
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, Resumed]:
    """Every variant of ``source``, resumed once by the real client (a few at a time: each has
    its own HOME and fake server)."""
    # the folders are made here, not in the threads: pytest's temporary-folder factory is not
    # thread-safe (its first call creates the session's base folder)
    roots = {name: tmp_path_factory.mktemp(name.replace(" ", "_").replace("-", ""))
             for name in VARIANTS}

    def one(name: str) -> Resumed:
        root = roots[name]
        data, notes = source, ""
        for step in VARIANTS[name]:
            data, said = ctxtool(step, data, root / "store")
            notes += said
        with FakeMessages() as api:
            cc = ClaudeCode(claude_bin, root, api)
            sid = session_id_of(data)
            cc.place(data, sid)
            run = cc.resume(sid)
            return Resumed(data, run.first, run.returncode, estimate_of(data), run.stderr, notes)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(VARIANTS, pool.map(one, VARIANTS)))


# --- every variant -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(VARIANTS))
def test_resumes_and_sends_a_valid_request(resumed: dict[str, Resumed], name: str) -> None:
    run = resumed[name]
    assert run.returncode == 0, run.stderr[-2000:]
    # Claude Code 2.1.330 also sends role "system" messages between turns (its per-turn-control
    # beta: effort, environment notes), and consecutive user messages (the API joins them, and
    # Claude Code does it with its own compacted sessions): the rules apply to what is left
    messages = joined([m for m in without_cache_control(run.messages) if m["role"] != "system"])
    assert not anthropic_problems(messages)
    uses = [b["id"] for b in blocks(messages, "tool_use")]
    results = [b["tool_use_id"] for b in blocks(messages, "tool_result")]
    assert len(uses) == len(set(uses)) and len(results) == len(set(results))
    texts = [b["text"] for m in messages if m["role"] == "assistant"
             for b in blocks([m], "text") if len(b["text"]) > 40]
    assert len(texts) == len(set(texts)), "an assistant text was sent twice"


@pytest.mark.parametrize("name", [n for n in VARIANTS if n.startswith("summarize")])
def test_after_summarize_the_summary_leads_and_the_request_is_smaller(
        resumed: dict[str, Resumed], name: str) -> None:
    run, original = resumed[name], resumed["original"]
    if run.data == original.data:  # ctxtool declined (nothing to save), and said so
        assert "input passed through unchanged" in run.notes, run.notes
        return
    first = run.messages[0]
    text = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
    assert first["role"] == "user" and SUMMARY_START in text
    # no tool call from before the boundary but the ones it keeps verbatim
    sent = {b["id"] for b in blocks(run.messages, "tool_use")}
    assert sent <= kept_tool_ids(run.data)
    assert chars(run.messages) < chars(original.messages)
    if name.endswith("--keep-tokens"):
        # about the summary plus N: whole messages are kept, so up to one more message, and
        # what Claude Code adds on resume (the last user message)
        largest = max((chars(m) for m in run.messages[1:-1]), default=0) / 4
        bound = len(text) / 4 + KEEP_TOKENS + largest + chars(run.messages[-1]) / 4
        assert chars(run.messages) / 4 <= 1.1 * bound


def kept_tool_ids(data: bytes) -> set[str]:
    """Tool ids of the messages the last compact boundary keeps by reference."""
    entries = [orjson.loads(line) for line in data.splitlines()]
    boundary = [e for e in entries if e.get("subtype") == "compact_boundary"][-1]
    meta = boundary["compactMetadata"]
    listed = set((meta.get("preservedMessages") or {}).get("allUuids") or [])
    segment = meta.get("preservedSegment")
    if not listed and segment:  # the older form alone: its chain from the tail to the head
        parents = {e.get("uuid"): e.get("parentUuid") for e in entries}
        walked = [segment["tailUuid"]]
        while walked[-1] != segment["headUuid"] and walked[-1] in parents:
            walked.append(parents[walked[-1]])
        listed = set(walked)
    after = entries[entries.index(boundary):]
    return {b["id"] for e in entries if e.get("uuid") in listed or e in after
            for b in ((e.get("message") or {}).get("content") or [])
            if isinstance(b, dict) and b.get("type") == "tool_use"}


@pytest.mark.parametrize("name", [n for n in VARIANTS if n != "original"])
def test_the_estimate_moves_with_what_claude_code_sends(resumed: dict[str, Resumed],
                                                        name: str) -> None:
    """ctxtool's estimate of its output over its estimate of the input is within 10% of what
    Claude Code sends for the output over what it sends for the input (module docstring)."""
    run, original = resumed[name], resumed["original"]
    ours = estimated_conversation(run.estimate) / estimated_conversation(original.estimate)
    theirs = sent_conversation(run.body) / sent_conversation(original.body)
    assert abs(ours / theirs - 1) <= 0.10, (
        f"estimate {estimated_conversation(run.estimate)}/"
        f"{estimated_conversation(original.estimate)} = {ours:.3f}, sent "
        f"{sent_conversation(run.body)}/{sent_conversation(original.body)} = {theirs:.3f}")
