"""Run the real Claude Code headless against :class:`FakeMessages`, with a fresh HOME.

    with FakeMessages() as api:
        cc = ClaudeCode(claude_bin, tmp_path, api)
        path = cc.place(session_bytes, "abc")          # ~/.claude/projects/<cwd slug>/abc.jsonl
        body = cc.resume("abc")                          # the first request it sent, as sent

Claude Code finds a session at ``$HOME/.claude/projects/<cwd, every non-alphanumeric character
replaced by '-'>/<sessionId>.jsonl`` (the ``cwd`` inside the entries need not match) and needs no
onboarding or login with an API key in the environment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.fake_messages import FakeMessages

TIMEOUT = 120


def project_slug(cwd: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


@dataclass
class Run:
    returncode: int
    result: dict[str, Any]
    stderr: str
    turns: list[dict[str, Any]] = field(default_factory=list)  # the agent requests it made

    @property
    def first(self) -> dict[str, Any]:
        assert self.turns, f"Claude Code sent no request (exit {self.returncode}): {self.stderr[-500:]}"
        return self.turns[0]


class ClaudeCode:
    """One fresh HOME and project folder for the real client."""

    def __init__(self, binary: str, root: Path, api: FakeMessages) -> None:
        self.binary, self.api = binary, api
        self.flags: list[str] = []  # added to every run (e.g. --bare)
        self.home = root / "home"
        self.cwd = self.home / "work" / "proj"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self.projects = self.home / ".claude" / "projects" / project_slug(self.cwd)
        self.projects.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "SHELL": "/bin/sh", "LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-ant-fake",
                "ANTHROPIC_BASE_URL": self.api.url, "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_ERROR_REPORTING": "1"}

    def session_path(self, session_id: str) -> Path:
        return self.projects / f"{session_id}.jsonl"

    def place(self, data: bytes, session_id: str) -> Path:
        path = self.session_path(session_id)
        path.write_bytes(data)
        return path

    def run(self, *args: str) -> Run:
        before = len(self.api.requests)
        proc = subprocess.run([self.binary, "-p", *self.flags, *args, "--output-format", "json"],
                              cwd=self.cwd,
                              env=self.env(), capture_output=True, text=True, timeout=TIMEOUT,
                              input="", check=False)  # -p appends piped stdin: give none
        try:
            result = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            result = {}
        turns = [r.body for r in self.api.requests[before:]
                 if r.path == "/v1/messages" and self.api.is_turn(r.body)]
        return Run(proc.returncode, result, proc.stderr, turns)

    def ask(self, prompt: str) -> Run:
        return self.run(prompt)

    def resume(self, session_id: str, prompt: str = "continue") -> Run:
        return self.run("--resume", session_id, prompt)
