"""Golden cases for filter-compacted: tests/golden/filter-compacted/<case>/ holds args, the
input (given on stdin, through a pipe: the spooled path), and the expected stdout, stderr and exit
code. ``python scripts/regen_golden.py filter-compacted`` rewrites them deliberately."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ctxtool

CASES = sorted(p for p in (ROOT / "tests" / "golden" / "filter-compacted").iterdir()
               if (p / "args").is_file())


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_golden(case: Path) -> None:
    args = [a for a in (case / "args").read_text(encoding="utf-8").splitlines() if a]
    proc = run_ctxtool("filter-compacted", *args, input=(case / "input.jsonl").read_bytes(),
                       cwd=ROOT)
    assert proc.stderr.decode() == (case / "stderr.txt").read_text(encoding="utf-8")
    assert proc.stdout == (case / "stdout.jsonl").read_bytes()
    assert proc.returncode == int((case / "exit_code").read_text())
