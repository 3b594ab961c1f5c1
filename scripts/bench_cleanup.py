#!/usr/bin/env python3
"""Benchmark `ctxtool cleanup` on a generated ~/.claude tree (default: 10000 sessions).

Each session gets a transcript (``--lines`` entries with timestamps), a session folder with a
tool result and a subagent transcript, and one file in file-history, todos, debug, session-env;
half the sessions are 60 days old, half 5 days. Some kept sessions reference old tool results.
The tree is built under a temporary folder (or ``--dir``) and removed afterwards unless
``--keep``. Times the real entry point: a dry run, then ``--apply`` (optionally ``--archive``).

    python scripts/bench_cleanup.py                    # 10000 sessions
    python scripts/bench_cleanup.py --sessions 2000 --archive
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

NOW = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
PROJECTS = 20


def _write(path: Path, data: str, stamp: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data)
    os.utime(path, (stamp, stamp))


def _transcript(sid: str, last: datetime, lines: int, reference: str | None) -> str:
    out = []
    for n in range(lines):
        stamp = (last - timedelta(minutes=lines - n)).isoformat().replace("+00:00", "Z")
        content = f"message {n} " + "lorem ipsum " * 20
        if reference and n == lines // 2:
            content = f"<persisted-output>Full output saved to: {reference}</persisted-output>"
        out.append(json.dumps({"type": "user" if n % 2 else "assistant", "uuid": f"{sid}-{n}",
                               "parentUuid": f"{sid}-{n - 1}" if n else None, "sessionId": sid,
                               "timestamp": stamp, "message": {"role": "user", "content": content}}))
    return "\n".join(out) + "\n"


def build(root: Path, sessions: int, lines: int) -> None:
    (root / "settings.json").parent.mkdir(parents=True, exist_ok=True)
    (root / "settings.json").write_text("{}")
    for n in range(sessions):
        sid = f"{n:08x}-0000-4000-8000-{n:012x}"
        old = n % 2 == 0
        last = NOW - timedelta(days=60 if old else 5)
        stamp = last.timestamp()
        project = root / "projects" / f"-home-me-project{n % PROJECTS}"
        folder = project / sid
        # every tenth kept session points at the tool result of the old session before it
        reference = None
        if not old and n % 10 == 1:
            prev = f"{n - 1:08x}-0000-4000-8000-{n - 1:012x}"
            reference = str(project.parent / f"-home-me-project{(n - 1) % PROJECTS}" / prev /
                            "tool-results" / "toolu_1.txt")
        _write(project / f"{sid}.jsonl", _transcript(sid, last, lines, reference), stamp)
        _write(folder / "tool-results" / "toolu_1.txt", "output\n" * 50, stamp)
        _write(folder / "subagents" / "agent-a1.jsonl", _transcript(sid, last, 4, None), stamp)
        _write(root / "file-history" / sid / "f@v1", "x", stamp)
        _write(root / "todos" / f"{sid}-agent-{sid}.json", "[]", stamp)
        _write(root / "debug" / f"{sid}.txt", "debug\n", stamp)
        _write(root / "session-env" / sid / "env", "", stamp)
        for path in (folder / "tool-results", folder / "subagents", folder,
                     root / "file-history" / sid, root / "session-env" / sid):
            os.utime(path, (stamp, stamp))


def timed(args: list[str]) -> tuple[str, subprocess.CompletedProcess[bytes]]:
    """Run; wall time and CPU time (user+sys: what the machine's load does not inflate)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return f"{wall:.2f}s wall, {cpu:.2f}s CPU", result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=20, help="entries per transcript")
    parser.add_argument("--archive", action="store_true", help="also archive what goes")
    parser.add_argument("--dir", help="build the tree here (default: a temp folder)")
    parser.add_argument("--keep", action="store_true", help="leave the tree behind")
    options = parser.parse_args()
    base = Path(options.dir or tempfile.mkdtemp(prefix="ctxtool-bench-cleanup-"))
    root = base / ".claude"
    ctxtool = shutil.which("ctxtool", path=str(Path(sys.executable).parent)) or "ctxtool"
    try:
        start = time.perf_counter()
        build(root, options.sessions, options.lines)
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        print(f"built {options.sessions} sessions ({size / 1e6:.1f} MB) in "
              f"{time.perf_counter() - start:.1f}s under {root}")
        common = [ctxtool, "cleanup", "--root", str(root), "--now", NOW.isoformat(), "--older-than", "30d"]
        seconds, dry = timed(common)
        print(f"dry run: {seconds}, {len(dry.stdout.splitlines())} records, exit {dry.returncode}")
        print("  " + dry.stderr.decode().strip().splitlines()[-1])
        apply = common + ["--apply"] + (["--archive", str(base / "archive")] if options.archive else [])
        seconds, done = timed(apply)
        print(f"apply{' + archive' if options.archive else ''}: {seconds}, exit {done.returncode}")
        print("  " + done.stderr.decode().strip().splitlines()[-1])
        return 0 if dry.returncode == done.returncode == 0 else 1
    finally:
        if not options.keep and not options.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
