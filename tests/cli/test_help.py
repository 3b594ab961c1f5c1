"""Help that reads well: commands in workflow order with whole one-line summaries, no option
that always fails, one error style (click's usage errors included), no internal vocabulary."""

from __future__ import annotations

import re

import pytest

from ctxtool.cli import COMMANDS, SUMMARIES, cli
from ctxtool.errors import ExitCode
from tests.conftest import run_ctxtool

ALL = cli.list_commands(None)  # type: ignore[arg-type]
INTERNAL = re.compile(r"\bseed\b|DESIGN §|\btiers?\b", re.IGNORECASE)


def test_top_help_lists_commands_in_workflow_order_with_whole_summaries() -> None:
    proc = run_ctxtool("--help", env={"COLUMNS": "80"})
    assert proc.returncode == 0
    text = proc.stdout.decode()
    listed = re.findall(r"^  ([a-z-]+)  +(.+)$", text.split("Commands:")[1], re.MULTILINE)
    assert [name for name, _ in listed] == [name for name in COMMANDS if name in ALL]
    assert [name for name, _ in listed][:2] == ["sessions", "estimate"]
    for name, summary in listed:
        assert summary == SUMMARIES[name], name  # whole, on one line
        assert summary.endswith(".") and "..." not in summary


@pytest.mark.parametrize("name", ALL)
def test_no_internal_vocabulary_in_help(runner, name: str) -> None:
    text = runner.invoke(cli, [name, "--help"], terminal_width=80).stdout
    assert not INTERNAL.search(text), INTERNAL.search(text)


@pytest.mark.parametrize("name", ALL)
def test_no_word_is_cut_by_wrapping(runner, name: str) -> None:
    # a long comma-joined default once wrapped as "Glob,G / rep": lists are spaced now
    text = runner.invoke(cli, [name, "--help"], terminal_width=80).stdout
    assert not re.search(r"\w,\w+,\w+,\w", text), name


@pytest.mark.parametrize("name", ["estimate", "filter-compacted"])
def test_read_only_commands_offer_no_in_place(runner, name: str) -> None:
    assert "--in-place" not in runner.invoke(cli, [name, "--help"]).stdout


@pytest.mark.parametrize("args, where", [
    (["--bogus"], "ctxtool"),
    (["nosuch"], "ctxtool"),
    (["estimate", "--bogus"], "ctxtool estimate"),
    (["estimate", "--in-place"], "ctxtool estimate"),
    (["estimate", "--format", "yaml"], "ctxtool estimate"),
    (["cleanup", "--older-than"], "ctxtool cleanup"),
])
def test_usage_errors_are_one_ctxtool_line(args: list[str], where: str) -> None:
    proc = run_ctxtool(*args)
    assert proc.returncode == ExitCode.USAGE
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxtool: error: "), lines
    assert lines[0].endswith(f" — see '{where} --help'")
    assert proc.stdout == b""


def test_usage_error_through_clirunner_too(runner) -> None:
    result = runner.invoke(cli, ["snip", "--keep", "many"])
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.startswith("ctxtool: error: Invalid value for '--keep'")


# --- the examples in each command's --help run as printed ----------------------------------------

def help_examples(name: str) -> list[str]:
    """The example lines of ``ctxtool NAME --help`` (its ``\\b`` block, lines that start with
    ``ctxtool`` or feed it)."""
    text = cli.get_command(None, name).help or ""  # type: ignore[arg-type, union-attr]
    block = text.split("\b", 1)[1] if "\b" in text else ""
    return [line.strip() for line in block.splitlines() if "ctxtool " in line]


IN_PLACE = [(name, line) for name in ALL for line in help_examples(name) if "--in-place" in line]


def test_the_in_place_examples_are_found() -> None:
    assert {name for name, _ in IN_PLACE} >= {"persist", "snip", "microcompact", "summarize"}


@pytest.mark.parametrize("name, line", IN_PLACE, ids=[n for n, _ in IN_PLACE])
def test_each_in_place_example_rewrites_as_printed(tmp_path, name: str, line: str) -> None:
    """Run as a new user would: on a session.jsonl just copied into the working folder (so
    modified seconds ago) and on sessions of ~/.claude not touched for two days. An example
    that only warns 'skipped: ... within the live window' and exits 0 did nothing."""
    import os
    import shutil
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    example = ROOT / "ctxtool" / "examples" / "session.jsonl"
    home, work = tmp_path / "home", tmp_path / "work"
    project = home / ".claude" / "projects" / "-home-dev-app"
    project.mkdir(parents=True)
    work.mkdir()
    idle = time.time() - 2 * 86400
    for target in (project / "SESSION.jsonl", project / "9b2f6c1e-4d7a-4e0b-8f3c-2a61d5e0c7b4.jsonl"):
        shutil.copyfile(example, target)
        os.utime(target, (idle, idle))
    shutil.copyfile(example, work / "session.jsonl")  # a fresh copy: modified now
    env = {"HOME": str(home), "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin",
           "LANG": "C.UTF-8", "TMPDIR": str(tmp_path)}
    proc = subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True,
                          timeout=300, check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 0, (line, err)
    assert "skipped" not in err, (line, err)
