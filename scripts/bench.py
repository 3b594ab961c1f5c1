#!/usr/bin/env python3
"""Time every ctxtool command on a synthetic transcript, side by side with orjson and jq.

One run generates a synthetic Claude Code transcript (``scripts/gen_transcript.py``: user
prompts, streamed assistant lines with usage, tool results from a few bytes to 500 KB, CJK text,
repeated reads, compact boundaries) and runs, on that same file, a bare ``orjson.loads`` loop, an
``orjson.loads``/``orjson.dumps`` loop, ``jq -c .`` when jq is installed, and each ctxtool
command. Every run is a child process reading the file and writing to /dev/null, started from
bytecode as an installed package is (the package is compiled first); its peak RSS
comes from GNU time (else ``os.wait4``). Runs are interleaved (round 1 of everything, round 2...) so load from
other processes hits them alike, and the fastest of ``--repeat`` is kept. Each command's time is
compared with the loop that does the same kind of work: the parse loop for commands that only
read (estimate, validate), the parse+dump loop for those that write a transcript. Ratios are
also taken per round (a command and its loop ran side by side) and their median reported, of
wall and of CPU time (user+sys of the child); ``--judge`` picks the figure the goals are checked
on: ``best`` (fastest of each, the default), ``median`` (paired wall) or ``cpu`` (paired CPU, for a
busy machine - blind to time spent waiting for the disk, so not for the ``-o`` variants).
With estimate, a reference loop runs too, ``orjson parse+count`` (the parse loop plus ctxtool's
count of what estimate counts): its ratio to the parse loop is estimate's floor, shown beside it.
When a command that writes store files is timed and ``--tmp`` is on ext4 without a journal
(where creating files right after deleting many costs kernel time), a warning says so.

``--shape`` picks the input: ``synthetic`` (above; 11.2 KB a line on average), ``store-heavy``
(the same without its compactions, ``scripts/gen_store_heavy.py``: on 200 MB ``snip`` moves
about 30% of the bytes into ~2,600 store files; ``snip-o`` and ``microcompact-o`` time the
durable writes to a file), ``corpus`` (the real sessions of ../shared/corpus concatenated
``--corpus-times`` times; only files whose every line is a JSON object) or ``real-shaped``
(``scripts/gen_real_shaped.py``: the corpus's line-size and kind mix, 3 KB a line, mostly short
progress, hook and assistant lines; no corpus needed).

Two more modes time one thing each: ``--same-role N`` runs ``convert --to anthropic`` and
``filter-compacted --to anthropic`` on N Claude Code user lines in a row, and ``convert`` on one
response streamed as N lines, each also on N/4 (merging them into one message must cost the same
per line at both sizes), and ``--validate`` runs ``validate`` against ``estimate`` on the
corpus concatenated and on ``--validate-lines`` small lines (goal: within 3x, median of the
paired CPU ratios).

``--rss-size 1GB`` also runs each command once on a second, larger file for its peak RSS.
Start-up: the median over ``--startup-runs`` of ``ctxtool estimate`` on a one-line input against
``python -c "import click, orjson"``. Exit status 1 when a goal is missed.

    python scripts/bench.py                                  # 200 MB, all commands
    python scripts/bench.py --rss-size 1GB --json > bench.json
    python scripts/bench.py --size 50MB --commands estimate,persist --repeat 1
    python scripts/bench.py --input /tmp/big.jsonl --commands filter-compacted,filter-compacted-pipe
    python scripts/bench.py --shape real-shaped --size 110MB --repeat 5 --judge median
    python scripts/bench.py --shape corpus --repeat 5 --startup-runs 0
    python scripts/bench.py --shape store-heavy --commands snip,snip-o,microcompact,microcompact-o
    python scripts/bench.py --same-role 1000000 --repeat 1
    python scripts/bench.py --validate --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_real_shaped  # noqa: E402
import gen_store_heavy  # noqa: E402
from gen_sessions import write_config  # noqa: E402
from gen_transcript import generate, parse_size  # noqa: E402

NOW = "2026-01-01T00:00:00Z"
PARSE, DUMP = "orjson parse", "orjson parse+dump"
PARSE_LOOP = """
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as src:
    for line in src:
        loads(line)
"""
DUMP_LOOP = """
import os, sys, orjson
loads, dumps = orjson.loads, orjson.dumps
with open(sys.argv[1], "rb") as src, open(os.devnull, "wb") as out:
    for line in src:
        out.write(dumps(loads(line)) + b"\\n")
"""
# estimate's floor: the parse loop plus ctxtool's own count of what estimate counts on a Claude
# Code transcript (the content of each message of the chain measured: the first line's
# isSidechain, as estimate's meter follows it), with none of estimate's bookkeeping. A reference,
# not a goal: the token heuristic's cost is set by its accuracy goal (scripts/token_accuracy.py).
# It prints the total, so a test can check it counts what estimate counts.
COUNT = "orjson parse+count"
COUNT_LOOP = """
import sys, orjson
from ctxtool.core.sizing.tokens import blocks_tokens
from ctxtool.formats.registry import adapter_for
loads, JSONDecodeError = orjson.loads, orjson.JSONDecodeError
blocks_of = adapter_for("claude-code").role_and_blocks
total, chain = 0, None
with open(sys.argv[1], "rb") as src:
    for line in src:
        try:
            entry = loads(line)
            flag = entry.get("isSidechain")
        except (JSONDecodeError, AttributeError):  # not JSON, not an object: estimate skips it
            continue
        if flag is True or flag is False:
            if chain is None:
                chain = flag
            elif flag is not chain:
                continue
        total += blocks_tokens(blocks_of(entry)[1])
