"""`ctxtool summarize` offline, through the real entry point and click's runner."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.core.summarizing.prompt import HEADINGS, missing_headings
from ctxtool.errors import ExitCode
from tests.conftest import ROOT, run_ctxtool
from tests.summarize_builder import coding_session

EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"
NOW = "2026-02-03T10:00:00Z"


def last_entries(stdout: bytes, count: int) -> list[dict]:
    return [orjson.loads(line) for line in stdout.splitlines()[-count:]]


def test_readme_command_compacts_the_bundled_example_offline(tmp_path: Path) -> None:
    """The README's first command: `ctxtool summarize ctxtool/examples/session.jsonl -o
    compacted.jsonl`: the report on the terminal, the JSONL in a file, most of the context cut."""
    from tests.test_architecture import readme_setup_commands

    first = readme_setup_commands()[0].split("&&")[-1].split()
    assert first == ["ctxtool", "summarize", "ctxtool/examples/session.jsonl", "-o",
                     "compacted.jsonl"]
    proc = run_ctxtool(*first[1:-1], str(tmp_path / first[-1]), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
    report = proc.stderr.decode()
    before, after = (int(n.replace(",", "")) for n in
                     re.search(r"context ([\d,]+) -> ([\d,]+) tokens", report).groups())  # type: ignore[union-attr]
    assert before > 100_000 and after < before / 3, report  # summarizing cuts most of it
    data = EXAMPLE.read_bytes()
    written = (tmp_path / "compacted.jsonl").read_bytes()
    assert written.startswith(data)
    proc.stdout = written
    boundary, summary = last_entries(proc.stdout, 2)
    assert boundary["subtype"] == "compact_boundary" and summary["isCompactSummary"] is True
    text = summary["message"]["content"]
    assert missing_headings(text) == []
    for prompt in ("The CSV export in invoices/export.py crashes", "ありがとう！READMEにも",
                   "Great. Now run the whole test suite before I commit."):
        assert prompt in text
    for path in ("invoices/export.py (edited x1", "README.md (edited x1",
                 "tests/test_export.py (new, written x1)"):
        assert path in text
    assert "UnicodeEncodeError" in text and "[in_progress] Investigate the rounding failure" in text
    assert str(EXAMPLE) in text  # the full transcript is named
    assert proc.stderr.decode().startswith("ctxtool: summarize: ctxtool/examples/session.jsonl: context ")
    assert "tokens by offline" in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr


def test_example_output_validates_and_filter_compacted_starts_at_the_boundary(tmp_path: Path) -> None:
    out = tmp_path / "compacted.jsonl"
    proc = run_ctxtool("summarize", "--keep-last", "3", "--restore-files", "2", "--now", NOW,
                       "-o", str(out), str(EXAMPLE))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    check = run_ctxtool("validate", str(out))
    assert check.returncode == 0, check.stdout + check.stderr
    view = run_ctxtool("filter-compacted", str(out))
    assert view.returncode == 0, view.stderr
    first = orjson.loads(view.stdout.splitlines()[0])
    written = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    ours = [e for e in written if e.get("subtype") == "compact_boundary"]
    assert len(ours) == 1 and first == ours[0]
    # kept by reference, in the form 2.1.14 (the example's version) would read if it could:
    # the segment, walked from its tail back to its head (2.1.76-2.1.140's only form)
    segment = ours[0]["compactMetadata"]["preservedSegment"]
    assert "preservedMessages" not in ours[0]["compactMetadata"]
    parents = {e.get("uuid"): e.get("parentUuid") for e in written}
    kept = [segment["tailUuid"]]
    while kept[-1] != segment["headUuid"]:
        kept.append(parents[kept[-1]])
    assert len(view.stdout.splitlines()) == len(written) - written.index(ours[0]) + len(kept)
    assert "Claude Code 2.1.14 does not keep messages across a compaction" in proc.stderr.decode()


def test_text_prints_only_the_summary(runner) -> None:
    result = runner.invoke(cli, ["summarize", "--text", "--instructions", "focus on tests",
                                 str(EXAMPLE)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("1. Primary Request and Intent:")
    assert all(f"{title}:" in result.stdout for title in HEADINGS)
    assert "Focus asked for this summary: focus on tests" in result.stdout
    assert "tokens by offline" in result.stderr


def test_stats_report_on_stderr(runner) -> None:
    result = runner.invoke(cli, ["summarize", "--stats", "--now", NOW], input=coding_session().jsonl())
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stderr[result.stderr.index("{"):])
    assert report["backend"] == "offline" and report["compacted"] is True
    assert report["tokens_before"] > 0 and report["tokens_after"] > 0 and report["calls"] == 0
    assert report["entries_out"] == report["entries_in"] + 2


def test_in_place_and_instructions_file(runner, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(coding_session().jsonl())
    focus = tmp_path / "focus.txt"
    focus.write_text("remember the PAGER_SIZE default", encoding="utf-8")
    result = runner.invoke(cli, ["summarize", "-q", "--in-place", "--force", "--instructions-file", str(focus),
                                 "--now", NOW, str(path)])
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    summary = last_entries(path.read_bytes(), 1)[0]["message"]["content"]
    assert "remember the PAGER_SIZE default" in summary and str(path) in summary


def test_bad_options_and_missing_files(runner, tmp_path: Path) -> None:
    data = coding_session().jsonl()
    missing = runner.invoke(cli, ["summarize", "--instructions-file", str(tmp_path / "nope")], input=data)
    assert missing.exit_code == ExitCode.STORAGE and "cannot read instructions" in missing.stderr
    both = runner.invoke(cli, ["summarize", "--text", "--in-place", str(EXAMPLE)])
    assert both.exit_code == ExitCode.USAGE and "--text" in both.stderr
    bad_env = runner.invoke(cli, ["summarize"], input=data, env={"CTXTOOL_LLM": "gpt"})
    assert bad_env.exit_code == ExitCode.USAGE


def test_llm_choice_from_environment_and_missing_key(runner) -> None:
    data = coding_session().jsonl()
    offline = runner.invoke(cli, ["summarize"], input=data, env={"CTXTOOL_LLM": "offline",
                                                                 "ANTHROPIC_API_KEY": "sk-ant-unused-key"})
    assert offline.exit_code == 0 and "tokens by offline" in offline.stderr
    nokey = runner.invoke(cli, ["summarize", "--llm", "anthropic"], input=data)
    assert nokey.exit_code == ExitCode.LLM and nokey.stdout == ""
    assert nokey.stderr.strip() == ("ctxtool: error: no Anthropic API key is configured — set "
                                    "ANTHROPIC_API_KEY, or use --llm offline")


def test_nothing_to_summarize_passes_through(runner) -> None:
    line = b'{"type":"summary","summary":"A title","leafUuid":"x"}\n'
    result = runner.invoke(cli, ["summarize"], input=line)
    assert result.exit_code == 0 and result.stdout_bytes == line
    assert "nothing to summarize" in result.stderr


def test_offline_run_never_imports_the_sdk() -> None:
    code = ("import sys\nfrom ctxtool.cli import main\nsys.argv=['ctxtool','summarize','-q',"
            f"{str(EXAMPLE)!r}]\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(str('anthropic' in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert proc.stderr.decode().endswith("False"), proc.stderr


def test_auto_compacts_only_over_the_threshold(runner) -> None:
    data = coding_session().jsonl()
    below = runner.invoke(cli, ["summarize", "--auto"], input=data)
    assert below.exit_code == 0 and below.stdout_bytes == data
    assert "below the auto-compact threshold" in below.stderr
    over = runner.invoke(cli, ["summarize", "--auto", "--context-window", "100000", "--now", NOW],
                         input=data, env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "1"})  # at 800 tokens
    assert over.exit_code == 0, over.stderr
    boundary, summary = last_entries(over.stdout_bytes, 2)
    assert boundary["compactMetadata"]["trigger"] == "auto"
    assert "Please continue the conversation from where we left it off" in summary["message"]["content"]
    off = runner.invoke(cli, ["summarize", "--auto", "--context-window", "100000"], input=data,
                        env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "1", "DISABLE_AUTO_COMPACT": "1"})
    assert off.stdout_bytes == data and "DISABLE_AUTO_COMPACT is set" in off.stderr


@pytest.mark.parametrize("where", ["settings.json", "settings.local.json", ".claude.json"])
def test_auto_compact_enabled_false_in_claudes_own_files_passes_through(tmp_path: Path,
                                                                        where: str) -> None:
    """Claude Code 2.1.332 reads autoCompactEnabled from its settings files, strongest first,
    then from ~/.claude.json (where /config wrote it before): false there, no --auto compaction."""
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)
    files = {"settings.json": home / ".claude" / "settings.json",
             "settings.local.json": project / ".claude" / "settings.local.json",
             ".claude.json": home / ".claude.json"}
    files[where].write_text(json.dumps({"autoCompactEnabled": False}))
    session = tmp_path / "s.jsonl"
    session.write_bytes(coding_session().jsonl())
    env = {"HOME": str(home), "CTXTOOL_CLAUDE_SETTINGS": "1",
           "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "1"}  # far over the threshold
    args = ("summarize", "--auto", "--llm", "offline", "--context-window", "100000", "--now",
            NOW, str(session))
    off = run_ctxtool(*args, env=env, cwd=project)
    assert off.returncode == 0 and off.stdout == session.read_bytes(), off.stderr
    assert b"autoCompactEnabled is false; input passed through unchanged" in off.stderr
    # a settings file's true wins over ~/.claude.json's false; without the file it compacts
    files["settings.json"].write_text(json.dumps({"autoCompactEnabled": where != "settings.json"}))
    if where != ".claude.json":
        files[where].unlink()
    on = run_ctxtool(*args, env=env, cwd=project)
    assert on.returncode == 0 and len(on.stdout) > session.stat().st_size, on.stderr


def test_openai_list_is_compacted_and_the_original_saved(runner, tmp_path: Path) -> None:
    lines = [{"role": "system", "content": "You are terse."},
             {"role": "user", "content": "what is in the repo? " + "Some context. " * 2000},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "call_1", "content": "README.md\nsrc/"},
             {"role": "assistant", "content": "A README and a src folder."}]
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    result = runner.invoke(cli, ["summarize", "--keep-last", "2", "--store", str(tmp_path), "--stats"],
                           input=data)
    assert result.exit_code == 0, result.stderr
    out = [orjson.loads(line) for line in result.stdout_bytes.splitlines()]
    assert out[0] == lines[0] and out[1]["content"].startswith("[ctxtool summary] This session")
    assert out[2:] == lines[2:]  # the tool result pulled its call into the kept tail
    saved = Path(json.loads(result.stderr[result.stderr.index("{"):])["transcript_saved"])
    assert saved.read_bytes() == data and saved.is_relative_to(tmp_path)
    assert str(saved) in out[1]["content"]
    view = run_ctxtool("filter-compacted", input=result.stdout_bytes)
    assert view.returncode == 0 and view.stdout == result.stdout_bytes
