"""--llm claude-code / codex at the edges that need no agent: not installed, chosen only by name
(the real agents run in tests/e2e/test_summarize_agents.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxtool.errors import ExitCode
from ctxtool.llm import choose_backend
from tests.conftest import run_ctxtool
from tests.summarize_builder import coding_session

SESSION = coding_session().jsonl()


@pytest.mark.parametrize(("backend", "agent", "program"), [("claude-code", "Claude Code", "claude"),
                                                           ("codex", "Codex", "codex")])
@pytest.mark.parametrize("how", ["option", "env"])
def test_an_agent_not_installed_is_one_line_and_exit_5(tmp_path: Path, backend: str, agent: str,
                                                       program: str, how: str) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION)
    args = ("--llm", backend) if how == "option" else ()
    env = {"PATH": str(tmp_path / "empty"), **({"CTXTOOL_LLM": backend} if how == "env" else {})}
    proc = run_ctxtool("summarize", *args, "-o", str(tmp_path / "out.jsonl"), str(path), env=env)
    assert proc.returncode == ExitCode.LLM, proc.stderr
    assert proc.stdout == b"" and not (tmp_path / "out.jsonl").exists()
    assert proc.stderr.decode().startswith(
        f"ctxtool: error: {agent} is not installed: no `{program}` on PATH — install {agent} ")
    assert proc.stderr.count(b"\n") == 1
    assert path.read_bytes() == SESSION


def test_auto_never_picks_an_agent(tmp_path: Path) -> None:
    """With `claude` and `codex` on PATH and no key, auto is offline; with a key, anthropic."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        tool = bin_dir / name
        tool.write_text(f"#!/bin/sh\ntouch {tmp_path}/{name}-ran\nexit 1\n")
        tool.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    assert choose_backend(None, env) == "offline"
    assert choose_backend("auto", {**env, "ANTHROPIC_API_KEY": "sk-x"}) == "anthropic"
    proc = run_ctxtool("summarize", "--text", input=SESSION, env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"by offline" in proc.stderr
    assert not (tmp_path / "claude-ran").exists() and not (tmp_path / "codex-ran").exists()


def test_a_failing_agent_is_one_line_naming_it(tmp_path: Path) -> None:
    """An agent that exits with an error and prints no reply (here a stand-in `claude` on PATH)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "claude"
    tool.write_text("#!/bin/sh\ncat > /dev/null\necho 'segmentation fault' >&2\nexit 139\n")
    tool.chmod(0o755)
    proc = run_ctxtool("summarize", "--llm", "claude-code", input=SESSION,
                       env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert proc.returncode == ExitCode.LLM and proc.stdout == b""
    assert proc.stderr.decode().startswith("ctxtool: error: Claude Code failed: segmentation fault")
    assert proc.stderr.count(b"\n") == 1
