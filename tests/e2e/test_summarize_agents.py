"""`summarize --llm claude-code` and `--llm codex`: the real Claude Code 2.1.332 and Codex 0.171.0
(scripts/install-clients.sh), with a fresh HOME, write the summary through a fake model on
127.0.0.1 (ANTHROPIC_BASE_URL + ANTHROPIC_API_KEY for Claude Code; a model provider in
config.toml for Codex).

Each agent: the summary lands in ctxtool's output without its scratchpad, and the transcript
reached the model through the agent with no tools offered; a reply asking for a shell command
that would create a file creates nothing (the agent refuses it) and the summary still comes;
the agent's session list is unchanged (its session files and, for Codex, the threads in its
state database); a dead endpoint, no login and a model slower than --timeout give
exit 5, one line naming the agent, nothing on stdout and the input file untouched; a history
larger than --context-window goes in parts, and a reply missing a section is asked again."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ctxtool.errors import ExitCode
from tests.conftest import run_ctxtool
from tests.e2e.claude_code import ClaudeCode
from tests.e2e.codex_cli import CodexCli
from tests.e2e.fake_messages import FakeMessages, summary_reply, tool
from tests.e2e.fake_responses import FakeResponses, call, say
from tests.fake_anthropic import Recorded, Reply, summary_text
from tests.summarize_builder import Session, coding_session, text_block

SESSION = coding_session().jsonl()
PROMPT_WORDS = "Fix the off-by-one in app/pager.py"  # the transcript's first user message
NOTE = "agent-written summary"
SCRATCHPAD = "scratchpad that must not survive"


class SummaryModel(FakeMessages):
    """Every Messages request gets the script first (tool calls included: Claude Code sends no
    tools, so FakeMessages would not count it as a turn), then the nine sections."""

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        if path == "/v1/messages":
            with self._lock:
                self.requests.append(Recorded(path, headers, body))
                reply = self.script.popleft() if self.script else summary_reply(NOTE)
            return reply
        return super().answer(path, headers, body)


def dead_url() -> str:
    """A port on 127.0.0.1 nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def tree(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` with its size (what a session list is made of)."""
    return {str(p.relative_to(folder)): p.stat().st_size for p in sorted(folder.rglob("*"))
            if p.is_file()} if folder.exists() else {}


def input_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION)
    os.utime(path, (time.time() - 7200, time.time() - 7200))  # outside --live-window
    return path


def assert_summary(proc: subprocess.CompletedProcess[bytes], backend: str) -> None:
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    assert f"{NOTE} for primary request and intent" in out and "9. Optional Next Step" in out
    assert SCRATCHPAD not in out and "<analysis>" not in out
    assert f"by {backend}" in proc.stderr.decode()


def assert_failed(proc: subprocess.CompletedProcess[bytes], agent: str, path: Path) -> str:
    assert proc.returncode == ExitCode.LLM, proc.stderr
    assert proc.stdout == b""
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxtool: error: ") and agent in lines[0], lines
    assert path.read_bytes() == SESSION
    return lines[0]


def mcp_starts(tmp_path: Path) -> Path:
    """The file the user's MCP servers (and hooks) in the fixtures' configs add a line to."""
    return tmp_path / "mcp-started"


# --- Claude Code ----------------------------------------------------------------------------------

def claude_env(cc: ClaudeCode, claude_bin: str, url: str) -> dict[str, str]:
    return {**cc.env(), "ANTHROPIC_BASE_URL": url,
            "PATH": f"{Path(claude_bin).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


@pytest.fixture
def claude_setup(claude_bin: str, tmp_path: Path) -> Any:
    """A fresh HOME with a session of the user's, an MCP server (~/.claude.json) and a
    SessionStart hook (settings.json) that each add a line to mcp_starts() when run."""
    with SummaryModel() as api:
        cc = ClaudeCode(claude_bin, tmp_path, api)
        cc.place(SESSION, "0b5e7a2c-0000-4000-8000-000000000001")  # the user's own session
        log = mcp_starts(tmp_path)
        (cc.home / ".claude.json").write_text(json.dumps({"mcpServers": {"notes": {
            "type": "stdio", "command": "sh", "args": ["-c", f"echo mcp >> {log}; sleep 2"]}}}))
        (cc.home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [
            {"hooks": [{"type": "command", "command": f"echo hook >> {log}"}]}]}}))
        yield api, cc


def test_claude_code_writes_the_summary_with_no_tools_and_no_session(claude_setup: Any,
                                                                    claude_bin: str,
                                                                    tmp_path: Path) -> None:
    api, cc = claude_setup
    sessions = tree(cc.home / ".claude" / "projects")
    proc = run_ctxtool("summarize", "--llm", "claude-code", "--text", "--model", "claude-fake-1",
                       "--instructions", "focus on the pager", input=SESSION,
                       env=claude_env(cc, claude_bin, api.url), cwd=tmp_path, timeout=300)
    assert_summary(proc, "claude-code")
    [request] = api.messages()
    body = request.body
    assert not body.get("tools")  # --tools "": nothing the model could call
    assert body["model"] == "claude-fake-1"  # --model passed through
    sent = request.prompt + str(body.get("messages"))
    assert PROMPT_WORDS in sent and "focus on the pager" in sent  # the transcript, instructions
    assert "hand-over notes" in str(body.get("system"))  # ctxtool's system prompt, not Claude's
    assert not mcp_starts(tmp_path).exists()  # neither the user's MCP server nor hook ran
    assert tree(cc.home / ".claude" / "projects") == sessions


def test_claude_code_refuses_a_tool_call_from_the_model(claude_setup: Any, claude_bin: str,
                                                        tmp_path: Path) -> None:
    api, cc = claude_setup
    target = tmp_path / "pwned-by-claude"
    api.push(tool("Bash", {"command": f"touch {target}"}, text="Let me check something."))
    sessions = tree(cc.home / ".claude" / "projects")
    proc = run_ctxtool("summarize", "--llm", "claude-code", "--text", input=SESSION,
                       env=claude_env(cc, claude_bin, api.url), cwd=tmp_path, timeout=300)
    assert_summary(proc, "claude-code")
    assert not target.exists()
    assert len(api.messages()) == 2  # the refusal went back to the model, which then summarized
    assert "tool_result" in str(api.messages()[1].body["messages"])
    assert tree(cc.home / ".claude" / "projects") == sessions


def test_claude_code_summaries_are_chunked_and_retried_like_the_apis(claude_setup: Any,
                                                                   claude_bin: str,
                                                                   tmp_path: Path) -> None:
    """A history larger than --context-window goes in parts, one agent run each, the summary so
    far folded into the next; a reply missing a section is asked for once more."""
    api, cc = claude_setup
    api.push(Reply(200, {**summary_reply(NOTE).body, "content": [
        {"type": "text", "text": summary_text(note=NOTE, missing=("Pending Tasks",))}]}))
    long = Session()
    for n in range(40):
        long.user(f"prompt {n}: " + "please look at this " * 100)
        long.assistant(text_block(f"answer {n}: " + "looked at it " * 100))
    proc = run_ctxtool("summarize", "--llm", "claude-code", "--text", "--context-window", "16000",
                       input=long.jsonl(),
                       env=claude_env(cc, claude_bin, api.url), cwd=tmp_path, timeout=600)
    assert_summary(proc, "claude-code")
    requests = api.messages()
    parts = int(re.search(r", ([0-9,]+) parts?\b", proc.stderr.decode()).group(1))  # type: ignore[union-attr]
    assert parts >= 2 and len(requests) == parts + 1  # one part asked twice
    assert "<previous_summary>" in requests[-1].prompt + str(requests[-1].body["messages"])


def test_claude_code_dead_endpoint_no_login_and_timeout_are_exit_5(claude_setup: Any, claude_bin: str,
                                                          tmp_path: Path) -> None:
    api, cc = claude_setup
    sessions = tree(cc.home / ".claude" / "projects")
    path = input_file(tmp_path)
    args = ("summarize", "--llm", "claude-code", "--in-place", str(path))
    dead = run_ctxtool(*args, env=claude_env(cc, claude_bin, dead_url()), cwd=tmp_path,
                       timeout=300)
    assert "Claude Code cannot reach its API" in assert_failed(dead, "Claude Code", path)
    no_login = {k: v for k, v in claude_env(cc, claude_bin, api.url).items()
                if k != "ANTHROPIC_API_KEY"}  # a fresh HOME: no login either
    logged_out = run_ctxtool(*args, env=no_login, cwd=tmp_path, timeout=300)
    assert "Claude Code is not logged in" in assert_failed(logged_out, "Claude Code", path)
    api.push(Reply(200, summary_reply(NOTE).body, delay=30))
    start = time.monotonic()
    slow = run_ctxtool(*args, "--timeout", "8", env=claude_env(cc, claude_bin, api.url),
                       cwd=tmp_path, timeout=300)
    assert time.monotonic() - start < 25
    assert "8 s deadline (--timeout)" in assert_failed(slow, "Claude Code", path)
    assert tree(cc.home / ".claude" / "projects") == sessions


# --- Codex ----------------------------------------------------------------------------------------

def codex_env(cx: CodexCli, codex_bin: str) -> dict[str, str]:
    return {**cx.env(), "PATH": f"{Path(codex_bin).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def threads(cx: CodexCli) -> list[tuple[Any, ...]]:
    """The threads Codex's session list shows (its state database)."""
    db = cx.codex_home / "state_5.sqlite"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return sorted(conn.execute("SELECT * FROM threads").fetchall(), key=repr)


def codex_state(cx: CodexCli) -> tuple[dict[str, int], list[tuple[Any, ...]]]:
    return tree(cx.sessions), threads(cx)


@pytest.fixture
def codex_setup(codex_bin: str, tmp_path: Path) -> Any:
    with FakeResponses(default_text=summary_text(note=NOTE)) as api:
        mcp = (f'[mcp_servers.notes]\ncommand = "sh"\n'
               f'args = ["-c", "echo started >> {mcp_starts(tmp_path)}; sleep 2"]\n')
        cx = CodexCli(codex_bin, tmp_path, api, config_extra=mcp)
        api.push(say("Hello."))
        assert cx.ask("Say hello.").returncode == 0  # the user's own session
        assert threads(cx) and tree(cx.sessions)
        yield api, cx


def test_codex_writes_the_summary_with_no_tools_and_no_session(codex_setup: Any, codex_bin: str,
                                                              tmp_path: Path) -> None:
    api, cx = codex_setup
    before = codex_state(cx)
    seen = len(api.responses())
    starts = mcp_starts(tmp_path).read_text()  # the user's own run started the MCP server
    proc = run_ctxtool("summarize", "--llm", "codex", "--text", "--model", "gpt-fake-1",
                       "--instructions", "focus on the pager", input=SESSION,
                       env=codex_env(cx, codex_bin), cwd=tmp_path, timeout=300)
    assert_summary(proc, "codex")
    [body] = api.responses()[seen:]
    assert not body.get("tools") and body["model"] == "gpt-fake-1"
    sent = str(body.get("input"))
    assert PROMPT_WORDS in sent and "focus on the pager" in sent
    assert "hand-over notes" in sent and "You are a coding agent" not in sent  # our instructions
    assert mcp_starts(tmp_path).read_text() == starts == "started\n"  # not started for us
    assert codex_state(cx) == before


def test_codex_refuses_a_tool_call_from_the_model(codex_setup: Any, codex_bin: str,
                                                  tmp_path: Path) -> None:
    api, cx = codex_setup
    target = tmp_path / "pwned-by-codex"
    api.push(call("exec_command", {"cmd": f"touch {target}"}),
             call("shell", {"command": ["touch", str(target)]}))
    before = codex_state(cx)
    seen = len(api.responses())
    proc = run_ctxtool("summarize", "--llm", "codex", "--text", input=SESSION,
                       env=codex_env(cx, codex_bin), cwd=tmp_path, timeout=300)
    assert_summary(proc, "codex")
    assert not target.exists()
    assert len(api.responses()) - seen == 3  # two refused calls, then the summary
    assert codex_state(cx) == before


def test_codex_dead_endpoint_and_timeout_are_exit_5(codex_setup: Any, codex_bin: str,
                                                    tmp_path: Path) -> None:
    api, cx = codex_setup
    before = codex_state(cx)
    path = input_file(tmp_path)
    args = ("summarize", "--llm", "codex", "--in-place", str(path))
    config = cx.codex_home / "config.toml"
    original = config.read_text()
    config.write_text(original.replace(api.url, dead_url()))
    start = time.monotonic()
    dead = run_ctxtool(*args, env=codex_env(cx, codex_bin), cwd=tmp_path, timeout=300)
    assert time.monotonic() - start < 60  # not the 600 s default: Codex's wait is cut short
    assert "Codex cannot reach its model endpoint" in assert_failed(dead, "Codex", path)
    with FakeResponses() as slow:  # a model that does not answer within the deadline
        config.write_text(original.replace(api.url, slow.url))
        slow.other = lambda *a: (time.sleep(30), Reply(500, {}))[1]  # type: ignore[method-assign]
        start = time.monotonic()
        proc = run_ctxtool(*args, "--timeout", "8", env=codex_env(cx, codex_bin), cwd=tmp_path,
                           timeout=300)
        assert time.monotonic() - start < 25
        assert "8 s deadline (--timeout)" in assert_failed(proc, "Codex", path)
    config.write_text(original)
    assert codex_state(cx) == before


def test_codex_not_logged_in_says_so(codex_bin: str, tmp_path: Path) -> None:
    """No login and its default provider down (OPENAI_BASE_URL on a dead port, so nothing
    leaves 127.0.0.1): the line says what `codex login status` says."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        "check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n")
    path = input_file(tmp_path)
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "OPENAI_BASE_URL":
           dead_url() + "/v1", "PATH": f"{Path(codex_bin).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = run_ctxtool("summarize", "--llm", "codex", "--in-place", str(path), env=env,
                       cwd=tmp_path, timeout=300)
    line = assert_failed(proc, "Codex", path)
    assert "`codex login status` says: Not logged in" in line and "codex login" in line