print(total)
"""
# reference loops: compared with a baseline as the commands are, never judged
REFERENCES = {COUNT: PARSE}
CORPUS = ROOT.parent / "shared" / "corpus"
SHAPES = ("synthetic", "store-heavy", "corpus", "real-shaped")
RSS_GOAL_MB = 150.0
STARTUP_GOAL = 2.0


@dataclass(frozen=True)
class Command:
    """A ctxtool invocation; ``{input}`` and ``{work}`` (a scratch folder) are filled in.

    ``baseline`` is the loop its time is compared with and ``goal`` the largest ratio allowed
    (None: reported, no goal). ``setup`` names a command whose output becomes this one's input
    (restore reads what persist wrote). ``pipe`` feeds the input through a pipe (``cat``), so a
    two-pass command has to spool it. ``rss_goal`` False: no memory goal; a number: its own."""

    args: tuple[str, ...]
    baseline: str = DUMP
    goal: float | None = None
    setup: str | None = None
    pipe: bool = False
    rss_goal: bool | float = True  # True: RSS_GOAL_MB; a number: this command's own goal
    default: bool = True
    floor: str | None = None  # a reference loop: the least this command's work can cost

    @property
    def writes_store(self) -> bool:
        return "--store" in self.args


COMMANDS: dict[str, Command] = {
    "estimate": Command(("estimate", "{input}"), baseline=PARSE, goal=1.5, floor=COUNT),
    "validate": Command(("validate", "{input}"), baseline=PARSE),
    "persist": Command(("persist", "--store", "{work}/store", "{input}"), goal=2.0),
    # with -o the saved files are fsynced too (durable), so this one also measures the disk
    "persist-o": Command(("persist", "--store", "{work}/store", "-o", "{work}/out.jsonl",
                          "{input}"), default=False),
    "restore": Command(("restore", "{input}"), setup="persist"),
    "snip": Command(("snip", "--store", "{work}/store", "{input}"), goal=2.0),
    # durable: every saved file on disk before the -o file replaces anything
    "snip-o": Command(("snip", "--store", "{work}/store", "-o", "{work}/out.jsonl", "{input}"),
                      goal=2.0, default=False),
    # two passes over the input (the second parses only the lines it changes)
    "microcompact": Command(("microcompact", "--force", "--store", "{work}/store", "--now", NOW,
                             "{input}"), goal=2.0),
    "microcompact-o": Command(("microcompact", "--force", "--store", "{work}/store", "--now",
                               NOW, "-o", "{work}/out.jsonl", "{input}"), goal=2.0,
                              default=False),
    "filter-compacted": Command(("filter-compacted", "{input}"), goal=2.0),
    "filter-compacted-pipe": Command(("filter-compacted",), pipe=True, default=False),
    "filter-compacted-to": Command(("filter-compacted", "--to", "anthropic", "{input}"),
                                   default=False),
    # offline: read twice, never held (the summary's facts and user messages are what it keeps)
    "summarize": Command(("summarize", "--llm", "offline", "--store", "{work}/store", "--now",
                          NOW, "--report", "{work}/report.json", "{input}"), rss_goal=500.0),
}


@dataclass(frozen=True)
class Run:
    seconds: float  # wall clock
    cpu_seconds: float  # user + system: steadier than wall time on a busy machine
    peak_rss_mb: float
    returncode: int


@dataclass
class Row:
    name: str
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    returncode: int
    baseline: str | None = None
    ratio: float | None = None  # of wall times, fastest run of each
    cpu_ratio: float | None = None
    median_ratio: float | None = None  # median over the rounds of this run / its loop's (wall)
    median_cpu_ratio: float | None = None  # the same of CPU times (user+sys)
    judged: str = "best"  # which ratio the goal was checked on
    goal: float | None = None
    floor: float | None = None  # its floor loop's ratio to the same baseline (judged alike)
    rss_goal_mb: float | None = None
    large_seconds: float | None = None
    large_ratio: float | None = None
    large_peak_rss_mb: float | None = None
    summary_tokens: list[int] = field(default_factory=list)  # summarize: small, large file
    problems: list[str] = field(default_factory=list)


SUMMARY_BOUND = 8000  # summarize's default --max-summary-tokens, which must hold at any size


def summary_tokens(work: Path) -> int | None:
    """The summary size ``summarize --report`` recorded in ``work`` (None without a run)."""
    try:
        return int(json.loads((work / "summarize" / "report.json").read_text())["summary_tokens"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def check_summary(rows: list[Row], sizes: list[int | None]) -> None:
    for row in rows:
        if row.name != "summarize":
            continue
        row.summary_tokens = [n for n in sizes if n is not None]
        for tokens in row.summary_tokens:
            if tokens > SUMMARY_BOUND:
                row.problems.append(f"summary {tokens} tokens > {SUMMARY_BOUND}")


@functools.cache
def gnu_time() -> str | None:
    """GNU time, which reports a command's own peak RSS. A child's ``ru_maxrss`` from wait4 is
    at least what its parent held when it forked (Linux carries the high-water mark across
    fork and exec), so without it small commands show this script's own size."""
    path = shutil.which("time")
    if path is None:
        return None
    probe = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    return path if "GNU" in probe.stdout + probe.stderr else None


def run_child(argv: list[str], *, stdin_path: Path | None = None,
              env: dict[str, str] | None = None, expected: tuple[int, ...] = (0,)) -> Run:
    """Run ``argv`` with stdout to /dev/null; wall time, CPU time and peak RSS.
    With ``stdin_path`` the file is fed through a real pipe by ``cat``. An exit status not in
    ``expected`` is shown with the end of stderr, and recorded."""
    with peak_rss_probe(argv) as (probed, peak_rss):
        feeder = None
        with open(os.devnull, "wb") as out:
            start = time.perf_counter()
            if stdin_path is not None:
                feeder = subprocess.Popen(["cat", str(stdin_path)], stdout=subprocess.PIPE)
            child = subprocess.Popen(probed, stdout=out, stderr=subprocess.PIPE, env=env,
                                     stdin=feeder.stdout if feeder else subprocess.DEVNULL)
            if feeder is not None and feeder.stdout is not None:
                feeder.stdout.close()  # the child holds the only reading end now
            assert child.stderr is not None
            errors = child.stderr.read()
            _, status, usage = os.wait4(child.pid, 0)
            elapsed = time.perf_counter() - start
            if feeder is not None:
                feeder.wait()
        returncode = os.waitstatus_to_exitcode(status)
        if returncode in expected:
            returncode = 0
        else:
            sys.stderr.write(f"{' '.join(argv)}: exit {returncode}\n")
            sys.stderr.write(errors.decode(errors="replace")[-2000:])
        # ru_maxrss is in KiB on Linux, bytes on macOS
        rss = peak_rss() or usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return Run(elapsed, usage.ru_utime + usage.ru_stime, rss, returncode)


@contextlib.contextmanager
def peak_rss_probe(argv: list[str]) -> Iterator[tuple[list[str], Callable[[], float | None]]]:
    """``argv`` run under GNU time when there is one, and a function giving its peak RSS in MB
    afterwards (None without GNU time: then the wait4 figure has to do)."""
    timer = gnu_time()
    if timer is None:
        yield argv, lambda: None
        return
    handle, report = tempfile.mkstemp(prefix="ctxtool-bench-rss-")
    os.close(handle)

    def peak() -> float | None:
        with contextlib.suppress(ValueError, IndexError, OSError):
            return int(Path(report).read_text().split()[-1]) / 1024  # %M is in KiB
        return None
    try:
        yield [timer, "-f", "%M", "-o", report, *argv], peak
    finally:
        os.unlink(report)


