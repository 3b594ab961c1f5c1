"""Run the real Gemini CLI headless against :class:`FakeGemini`, with a fresh HOME.

    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path, api)
        run = gm.ask("What is here?", session_id=SESSION)   # gemini -p ... --session-id
        path = gm.session_path(SESSION)                       # ~/.gemini/tmp/proj/chats/session-*.jsonl
        gm.age(SESSION)                                       # before resuming (see below)
        run = gm.resume(SESSION, "continue")                  # gemini -p ... --resume <id>
        run.first                                             # the first request it then sent

Gemini CLI reads ``$HOME/.gemini/settings.json``: ``security.auth.selectedType`` =
``gemini-api-key`` with ``GEMINI_API_KEY`` set and ``GOOGLE_GEMINI_BASE_URL`` pointing at the fake
server; ``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts the project folder, ``--yolo`` approves tools.

A session's file is named by the UTC minute it started, and every run (a resume too) first opens
a new session file of that name for its own minute: a resume in the first run's minute writes a
fresh metadata line into the session's own file. :meth:`GeminiCli.age` renames the file to an
older minute instead of waiting for the next one (Gemini CLI finds a session by the ``sessionId``
inside its file, not by the name).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.fake_gemini import FakeGemini, call, is_turn, say

TIMEOUT = 120
DAY = 86400
PROJECT = "proj"  # the project folder's name, which Gemini CLI uses for ~/.gemini/tmp/<project>
OLD_MINUTE = "2026-01-01T00-00"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    turns: list[dict[str, Any]] = field(default_factory=list)  # the agent requests it made

    @property
    def first(self) -> dict[str, Any]:
        assert self.turns, f"gemini sent no request (exit {self.returncode}): {self.stderr[-800:]}"
        return self.turns[0]


def settings(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """settings.json: API-key auth, no update check, no usage statistics, plus ``extra``."""
    base: dict[str, Any] = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                            "general": {"enableAutoUpdate": False,
                                        "enableAutoUpdateNotification": False},
                            "privacy": {"usageStatisticsEnabled": False}}
    for key, value in (extra or {}).items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return base


class GeminiCli:
    """One fresh HOME and project folder for the real client."""

    def __init__(self, binary: str, root: Path, api: FakeGemini,
                 settings_extra: dict[str, Any] | None = None) -> None:
        self.binary, self.api = binary, api
        self.home = root / "home"
        self.cwd = self.home / "work" / PROJECT
        self.cwd.mkdir(parents=True, exist_ok=True)
        (self.home / ".gemini").mkdir(parents=True, exist_ok=True)
        (self.home / ".gemini" / "settings.json").write_text(json.dumps(settings(settings_extra)))

    @property
    def chats(self) -> Path:
        return self.home / ".gemini" / "tmp" / PROJECT / "chats"

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home),
                "SHELL": "/bin/sh", "LANG": "C.UTF-8", "NO_COLOR": "1", "TERM": "dumb",
                "GEMINI_API_KEY": "fake-gemini-key", "GOOGLE_GEMINI_BASE_URL": self.api.url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def session_path(self, session_id: str) -> Path:
        """The session's file: the one named by its id whose metadata says that id."""
        for path in sorted(self.chats.glob(f"session-*-{session_id[:8]}.jsonl")):
            with path.open("rb") as handle:
                if json.loads(handle.readline()).get("sessionId") == session_id:
                    if any(b'"type":"gemini"' in line for line in handle):
                        return path
        raise AssertionError(f"no session file for {session_id} in {self.chats}")

    def age(self, session_id: str) -> Path:
        """Rename the session's file to an old minute, so that a resume now (whose own new
        session file is named by this minute) cannot write into it; returns the new path."""
        path = self.session_path(session_id)
        aged = path.with_name(f"session-{OLD_MINUTE}-{session_id[:8]}.jsonl")
        path.rename(aged)
        return aged

    def place(self, data: bytes, session_id: str) -> Path:
        """Write ``data`` as the session's file (an old minute's name) in this HOME's project."""
        path = self.chats / f"session-{OLD_MINUTE}-{session_id[:8]}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def run(self, *args: str) -> Run:
        before = len(self.api.requests)
        proc = subprocess.run([self.binary, *args, "--output-format", "text", "--yolo"],
                              cwd=self.cwd, env=self.env(), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=TIMEOUT, check=False)
        turns = [r.body for r in self.api.requests[before:] if is_turn(r.path, r.body)]
        return Run(proc.returncode, proc.stdout, proc.stderr, turns)

    def ask(self, prompt: str, *, session_id: str) -> Run:
        return self.run("--prompt", prompt, "--session-id", session_id)

    def resume(self, session_id: str, prompt: str = "continue") -> Run:
        return self.run("--prompt", prompt, "--resume", session_id)


NOTES = "".join(f"line {n}: alpha beta gamma\n" for n in range(1, 11))


def tool_session(api: FakeGemini, gm: GeminiCli, session_id: str) -> Run:
    """A first turn that reads notes.txt with ``read_file`` and answers."""
    (gm.cwd / "notes.txt").write_text(NOTES)
    api.push(call("read_file", {"file_path": "notes.txt"}, text="Let me read it."),
             say("notes.txt has 10 lines, each with alpha, beta and gamma."))
    run = gm.ask("What is in notes.txt?", session_id=session_id)
    assert run.returncode == 0, run.stderr[-800:]
    return run


def read_in_parts(api: FakeGemini, gm: GeminiCli, session_id: str, *, parts: int, rows: int,
                  row: str) -> Run:
    """A first turn that reads big.txt (``parts`` x ``rows`` lines ``row NNNNN: <row>``) with one
    ``read_file`` per part, then answers."""
    (gm.cwd / "big.txt").write_text("".join(f"row {n:05d}: {row}\n"
                                            for n in range(1, parts * rows + 1)))
    api.push(*[call("read_file", {"file_path": "big.txt", "start_line": 1 + rows * k,
                                  "end_line": rows * (k + 1)}) for k in range(parts)],
             say(f"Read all {parts} parts."))
    run = gm.ask(f"Read big.txt in {parts} parts.", session_id=session_id)
    assert run.returncode == 0, run.stderr[-800:]
    return run


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ``functionResponse`` part of a request's contents, in order."""
    return [part["functionResponse"] for content in body.get("contents") or []
            for part in content.get("parts") or [] if "functionResponse" in part]


def backdated(data: bytes, then: float) -> bytes:
    """Session lines with every ``timestamp``, ``lastUpdated`` and ``startTime`` set to
    ``then`` (epoch seconds)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(then)).encode()
    return re.sub(rb'"(timestamp|lastUpdated|startTime)":"[^"]+"',
                  lambda m: b'"' + m.group(1) + b'":"' + stamp + b'"', data)


def age_files(gm: GeminiCli, session: str, days: int) -> None:
    """Date the session ``days`` back: the times inside and out of every file of its id (a
    resume's own start is a file of the same id: the client deletes them together), its logs
    and folders."""
    then = time.time() - days * DAY
    project = gm.chats.parent
    for path in gm.chats.glob(f"session-*-{session[:8]}.jsonl"):
        path.write_bytes(backdated(path.read_bytes(), then))
    for path in [*gm.chats.glob(f"session-*-{session[:8]}.jsonl"),
                 *project.rglob(f"*{session}*")]:
        for each in [path, *(path.rglob("*") if path.is_dir() else [])]:
            os.utime(each, (then, then), follow_symlinks=False)
