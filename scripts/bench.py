#!/usr/bin/env python3
"""Time ctxtool commands on a large synthetic transcript against a bare orjson loop.

Each command runs in its own child process, reading the transcript from a file and writing to
/dev/null; its wall time is compared with a plain ``orjson.loads`` + ``orjson.dumps`` loop over
the same file in the same run (the cost of touching every line at all), and its peak RSS is read
from ``os.wait4``. Add a command by adding a row to COMMANDS.

    python scripts/bench.py --size 200MB                      # generate, run persist, clean up
    python scripts/bench.py --size 1GB --commands persist --rss-goal 150
    python scripts/bench.py --input /tmp/big.jsonl --commands persist,restore
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from gen_transcript import generate, parse_size  # noqa: E402

BASELINE = """
import sys, orjson
loads, dumps = orjson.loads, orjson.dumps
with open(sys.argv[1], "rb") as src, open(os.devnull, "wb") as out:
    for line in src:
        out.write(dumps(loads(line)) + b"\\n")
""".replace("import sys", "import os, sys")


@dataclass(frozen=True)
class Command:
    """A ctxtool invocation; ``{input}`` and ``{work}`` (a scratch folder) are filled in.
    ``setup`` names a command whose output becomes this one's input (e.g. restore after persist)."""

    args: tuple[str, ...]
    ratio_goal: float | None = None
    setup: str | None = None


COMMANDS: dict[str, Command] = {
    "persist": Command(("persist", "--store", "{work}/store", "{input}"), ratio_goal=2.0),
    # with -o the saved files are fsynced too (durable), so this one also measures the disk
    "persist-o": Command(("persist", "--store", "{work}/store", "-o", "{work}/out.jsonl",
                          "{input}")),
    "restore": Command(("restore", "{input}"), setup="persist"),
    # two passes over the input (the second parses only the lines it changes)
    "microcompact": Command(("microcompact", "--force", "--store", "{work}/store", "--now",
                             "2026-01-01T00:00:00Z", "{input}"), ratio_goal=2.0),
    "snip": Command(("snip", "--store", "{work}/store", "{input}"), ratio_goal=2.0),
}


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_rss_mb: float
    returncode: int


def run_child(argv: list[str], stdout: str = os.devnull) -> Run:
    """Run ``argv`` with stdout to a file, return wall time and the child's own peak RSS."""
    with open(stdout, "wb") as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        assert child.stderr is not None
        errors = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.stderr.write(errors.decode(errors="replace")[-2000:])
    # ru_maxrss is in KiB on Linux, bytes on macOS
    rss = usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return Run(elapsed, rss, child.returncode)


def ctxtool_argv() -> list[str]:
    script = Path(sys.executable).with_name("ctxtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxtool"]


def bench(transcript: Path, names: list[str], work: Path,
          repeat: int) -> list[tuple[str, Run, Command | None]]:
    """Every command (and the baseline) ``repeat`` times, interleaved so that load from other
    processes hits them alike; the fastest run of each is kept, with the largest peak RSS."""
    argvs: dict[str, list[str]] = {"orjson loop": [sys.executable, "-c", BASELINE, str(transcript)]}
    for name in names:
        command = COMMANDS[name]
        source = transcript
        if command.setup:
            source = work / f"{command.setup}-output.jsonl"
            setup = COMMANDS[command.setup]
            run_child([*ctxtool_argv(), *_fill(setup.args, transcript, work / "setup")],
                      str(source))
        argvs[name] = [*ctxtool_argv(), *_fill(command.args, source, work / name)]
    runs: dict[str, list[Run]] = {name: [] for name in argvs}
    for _ in range(repeat):
        for name, argv in argvs.items():
            shutil.rmtree(work / name / "store", ignore_errors=True)  # persist writes anew
            runs[name].append(run_child(argv))
    return [(name, Run(min(r.seconds for r in rs), max(r.peak_rss_mb for r in rs),
                       max(r.returncode for r in rs)), COMMANDS.get(name))
            for name, rs in runs.items()]


def _fill(args: tuple[str, ...], transcript: Path, work: Path) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    return [a.format(input=transcript, work=work) for a in args]


def report(rows: list[tuple[str, Run, Command | None]], size: int, rss_goal: float | None) -> bool:
    base = rows[0][1].seconds
    ok = True
    print(f"input {size / 1e6:,.0f} MB")
    print(f"{'command':<14}{'seconds':>9}{'MB/s':>8}{'x orjson':>10}{'peak RSS MB':>13}  verdict")
    for name, run, command in rows:
        ratio = run.seconds / base if base else float("nan")
        verdict = []
        if run.returncode:
            verdict.append(f"exit {run.returncode}")
        if command and command.ratio_goal is not None:
            verdict.append(f"time {'ok' if ratio <= command.ratio_goal else 'SLOW'} "
                           f"(goal <= {command.ratio_goal}x)")
        if command and rss_goal is not None:
            verdict.append(f"rss {'ok' if run.peak_rss_mb <= rss_goal else 'HIGH'} "
                           f"(goal <= {rss_goal:.0f} MB)")
        ok = ok and not run.returncode and all("SLOW" not in v and "HIGH" not in v for v in verdict)
        print(f"{name:<14}{run.seconds:>9.2f}{size / 1e6 / run.seconds:>8.0f}{ratio:>10.2f}"
              f"{run.peak_rss_mb:>13.0f}  {', '.join(verdict)}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="200MB", help="synthetic transcript size (default 200MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--input", help="use this transcript instead of generating one")
    parser.add_argument("--commands", default="persist",
                        help=f"comma-separated, from: {', '.join(COMMANDS)}")
    parser.add_argument("--rss-goal", type=float, default=150.0, help="peak RSS goal in MB")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (fastest kept)")
    parser.add_argument("--tmp", default=tempfile.gettempdir(), help="where scratch files go")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.commands.split(",") if n.strip()]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown:
        parser.error(f"unknown command(s): {', '.join(unknown)}")
    work = Path(tempfile.mkdtemp(prefix="ctxtool-bench-", dir=args.tmp))
    try:
        transcript = Path(args.input) if args.input else work / "transcript.jsonl"
        if not args.input:
            started = time.perf_counter()
            with open(transcript, "wb") as out:
                generate(out, parse_size(args.size), args.seed)
            print(f"generated {transcript.stat().st_size / 1e6:,.0f} MB in "
                  f"{time.perf_counter() - started:.0f}s", flush=True)
        rows = bench(transcript, names, work, args.repeat)
        ok = report(rows, transcript.stat().st_size, args.rss_goal)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