def from_bytecode() -> None:
    """Compile the ctxtool package the runs import, so they start as an installed package does:
    from bytecode (with PYTHONDONTWRITEBYTECODE set, every run would otherwise compile each
    module it imports from source, about 0.1 s of CPU per run on this machine)."""
    spec = importlib.util.find_spec("ctxtool")
    if spec is not None and spec.origin:
        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.dirname(spec.origin)],
                       check=True)


def ctxtool_argv() -> list[str]:
    script = Path(sys.executable).with_name("ctxtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxtool"]


def _fill(args: tuple[str, ...], transcript: Path, work: Path) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    return [a.format(input=transcript, work=work) for a in args]


def prepare(transcript: Path, names: list[str], work: Path) -> dict[str, tuple[list[str], Path | None]]:
    """argv (and piped input) of the baselines and of each command; runs the setup commands."""
    plans: dict[str, tuple[list[str], Path | None]] = {
        PARSE: ([sys.executable, "-c", PARSE_LOOP, str(transcript)], None),
        DUMP: ([sys.executable, "-c", DUMP_LOOP, str(transcript)], None)}
    jq = shutil.which("jq")
    if jq:
        plans["jq -c ."] = ([jq, "-c", ".", str(transcript)], None)
    if any(COMMANDS[name].floor == COUNT for name in names):
        plans[COUNT] = ([sys.executable, "-c", COUNT_LOOP, str(transcript)], None)
    for name in names:
        command = COMMANDS[name]
        source = transcript
        if command.setup:
            source = work / f"{command.setup}-output.jsonl"
            setup = COMMANDS[command.setup]
            with open(source, "wb") as out:
                subprocess.run([*ctxtool_argv(), *_fill(setup.args, transcript, work / "setup")],
                               stdout=out, check=True)
        plans[name] = ([*ctxtool_argv(), *_fill(command.args, source, work / name)],
                       source if command.pipe else None)
    return plans


def run_all(plans: dict[str, tuple[list[str], Path | None]], work: Path,
            repeat: int) -> tuple[dict[str, Run], dict[str, list[Run]]]:
    """Each plan ``repeat`` times, interleaved; the fastest time and the largest peak RSS of
    each, and every round's runs (for the paired ratios)."""
    runs: dict[str, list[Run]] = {name: [] for name in plans}
    for round_ in range(repeat):
        for name, (argv, stdin_path) in plans.items():
            set_aside(work / name / "store", round_)  # each run saves anew
            runs[name].append(run_child(argv, stdin_path=stdin_path))
    best = {name: Run(min(r.seconds for r in rs), min(r.cpu_seconds for r in rs),
                      max(r.peak_rss_mb for r in rs), max(r.returncode for r in rs))
            for name, rs in runs.items()}
    return best, runs


def set_aside(store: Path, round_: int) -> None:
    """Move the previous run's store out of the way, to be removed with the rest at the end.
    Not removed right away: on ext4 without a journal (this project's test machine) creating
    a file skips, one check each, the inodes freed in the last minutes (``recently_deleted``),
    so a run that starts right after 2,600 files were deleted spent 0.5-1 s more in the kernel
    than the same run without that deletion (perf: 37% of its cycles in ``find_inode_bit``)."""
    if store.exists():
        store.rename(store.with_name(f"{store.name}-set-aside-{round_}"))


# --- the file system the stores are timed on -----------------------------------------------------

@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo: the device (major:minor), where it is mounted, its file
    system type and its source (/dev/vda, /dev/mapper/vg-root...)."""

    device: str
    point: str
    fs_type: str
    source: str


def mount_of(st_dev: int, mountinfo: str) -> Mount | None:
    """The mount of the file system whose ``st_dev`` is given (None: no line names it). Fields
    (proc(5)): id, parent, major:minor, root, mount point, options, optional fields up to a
    "-", then type, source, super options."""
    device = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) < 9 or fields[2] != device or "-" not in fields[6:]:
            continue
        rest = fields[fields.index("-", 6) + 1:]
        if len(rest) >= 2:
            return Mount(device, _unescape(fields[4]), rest[0], _unescape(rest[1]))
    return None


def _unescape(field: str) -> str:
    """A mountinfo field as written: the kernel writes a space, tab, newline or backslash in it
    as an octal escape (\\040...)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def block_device_name(mount: Mount, sys_root: Path) -> str:
    """The kernel's name of the mount's block device, as /sys/fs/ext4 names it: the target of
    /sys/dev/block/MAJOR:MINOR (a /dev/mapper/NAME source is dm-N there), else the source's
    last part."""
    try:
        return os.path.basename(os.readlink(sys_root / "dev" / "block" / mount.device))
    except OSError:
        return os.path.basename(mount.source)


def lacks_journal(mount: Mount, sys_root: Path) -> bool:
    """True for ext4 without a journal (its journal_task reads "<none>"); False for another file
    system, a journal, or when /sys does not say."""
    if mount.fs_type != "ext4":
        return False
    task = sys_root / "fs" / "ext4" / block_device_name(mount, sys_root) / "journal_task"
    try:
        return task.read_text().strip() == "<none>"
    except OSError:
        return False


def no_journal_warning(tmp: str, st_dev: int, mountinfo: str, sys_root: Path) -> str | None:
    """The warning for store timings taken under ``tmp`` (whose ``st_dev`` is given), or None."""
    mount = mount_of(st_dev, mountinfo)
    if mount is None or not lacks_journal(mount, sys_root):
        return None
    return (f"warning: --tmp {tmp} is on {mount.source} ({mount.point}), ext4 without a "
            f"journal: there, creating a file within minutes after many files were deleted "
            f"costs kernel time for each file created, growing with the number deleted "
            f"(ext4 steps over the recently freed inodes), so the commands that write store "
            f"files are timed slower than they are (store-heavy snip: 3.6x the loop right "
            f"after deletions, 2.0x on a journaled ext4); give --tmp a folder on a file system "
            f"with a journal, or wait 5 minutes after deleting many files")


