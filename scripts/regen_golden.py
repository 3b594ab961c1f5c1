"""Rewrite the expected outputs of golden cases, deliberately, from what ctxtool does now.

A case is a folder ``tests/golden/<command>/<case>/`` holding ``args`` (one argument per line),
``input.jsonl`` (given on stdin) and the expected ``stdout.jsonl``, ``stderr.txt`` and
``exit_code``; the golden tests run ``ctxtool <command> <args...> < input.jsonl`` and compare.
Review the diff (``git diff tests/golden``) before committing what this writes.

    python scripts/regen_golden.py                    # every case
    python scripts/regen_golden.py filter-compacted   # the cases of one command
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"


def run_case(case: Path) -> subprocess.CompletedProcess[bytes]:
    """``ctxtool <command> <args>`` on the case's input, from the repository root."""
    args = [a for a in (case / "args").read_text(encoding="utf-8").splitlines() if a]
    exe = Path(sys.executable).with_name("ctxtool")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "ctxtool"]
    return subprocess.run([*command, case.parent.name, *args],
                          input=(case / "input.jsonl").read_bytes(), capture_output=True,
                          cwd=ROOT, timeout=300, check=False)


def main(commands: list[str]) -> None:
    for folder in sorted(GOLDEN.iterdir()):
        if not folder.is_dir() or (commands and folder.name not in commands):
            continue
        for case in sorted(p for p in folder.iterdir() if (p / "args").is_file()):
            proc = run_case(case)
            (case / "stdout.jsonl").write_bytes(proc.stdout)
            (case / "stderr.txt").write_bytes(proc.stderr)
            (case / "exit_code").write_text(f"{proc.returncode}\n")
            print(f"{case.relative_to(ROOT)}: exit {proc.returncode}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
