"""Output for people: estimate's table fits the terminal and colours its verdict only on one;
every transforming command ends with the same one-line summary on stderr, which -q silences."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.test_cleanup_people import ANSI, on_a_terminal
from tests.conftest import ROOT, run_ctxtool

EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"


@pytest.mark.parametrize("columns", [80, 120])
def test_estimate_fits_targets_to_the_width(columns: int) -> None:
    proc = run_ctxtool("estimate", str(EXAMPLE), env={"COLUMNS": str(columns)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    top = lines[next(n for n, line in enumerate(lines) if "largest tool results" in line) + 1:]
    rows = [line for line in top if line.strip()]
    assert rows and all(len(line) <= columns for line in rows), max(rows, key=len)
    assert all(str(EXAMPLE) not in line for line in rows)  # "line 17", not the path again
    assert any(re.search(r"\bline \d+\s+\S*invoices/db\.py$", line) for line in rows)
    if columns == 80:
        assert any("…/invoices/db.py" in line for line in rows)  # cut from the left


def test_estimate_colours_its_verdict_on_a_terminal_only() -> None:
    code, out, _ = on_a_terminal("estimate", str(EXAMPLE))
    assert code == 0 and "\x1b[32m" in out and ANSI.sub("", out).splitlines()[0].endswith(", ok")
    _, plain, _ = on_a_terminal("estimate", str(EXAMPLE), env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain
    assert "\x1b[" not in run_ctxtool("estimate", str(EXAMPLE)).stdout.decode()  # a pipe


def transforms(tmp_path: Path) -> list[tuple[str, list[str]]]:
    smaller = tmp_path / "smaller.jsonl"
    store = str(tmp_path / "store")
    run_ctxtool("persist", "--max-chars", "2000", "--store", store, str(EXAMPLE), "-o", str(smaller))
    compacted = tmp_path / "compacted.jsonl"
    run_ctxtool("summarize", "--store", store, str(EXAMPLE), "-o", str(compacted))
    return [("persist", ["--max-chars", "2000", "--store", store, str(EXAMPLE)]),
            ("snip", ["--store", store, str(EXAMPLE)]),
            ("microcompact", ["--force", "--store", store, str(EXAMPLE)]),
            ("summarize", ["--store", store, str(EXAMPLE)]),
            ("filter-compacted", [str(compacted)]),
            ("restore", [str(smaller)])]


def test_every_transforming_command_ends_with_one_summary_line(tmp_path: Path) -> None:
    for name, args in transforms(tmp_path):
        proc = run_ctxtool(name, *args)
        assert proc.returncode == 0, (name, proc.stderr)
        lines = proc.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"ctxtool: {name}: "), (name, lines)
        quiet = run_ctxtool(name, "-q", *args)
        assert quiet.returncode == 0 and quiet.stderr == b"", name