def store_fs_warnings(tmp: str) -> list[str]:
    """:func:`no_journal_warning` for this machine's ``tmp`` (none where /proc is not Linux's)."""
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        st_dev = os.stat(tmp).st_dev
    except OSError:
        return []
    warning = no_journal_warning(tmp, st_dev, mountinfo, Path("/sys"))
    return [warning] if warning else []


def paired(ours: list[Run], base: list[Run], cpu: bool) -> float | None:
    """The median over the rounds of our time / the loop's time in the same round."""
    ratios = [(a.cpu_seconds / b.cpu_seconds) if cpu else (a.seconds / b.seconds)
              for a, b in zip(ours, base) if (b.cpu_seconds if cpu else b.seconds) > 0]
    return statistics.median(ratios) if ratios else None


def make_transcript(path: Path, size: str, seed: int) -> None:
    started = time.perf_counter()
    with open(path, "wb") as out:
        generate(out, parse_size(size), seed)
    print(f"generated {path.stat().st_size / 1e6:,.0f} MB in {time.perf_counter() - started:.0f}s",
          file=sys.stderr, flush=True)


def corpus_files(corpus: Path = CORPUS) -> list[Path]:
    """The corpus's JSONL transcripts whose every line is a JSON object (a few files there are
    pretty-printed JSON or hold a glued line: every command would stop at them)."""
    import orjson

    whole = []
    for path in sorted(corpus.rglob("*.jsonl")):
        try:
            if all(isinstance(orjson.loads(line), dict)
                   for line in path.read_bytes().splitlines() if line.strip()):
                whole.append(path)
        except orjson.JSONDecodeError:
            continue
    return whole


