#!/usr/bin/env python3
"""Benchmark `ctxtool vacuum --all` over a generated Claude Code folder (default: 2,000 sessions).

The folder is ``scripts/gen_sessions.py``'s (``--size`` in all, log-normal session sizes over 40
projects); ``--doubled`` of the sessions (default 10%) then get the history before their last
compact boundary written again in front of it, as Claude Code's repeated /compact leaves it.
Times the real entry point: the plan (``vacuum --all --json``) reading every file (the plan
cache off), then again with nothing changed (what the cache keeps is not read again; the goal:
under 5 seconds for 2,000 sessions), then, with ``--apply``, the vacuum itself. HOME points at an empty folder, so
no Codex or OpenCode session of this machine is read. The folder is built under a temporary
folder (or ``--dir``, reused when it holds one already) and removed unless ``--keep``.

    python scripts/bench_vacuum.py                       # 2,000 sessions, 2 GB
    python scripts/bench_vacuum.py --size 500MB --apply --repeat 3
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_sessions import write_config  # noqa: E402
from gen_transcript import parse_size  # noqa: E402

GOAL_SECONDS = 5.0


def double_history(path: Path) -> int:
    """Write the entries before the file's last compact boundary (or, without one, its first
    half, up to a user line) again in front of it; the bytes added."""
    lines = path.read_bytes().splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if b'"compact_boundary"' in line] or [
        i for i, line in enumerate(lines) if i >= len(lines) // 2
        and json.loads(line).get("type") == "user"][:1]
    if not marks:
        return 0
    last = marks[-1]
    again = [line for line in lines[:last] if b'"uuid"' in line
             and json.loads(line).get("type") in ("user", "assistant", "system", "attachment")]
    stat = path.stat()
    path.write_bytes(b"".join(lines[:last] + again + lines[last:]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return sum(map(len, again))


def build(root: Path, sessions: int, size: int, doubled: float) -> tuple[int, int]:
    """(bytes of the folder, bytes written twice)."""
    written = write_config(root, sessions=sessions, size=size, projects=40, seed=1)
    files = sorted((root / "projects").glob("*/*.jsonl"))
    step = max(1, round(1 / doubled)) if doubled > 0 else 0
    twice = sum(double_history(path) for path in files[::step]) if step else 0
    return written + twice, twice


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """(wall seconds, CPU seconds, the run): CPU is what the machine's load does not inflate."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--size", default="2GB", help="all sessions together (default 2GB)")
    parser.add_argument("--doubled", type=float, default=0.1,
                        help="share of sessions with history written twice (default 0.1)")
    parser.add_argument("--repeat", type=int, default=3, help="plan runs; the fastest counts")
    parser.add_argument("--apply", action="store_true", help="then vacuum, and time it")
    parser.add_argument("--dir", help="build (or reuse) the folder here")
    parser.add_argument("--keep", action="store_true", help="leave the folder behind")
    options = parser.parse_args()
    base = Path(options.dir or tempfile.mkdtemp(prefix="ctxtool-bench-vacuum-"))
    root = base / ".claude"
    ctxtool = shutil.which("ctxtool", path=str(Path(sys.executable).parent)) or "ctxtool"
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "CLAUDE_CONFIG_DIR": str(root),
           "CODEX_HOME": str(home / ".codex"), "CTXTOOL_STORE": ""}
    try:
        if not (root / "projects").is_dir():
            start = time.perf_counter()
            size, twice = build(root, options.sessions, parse_size(options.size),
                                options.doubled)
            print(f"built {options.sessions} sessions ({size / 1e6:.0f} MB, {twice / 1e6:.0f} MB "
                  f"written twice) in {time.perf_counter() - start:.0f}s under {root}")
        plan = [ctxtool, "vacuum", "--all", "--json"]
        fresh = {**env, "CTXTOOL_CACHE_DIR": "off"}
        runs = [timed(plan, fresh) for _ in range(options.repeat)]
        wall, cpu, done = min(runs, key=lambda run: run[0])
        total = json.loads(done.stdout.splitlines()[-1])
        print(f"plan, every file read: {wall:.2f}s wall (fastest of {options.repeat}), "
              f"{cpu:.2f}s CPU, load {os.getloadavg()[0]:.1f}; {total['sessions']} sessions, "
              f"{total['bytes_before'] / 1e6:.0f} MB -> {total['bytes_after'] / 1e6:.0f} MB; "
              f"exit {done.returncode}")
        cached = {**env, "CTXTOOL_CACHE_DIR": str(base / "cache")}
        timed(plan, cached)  # fills the cache
        wall, cpu, again = min((timed(plan, cached) for _ in range(options.repeat)),
                               key=lambda run: run[0])
        print(f"plan again, nothing changed (the plan cache): {wall:.2f}s wall, {cpu:.2f}s CPU; "
              f"same records: {again.stdout == done.stdout}")
        ok = done.returncode == 0 and wall < GOAL_SECONDS and again.stdout == done.stdout
        print(f"goal: plan under {GOAL_SECONDS:.0f}s: {'met' if ok else 'MISSED'}")
        if options.apply:
            wall, cpu, done = timed([ctxtool, "vacuum", "--all", "--apply", "--live-window",
                                     "0", "--json"], cached)
            total = json.loads(done.stdout.splitlines()[-1])
            print(f"apply: {wall:.2f}s wall, {cpu:.2f}s CPU; {total['vacuumed']} sessions "
                  f"vacuumed, {total['bytes_saved'] / 1e6:.0f} MB reclaimed; exit "
                  f"{done.returncode}")
            ok = ok and done.returncode == 0
        return 0 if ok else 1
    finally:
        if not options.keep and not options.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
