"""scripts/bench.py's floor row for ``estimate``: the parse loop plus ctxtool's own count of what
estimate counts, timed like the other loops, its ratio shown as estimate's floor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson

from tests.conftest import ROOT, run_ctxtool

sys.path.insert(0, str(ROOT / "scripts"))
import bench  # noqa: E402
import gen_real_shaped  # noqa: E402


def transcript(path: Path) -> Path:
    """A real-shaped transcript (main chain) with lines estimate leaves out or skips after it:
    a side-chain message, a line that is not JSON, one that is not an object."""
    with open(path, "wb") as out:
        gen_real_shaped.generate(out, 400_000, 5)
        side = {"type": "user", "isSidechain": True, "uuid": "s1", "sessionId": "x",
                "message": {"role": "user", "content": "side chain words " * 500}}
        out.write(orjson.dumps(side) + b"\n")
        out.write(b"{not json\n[1, 2]\n")
    return path


def test_the_count_loop_counts_what_estimate_counts(tmp_path: Path) -> None:
    path = transcript(tmp_path / "t.jsonl")
    loop = subprocess.run([sys.executable, "-c", bench.COUNT_LOOP, str(path)],
                          capture_output=True, check=True)
    # every message estimated (no usage anchor, no system figure): the total is the count
    proc = run_ctxtool("estimate", "--json", "--no-usage", "--system-tokens", "0",
                       "--on-invalid", "skip", str(path))
    assert proc.returncode == 0, proc.stderr.decode()
    counted = int(loop.stdout)
    assert counted > 100_000
    assert counted == json.loads(proc.stdout)["total_tokens"]


def rounds(seconds: list[float]) -> list[bench.Run]:
    return [bench.Run(s, s, 20.0, 0) for s in seconds]


def test_estimate_row_carries_its_floor_and_the_miss_names_it() -> None:
    per_round = {bench.PARSE: rounds([1.0, 1.0, 1.0]), bench.DUMP: rounds([1.5, 1.5, 1.5]),
                 bench.COUNT: rounds([1.7, 1.8, 1.6]), "estimate": rounds([2.4, 2.5, 2.3])}
    best = {name: rs[-1] for name, rs in per_round.items()}
    rows = {row.name: row for row in bench.build_rows(best, None, per_round, "median")}
    floor, estimate = rows[bench.COUNT], rows["estimate"]
    assert floor.baseline == bench.PARSE and floor.goal is None and not floor.problems
    assert floor.median_ratio == 1.7 and floor.ratio == 1.6
    assert estimate.floor == 1.7  # judged as estimate is: median of the paired ratios
    assert estimate.problems == ["time 2.40x (median) > 1.5x (floor 1.70x)"]
    table = "\n".join(bench.render(list(rows.values()), {"size_mb": 100.0, "lines": 10,
                                                          "repeat": 3}, None))
    assert "reference: estimate's floor" in table
    assert "(floor 1.70x)" in table


def test_estimate_within_its_goal_still_shows_the_floor() -> None:
    best = {bench.PARSE: bench.Run(1.0, 1.0, 20.0, 0), bench.COUNT: bench.Run(1.3, 1.3, 20.0, 0),
            "estimate": bench.Run(1.4, 1.4, 20.0, 0)}
    estimate = bench.build_rows(best, None)[-1]
    assert estimate.floor == 1.3 and not estimate.problems


def test_the_floor_loop_runs_only_with_estimate(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"{}\n")
    assert bench.COUNT not in bench.prepare(path, ["filter-compacted"], tmp_path / "a")
    plans = bench.prepare(path, ["filter-compacted", "estimate"], tmp_path / "b")
    assert list(plans).index(bench.COUNT) < list(plans).index("estimate")


def test_bench_json_has_the_floor_row(tmp_path: Path) -> None:
    path = transcript(tmp_path / "t.jsonl")
    path.write_bytes(path.read_bytes().rsplit(b"\n", 3)[0] + b"\n")  # estimate stops at bad lines
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench.py"), "--input",
                           str(path), "--commands", "estimate", "--repeat", "1",
                           "--startup-runs", "0", "--json", "--tmp", str(tmp_path)],
                          capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr.decode()  # 1: a goal missed, on a tiny file
    result = json.loads(proc.stdout)
    rows = {row["name"]: row for row in result["rows"]}
    assert rows[bench.COUNT]["returncode"] == 0 and rows[bench.COUNT]["baseline"] == bench.PARSE
    assert rows["estimate"]["floor"] == rows[bench.COUNT]["ratio"]
    assert result["warnings"] == []  # estimate writes no store: the file system is not asked


def test_the_same_role_lines_merge_into_one_message(tmp_path: Path) -> None:
    path = tmp_path / "users.jsonl"
    bench.write_user_lines(path, 50)
    proc = run_ctxtool("convert", "--to", "anthropic", str(path))
    assert proc.returncode == 0, proc.stderr.decode()
    (message,) = [orjson.loads(line) for line in proc.stdout.splitlines()]
    assert [b["text"] for b in message["content"]] == [f"line {i}" for i in range(50)]


def test_the_small_lines_are_a_valid_transcript(tmp_path: Path) -> None:
    path = tmp_path / "small.jsonl"
    bench.write_small_lines(path, 40)
    proc = run_ctxtool("validate", "--json", str(path))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr.decode()
    assert len(path.read_bytes().splitlines()) == 40


def test_the_two_modes_render_their_verdicts() -> None:
    same = {"lines": {"quarter": 250, "full": 1000}, "goal": 1.25, "load_average": 1.0,
            "commands": {"convert --to anthropic": {
                "seconds": {"quarter": 1.0, "full": 4.0}, "cpu_seconds": {"quarter": 1.0,
                                                                         "full": 4.4},
                "peak_rss_mb": {"quarter": 30.0, "full": 40.0}, "growth": 1.1, "ok": True}}}
    assert "1.10x" in "\n".join(bench.render_same_role(same))
    valid = {"goal": 3.0, "runs": 3, "load_average": 1.0, "inputs": {"corpus": {
        "bytes": 36e6, "seconds": {"estimate": 1.0, "validate": 4.0},
        "cpu_seconds": {"estimate": 1.0, "validate": 4.0}, "ratio": 4.0, "cpu_ratio": 4.0,
        "ok": False}}}
    assert "MISSED (goal <= 3.0x, CPU)" in "\n".join(bench.render_validate(valid))


def test_the_generated_gemini_session_is_valid_and_sized_from_its_last_compression(
        tmp_path: Path) -> None:
    """scripts/gen_gemini_session.py (the large Gemini session docs/benchmarks.md times the
    statusline on): lines Gemini's own rules accept, and the statusline's figure (read from the
    last compression's checkpoint on) is the one estimate gives reading it whole."""
    import gen_gemini_session

    path = tmp_path / "gemini.jsonl"
    with open(path, "wb") as out:
        gen_gemini_session.generate(out, turns=25, result=300, every=10)
    proc = run_ctxtool("validate", "--json", str(path))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr.decode()
    proc = run_ctxtool("estimate", "--json", str(path))
    report = json.loads(proc.stdout)
    assert (report["format"], report["compact_boundaries"]) == ("gemini", 2)
    proc = run_ctxtool("statusline", "--color", "never", "--format", "{context_tokens}",
                       str(path))
    assert proc.stdout == f"{report['context_tokens']}\n".encode(), proc.stderr.decode()
