"""Benchmark: filter-compacted on a large generated session (time and peak memory).

Writes a Claude Code-shaped session of about SIZE_MB under /tmp (tool results of ~20 KB, a
compaction every ~10 %), then runs ``ctxtool filter-compacted`` on it from a file and from a pipe,
in the transcript view and with ``--to anthropic``, and prints wall time and peak RSS (from the
child's rusage). Peak memory should stay flat as the file grows: the command reads the file
twice instead of holding it.

    python scripts/bench_filter_compacted.py            # ~200 MB
    python scripts/bench_filter_compacted.py 50         # ~50 MB
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import orjson

TMP = Path(os.environ.get("TMPDIR", "/tmp"))


def make_session(path: Path, size_mb: int) -> int:
    body = ("x" * 79 + "\n") * 250  # a 20 KB tool result
    lines = 0
    with path.open("wb") as out:
        written, parent, n = 0, None, 0
        while written < size_mb * 1_000_000:
            n += 1
            uuid = f"u-{n:07d}"
            if n % 4000 == 0:
                entry = {"type": "system", "subtype": "compact_boundary", "uuid": uuid,
                         "parentUuid": None, "logicalParentUuid": parent, "isSidechain": False,
                         "content": "Conversation compacted",
                         "compactMetadata": {"trigger": "auto", "preTokens": 160000}}
            elif n % 2:
                entry = {"type": "assistant", "uuid": uuid, "parentUuid": parent,
                         "isSidechain": False, "message": {
                             "id": f"msg_{n}", "role": "assistant", "content": [
                                 {"type": "tool_use", "id": f"t{n}", "name": "Read",
                                  "input": {"file_path": f"/src/f{n}.py"}}]}}
            else:
                entry = {"type": "user", "uuid": uuid, "parentUuid": parent,
                         "isSidechain": False, "message": {"role": "user", "content": [
                             {"type": "tool_result", "tool_use_id": f"t{n - 1}",
                              "content": body}]}}
            data = orjson.dumps(entry) + b"\n"
            out.write(data)
            written += len(data)
            parent, lines = uuid, lines + 1
    return lines


def run(args: list[str], stdin: Path | None = None) -> tuple[float, float]:
    exe = str(Path(sys.executable).with_name("ctxtool"))
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if stdin is None:
        subprocess.run([exe, *args], stdout=subprocess.DEVNULL, check=True)
    else:  # through a real pipe, so the input has to be spooled
        cat = subprocess.Popen(["cat", str(stdin)], stdout=subprocess.PIPE)
        subprocess.run([exe, *args], stdin=cat.stdout, stdout=subprocess.DEVNULL, check=True)
        cat.wait()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return time.perf_counter() - start, max(peak, before) / 1024


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    path = TMP / f"ctxtool-bench-fc-{size_mb}mb.jsonl"
    lines = make_session(path, size_mb)
    print(f"{path}: {path.stat().st_size / 1e6:.0f} MB, {lines} lines")
    for label, args, stdin in (
            ("file, transcript view", ["filter-compacted", str(path)], None),
            ("pipe, transcript view", ["filter-compacted"], path),
            ("file, --to anthropic", ["filter-compacted", "--to", "anthropic", str(path)], None)):
        seconds, peak_mb = run(args, stdin)
        print(f"  {label:24s} {seconds:6.2f} s   peak RSS so far {peak_mb:6.0f} MB")
    path.unlink()


if __name__ == "__main__":
    main()
