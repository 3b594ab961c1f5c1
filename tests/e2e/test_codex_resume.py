"""The real Codex CLI resumes what ctxtool wrote, and the request it then sends is checked.

A session is written here by the real client (``exec_command`` calls, one output large enough for
Codex to truncate it, ``token_count`` events), against the fake Responses API. Each variant below
puts ctxtool's output in place of the rollout and runs ``codex exec resume <id>`` once; its first
request is held to what the variant promises. Module-scoped: one client run per variant.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.codex_cli import CodexCli, tool_session
from tests.e2e.fake_responses import FakeResponses, say


@dataclass
class Fresh:
    root: Path  # the folder holding the client's HOME
    session: str
    data: bytes  # the rollout as the client wrote it
    outputs: dict[str, str]  # call_id -> the function_call_output the client recorded


@dataclass
class Resumed:
    data: bytes  # the rollout Codex was given
    body: dict[str, Any]  # its first request after `exec resume`
    returncode: int
    stderr: str

    @property
    def input(self) -> list[dict[str, Any]]:
        return self.body["input"]

    def items(self, kind: str) -> list[dict[str, Any]]:
        return [item for item in self.input if item.get("type") == kind]


def rollout_items(data: bytes, kind: str) -> list[dict[str, Any]]:
    lines = (json.loads(line) for line in data.splitlines() if line.strip())
    return [e["payload"] for e in lines
            if e.get("type") == "response_item" and e["payload"].get("type") == kind]


@pytest.fixture(scope="module")
def fresh(codex_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    root = tmp_path_factory.mktemp("codex-fresh")
    with FakeResponses() as api:
        cx = CodexCli(codex_bin, root, api)
        session = tool_session(api, cx)
        data = cx.session_path(session).read_bytes()
    outputs = {item["call_id"]: item["output"] for item in rollout_items(data, "function_call_output")}
    assert len(outputs) == 4
    return Fresh(root, session, data, outputs)


def resume(codex_bin: str, fresh: Fresh, data: bytes, where: Path) -> Resumed:
    """A copy of the fresh client's HOME with ``data`` as the rollout, resumed once."""
    shutil.copytree(fresh.root / "home", where / "home", symlinks=True)
    with FakeResponses() as api:
        cx = CodexCli(codex_bin, where, api)  # rewrites config.toml for this server
        cx.place(data, fresh.session)
        api.push(say("Resumed."))
        run = cx.resume(fresh.session, "continue")
        return Resumed(data, run.first, run.returncode, run.stderr)


def test_codex_resends_the_whole_rollout_on_resume(codex_bin: str, fresh: Fresh,
                                                   tmp_path: Path) -> None:
    """The fact the other variants rest on: resume rebuilds the history from the file and sends
    it all (no previous_response_id), tool outputs included, then the new prompt."""
    got = resume(codex_bin, fresh, fresh.data, tmp_path)
    assert got.returncode == 0, got.stderr
    assert "previous_response_id" not in got.body
    sent = {item["call_id"]: item["output"] for item in got.items("function_call_output")}
    assert sent == fresh.outputs
    assert [i["call_id"] for i in got.items("function_call")] == list(fresh.outputs)
    last = got.input[-1]
    assert last["role"] == "user" and last["content"][0]["text"] == "continue"
