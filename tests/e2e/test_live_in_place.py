"""The real Claude Code writes to its session while ``ctxtool summarize --in-place`` rewrites it
(the README's cron recipe, forced on the session that is open): nothing it wrote is lost, it
lands after the summary in the file, and the next resume sends all of it.

One run (module fixture): Claude Code starts a session; ``ctxtool summarize --llm anthropic
--in-place --force`` starts on it, and its summary request is held at a second fake server until
Claude Code, resumed meanwhile, has written its next turn to the file; then ctxtool finishes.
Claude Code is resumed once more on the result and its request is checked: it continues the
chain it wrote (from before the compaction), with every line it wrote.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ctxtool_executable
from tests.e2e.fake_messages import FakeMessages, say
from tests.fake_anthropic import FakeAnthropic, summary

TIMEOUT = 180
SECOND = "second prompt, typed while ctxtool was rewriting the session"
# long enough for a summary to be smaller than the session (summarize never grows a context)
FIRST = "first prompt" + " with some pasted context" * 1500


def project_slug(cwd: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def claude(binary: str, home: Path, cwd: Path, api: FakeMessages, *args: str) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "SHELL": "/bin/sh",
           "LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-ant-fake", "ANTHROPIC_BASE_URL": api.url,
           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    proc = subprocess.run([binary, "-p", *args, "--output-format", "json"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT, input="", check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@dataclass
class Outcome:
    ctxtool: subprocess.CompletedProcess[bytes]
    written_meanwhile: list[bytes]  # the lines Claude Code appended while ctxtool ran
    final: bytes  # the session file after ctxtool
    resumed: dict[str, Any]  # Claude Code's first request after resuming the result


@pytest.fixture(scope="module")
def outcome(claude_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    root = tmp_path_factory.mktemp("live-e2e")
    home, cwd = root / "home", root / "home" / "work" / "proj"
    cwd.mkdir(parents=True)
    release = threading.Event()
    with FakeMessages() as agent_api, FakeAnthropic() as summary_api:
        agent_api.push(say("first answer"), say("second answer"), say("third answer"))
        summary_api.responder = lambda body: (release.wait(TIMEOUT), summary())[1]
        session_id = claude(claude_bin, home, cwd, agent_api, FIRST)["session_id"]
        path = home / ".claude" / "projects" / project_slug(cwd) / f"{session_id}.jsonl"
        pinned_size = path.stat().st_size
        env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-fake",
               "ANTHROPIC_BASE_URL": summary_api.url}
        rewriting = subprocess.Popen(
            [*ctxtool_executable(), "summarize", "--llm", "anthropic", "--in-place", "--force",
             "--store", str(root / "store"), str(path)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + TIMEOUT
            while not summary_api.messages():  # ctxtool has read the file and waits on the API
                assert rewriting.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
            claude(claude_bin, home, cwd, agent_api, "--resume", session_id, SECOND)
            meanwhile = path.read_bytes()[pinned_size:].splitlines(keepends=True)
        finally:
            release.set()
        stdout, stderr = rewriting.communicate(timeout=TIMEOUT)
        done = subprocess.CompletedProcess(rewriting.args, rewriting.returncode, stdout, stderr)
        final = path.read_bytes()
        before = len(agent_api.turns())
        claude(claude_bin, home, cwd, agent_api, "--resume", session_id, "third prompt")
        resumed = agent_api.turns()[before]
    return Outcome(done, meanwhile, final, resumed)


def test_ctxtool_finished_and_compacted(outcome: Outcome) -> None:
    assert outcome.ctxtool.returncode == 0, outcome.ctxtool.stderr.decode()
    assert b'"subtype":"compact_boundary"' in outcome.final


def test_claude_code_wrote_its_turn_while_ctxtool_ran(outcome: Outcome) -> None:
    assert any(SECOND.encode() in line for line in outcome.written_meanwhile)
    assert any(b"second answer" in line for line in outcome.written_meanwhile)


def test_nothing_it_wrote_is_lost_and_it_follows_the_summary(outcome: Outcome) -> None:
    for line in outcome.written_meanwhile:
        assert line in outcome.final
    summary_at = outcome.final.index(b'"isCompactSummary":true')
    assert outcome.final.index(SECOND.encode()) > summary_at


def test_the_next_resume_continues_its_own_chain_with_everything_it_wrote(
        outcome: Outcome) -> None:
    """What Claude Code does with the result: the turn it wrote during the run hangs on the
    entry before the compaction (its parentUuid), and a resume follows that chain from the last
    line, so it sends its whole history - the compaction written under a live turn is not on its
    path (the next run on the idle session compacts it; lines are passed through unchanged, as
    they must be). It resumes fine and nothing is missing."""
    sent = json.dumps(outcome.resumed["messages"])
    for text in ("first prompt", "first answer", SECOND, "second answer", "third prompt"):
        assert text in sent
    assert sent.index("first prompt") < sent.index(SECOND) < sent.index("third prompt")
