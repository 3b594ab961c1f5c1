"""ctxtool --in-place in Claude Code's own project folder, then the real client reads a saved
path, continues the session, and ``restore --in-place`` gives it back its whole history.

One flow, run once (module scope), asserted step by step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxtool.core.clearing.restore import placeholder_path
from tests.conftest import run_ctxtool
from tests.e2e.claude_code import ClaudeCode, Run
from tests.e2e.fake_messages import FakeMessages, say, tool
from tests.e2e.test_claude_code_resume import blocks, fresh_session


@dataclass
class Flow:
    original: dict[str, str] = field(default_factory=dict)  # tool_use_id -> result text
    saved: dict[str, str] = field(default_factory=dict)  # tool_use_id -> saved path
    before: Run | None = None  # resume of the untouched session
    read: Run | None = None  # resume after persist --in-place, reading a saved path
    restored: Run | None = None  # resume after restore --in-place
    persist: Any = None
    restore: Any = None
    validate: Any = None
    read_target: str = ""


def results(data: bytes) -> dict[str, str]:
    found = {}
    for line in data.splitlines():
        entry = orjson.loads(line)
        content = (entry.get("message") or {}).get("content") if entry.get("type") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result" \
                    and isinstance(block.get("content"), str):
                found[block["tool_use_id"]] = block["content"]
    return found


@pytest.fixture(scope="module")
def flow(claude_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Flow:
    root = tmp_path_factory.mktemp("inplace")
    fresh_session(claude_bin, root)  # the real client writes it in its own project folder
    done = Flow()
    with FakeMessages() as api:
        cc = ClaudeCode(claude_bin, root, api)
        path = next(cc.projects.glob("*.jsonl"))
        sid = path.stem
        env = {"HOME": str(cc.home), "CTXTOOL_STORE": ""}
        done.original = results(path.read_bytes())
        done.before = cc.resume(sid, "What did we do?")
        # --force: Claude Code wrote the file a moment ago (not running now, though)
        done.persist = run_ctxtool("persist", "--in-place", "--force", "--max-chars", "1500",
                                   str(path), env=env)
        persisted = results(path.read_bytes())
        done.saved = {k: p for k, v in persisted.items() if (p := placeholder_path(v))
                      and done.original.get(k) != v}
        done.read_target = next(iter(done.saved.values()), "")
        api.push(tool("Read", {"file_path": done.read_target}), say("Read the saved output."))
        done.read = cc.resume(sid, "Show me the saved output")
        done.restore = run_ctxtool("restore", "--in-place", "--force", str(path), env=env)
        done.validate = run_ctxtool("validate", str(path))
        done.restored = cc.resume(sid, "Go on")
    return done


def test_persist_in_place_saves_beside_the_session(flow: Flow) -> None:
    assert flow.persist.returncode == 0, flow.persist.stderr
    assert flow.saved, "no tool result was persisted"
    for path in flow.saved.values():
        assert "/.claude/projects/" in path and "/tool-results/" in path and Path(path).is_file()


def test_claude_code_reads_the_saved_path(flow: Flow) -> None:
    assert flow.read is not None and flow.read.returncode == 0, flow.read and flow.read.stderr
    # the request after its Read: the tool result holds the original output
    after_read = flow.read.turns[1]
    read_results = [b for b in blocks(after_read["messages"], "tool_result")]
    text = str(read_results[-1]["content"])
    tool_id = next(k for k, v in flow.saved.items() if v == flow.read_target)
    first_line = flow.original[tool_id].strip().splitlines()[0]
    assert first_line in text and "File does not exist" not in text


def test_restore_in_place_gives_a_clean_chain_and_the_whole_history(flow: Flow) -> None:
    assert flow.restore.returncode == 0, flow.restore.stderr
    assert flow.validate.returncode == 0, flow.validate.stdout + flow.validate.stderr
    assert flow.restored is not None and flow.restored.returncode == 0
    sent = flow.restored.first["messages"]
    before = flow.before.first["messages"] if flow.before else []
    ids_before = [b["id"] for b in blocks(before, "tool_use")]
    ids_after = [b["id"] for b in blocks(sent, "tool_use")]
    assert ids_before and ids_after[:len(ids_before)] == ids_before  # nothing lost
    texts = {b["tool_use_id"]: b["content"] for b in blocks(sent, "tool_result")}
    for tool_id in flow.saved:
        if tool_id in texts:  # in the part Claude Code sends (after its own /compact)
            # Claude Code may append a <system-reminder> to the newest result
            assert str(texts[tool_id]).startswith(flow.original[tool_id].rstrip())
    assert any(t in texts for t in flow.saved), "no restored result was sent"