def make_input(path: Path, args: argparse.Namespace) -> None:
    """The transcript of ``--shape``."""
    if args.shape == "synthetic":
        make_transcript(path, args.size, args.seed)
        return
    started = time.perf_counter()
    with open(path, "wb") as out:
        if args.shape in ("real-shaped", "store-heavy"):
            module = gen_real_shaped if args.shape == "real-shaped" else gen_store_heavy
            module.generate(out, parse_size(args.size), args.seed)
        else:
            files = corpus_files()
            if not files:
                raise SystemExit(f"--shape corpus: no transcripts in {CORPUS}")
            for _ in range(args.corpus_times):
                for each in files:
                    data = each.read_bytes()
                    out.write(data if data.endswith(b"\n") else data + b"\n")
    print(f"{args.shape}: {path.stat().st_size / 1e6:,.0f} MB in "
          f"{time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)


def build_rows(runs: dict[str, Run], large: dict[str, Run] | None,
               rounds: dict[str, list[Run]] | None = None, judge: str = "best") -> list[Row]:
    rows: dict[str, Row] = {}
    for name, run in runs.items():
        command = COMMANDS.get(name)
        row = rows[name] = Row(name, run.seconds, run.cpu_seconds, run.peak_rss_mb,
                               run.returncode)
        baseline = command.baseline if command is not None else REFERENCES.get(name)
        if baseline is not None:
            compare(row, baseline, runs, rounds)
        if command is not None:
            row.goal = command.goal
            row.rss_goal_mb = (RSS_GOAL_MB if command.rss_goal is True
                               else float(command.rss_goal) or None)
            if command.floor in rows:  # the reference loops run before the commands
                row.floor = judged_ratio(rows[command.floor], judge)
        if large is not None and name in large:
            row.large_seconds = large[name].seconds
            row.large_peak_rss_mb = large[name].peak_rss_mb
            if baseline is not None and baseline in large:
                row.large_ratio = large[name].seconds / large[baseline].seconds
            if large[name].returncode:
                row.problems.append(f"exit {large[name].returncode} on the large file")
        if run.returncode:
            row.problems.append(f"exit {run.returncode}")
        judged = judged_ratio(row, judge)
        row.judged = judge
        if row.goal is not None and judged is not None and judged > row.goal:
            floor = "" if row.floor is None else f" (floor {row.floor:.2f}x)"
            row.problems.append(f"time {judged:.2f}x ({judge}) > {row.goal}x{floor}")
        rss = row.large_peak_rss_mb if row.large_peak_rss_mb is not None else row.peak_rss_mb
        if row.rss_goal_mb is not None and rss > row.rss_goal_mb:
            row.problems.append(f"RSS {rss:.0f} MB > {row.rss_goal_mb:.0f} MB")
    return list(rows.values())


def compare(row: Row, baseline: str, runs: dict[str, Run],
            rounds: dict[str, list[Run]] | None) -> None:
    """The row's ratios to its baseline loop: of the fastest runs, and paired per round."""
    base = runs[baseline]
    row.baseline = baseline
    row.ratio = row.seconds / base.seconds
    row.cpu_ratio = row.cpu_seconds / base.cpu_seconds if base.cpu_seconds else None
    if rounds is not None:
        row.median_ratio = paired(rounds[row.name], rounds[baseline], cpu=False)
        row.median_cpu_ratio = paired(rounds[row.name], rounds[baseline], cpu=True)


def judged_ratio(row: Row, judge: str) -> float | None:
    return {"best": row.ratio, "median": row.median_ratio, "cpu": row.median_cpu_ratio}[judge]


def startup(runs: int, work: Path) -> dict[str, Any]:
    """Median wall time of ``ctxtool estimate`` on one line vs importing click and orjson."""
    one = work / "one-line.jsonl"
    one.write_bytes(b'{"type":"user","message":{"role":"user","content":"hello"}}\n')
    argvs = {"python -c 'import click, orjson'": [sys.executable, "-c", "import click, orjson"],
             "ctxtool estimate (one line)": [*ctxtool_argv(), "estimate", str(one)]}
    times: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(runs):
        for name, argv in argvs.items():
            times[name].append(run_child(argv).seconds)
    base, ours = (statistics.median(t) for t in times.values())
    return {"runs": runs, "import_seconds": base, "ctxtool_seconds": ours,
            "ratio": ours / base, "goal": STARTUP_GOAL, "ok": ours / base <= STARTUP_GOAL}


def _fmt(value: float | None, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def render(rows: list[Row], info: dict[str, Any], start: dict[str, Any] | None) -> list[str]:
    large = info.get("large_mb")
    small, big = f"{info['size_mb']:,.0f} MB", f"{large:,.0f} MB" if large else "large"
    lines = [f"input {info.get('shape', 'synthetic')} {small}, {info['lines']:,} lines, "
             f"{info['size_mb'] * 1e6 / max(info['lines'], 1) / 1e3:.1f} KB a line: best of "
             f"{info['repeat']} interleaved runs" + (f"; {big}: one run each" if large else ""),
             f"ratio/cpu: fastest of each; med/mcpu: median of the paired per-round ratios (wall, "
             f"CPU); goals checked on {info.get('judge', 'best')}; load average "
             f"{info.get('load', '?')}",
             f"{'':<22}{'-- ' + small + ' ':-<50}  {'-- ' + big + ' ':-<22}",
             f"{'command':<22}{'seconds':>8}{'MB/s':>6}{'ratio':>7}{'cpu':>6}{'med':>6}{'mcpu':>6}"
             f" {'vs':<6}{'goal':>5}  {'seconds':>8}{'ratio':>7}{'RSS MB':>7}  verdict"]
    floor_of = {COMMANDS[row.name].floor: f"reference: {row.name}'s floor" for row in rows
                if row.floor is not None}
    for row in rows:
        vs = {PARSE: "parse", DUMP: "dump"}.get(row.baseline or "", "")
        verdict = "; ".join(row.problems) if row.problems else (
            "ok" if row.goal is not None or row.rss_goal_mb is not None
            else floor_of.get(row.name, ""))
        rss = row.large_peak_rss_mb if row.large_peak_rss_mb is not None else row.peak_rss_mb
        lines.append(f"{row.name:<22}{row.seconds:>8.2f}{info['size_mb'] / row.seconds:>6.0f}"
                     f"{_fmt(row.ratio, '.2f'):>7}{_fmt(row.cpu_ratio, '.2f'):>6}"
                     f"{_fmt(row.median_ratio, '.2f'):>6}{_fmt(row.median_cpu_ratio, '.2f'):>6}"
                     f" {vs:<6}"
                     f"{_fmt(row.goal, '.1f', '') + ('x' if row.goal else ''):>5}"
                     f"  {_fmt(row.large_seconds, '.1f'):>8}{_fmt(row.large_ratio, '.2f'):>7}"
                     f"{rss:>7.0f}  {verdict}")
    if start:
        lines.append(f"start-up (median of {start['runs']}): import click, orjson "
                     f"{start['import_seconds'] * 1000:.0f} ms; ctxtool estimate on one line "
                     f"{start['ctxtool_seconds'] * 1000:.0f} ms = {start['ratio']:.2f}x "
                     f"(goal <= {start['goal']}x) {'ok' if start['ok'] else 'SLOW'}")
    return lines


# --- ctxtool sessions on a generated config folder ---------------------------------------------

SESSIONS_GOAL = 2.0  # seconds for the whole listing


def check_sessions(listing: list[dict[str, Any]], sample: int) -> list[str]:
    """Rows whose figures differ from ``ctxtool estimate --json`` on their file (``sample``
    rows spread over the listing; 0: all)."""
    step = max(1, len(listing) // sample) if sample else 1
    wrong = []
    for row in listing[::step]:
        proc = subprocess.run([*ctxtool_argv(), "estimate", "--json", row["path"]],
                              capture_output=True, check=False)
        report = json.loads(proc.stdout)
        ours = (row["context_tokens"], row["compactions"], row["context_window"], row["model"])
        theirs = (report["context_tokens"], report["compact_boundaries"],
                  report["thresholds"]["window"], report["model"])
        if ours != theirs:
            wrong.append(f"{row['id']}: sessions {ours} != estimate {theirs}")
    return wrong


def sessions_bench(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """``ctxtool sessions --json`` on a generated config folder (or --sessions-config): its
    first run into an empty cache, then --repeat interleaved pairs of a run without the cache
    and one from the filled cache (medians; CPU time alongside, which load changes less than
    wall time); checks the rows against estimate."""
    # as an installed package runs: from bytecode (PYTHONDONTWRITEBYTECODE would otherwise
    # leave every run compiling the modules changed since the last pyc was written)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "ctxtool")], check=True)
    config = Path(args.sessions_config) if args.sessions_config else work / "claude"
    if not args.sessions_config:
        started = time.perf_counter()
        write_config(config, sessions=args.sessions, size=parse_size(args.sessions_size),
                     projects=40, seed=args.seed)
        print(f"generated {args.sessions} sessions in {time.perf_counter() - started:.0f}s",
              file=sys.stderr, flush=True)
    claude = list(config.glob("projects/*/*.jsonl"))
    # Codex CLI rollouts beside it (gen_sessions.py --codex N writes them under DIR/codex);
    # never the machine's own ~/.codex or OpenCode database
    codex = list(config.glob("codex/sessions/*/*/*/rollout-*.jsonl"))
    written = sum(p.stat().st_size for p in claude + codex)
    argv = [*ctxtool_argv(), "sessions", "--json", "-o", str(work / "listing.jsonl")]
    base = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), "CODEX_HOME": str(config / "codex"),
            "XDG_DATA_HOME": str(work / "no-opencode")}

    def timed(cache: str) -> Run:
        return run_child(argv, env={**base, "CTXTOOL_CACHE_DIR": cache})
    load_before = os.getloadavg()
    first = timed(str(work / "cache"))
    pairs = [(timed("off"), timed(str(work / "cache"))) for _ in range(args.repeat)]
    load_after = os.getloadavg()
    uncached = [u for u, _ in pairs]
    cached = [c for _, c in pairs]
    listing = [json.loads(line) for line in (work / "listing.jsonl").read_text().splitlines()]
    wrong = check_sessions(listing, args.check)
    median = statistics.median
    return {"sessions": len(listing), "codex_rollouts": len(codex), "bytes": written,
            "runs": args.repeat,
            "first_run_seconds": first.seconds, "first_run_cpu_seconds": first.cpu_seconds,
            "uncached_seconds": median(r.seconds for r in uncached),
            "uncached_min_seconds": min(r.seconds for r in uncached),
            "uncached_cpu_seconds": median(r.cpu_seconds for r in uncached),
            "cached_seconds": median(r.seconds for r in cached),
            "cached_cpu_seconds": median(r.cpu_seconds for r in cached),
            "load_average": [round(load_before[0], 2), round(load_after[0], 2)],
            "cpus": os.cpu_count(),
            "peak_rss_mb": max(r.peak_rss_mb for r in [first, *uncached, *cached]),
            "checked": len(listing[::max(1, len(listing) // args.check)] if args.check
                           else listing), "mismatches": wrong, "goal_seconds": SESSIONS_GOAL,
            "ok": not wrong and len(listing) == (args.sessions + len(codex) if args.sessions
                                                 else len(listing))
            and median(r.seconds for r in uncached) <= SESSIONS_GOAL
            and first.seconds <= SESSIONS_GOAL}


def render_sessions(result: dict[str, Any]) -> list[str]:
    codex = f" ({result['codex_rollouts']} Codex CLI rollouts)" if result["codex_rollouts"] else ""
    return [f"ctxtool sessions: {result['sessions']} sessions{codex}, "
            f"{result['bytes'] / 1e9:.2f} GB "
            f"(load average {result['load_average'][0]} before, {result['load_average'][1]} "
            f"after, {result['cpus']} CPUs)",
            f"  first run, empty cache: {result['first_run_seconds']:.2f}s "
            f"(CPU {result['first_run_cpu_seconds']:.2f}s)",
            f"  no cache (reads every file's ends, searches every byte for compactions), "
            f"median of {result['runs']}: {result['uncached_seconds']:.2f}s (fastest "
            f"{result['uncached_min_seconds']:.2f}s, CPU {result['uncached_cpu_seconds']:.2f}s)",
            f"  cache filled (nothing changed), median of {result['runs']}: "
            f"{result['cached_seconds']:.2f}s (CPU {result['cached_cpu_seconds']:.2f}s)",
            f"  goal <= {result['goal_seconds']}s without the cache; peak RSS "
            f"{result['peak_rss_mb']:.0f} MB",
            f"  figures checked against ctxtool estimate on {result['checked']} files: "
            f"{len(result['mismatches'])} mismatches", *("  " + m for m in result["mismatches"]),
            "  " + ("ok" if result["ok"] else "MISSED")]


# --- ctxtool statusline: its time must not grow with the transcript -------------------------------

STATUSLINE_SIZE_GOAL = 1.10  # 1 GB transcript vs 1 MB
STATUSLINE_STARTUP_GOAL = 2.5  # vs python -c pass of the same interpreter (issue 29)
SAME_TAIL = 256_000  # both transcripts end in these same bytes: only the size differs
BARE = "python -c pass"


def statusline_bench(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Wall time of ``ctxtool statusline`` on Claude Code's statusline JSON naming a 1 MB and a
    large transcript (same last bytes), each run paired with a bare ``python -c pass`` of the
    same interpreter right before it: the ratios are the medians of the paired ratios (the
    machine's load changes between rounds, much less within a pair)."""
    from_bytecode()
    small, large = work / "small.jsonl", work / "large.jsonl"
    make_transcript(small, "1MB", args.seed)
    make_transcript(large, args.statusline_size, args.seed + 1)
    data = small.read_bytes()
    tail = data[data.index(b"\n", len(data) - SAME_TAIL) + 1:]
    with open(large, "ab") as out:
        out.write(tail)
    argvs: dict[str, tuple[list[str], Path | None]] = {}
    for name, path in (("1 MB", small), (f"{args.statusline_size}", large)):
        status = work / f"status-{path.stem}.json"
        status.write_text(json.dumps({
            "session_id": "bench", "transcript_path": str(path), "cwd": str(work),
            "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
            "context_window": {"context_window_size": 200_000, "current_usage": None}}))
        argvs[f"statusline, {name} transcript"] = (
            [*ctxtool_argv(), "statusline", "--color", "never"], status)
    times: dict[str, list[float]] = {BARE: [], **{name: [] for name in argvs}}
    ratios: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(args.startup_runs):
        for name, (argv, stdin) in argvs.items():
            bare = _timed([sys.executable, "-c", "pass"], None)
            seconds = _timed(argv, stdin)
            times[BARE].append(bare)
            times[name].append(seconds)
            ratios[name].append(seconds / bare)
    (one_mb, big) = (statistics.median(r) for r in ratios.values())
    size_ratio = statistics.median(b / s for s, b in zip(*(times[n] for n in argvs)))
    return {"runs": args.startup_runs, "sizes": {"small": small.stat().st_size,
                                                 "large": large.stat().st_size},
            "seconds": {name: statistics.median(t) for name, t in times.items()},
            "size_ratio": size_ratio, "startup_ratio": one_mb, "large_startup_ratio": big,
            "size_goal": STATUSLINE_SIZE_GOAL, "startup_goal": STATUSLINE_STARTUP_GOAL,
            "load_average": round(os.getloadavg()[0], 2),
            "ok": size_ratio <= STATUSLINE_SIZE_GOAL
            and max(one_mb, big) <= STATUSLINE_STARTUP_GOAL}


def _timed(argv: list[str], stdin: Path | None) -> float:
    with open(stdin or os.devnull, "rb") as source:
        started = time.perf_counter()
        proc = subprocess.run(argv, stdin=source, capture_output=True, check=False)
        seconds = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {proc.stderr!r}")
    return seconds


def render_statusline(result: dict[str, Any]) -> list[str]:
    lines = [f"ctxtool statusline (medians of {result['runs']} runs, each paired with a bare "
             f"{BARE}; both transcripts end in the same {SAME_TAIL // 1000} KB; load average "
             f"{result['load_average']}):"]
    lines += [f"  {name:<40}{seconds * 1000:>8.0f} ms" for name, seconds in
              result["seconds"].items()]
    lines.append(f"  / {BARE}: 1 MB {result['startup_ratio']:.2f}x, large "
                 f"{result['large_startup_ratio']:.2f}x (goal <= {result['startup_goal']}x); "
                 f"large / 1 MB: {result['size_ratio']:.2f}x (goal <= {result['size_goal']}x)  "
                 + ("ok" if result["ok"] else "MISSED"))
    return lines


# --- convert --to anthropic on a run of one role: linear, not quadratic ------------------------

SAME_ROLE_GOAL = 1.25  # time per line on N lines / on N/4 lines (quadratic merging: about 4)
TO_ANTHROPIC = ("convert", "--to", "anthropic", "{input}")


def write_user_lines(path: Path, count: int) -> None:
    """``count`` Claude Code user lines in a row (a chain), each a short prompt: one run of one
    role, which ``--to anthropic`` merges into one message."""
    with open(path, "w") as out:
        parent = "null"
        for i in range(count):
            out.write(f'{{"type":"user","uuid":"u{i}","parentUuid":{parent},"sessionId":"s",'
                      f'"timestamp":"{NOW}","message":{{"role":"user","content":"line {i}"}}}}\n')
            parent = f'"u{i}"'


def write_streamed_lines(path: Path, count: int) -> None:
    """A prompt, then one response streamed as ``count`` assistant lines (one ``message.id``),
    a text block each: merged into one message, repeated blocks dropped."""
    with open(path, "w") as out:
        out.write(f'{{"type":"user","uuid":"u","parentUuid":null,"sessionId":"s",'
                  f'"timestamp":"{NOW}","message":{{"role":"user","content":"go"}}}}\n')
        for i in range(count):
            out.write(f'{{"type":"assistant","uuid":"a{i}","parentUuid":"u","sessionId":"s",'
                      f'"timestamp":"{NOW}","message":{{"id":"m1","role":"assistant",'
                      f'"content":[{{"type":"text","text":"part {i}"}}]}}}}\n')


SAME_ROLE_CASES: dict[str, tuple[Callable[[Path, int], None], tuple[str, ...]]] = {
    "convert --to anthropic": (write_user_lines, TO_ANTHROPIC),
    "filter-compacted --to anthropic": (write_user_lines, ("filter-compacted", "--to",
                                                           "anthropic", "{input}")),
    "convert, one streamed response": (write_streamed_lines, TO_ANTHROPIC),
}


def same_role_bench(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """``convert --to anthropic`` and ``filter-compacted --to anthropic`` on ``--same-role`` user
    lines in a row, and convert on one response streamed as that many lines, each on a quarter
    of the lines too: the time per line must not grow with the run."""
    from_bytecode()
    sizes = {"quarter": max(1, args.same_role // 4), "full": args.same_role}
    results: dict[str, Any] = {}
    for label, (write, command) in SAME_ROLE_CASES.items():
        inputs = {}
        for name, count in sizes.items():
            inputs[name] = work / f"{write.__name__}-{count}.jsonl"
            if not inputs[name].exists():
                write(inputs[name], count)
        runs = {name: min((run_child([*ctxtool_argv(), *_fill(command, path, work)])
                           for _ in range(args.repeat)), key=lambda r: r.cpu_seconds)
                for name, path in inputs.items()}
        per_line = {name: runs[name].cpu_seconds / sizes[name] for name in sizes}
        growth = per_line["full"] / per_line["quarter"]
        results[label] = {"seconds": {n: r.seconds for n, r in runs.items()},
                          "cpu_seconds": {n: r.cpu_seconds for n, r in runs.items()},
                          "peak_rss_mb": {n: r.peak_rss_mb for n, r in runs.items()},
                          "growth": growth,
                          "ok": growth <= SAME_ROLE_GOAL and not any(r.returncode
                                                                     for r in runs.values())}
    return {"lines": sizes, "commands": results, "goal": SAME_ROLE_GOAL,
            "load_average": round(os.getloadavg()[0], 2),
            "ok": all(r["ok"] for r in results.values())}


def render_same_role(result: dict[str, Any]) -> list[str]:
    quarter, full = result["lines"]["quarter"], result["lines"]["full"]
    lines = [f"--to anthropic on lines of one role in a row (one message once merged), best CPU "
             f"time of each; load average {result['load_average']}:",
             f"  {'command':<34}{f'{quarter:,} lines':>16}{f'{full:,} lines':>18}"
             f"{'per line':>10}  {'RSS MB':>7}"]
    for label, row in result["commands"].items():
        cpu, wall = row["cpu_seconds"], row["seconds"]
        lines.append(f"  {label:<34}{cpu['quarter']:>7.2f}s cpu{wall['quarter']:>5.1f}s"
                     f"{cpu['full']:>9.2f}s cpu{wall['full']:>5.1f}s"
                     f"{row['growth']:>9.2f}x  {row['peak_rss_mb']['full']:>7.0f}  "
                     + ("ok" if row["ok"] else "MISSED"))
    lines.append(f"  per line: CPU time per line on {full:,} / on {quarter:,} (goal <= "
                 f"{result['goal']}x; linear 1.0x, quadratic about 4x)")
    return lines


# --- validate against estimate: the schema check must not dominate -------------------------------

VALIDATE_GOAL = 3.0  # validate's time / estimate's, on the same input


def write_small_lines(path: Path, count: int) -> None:
    """``count`` small Claude Code lines, user and assistant in turn, in one chain."""
    with open(path, "w") as out:
        parent = "null"
        for i in range(count):
            head = (f'{{"type":"{"user" if i % 2 == 0 else "assistant"}","uuid":"u{i}",'
                    f'"parentUuid":{parent},"sessionId":"s","timestamp":"{NOW}","message":')
            body = (f'{{"role":"user","content":"question {i}"}}}}' if i % 2 == 0 else
                    f'{{"id":"m{i}","role":"assistant","content":[{{"type":"text",'
                    f'"text":"answer {i}"}}]}}}}')
            out.write(head + body + "\n")
            parent = f'"u{i}"'


def validate_bench(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """``validate`` against ``estimate``, interleaved, on the corpus concatenated (when present)
    and on ``--validate-lines`` small lines: median of the paired ratios, wall and CPU."""
    from_bytecode()
    inputs: dict[str, Path] = {}
    files = corpus_files()
    if files:
        inputs["corpus"] = work / "corpus.jsonl"
        with open(inputs["corpus"], "wb") as out:
            for each in files:
                data = each.read_bytes()
                out.write(data if data.endswith(b"\n") else data + b"\n")
    inputs[f"{args.validate_lines:,} small lines"] = work / "small.jsonl"
    write_small_lines(inputs[f"{args.validate_lines:,} small lines"], args.validate_lines)
    rows = {}
    for name, path in inputs.items():
        runs: dict[str, list[Run]] = {"estimate": [], "validate": []}
        for _ in range(args.repeat):
            for command in runs:
                # validate exits 3 on the problems it finds (the corpus has a few)
                runs[command].append(run_child([*ctxtool_argv(), command, str(path)],
                                               expected=(0, 3)))
        wall = paired(runs["validate"], runs["estimate"], cpu=False)
        cpu = paired(runs["validate"], runs["estimate"], cpu=True)
        rows[name] = {"bytes": path.stat().st_size,
                      "seconds": {c: min(r.seconds for r in rs) for c, rs in runs.items()},
                      "cpu_seconds": {c: min(r.cpu_seconds for r in rs) for c, rs in runs.items()},
                      "peak_rss_mb": {c: max(r.peak_rss_mb for r in rs) for c, rs in runs.items()},
                      "ratio": wall, "cpu_ratio": cpu,
                      "ok": cpu is not None and cpu <= VALIDATE_GOAL}
    return {"inputs": rows, "goal": VALIDATE_GOAL, "runs": args.repeat,
            "load_average": round(os.getloadavg()[0], 2),
            "ok": all(row["ok"] for row in rows.values())}


def render_validate(result: dict[str, Any]) -> list[str]:
    lines = [f"validate vs estimate ({result['runs']} interleaved pairs, fastest of each, median "
             f"of the paired ratios; load average {result['load_average']}):",
             f"  {'input':<26}{'MB':>6}{'estimate':>10}{'validate':>10}{'ratio':>7}"
             f"{'cpu':>6}{'RSS MB':>8}  verdict"]
    for name, row in result["inputs"].items():
        rss = row.get("peak_rss_mb", {}).get("validate")
        lines.append(f"  {name:<26}{row['bytes'] / 1e6:>6.0f}{row['seconds']['estimate']:>9.2f}s"
                     f"{row['seconds']['validate']:>9.2f}s{_fmt(row['ratio'], '.2f'):>7}"
                     f"{_fmt(row['cpu_ratio'], '.2f'):>6}{_fmt(rss, '.0f'):>8}  "
                     + ("ok" if row["ok"] else f"MISSED (goal <= {result['goal']}x, CPU)"))
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="commands: " + ", ".join(f"{n}{'' if c.default else ' (not by default)'}"
                                        for n, c in COMMANDS.items()))
    parser.add_argument("--shape", choices=SHAPES, default="synthetic",
                        help="the input: synthetic (default), store-heavy (synthetic without "
                             "compactions), corpus (../shared/corpus concatenated) or "
                             "real-shaped (generated with the corpus's mix)")
    parser.add_argument("--corpus-times", type=int, default=3,
                        help="--shape corpus: copies of the corpus concatenated (3)")
    parser.add_argument("--size",
                        help="generated transcript size (200MB; --shape real-shaped: 110MB)")
    parser.add_argument("--rss-size", help="also run each command once on a file this large "
                                           "(e.g. 1GB) for its peak RSS")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--input", help="use this transcript instead of generating one")
    parser.add_argument("--commands", help="comma-separated (default: all but the extra variants)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each (fastest kept)")
    parser.add_argument("--judge", choices=("best", "median", "cpu"), default="best",
                        help="ratio the goals are checked on: fastest of each (best), median "
                             "of the paired wall ratios (median) or of paired CPU times (cpu)")
    parser.add_argument("--startup-runs", type=int, default=20,
                        help="runs for the start-up median (0: skip)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--tmp", default=tempfile.gettempdir(), help="where scratch files go")
    parser.add_argument("--sessions", type=int, default=0,
                        help="instead: time `ctxtool sessions` on this many generated sessions")
    parser.add_argument("--sessions-size", default="2GB", help="their total size (2GB)")
    parser.add_argument("--sessions-config", metavar="DIR",
                        help="with --sessions: time this config folder (one written by "
                             "scripts/gen_sessions.py) instead of generating one")
    parser.add_argument("--statusline", action="store_true",
                        help="instead: time `ctxtool statusline` on a 1 MB and a large "
                             "transcript (--statusline-size) against the start-up baseline")
    parser.add_argument("--statusline-size", default="1GB")
    parser.add_argument("--same-role", type=int, default=0, metavar="N",
                        help="instead: time convert/filter-compacted --to anthropic on N user "
                             "lines in a row and on N/4 (e.g. 1000000): linear, not quadratic")
    parser.add_argument("--validate", action="store_true",
                        help="instead: time validate against estimate on the corpus "
                             "concatenated and on --validate-lines small lines (goal <= 3x)")
    parser.add_argument("--validate-lines", type=int, default=1_000_000)
    parser.add_argument("--check", type=int, default=100,
                        help="rows checked against `ctxtool estimate` (0: all)")
    args = parser.parse_args(argv)
    # real-shaped: the size of the corpus concatenated three times
    args.size = args.size or ("110MB" if args.shape == "real-shaped" else "200MB")
    args.names = ([n.strip() for n in args.commands.split(",") if n.strip()] if args.commands
                  else [n for n, c in COMMANDS.items() if c.default])
    unknown = [n for n in args.names if n not in COMMANDS]
    if unknown:
        parser.error(f"unknown command(s): {', '.join(unknown)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="ctxtool-bench-", dir=args.tmp))
    single = ((statusline_bench, render_statusline) if args.statusline else
              (same_role_bench, render_same_role) if args.same_role else
              (validate_bench, render_validate) if args.validate else
              (sessions_bench, render_sessions) if args.sessions or args.sessions_config
              else None)
    if single is not None:  # one of the bench modes that time one or two commands
        bench, render_result = single
        try:
            result = bench(args, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(json.dumps(result, indent=2) if args.json else "\n".join(render_result(result)))
        return 0 if result["ok"] else 1
    warnings = (store_fs_warnings(args.tmp)
                if any(COMMANDS[name].writes_store for name in args.names) else [])
    try:
        from_bytecode()
        transcript = Path(args.input) if args.input else work / "transcript.jsonl"
        if not args.input:
            make_input(transcript, args)
        with open(transcript, "rb") as src:
            info: dict[str, Any] = {"size_mb": transcript.stat().st_size / 1e6,
                                    "lines": sum(1 for _ in src), "repeat": args.repeat,
                                    "shape": "input" if args.input else args.shape,
                                    "judge": args.judge}
        runs, rounds = run_all(prepare(transcript, args.names, work / "small"), work / "small",
                               args.repeat)
        info["load"] = " ".join(f"{n:.2f}" for n in os.getloadavg())
        sizes = [summary_tokens(work / "small")]
        large = None
        if args.rss_size:
            big = work / "large.jsonl"
            make_transcript(big, args.rss_size, args.seed)
            info["large_mb"] = big.stat().st_size / 1e6
            large, _ = run_all(prepare(big, args.names, work / "large"), work / "large", 1)
            sizes.append(summary_tokens(work / "large"))
            big.unlink()
        start = startup(args.startup_runs, work) if args.startup_runs > 0 else None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = build_rows(runs, large, rounds, args.judge)
    check_summary(rows, sizes)
    ok = all(not row.problems for row in rows) and (start is None or start["ok"])
    for warning in warnings:
        print(warning, file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"input": info, "rows": [asdict(r) for r in rows], "startup": start,
                          "warnings": warnings, "ok": ok}, indent=2))
    else:
        print("\n".join(render(rows, info, start)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
