"""Sessions written by the real Claude Code (2.1.330): listed by `ctxtool sessions`, named by id
and --latest, sized by `statusline`, and ctxtool run by Claude Code itself as a Stop hook with
its hook JSON on stdin."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import ctxtool_executable, run_ctxtool
from tests.e2e.fake_messages import FakeMessages, say, tool

PROMPT = "Run echo for me"


@pytest.fixture(scope="module")
def session(claude_bin: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One headless Claude Code run: a Bash call and an answer, a Stop hook running ctxtool."""
    root = tmp_path_factory.mktemp("claude-e2e")
    home, project = root / "home", root / "project"
    config = home / ".claude"
    config.mkdir(parents=True)
    project.mkdir()
    hook_out = root / "stop-hook.json"
    command = " ".join([*ctxtool_executable(), "estimate", "--json", "-o", str(hook_out)])
    (config / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}))
    with FakeMessages() as api:
        api.push(tool("Bash", {"command": "echo hello-from-tool", "description": "echo"}),
                 say("All done."))
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "CLAUDE_CONFIG_DIR": str(config),
               "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test",
               "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        proc = subprocess.run([claude_bin, "-p", PROMPT, "--output-format", "json",
                               "--allowedTools", "Bash(echo:*)"], cwd=project, env=env,
                              stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    session_id = json.loads(proc.stdout)["session_id"]
    [transcript] = list(config.glob(f"projects/*/{session_id}.jsonl"))
    final = run_ctxtool("estimate", "--json", str(transcript))
    assert final.returncode == 0, final.stderr
    return {"config": config, "project": project, "id": session_id, "transcript": transcript,
            "hook": hook_out, "estimate": json.loads(final.stdout),
            "env": {"CLAUDE_CONFIG_DIR": str(config)}}


def recorded_prompt(transcript: Path) -> str:
    for line in transcript.read_bytes().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "user" and isinstance(entry["message"]["content"], str):
            return str(entry["message"]["content"])
    raise AssertionError("no prompt in the transcript")


def test_claude_code_ran_ctxtool_as_a_hook(session: dict[str, Any]) -> None:
    """Claude Code's Stop hook JSON on stdin: estimate read the transcript it named. (Anchored
    on one of its calls: Claude Code may run the hook before its last line reaches the file, as
    seen once under load, so not necessarily on the last one.)"""
    report = json.loads(session["hook"].read_text())
    assert report["source"] == str(session["transcript"])
    assert report["method"] == "usage"
    calls = [entry["message"]["id"] for entry in map(json.loads,
                                                     session["transcript"].read_bytes().splitlines())
             if entry.get("type") == "assistant"]
    assert report["anchor"]["message_id"] in calls
    assert session["estimate"]["anchor"]["message_id"] == calls[-1]


def test_sessions_lists_the_real_session(session: dict[str, Any]) -> None:
    proc = run_ctxtool("sessions", "--json", env=session["env"])
    assert proc.returncode == 0, proc.stderr
    [row] = [json.loads(line) for line in proc.stdout.splitlines()]
    report = session["estimate"]
    assert (row["id"], row["project"]) == (session["id"], str(session["project"]))
    # the prompt as Claude Code recorded it (under pytest it appends a line of its own to -p)
    assert row["first_prompt"] == " ".join(recorded_prompt(session["transcript"]).split())
    assert row["first_prompt"].startswith(PROMPT)
    assert (row["context_tokens"], row["compactions"], row["model"], row["context_window"]) == (
        report["context_tokens"], report["compact_boundaries"], report["model"],
        report["thresholds"]["window"])


def test_ids_latest_and_statusline_on_the_real_session(session: dict[str, Any]) -> None:
    env, report = session["env"], session["estimate"]
    by_prefix = run_ctxtool("estimate", "--json", session["id"][:8], env=env)
    latest = run_ctxtool("estimate", "--json", "--latest", "--project",
                         str(session["project"]), env=env)
    for proc in (by_prefix, latest):
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["source"] == str(session["transcript"])
    status = orjson.dumps({"session_id": session["id"],
                           "transcript_path": str(session["transcript"]),
                           "cwd": str(session["project"]),
                           "model": {"id": report["model"], "display_name": "Sonnet"},
                           "context_window": {"context_window_size": 200_000,
                                              "current_usage": None}})
    line = run_ctxtool("statusline", "--format", "{context_tokens}", input=status)
    assert line.returncode == 0, line.stderr
    assert int(line.stdout) == report["context_tokens"]
