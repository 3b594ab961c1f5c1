"""Run the real OpenCode (1.18.33) headless against :class:`FakeMessages`, with a fresh HOME and
XDG folders, as several e2e tests do::

    with FakeMessages() as api:
        oc = opencode_in(opencode_bin, tmp_path, api)    # home/, project/, config with the fake
        api.push(say("Hi."))
        sent = oc.prompt("Hello")                        # opencode run; the requests it made
        session = oc.newest_session()
        oc.prompt("More", session)                       # opencode run --session ID
        oc.export(session)                               # opencode export ID (bytes)
        oc.import_file("ses_x.json")                     # opencode import FILE
        oc.db, oc.data                                 # $XDG_DATA_HOME/opencode/opencode.db
        oc.age([session], 60 * 86_400_000)             # its rows' times 60 days back
        oc.age_tool_outputs(60 * 86_400_000)           # tool-output/ files too (after the last run)

The provider ``fake`` (``@ai-sdk/anthropic``, model ``claude-test``: 200,000-token window, 8,000
output) points at the fake server; sharing, updates and the model list fetch are off.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.fake_messages import FakeMessages


@dataclass
class OpenCode:
    """One OpenCode installation in a temp folder: run it, export sessions, find its database."""

    binary: str
    home: Path
    project: Path
    api: FakeMessages
    env: dict[str, str] = field(default_factory=dict)

    @property
    def db(self) -> Path:
        return self.home / "data" / "opencode" / "opencode.db"

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        # stdin an empty pipe: `opencode run` appends all its stdin holds to the prompt and
        # waits for it to end (an inherited stdin, even a /dev/null that is a regular file on
        # a broken machine, puts anything into the prompt or hangs the run)
        proc = subprocess.run([self.binary, *args], cwd=self.project, env=self.env, input="",
                              capture_output=True, text=True, timeout=timeout, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc

    def prompt(self, text: str, session: str | None = None) -> list[dict[str, Any]]:
        """``opencode run [--session ID] TEXT``; the agent's requests it made."""
        before = len(self.api.requests)
        self.run("run", *(["--session", session] if session else []), text)
        return [r.body for r in self.api.requests[before:] if r.body.get("messages")]

    @property
    def data(self) -> Path:
        """OpenCode's data folder ($XDG_DATA_HOME/opencode)."""
        return self.db.parent

    def export(self, session: str) -> bytes:
        """``opencode export`` into a file: into a pipe, its output can be cut short when the
        process exits before the pipe drained."""
        target = self.home / "export.json"
        with open(target, "wb") as out:
            proc = subprocess.run([self.binary, "export", session], cwd=self.project,
                                  env=self.env, input=b"", stdout=out, stderr=subprocess.PIPE,
                                  timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return target.read_bytes()

    def import_file(self, path: str | Path) -> str:
        """``opencode import FILE`` in the project folder; what it printed."""
        return self.run("import", str(path)).stdout

    def age(self, sessions: list[str], by_ms: int) -> None:
        """Make sessions look ``by_ms`` older: every time of their session, message and part
        rows moved back (run while OpenCode is not running; export them afterwards)."""
        conn = sqlite3.connect(self.db)
        marks = ", ".join("?" * len(sessions))
        for table in ("session", "message", "part"):
            column = "id" if table == "session" else "session_id"
            conn.execute(f"UPDATE {table} SET time_created = time_created - ?, "
                         f"time_updated = time_updated - ? WHERE {column} IN ({marks})",
                         (by_ms, by_ms, *sessions))
        conn.commit()
        conn.close()

    def age_tool_outputs(self, by_ms: int) -> None:
        """The files in ``tool-output/`` made ``by_ms`` older (OpenCode removes those over a
        week old when it next starts: age them after the last OpenCode run)."""
        for path in (self.data / "tool-output").glob("tool_*"):
            then = path.stat().st_mtime - by_ms / 1000
            os.utime(path, (then, then))

    def newest_session(self) -> str:
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return str(conn.execute("SELECT id FROM session ORDER BY time_updated DESC"
                                    " LIMIT 1").fetchone()[0])
        finally:
            conn.close()


def config(api_url: str) -> dict[str, Any]:
    return {"$schema": "https://opencode.ai/config.json", "model": "fake/claude-test",
            "autoupdate": False, "share": "disabled",
            "provider": {"fake": {"npm": "@ai-sdk/anthropic", "name": "Fake",
                                  "options": {"baseURL": f"{api_url}/v1", "apiKey": "sk-test"},
                                  "models": {"claude-test": {
                                      "name": "claude-test", "tool_call": True,
                                      "limit": {"context": 200_000, "output": 8_000}}}}}}


def opencode_in(binary: str, root: Path, api: FakeMessages) -> OpenCode:
    """A fresh OpenCode installation under ``root`` (``home/``, ``project/``) using ``api``."""
    home, project = root / "home", root / "project"
    (home / "config" / "opencode").mkdir(parents=True)
    project.mkdir(exist_ok=True)
    (home / "config" / "opencode" / "opencode.json").write_text(json.dumps(config(api.url)))
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
           "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_CACHE_HOME": str(home / "cache"), "XDG_STATE_HOME": str(home / "state"),
           "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
           "OPENCODE_DISABLE_SHARE": "1"}
    return OpenCode(binary, home, project, api, env)


__all__ = ["OpenCode", "config", "opencode_in"]
