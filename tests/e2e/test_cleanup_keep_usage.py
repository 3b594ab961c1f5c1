"""``cleanup --keep-usage`` against the real ccusage (npm, scripts/install-clients.sh ccusage):
``ccusage daily --json`` over ``~/.claude`` before a cleanup reports the same days, tokens and
costs as over ``~/.claude`` plus the keep-usage folder after it. The sessions are the repository's
Claude Code fixture and, when ../shared is there, every corpus transcript recording usage (real
sessions of several Claude Code versions, a subagent's among them); every other one is aged."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_CODE_FIXTURE, CORPUS, run_ctxtool
from tests.e2e.conftest import client_binary

NOW = datetime(2027, 6, 1, tzinfo=timezone.utc)  # after every corpus timestamp
OLD, RECENT = (NOW - timedelta(days=60)).timestamp(), (NOW - timedelta(days=1)).timestamp()


def _sources() -> list[Path]:
    fixture = CLAUDE_CODE_FIXTURE
    found = sorted(CORPUS.rglob("*.jsonl")) if CORPUS.is_dir() else []
    return [fixture, *(path for path in found if b'"usage"' in path.read_bytes())]


def _age(path: Path, when: float) -> None:
    if path.is_dir():
        for folder, _, files in os.walk(path):
            for name in files:
                os.utime(os.path.join(folder, name), (when, when))
            os.utime(folder, (when, when))
    elif path.exists():
        os.utime(path, (when, when))


def _home(tmp_path: Path) -> tuple[Path, int]:
    """A HOME whose ~/.claude holds the sources as sessions (a subagent transcript inside the
    session before it), every other session aged 60 days; the number of aged sessions."""
    projects = tmp_path / "home" / ".claude" / "projects"
    sessions: list[tuple[Path, float]] = []
    for n, source in enumerate(_sources()):
        if "__subagents__" in source.name and sessions:
            target = sessions[-1][0].with_suffix("") / "subagents" / f"agent-{n}.jsonl"
        else:
            name = str(uuid.uuid5(uuid.NAMESPACE_URL, source.name))
            target = projects / f"-home-u-proj{n % 3}" / f"{name}.jsonl"
            sessions.append((target, OLD if len(sessions) % 2 == 0 else RECENT))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    for transcript, when in sessions:
        _age(transcript, when)
        _age(transcript.with_suffix(""), when)
    return tmp_path / "home", sum(when == OLD for _, when in sessions)


def _daily(ccusage: str, home: Path, config_dirs: str | None) -> dict:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TZ": "UTC", "NO_COLOR": "1"}
    if config_dirs is not None:
        env["CLAUDE_CONFIG_DIR"] = config_dirs
    proc = subprocess.run([ccusage, "daily", "--json", "--offline"], capture_output=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def test_ccusage_reports_the_same_totals_after_a_cleanup_keeping_usage(tmp_path: Path) -> None:
    ccusage = client_binary("ccusage")
    home, aged = _home(tmp_path)
    claude, usage = home / ".claude", tmp_path / "usage"
    before = _daily(ccusage, home, None)
    assert before["totals"]["totalTokens"] > 0

    proc = run_ctxtool("cleanup", "--older-than", "30d", "--apply", "--keep-usage", str(usage),
                       "--now", NOW.isoformat(), "--json", env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr.decode()
    summary = json.loads(proc.stdout.splitlines()[-1])["summary"]
    assert summary["removed_sessions"] == aged > 0
    kept_sessions = re.search(r"usage of (\d+) sessions kept", proc.stderr.decode())
    assert kept_sessions and 0 < int(kept_sessions[1]) <= aged  # not those recording no usage

    partial = _daily(ccusage, home, str(claude))
    assert partial["totals"]["totalTokens"] < before["totals"]["totalTokens"]  # usage went
    after = _daily(ccusage, home, f"{claude},{usage}")
    print(f"before {before['totals']} after {after['totals']} kept only {partial['totals']}")
    assert after == before
    kept = b"".join(path.read_bytes() for path in usage.rglob("*.jsonl"))
    assert b'"content"' not in kept and b'"text"' not in kept
