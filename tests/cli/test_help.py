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
