"""vacuum on a Claude Code 2.1.332 session with half its history written twice (as its repeated
/compact leaves it): the vacuumed file is smaller by the copies, the real client resumes it
sending the same request as from the unvacuumed copy (ids aside), and restore gives back the
original byte for byte."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import run_ctxtool
from tests.e2e.claude_code import ClaudeCode
from tests.e2e.fake_messages import FakeMessages, say
from tests.e2e.test_claude_code_resume import fresh_session

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ROWS = {"user", "assistant", "system", "attachment"}


def doubled(data: bytes) -> tuple[bytes, int]:
    """``data`` with every entry before its last compact boundary written again right before
    that boundary (what a repeated /compact appends); and the bytes added."""
    lines = data.splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    again = [line for line in lines[:last]
             if (entry := orjson.loads(line)).get("type") in ROWS and "uuid" in entry]
    assert len(again) * 3 > last, "the history before the boundary is most of its lines"
    return b"".join(lines[:last] + again + lines[last:]), sum(map(len, again))


def without_ids(body: dict[str, Any]) -> Any:
    text = orjson.dumps({k: body.get(k) for k in ("model", "system", "messages", "tools")})
    return orjson.loads(UUID.sub("<id>", text.decode()))


@dataclass
class Flow:
    original: bytes
    added: int
    vacuumed: bytes
    vacuum: Any
    restored: Any
    before: dict[str, Any]
    after: dict[str, Any]


@pytest.fixture(scope="module")
def flow(claude_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Flow:
    root = tmp_path_factory.mktemp("vacuum")
    original, added = doubled(fresh_session(claude_bin, root))
    with FakeMessages() as api:
        cc = ClaudeCode(claude_bin, root, api)
        path = next(cc.projects.glob("*.jsonl"))
        sid = path.stem
        env = {"HOME": str(cc.home), "CTXTOOL_STORE": ""}
        cc.place(original, sid)
        api.push(say("Resumed."))
        before = cc.resume(sid, "What did we do?").first
        cc.place(original, sid)
        vacuum = run_ctxtool("vacuum", "--in-place", "--force", "--json", str(path), env=env)
        vacuumed = path.read_bytes()
        api.push(say("Resumed."))
        after = cc.resume(sid, "What did we do?").first
        path.write_bytes(vacuumed)  # as vacuum left it (the resume appended to it)
        restored = run_ctxtool("restore", str(path), env=env)
    return Flow(original, added, vacuumed, vacuum, restored, before, after)


def test_the_vacuumed_session_is_smaller_by_the_copies(flow: Flow) -> None:
    assert flow.vacuum.returncode == 0, flow.vacuum.stderr
    assert len(flow.original) - len(flow.vacuumed) >= flow.added
    record = orjson.loads(flow.vacuum.stdout.splitlines()[0])
    assert record["bytes_before"] == len(flow.original)
    assert record["bytes_after"] == len(flow.vacuumed)
    print(f"e2e: {len(flow.original):,} -> {len(flow.vacuumed):,} bytes "
          f"({flow.added:,} written twice)")


def test_claude_code_resumes_it_as_before(flow: Flow) -> None:
    assert len(flow.before["messages"]) > 3  # the summary, the turns after it, the prompt
    assert without_ids(flow.after) == without_ids(flow.before)


def test_restore_gives_back_the_original(flow: Flow) -> None:
    assert flow.restored.returncode == 0, flow.restored.stderr
    assert flow.restored.stdout == flow.original
