"""`ctxtool sessions` finds what the real Codex CLI wrote: `codex exec` in a fresh CODEX_HOME
against the fake Responses API, then the listing shows the session with Codex's own last
token_count figures, and its id prefix names it to the other commands."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_ctxtool
from tests.e2e.codex_cli import CodexCli, tool_session
from tests.e2e.fake_responses import FakeResponses


def last_token_count(path: Path) -> dict:
    counts = [e["payload"]["info"] for e in map(json.loads, path.read_bytes().splitlines())
              if e.get("type") == "event_msg" and e["payload"].get("type") == "token_count"
              and e["payload"].get("info")]
    return counts[-1]


def test_a_real_codex_session_is_listed_and_named(codex_bin: str, tmp_path: Path) -> None:
    with FakeResponses() as api:
        cx = CodexCli(codex_bin, tmp_path, api)
        session = tool_session(api, cx)
    path = cx.session_path(session)
    env = {"CODEX_HOME": str(cx.codex_home), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}

    proc = run_ctxtool("sessions", "--json", env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    [row] = [json.loads(line) for line in proc.stdout.splitlines()]
    info = last_token_count(path)
    assert (row["id"], row["agent"], row["path"]) == (session, "codex", str(path))
    assert row["project"] == str(cx.cwd)
    assert row["first_prompt"] == "What is in this project?"
    # Codex's own figure: the last call's tokens (input + output) in its model_context_window
    assert row["context_tokens"] == info["last_token_usage"]["total_tokens"]
    assert row["context_window"] == info["model_context_window"]
    assert row["compactions"] == 0

    proc = run_ctxtool("estimate", "--json", session[:13], env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["source"] == str(path)
    assert (report["context_tokens"], report["thresholds"]["window"]) \
        == (row["context_tokens"], row["context_window"])
