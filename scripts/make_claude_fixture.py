#!/usr/bin/env python3
"""Write a small Claude Code session with the real client, for tests/fixtures/.

    python scripts/make_claude_fixture.py [OUT_DIR]     # default tests/fixtures/claude-code-<version>

Drives the pinned Claude Code (scripts/install-clients.sh) headless against the fake Messages
server of tests/e2e, with a fresh HOME under a temporary folder: scripted tool calls (Bash, Read,
a Bash output large enough for Claude Code to persist it to tool-results/), then Claude Code's own
``/compact``, then one more turn. Copies the transcript and its tool-results folder to OUT_DIR,
with the temporary folder's path replaced by ``/home/user`` so nothing of this machine remains.
Only the previous session (its id-named transcript and folder) is replaced in OUT_DIR: the other
files there (single records of the same version, such as context-command.jsonl) stay.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.claude_code import ClaudeCode, project_slug  # noqa: E402
from tests.e2e.fake_messages import FakeMessages, say, tool  # noqa: E402

NEUTRAL_HOME = "/home/user"
SESSION_NAME = "????????-????-????-????-????????????.jsonl"  # as tests/conftest.py finds it


def claude_binary() -> str:
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-clients.sh"), "claude"],
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip().split("\t", 1)[1]


def script(api: FakeMessages, cc: ClaudeCode) -> str:
    """The conversation; returns the session id."""
    notes = cc.cwd / "notes.txt"
    notes.write_text("".join(f"line {n}: alpha beta gamma\n" for n in range(1, 41)))
    api.push(tool("Bash", {"command": "ls -la", "description": "List the project"},
                  text="Let me look at the project."),
             tool("Read", {"file_path": str(notes)}),
             tool("Bash", {"command": "seq 1 11000", "description": "Print many numbers"}),
             say("The project has notes.txt with 40 lines; seq printed 11000 numbers."))
    first = cc.ask("What is in this project?")
    assert first.returncode == 0, first.stderr
    session = str(first.result["session_id"])
    api.push(tool("Bash", {"command": "grep -c beta notes.txt", "description": "Count beta"}),
             say("40 lines mention beta."))
    assert cc.resume(session, "How many lines mention beta?").returncode == 0
    assert cc.resume(session, "/compact").returncode == 0
    api.push(say("Nothing else is pending."))
    assert cc.resume(session, "Anything left to do?").returncode == 0
    return session


def main() -> int:
    binary = claude_binary()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[0]
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "fixtures" / f"claude-code-{version}"
    with tempfile.TemporaryDirectory(prefix="ccfix") as tmp, FakeMessages() as api:
        cc = ClaudeCode(binary, Path(tmp), api)
        cc.flags = sys.argv[2:]
        session = script(api, cc)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob(SESSION_NAME):  # the previous session; other files stay
            shutil.rmtree(out / old.stem, ignore_errors=True)
            old.unlink()
        home, slug = str(cc.home), project_slug(cc.cwd)
        neutral_slug = project_slug(Path(NEUTRAL_HOME) / cc.cwd.relative_to(cc.home))
        for source in [cc.session_path(session), *sorted((cc.projects / session).rglob("*"))]:
            if source.is_file():
                target = out / source.relative_to(cc.projects)
                target.parent.mkdir(parents=True, exist_ok=True)
                data = source.read_bytes().replace(slug.encode(), neutral_slug.encode())
                target.write_bytes(data.replace(home.encode(), NEUTRAL_HOME.encode()))
        print(f"{out}: session {session}, Claude Code {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
