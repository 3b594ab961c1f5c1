"""Run the real Codex CLI headless against :class:`FakeResponses`, with a fresh CODEX_HOME.

    with FakeResponses() as api:
        cx = CodexCli(codex_bin, tmp_path, api)
        run = cx.ask("What is here?")                    # codex exec, prompt on stdin
        path = cx.session_path(run.thread_id)            # $CODEX_HOME/sessions/Y/M/D/rollout-*.jsonl
        run = cx.resume(run.thread_id, "continue")       # codex exec resume <id>
        run.first                                        # the first request it then sent
        with cx.app_server() as server:                  # codex app-server (JSON-RPC on stdio)
            body = server.fork_turn(thread_id, last_turn, "go on")  # thread/fork, turn/start

Codex reads ``$CODEX_HOME/config.toml``: a custom provider (``base_url`` = the fake server's
``/v1``, ``wire_api = "responses"``, the key from ``env_key``), ``approval_policy = "never"``. The
prompt goes on stdin (``-``): passed as an argument with stdin not a terminal it failed
intermittently. ``--json`` prints one event per line on stdout; ``thread.started`` names the
session, whose rollout ``codex exec resume <id>`` finds again by that id.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.fake_responses import FakeResponses, call, is_compaction, say

TIMEOUT = 120
MODEL = "gpt-5-codex"
API_KEY_VAR = "CTXTOOL_FAKE_OPENAI_KEY"


@dataclass
class Run:
    returncode: int
    events: list[dict[str, Any]]
    stderr: str
    turns: list[dict[str, Any]] = field(default_factory=list)  # the agent requests it made

    @property
    def thread_id(self) -> str:
        for event in self.events:
            if event.get("type") == "thread.started":
                return str(event["thread_id"])
        raise AssertionError(f"codex started no thread (exit {self.returncode}): {self.stderr[-800:]}")

    @property
    def first(self) -> dict[str, Any]:
        assert self.turns, f"codex sent no request (exit {self.returncode}): {self.stderr[-800:]}"
        return self.turns[0]


def config_toml(url: str, extra: str = "") -> str:
    return f'''model = "{MODEL}"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
{extra}
[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "{API_KEY_VAR}"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
'''


class CodexCli:
    """One fresh CODEX_HOME and project folder for the real client."""

    def __init__(self, binary: str, root: Path, api: FakeResponses, config_extra: str = "") -> None:
        self.binary, self.api = binary, api
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.cwd = self.home / "work" / "proj"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(config_toml(api.url, config_extra))

    @property
    def sessions(self) -> Path:
        return self.codex_home / "sessions"

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "CODEX_HOME": str(self.codex_home), "SHELL": "/bin/sh", "LANG": "C.UTF-8",
                API_KEY_VAR: "sk-fake", "NO_COLOR": "1", "RUST_LOG": "error"}

    def session_path(self, session_id: str) -> Path:
        found = sorted(self.sessions.rglob(f"rollout-*{session_id}.jsonl"))
        assert found, f"no rollout for {session_id} under {self.sessions}"
        return found[-1]

    def place(self, data: bytes, rel: Path) -> Path:
        """Write ``data`` as the rollout at ``rel`` (relative to CODEX_HOME, such as
        ``sessions/2026/01/02/rollout-...-<id>.jsonl``). Codex records each session's rollout
        path in its state database, so a rollout is placed in a fresh CODEX_HOME (which resume
        reads it into), never copied with another home's databases (they point at the old
        file)."""
        path = self.codex_home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def run(self, *args: str, prompt: str) -> Run:
        before = len(self.api.requests)
        proc = subprocess.run([self.binary, "exec", *args], cwd=self.cwd, env=self.env(),
                              input=prompt, capture_output=True, text=True, timeout=TIMEOUT,
                              check=False)
        events = []
        for line in proc.stdout.splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        turns = [r.body for r in self.api.requests[before:]
                 if r.path.endswith("/responses") and not is_compaction(r.body)]
        return Run(proc.returncode, events, proc.stderr, turns)

    FLAGS = ("--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check")

    def ask(self, prompt: str) -> Run:
        return self.run(*self.FLAGS, "-", prompt=prompt)

    def resume(self, session_id: str, prompt: str = "continue") -> Run:
        return self.run("resume", *self.FLAGS, session_id, "-", prompt=prompt)

    @contextmanager
    def app_server(self) -> Iterator[AppServer]:
        """``codex app-server`` on stdio (what the TUI and IDEs drive), killed on leaving with
        its whole process group: the npm ``codex`` is a Node launcher whose native child outlives
        a kill of the launcher alone."""
        proc = subprocess.Popen([self.binary, "app-server"], cwd=self.cwd, env=self.env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        try:
            server = AppServer(proc, self.api)
            server.call("initialize", {"clientInfo": {"name": "ctxtool-e2e", "version": "1"}})
            server.send({"method": "initialized"})
            yield server
        finally:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class AppServer:
    """JSON-RPC with one ``codex app-server``: requests by id, one line each way."""

    def __init__(self, proc: subprocess.Popen[str], api: FakeResponses) -> None:
        self.proc, self.api, self.ids = proc, api, iter(range(1, 10**6))
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(x) for x in proc.stdout or ()],
                         daemon=True).start()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request (an error fails the test)."""
        ident = next(self.ids)
        self.send({"id": ident, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            message = json.loads(self.lines.get(timeout=TIMEOUT))
            if message.get("id") == ident and "method" not in message:
                assert "error" not in message, f"{method}: {message['error']}"
                return dict(message["result"])
        raise AssertionError(f"{method}: no answer in {TIMEOUT}s")

    def turn(self, thread_id: str, prompt: str) -> dict[str, Any]:
        """Start a turn; the first request the agent sends for it."""
        before = len(self.api.turns())
        self.call("turn/start", {"threadId": thread_id,
                                 "input": [{"type": "text", "text": prompt}]})
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            sent = self.api.turns()
            if len(sent) > before:
                return sent[before]
            time.sleep(0.1)
        raise AssertionError(f"no request for the turn in {TIMEOUT}s")

    def fork_turn(self, thread_id: str, last_turn: str, prompt: str) -> dict[str, Any]:
        """``thread/fork`` through ``last_turn`` (inclusive), then a turn on the fork."""
        fork = self.call("thread/fork", {"threadId": thread_id, "lastTurnId": last_turn,
                                         "excludeTurns": True})
        return self.turn(fork["thread"]["id"], prompt)

    def revert_turn(self, thread_id: str, before_turn: str, prompt: str) -> dict[str, Any]:
        """``thread/revert`` to the history before ``before_turn``, then a turn."""
        self.call("thread/resume", {"threadId": thread_id, "excludeTurns": True})
        self.call("thread/revert", {"threadId": thread_id, "beforeTurnId": before_turn})
        return self.turn(thread_id, prompt)


def tool_session(api: FakeResponses, cx: CodexCli) -> str:
    """A first turn of four ``exec_command`` calls, one output large enough for Codex to truncate
    it (``seq 1 3000``); returns the session id."""
    (cx.cwd / "notes.txt").write_text("".join(f"line {n}: alpha beta gamma\n" for n in range(1, 41)))
    api.push(call("exec_command", {"cmd": "ls -la"}, text="Let me look at the project."),
             call("exec_command", {"cmd": "cat notes.txt"}),
             call("exec_command", {"cmd": "seq 1 3000"}),
             call("exec_command", {"cmd": "grep -c beta notes.txt"}),
             say("The project has notes.txt with 40 lines, all mentioning beta."))
    run = cx.ask("What is in this project?")
    assert run.returncode == 0, run.stderr
    return run.thread_id
