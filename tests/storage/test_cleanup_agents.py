"""One plan for every agent: ``cleanup`` finds Claude Code's folder and Codex CLI's from the
variables the agents read, ``--agent`` limits it, every record and table row names its agent,
and the summary counts each agent's sessions and bytes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from ctxtool.storage.cleanup_source import SOURCES, CleanupSource, agents, make_source
from tests.cleanup_trees import NOW, NOW_ARG, add_session, claude_root
from tests.conftest import run_ctxtool
from tests.storage.test_cleanup_codex import NEW_ID, OLD_ID, codex_home

DAYS = timedelta(days=1)
OLD_CLAUDE, NEW_CLAUDE = "0ld00000-0000-0000-0000-0000000000c1", "new00000-0000-0000-0000-0000000000c2"


def both(tmp_path: Path) -> dict[str, str]:
    """A Claude Code folder and a Codex CLI folder, each with an old and a recent session, found
    through the variables the agents read (no --root, no --codex-home)."""
    root = claude_root(tmp_path)
    add_session(root, OLD_CLAUDE, NOW - 40 * DAYS)
    add_session(root, NEW_CLAUDE, NOW - 2 * DAYS)
    codex = codex_home(tmp_path)
    return {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(root),
            "CODEX_HOME": str(codex)}


def run(env: dict[str, str], *args: str) -> tuple[list[dict], dict, str]:
    proc = run_ctxtool("cleanup", "--now", NOW_ARG, *args, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [orjson.loads(line) for line in proc.stdout.splitlines()]
    return lines[:-1], lines[-1]["summary"], proc.stderr.decode()


def test_every_record_names_its_agent_and_the_summary_counts_each(tmp_path: Path) -> None:
    records, summary, stderr = run(both(tmp_path))
    going = {(r["agent"], r["session"]) for r in records if r["action"] == "delete"}
    assert going == {("claude-code", OLD_CLAUDE), ("codex", OLD_ID)}
    assert all(r["agent"] in ("claude-code", "codex") for r in records)
    assert {r["agent"] for r in records if r["session"] == NEW_ID} == {"codex"}
    per_agent = summary["agents"]
    assert per_agent["claude-code"]["sessions"] == 1 and per_agent["codex"]["sessions"] == 1
    removed = {agent: sum(r["bytes"] for r in records
                          if r["agent"] == agent and r["action"] == "delete")
               for agent in per_agent}
    assert {agent: counts["bytes"] for agent, counts in per_agent.items()} == removed
    assert summary["bytes"] == sum(removed.values()) > 0
    line = stderr.splitlines()[-1]
    assert "claude-code 1 session (" in line and "codex 1 session (" in line, line


@pytest.mark.parametrize("agent, other", [("codex", "claude-code"), ("claude-code", "codex")])
def test_agent_limits_the_run(tmp_path: Path, agent: str, other: str) -> None:
    records, summary, _ = run(both(tmp_path), "--agent", agent)
    assert records and {r["agent"] for r in records} == {agent}
    assert list(summary["agents"]) == [agent] and summary["removed_sessions"] == 1


def test_agent_repeated_is_every_one_named(tmp_path: Path) -> None:
    records, summary, _ = run(both(tmp_path), "--agent", "codex", "--agent", "claude-code")
    assert {r["agent"] for r in records} == {"claude-code", "codex"}
    assert summary["removed_sessions"] == 2


def test_an_applied_agent_run_leaves_the_other_agent_alone(tmp_path: Path) -> None:
    env = both(tmp_path)
    before = sorted(p.name for p in Path(env["CLAUDE_CONFIG_DIR"]).rglob("*"))
    _, summary, stderr = run(env, "--agent", "codex", "--apply")
    assert summary["agents"] == {"codex": {"sessions": 1, "items": 0, "bytes":
                                           summary["bytes"]}}
    assert sorted(p.name for p in Path(env["CLAUDE_CONFIG_DIR"]).rglob("*")) == before
    assert not list(Path(env["CODEX_HOME"]).rglob(f"*{OLD_ID}*"))
    assert "removed 1 session" in stderr


def test_an_unknown_agent_and_a_folder_for_an_agent_left_out_are_usage_errors(
        tmp_path: Path) -> None:
    env = both(tmp_path)
    proc = run_ctxtool("cleanup", "--agent", "aider", env=env)
    assert proc.returncode == 2 and b"--agent" in proc.stderr
    proc = run_ctxtool("cleanup", "--agent", "codex", "--root", env["CLAUDE_CONFIG_DIR"], env=env)
    assert proc.returncode == 2
    assert b"--agent leaves claude-code out" in proc.stderr and b"Traceback" not in proc.stderr


def test_a_named_agent_without_its_folder_says_so(tmp_path: Path) -> None:
    env = {**both(tmp_path), "CODEX_HOME": str(tmp_path / "nowhere")}
    records, summary, stderr = run(env, "--agent", "codex")
    assert records == [] and summary["removed_sessions"] == 0
    assert f"no Codex CLI folder at {tmp_path}/nowhere" in stderr


def test_each_registered_agent_finds_its_folder_as_the_agent_does(tmp_path: Path) -> None:
    """The folder comes from the agent's own variable, else its default under $HOME."""
    from ctxtool.storage.cleanup_source import agent_folder

    home = str(tmp_path)
    defaults = {"claude-code": (f"{home}/.claude", {"CLAUDE_CONFIG_DIR": "/x/claude"}, "/x/claude"),
                "codex": (f"{home}/.codex", {"CODEX_HOME": "/x/codex"}, "/x/codex"),
                "opencode": (f"{home}/.local/share/opencode", {"XDG_DATA_HOME": "/x/data"},
                             "/x/data/opencode"),
                "gemini": (f"{home}/.gemini", {"GEMINI_CLI_HOME": "/x/g"}, "/x/g/.gemini")}
    for agent, (default, variables, configured) in defaults.items():
        assert agent_folder(agent, {"HOME": home}) == default
        assert agent_folder(agent, {"HOME": home, **variables}) == configured
    assert set(agents()) <= set(defaults) and list(SOURCES) == list(agents())


def test_every_source_implements_the_interface() -> None:
    for agent in agents():
        source = make_source(agent, "/nowhere")
        assert isinstance(source, CleanupSource) and source.agent == agent
        assert type(source).scan is not CleanupSource.scan  # each finds its own sessions
        assert source.categories and source.transcript_kinds
