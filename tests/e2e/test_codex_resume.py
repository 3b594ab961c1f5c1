"""The real Codex CLI resumes what ctxtool wrote, and the request it then sends is checked.

A session is written here by the real client (``exec_command`` calls, one output large enough for
Codex to truncate it, ``token_count`` events), against the fake Responses API. Each variant below
puts ctxtool's output in place of the rollout and runs ``codex exec resume <id>`` once; its first
request is held to what the variant promises. Module-scoped: one client run per variant.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.codex_cli import CodexCli, tool_session
from tests.e2e.fake_responses import FakeResponses, say


@dataclass
class Fresh:
    rel: Path  # the rollout's path inside CODEX_HOME
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
        path = cx.session_path(session)
        data = path.read_bytes()
    outputs = {item["call_id"]: item["output"] for item in rollout_items(data, "function_call_output")}
    assert len(outputs) == 4
    return Fresh(path.relative_to(cx.codex_home), session, data, outputs)


def resume(codex_bin: str, fresh: Fresh, data: bytes, where: Path) -> Resumed:
    """A fresh CODEX_HOME with ``data`` as the session's rollout, resumed once."""
    with FakeResponses() as api:
        cx = CodexCli(codex_bin, where, api)
        cx.place(data, fresh.rel)
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


# --- ctxtool's output, resumed ----------------------------------------------------------------------

SUMMARIZE = ["summarize"]
MICROCOMPACT = ["microcompact", "--force", "--keep", "0", "--target", "0"]
PERSIST = ["persist", "--max-chars", "2000"]
VARIANTS = {"summarize": SUMMARIZE, "microcompact": MICROCOMPACT, "persist": PERSIST}


def ctxtool(args: list[str], data: bytes, store: Path) -> bytes:
    extra = ["--store", str(store)] if args[0] in ("persist", "microcompact") else []
    proc = run_ctxtool(*args, *extra, input=data)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def resumed(codex_bin: str, fresh: Fresh, tmp_path_factory: pytest.TempPathFactory
            ) -> Callable[[str], Resumed]:
    """``resumed(variant)``: ctxtool's output of the fresh session, resumed (once per variant)."""
    done: dict[str, Resumed] = {}

    def get(name: str) -> Resumed:
        if name not in done:
            where = tmp_path_factory.mktemp(f"codex-{name}")
            data = ctxtool(VARIANTS[name], fresh.data, where / "store")
            done[name] = resume(codex_bin, fresh, data, where)
        return done[name]

    return get


def sent_text(got: Resumed) -> str:
    return json.dumps(got.input, ensure_ascii=False)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_codex_resumes_what_ctxtool_wrote(resumed: Callable[[str], Resumed], fresh: Fresh,
                                          name: str) -> None:
    got = resumed(name)
    assert got.returncode == 0, got.stderr
    assert got.data != fresh.data, f"{name} changed nothing"
    last = got.input[-1]
    assert last["role"] == "user" and last["content"][0]["text"] == "continue"


def test_summary_is_sent_and_no_earlier_tool_output(resumed: Callable[[str], Resumed]) -> None:
    got = resumed("summarize")
    record = next(e for e in map(json.loads, got.data.splitlines()) if e["type"] == "compacted")
    summary = record["payload"]["message"]
    users = [i for i in got.items("message") if i.get("role") == "user"]
    assert any(part.get("text") == summary for i in users for part in i["content"])
    assert not got.items("function_call_output") and not got.items("function_call")
    text = sent_text(got)
    assert "2999\\n3000" not in text and "line 40: alpha beta gamma" not in text


@pytest.mark.parametrize("name", ["microcompact", "persist"])
def test_placeholders_are_sent_in_place_of_cleared_outputs(
        resumed: Callable[[str], Resumed], fresh: Fresh, name: str) -> None:
    got = resumed(name)
    written = {i["call_id"]: i["output"] for i in rollout_items(got.data, "function_call_output")}
    sent = {i["call_id"]: i["output"] for i in got.items("function_call_output")}
    assert sent == written  # exactly what ctxtool wrote, in the same places
    changed = [cid for cid in sent if sent[cid] != fresh.outputs[cid]]
    assert changed, f"{name} cleared no output"
    assert all("<persisted-output>" in sent[cid] and "tool-results" in sent[cid]
               for cid in changed)  # the placeholder names the saved file
    assert "2999\n3000" not in "".join(sent.values())  # the large output left the context
