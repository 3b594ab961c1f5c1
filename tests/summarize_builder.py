"""Build small Claude Code sessions (lists of entry dicts) for the summarize tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ctxtool.core.sizing.tokens import estimate_entry_tokens
from ctxtool.core.summarizing.offline import OfflineRun, View
from ctxtool.core.summarizing.request import build_request
from ctxtool.types import CLAUDE_CODE

SESSION = "5e55a0a0-0000-4000-8000-000000000001"
CWD = "/work/app"


class Session:
    """Appends entries the way Claude Code writes them: a parentUuid chain, streamed assistant
    responses (one line per block, shared message.id and usage), tool results as user entries."""

    def __init__(self, *, sidechain: bool = False) -> None:
        self.entries: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.count = 0
        self.sidechain = sidechain

    def _base(self) -> dict[str, Any]:
        self.count += 1
        uuid = f"00000000-0000-4000-8000-{self.count:012d}"
        entry = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external",
                 "cwd": CWD, "sessionId": SESSION, "version": "2.1.14", "gitBranch": "main",
                 "uuid": uuid, "timestamp": f"2026-01-05T10:{self.count // 60:02d}:{self.count % 60:02d}.000Z"}
        self.parent = uuid
        return entry

    def add(self, entry: dict[str, Any]) -> dict[str, Any]:
        self.entries.append(entry)
        return entry

    def user(self, content: Any, **extra: Any) -> dict[str, Any]:
        return self.add({**self._base(), "type": "user",
                         "message": {"role": "user", "content": content}, **extra})

    def assistant(self, *blocks: dict[str, Any], message_id: str | None = None) -> list[dict[str, Any]]:
        mid = message_id or f"msg_{self.count + 1:04d}"
        # the prompt grows with what was sent (in the measure of ctxtool's estimate, as a
        # tokenizer counts it), over a 30K-token system prompt and tools (more than ctxtool's
        # default figure, which counts after a compaction: the summary makes it smaller)
        sent = sum(estimate_entry_tokens(e, CLAUDE_CODE) for e in self.entries)
        usage = {"input_tokens": 5, "cache_creation_input_tokens": 100,
                 "cache_read_input_tokens": 30000 + sent, "output_tokens": 20}
        return [self.add({**self._base(), "type": "assistant", "requestId": f"req_{mid}",
                          "message": {"id": mid, "type": "message", "role": "assistant",
                                      "model": "claude-sonnet-4-5", "content": [block],
                                      "usage": usage}})
                for block in blocks]

    def result(self, tool_id: str, content: Any, *, error: bool = False,
               structured: Any = None) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": tool_id, "type": "tool_result", "content": content}
        if error:
            block["is_error"] = True
        extra = {"toolUseResult": structured} if structured is not None else {}
        return self.user([block], **extra)

    def call(self, tool_id: str, name: str, tool_input: dict[str, Any], result: Any, *,
             error: bool = False, structured: Any = None, text: str | None = None) -> None:
        """An assistant tool call (optionally after some text) and its result."""
        blocks = ([text_block(text)] if text else []) + [tool_use(tool_id, name, tool_input)]
        self.assistant(*blocks)
        self.result(tool_id, result, error=error, structured=structured)

    def boundary(self, summary: str, *, trigger: str = "auto") -> None:
        base = self._base()
        last = self.entries[-1]["uuid"] if self.entries else None
        self.add({**base, "parentUuid": None, "logicalParentUuid": last, "type": "system",
                  "subtype": "compact_boundary", "content": "Conversation compacted",
                  "isMeta": False, "level": "info",
                  "compactMetadata": {"trigger": trigger, "preTokens": 150000}})
        self.user(summary, isVisibleInTranscriptOnly=True, isCompactSummary=True)

    def jsonl(self) -> bytes:
        return b"".join(orjson.dumps(e) + b"\n" for e in self.entries)


def least_detail(s: Session, section: Callable[[View, float], str]) -> list[str]:
    """The lines of one section of the offline summary of ``s`` (``files_and_code``,
    ``errors_and_fixes``...), written at the least detail."""
    request = build_request(s.entries, CLAUDE_CODE)
    run = OfflineRun()
    for turn in request.turns:
        run.add(turn)
    run.facts.end_turn()
    return section(View(request, run.facts), 0.0).splitlines()


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def coding_session(history: int = 0) -> Session:
    """Two prompts, a read, an edit, a failed test run and its fix, a todo list; ``history``
    lines of an earlier ``git log`` first (for a session a summary saves something on)."""
    s = Session()
    s.user("Fix the off-by-one in app/pager.py and add a test")
    if history:
        s.call("toolu_log0", "Bash", {"command": "git log --oneline"}, "".join(
            f"{n:07x} pager: change number {n} to the paging of long listings\n"
            for n in range(history)))
    s.assistant({"type": "thinking", "thinking": "Look at the pager first.", "signature": "sig"},
                text_block("Let me read the pager."))
    s.call("toolu_read1", "Read", {"file_path": "/work/app/app/pager.py"},
           "     1\tdef pages(n, size):\n     2\t    return n // size\n")
    s.call("toolu_todo1", "TodoWrite", {"todos": [
        {"content": "Fix pages() rounding", "status": "in_progress", "activeForm": "Fixing"},
        {"content": "Add a pager test", "status": "pending", "activeForm": "Adding"}]},
        "Todos have been modified successfully.")
    s.call("toolu_edit1", "Edit", {"file_path": "/work/app/app/pager.py",
                                   "old_string": "return n // size",
                                   "new_string": "return -(-n // size)"},
           "The file /work/app/app/pager.py has been updated.")
    s.call("toolu_test1", "Bash", {"command": "pytest -q tests/test_pager.py"},
           "Exit code 4\nERROR: file or directory not found: tests/test_pager.py", error=True)
    s.call("toolu_write1", "Write", {"file_path": "/work/app/tests/test_pager.py",
                                     "content": "from app.pager import pages\n\ndef test_pages():\n"
                                                "    assert pages(11, 5) == 3\n"},
           "File created successfully at: /work/app/tests/test_pager.py",
           text="The test file does not exist yet; creating it.")
    s.call("toolu_test2", "Bash", {"command": "pytest -q tests/test_pager.py"}, "1 passed")
    s.user("Thanks! Now make the page size configurable via PAGER_SIZE")
    s.assistant(text_block("I'll add an environment variable; should it default to 20?"))
    return s
