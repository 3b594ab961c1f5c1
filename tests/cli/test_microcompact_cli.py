"""`ctxtool microcompact` and `ctxtool snip` at the edge: stores, outputs, stats, env, errors."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.storage.paths import project_slug
from ctxtool.formats.claude_code.rules import rough_tokens
from tests.clearing_helpers import Session, result_contents, text_with_tokens
from tests.conftest import run_ctxtool

NOW = ("--now", "2026-01-02T00:00:00Z")


def big_session() -> Session:
    session = Session().user("go")
    session.call("Read", {"file_path": "/src/a.py"}, text_with_tokens(30_000, "a.py v1"))
    for size in (30_000, 30_000, 100, 100, 100):
        session.sized_call("Bash", size)
    session.call("Read", {"file_path": "/src/a.py"}, text_with_tokens(500, "a.py v2"))
    session.assistant("done")
    return session


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(big_session().jsonl())
    return path


def test_clears_saves_and_restores_byte_for_byte(runner, tmp_path: Path, transcript: Path) -> None:
    store = tmp_path / "store"
    result = runner.invoke(cli, ["microcompact", "--force", "--store", str(store), *NOW,
                                 str(transcript)])
    assert result.exit_code == 0, result.stderr
    out = [orjson.loads(line) for line in result.stdout_bytes.splitlines()]
    assert out[-1]["subtype"] == "microcompact_boundary"
    assert len(out[-1]["microcompactMetadata"]["compactedToolIds"]) == 2
    saved = sorted(p.name for p in (store / "sess-1" / "tool-results").iterdir())
    assert saved == ["toolu_001.txt", "toolu_002.txt"]
    assert result.stderr.startswith("ctxtool: microcompact: cleared 2 tool result(s)")
    cleared = tmp_path / "cleared.jsonl"
    cleared.write_bytes(result.stdout_bytes)
    back = run_ctxtool("restore", str(cleared))
    assert back.returncode == 0, back.stderr
    assert back.stdout == transcript.read_bytes()


def test_second_run_is_a_byte_identical_passthrough(tmp_path: Path, transcript: Path) -> None:
    first = run_ctxtool("microcompact", "--force", "--store", str(tmp_path / "s"), *NOW,
                        str(transcript))
    second = run_ctxtool("microcompact", "--force", "--store", str(tmp_path / "s"), *NOW,
                         input=first.stdout)
    assert first.returncode == second.returncode == 0
    assert second.stdout == first.stdout
    assert b"nothing cleared" in second.stderr


def test_default_store_is_claude_codes_session_folder(tmp_path: Path, transcript: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / project_slug("/tmp/proj")
    project.mkdir(parents=True)
    inside = transcript.rename(project / "sess-1.jsonl")  # the session in Claude Code's folder
    proc = run_ctxtool("microcompact", "--force", *NOW, str(inside),
                       env={"CLAUDE_CONFIG_DIR": str(home / ".claude")})
    assert proc.returncode == 0, proc.stderr
    folder = project / "sess-1" / "tool-results"
    assert sorted(p.name for p in folder.iterdir()) == ["toolu_001.txt", "toolu_002.txt"]
    assert str(folder / "toolu_001.txt").encode() in proc.stdout


def test_stats_report_per_tool(runner, tmp_path: Path, transcript: Path) -> None:
    report = tmp_path / "report.json"
    result = runner.invoke(cli, ["microcompact", "--force", "--no-save", "--stats",
                                 "--report", str(report), *NOW, str(transcript)])
    assert result.exit_code == 0
    stats = json.loads(result.stderr[result.stderr.index("{"):])
    assert stats == json.loads(report.read_text())
    assert stats["results_cleared"] == 2 and stats["strategy"] == "claude-code"
    placeholder = estimate_text_tokens("[Old tool result content cleared]")
    assert stats["per_tool"] == {"Bash": {"cleared": 1, "inputs_cleared": 0,
                                          "tokens_after": placeholder, "tokens_before": 30_000},
                                 "Read": {"cleared": 1, "inputs_cleared": 0,
                                          "tokens_after": placeholder, "tokens_before": 30_000}}
    # Claude Code's count (characters / 4) of the compactable results, the re-read included;
    # tokens_saved is ctxtool's estimate, net of the placeholders
    texts = list(result_contents(big_session().entries).values())
    assert stats["tool_result_tokens_before"] == sum(map(rough_tokens, texts))
    assert stats["agent_tokens_saved"] == sum(map(rough_tokens, texts[:2]))
    assert stats["tool_result_tokens_after"] == sum(map(rough_tokens, texts[2:]))
    assert stats["tokens_saved"] == 60_000 - 2 * placeholder
    assert stats["files_saved"] == 0 and stats["boundary_appended"] is True


def test_nothing_to_do_says_why(runner, transcript: Path) -> None:
    result = runner.invoke(cli, ["microcompact", "--no-save", str(transcript)])
    assert result.exit_code == 0
    assert result.stdout_bytes == transcript.read_bytes()
    assert "nothing cleared (context is" in result.stderr


def test_disable_microcompact_passes_input_through(tmp_path: Path, transcript: Path) -> None:
    env = {"DISABLE_MICROCOMPACT": "1"}
    proc = run_ctxtool("microcompact", "--force", str(transcript), env=env)
    assert proc.returncode == 0
    assert proc.stdout == transcript.read_bytes()
    assert b"DISABLE_MICROCOMPACT is set" in proc.stderr
    before = transcript.stat().st_mtime_ns
    proc = run_ctxtool("microcompact", "--force", "--in-place", str(transcript), env=env)
    assert proc.returncode == 0 and transcript.stat().st_mtime_ns == before
    proc = run_ctxtool("microcompact", "--force", "--no-save", str(transcript),
                       env={"DISABLE_MICROCOMPACT": "0"})
    assert b"[Old tool result content cleared]" in proc.stdout
    # only Claude Code up to 2.1.63 reads it (2.1.64's bundle and later never name it)
    for version, honoured in (("2.1.63", True), ("2.1.64", False), ("2.1.332", False)):
        newer = tmp_path / f"{version}.jsonl"
        newer.write_bytes(transcript.read_bytes().replace(b'"version":"2.1.19"',
                                                          f'"version":"{version}"'.encode()))
        proc = run_ctxtool("microcompact", "--force", "--no-save", str(newer), env=env)
        assert (proc.stdout == newer.read_bytes()) is honoured, version


@pytest.mark.parametrize("where", ["environment", "settings.json"])
def test_disable_compact_passes_input_through(tmp_path: Path, transcript: Path,
                                              where: str) -> None:
    """Claude Code clears nothing under DISABLE_COMPACT: neither does microcompact, nor
    summarize --auto, on a session over every threshold."""
    config = tmp_path / "claude"
    config.mkdir()
    env = {"DISABLE_COMPACT": "1"}
    if where == "settings.json":
        (config / "settings.json").write_text(json.dumps({"env": env}))
        env = {"CLAUDE_CONFIG_DIR": str(config), "CTXTOOL_CLAUDE_SETTINGS": "1"}
    over = Session().user("go")
    for size in (60_000, 60_000, 100, 100, 100):
        over.sized_call("Bash", size)
    over.assistant("done", usage={"input_tokens": 190_000, "output_tokens": 10})
    path = tmp_path / "over.jsonl"
    path.write_bytes(over.jsonl())
    proc = run_ctxtool("microcompact", str(path), env=env)
    assert proc.returncode == 0 and proc.stdout == path.read_bytes()
    assert proc.stderr == (b"ctxtool: microcompact: nothing cleared (DISABLE_COMPACT is set: "
                           b"input passed through unchanged)\n")
    proc = run_ctxtool("summarize", "--auto", "--llm", "offline", str(path), env=env)
    assert proc.returncode == 0 and proc.stdout == path.read_bytes()
    assert b"DISABLE_COMPACT is set" in proc.stderr
    # without it both act on the same session
    plain = {"CTXTOOL_CLAUDE_SETTINGS": "0"}
    assert run_ctxtool("microcompact", "--no-save", str(path), env=plain).stdout \
        != path.read_bytes()
    assert run_ctxtool("summarize", "--auto", "--llm", "offline", str(path), env=plain).stdout \
        != path.read_bytes()


def test_in_place_and_output_file(tmp_path: Path, transcript: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(transcript.read_bytes())
    out = tmp_path / "out.jsonl"
    a = run_ctxtool("microcompact", "--force", "--no-save", *NOW, "-o", str(out), str(transcript))
    b = run_ctxtool("microcompact", "--force", "--no-save", *NOW, "--in-place", str(copy))
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout == b""
    assert out.read_bytes() == copy.read_bytes() != transcript.read_bytes()
    c = run_ctxtool("microcompact", "--in-place", input=transcript.read_bytes())
    assert c.returncode == 2 and b"--in-place needs file arguments" in c.stderr


def test_strategies_and_anthropic_knob_names(runner, transcript: Path) -> None:
    base = ["microcompact", "--no-save", *NOW, str(transcript)]
    opencode = runner.invoke(cli, [*base[:1], "--strategy", "opencode", "--target", "0",
                                   "--force", *base[1:]])
    assert opencode.exit_code == 0 and "nothing cleared" in opencode.stderr  # one user turn
    idle = runner.invoke(cli, [*base[:1], "--strategy", "idle", "--idle", "5", *base[1:]])
    assert idle.exit_code == 0 and "cleared 2 tool result(s)" in idle.stderr  # keep 5 of 7
    knobs = runner.invoke(cli, [*base[:1], "--trigger", "0", "--keep", "1", "--clear-at-least",
                                "100", "--exclude-tools", "Read", "--clear-tool-inputs",
                                *base[1:]])
    assert knobs.exit_code == 0, knobs.stderr
    out = [orjson.loads(line) for line in knobs.stdout_bytes.splitlines()]
    # Read excluded; 60300 tokens of Bash output, the newest kept: one clearing reaches 40000
    assert out[-1]["microcompactMetadata"]["compactedToolIds"] == ["toolu_002"]
    assert out[3]["message"]["content"][0]["input"] == {}  # --no-save: blanked, not saved
    bad = runner.invoke(cli, [*base[:1], "--idle", "soon", *base[1:]])
    assert bad.exit_code == 2 and "--idle: not a duration" in bad.stderr


def test_snip_cli(runner, tmp_path: Path, transcript: Path) -> None:
    store = tmp_path / "store"
    result = runner.invoke(cli, ["snip", "--store", str(store), "--stats", str(transcript)])
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stderr[result.stderr.index("{"):])
    assert stats["reasons"] == {"read again later": 1} and stats["results_cleared"] == 1
    assert b"[Content snipped - re-read if needed]\\nTool result saved to: " in result.stdout_bytes
    snipped = tmp_path / "snipped.jsonl"
    snipped.write_bytes(result.stdout_bytes)
    assert run_ctxtool("restore", str(snipped)).stdout == transcript.read_bytes()
    again = run_ctxtool("snip", "--store", str(store), str(snipped))
    assert again.stdout == snipped.read_bytes()
    gated = runner.invoke(cli, ["snip", "--min-usage", "90", str(transcript)])
    assert gated.exit_code == 0 and gated.stdout_bytes == transcript.read_bytes()
    assert "is not above --min-usage 90%" in gated.stderr


def test_pipeline_of_both(tmp_path: Path, transcript: Path) -> None:
    store = str(tmp_path / "store")
    snipped = run_ctxtool("snip", "--store", store, str(transcript))
    compacted = run_ctxtool("microcompact", "--force", "--store", store, *NOW,
                            input=snipped.stdout)
    assert compacted.returncode == 0, compacted.stderr
    back = run_ctxtool("restore", input=compacted.stdout)
    assert back.stdout == transcript.read_bytes()


def test_bad_option_values_are_usage_errors(runner, transcript: Path) -> None:
    for args in (["microcompact", "--now", "yesterday-ish"], ["microcompact", "--keep", "-1"],
                 ["snip", "--min-usage", "120"], ["microcompact", "--strategy", "fast"]):
        result = runner.invoke(cli, [*args, str(transcript)])
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stdout_bytes == b"" and "Traceback" not in result.stderr


def test_in_place_on_several_files_reports_each(runner, tmp_path: Path) -> None:
    paths = []
    for name in ("one.jsonl", "two.jsonl"):
        paths.append(tmp_path / name)
        paths[-1].write_bytes(big_session().jsonl())
    result = runner.invoke(cli, ["microcompact", "--force", "--no-save", "--stats", *NOW,
                                 "--in-place", *map(str, paths)])
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stderr[result.stderr.index("{"):])
    assert [f["results_cleared"] for f in stats["files"]] == [2, 2]
    assert all(b"microcompact_boundary" in p.read_bytes() for p in paths)
