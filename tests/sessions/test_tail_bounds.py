"""The tail readers' bound (storage/tail.py): whatever a transcript holds, ``statusline`` and
``sessions`` read at most a fixed window from each end and never hold a line longer than it.

The readers are checked with a small window; the commands on files of 300 MB (sparse: they cost
no disk) by the peak memory of the real entry point, measured by a parent process of its own so
no other test's children count.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ctxtool.storage import tail
from ctxtool.storage.tail import (
    complete_length,
    head_lines,
    iter_head_lines,
    iter_lines_reversed,
    lines_backwards,
    lines_containing,
    mapped,
)
from tests.conftest import ctxtool_executable
from tests.estimate_builders import assistant, usage, user
from tests.sessions.helpers import APP, full_estimate, write_session

HUGE = 300 << 20
PEAK_MB = 150  # the bound is 32 MiB; before it, these runs took 600-900 MB
DATA = b"aa\nbbbb\ncccccc\ndd\n" + b"e" * 20  # line ends at 3, 8, 15, 18; 38 bytes


@pytest.mark.parametrize("window", [0, 1, 19, 20, 21, 23, 24, 35, 38, 100])
@pytest.mark.parametrize("block", [1, 4, 1 << 16])
def test_backwards_reads_only_the_lines_within_the_window(tmp_path: Path, window: int,
                                                          block: int) -> None:
    lines = io.BytesIO(DATA).readlines()
    within = []  # the lines that start and end within the last `window` bytes
    end = len(DATA)
    for line in reversed(lines):
        if end - len(line) < len(DATA) - window:
            break
        within.append(line)
        end -= len(line)
    got = list(iter_lines_reversed(io.BytesIO(DATA), block=block, window=window))
    assert got == within
    path = tmp_path / "t.jsonl"
    path.write_bytes(DATA)
    with open(path, "rb") as handle, mapped(handle) as buffer:
        assert list(lines_backwards(buffer, window=window)) == within


@pytest.mark.parametrize("bound", [1, 3, 4, 5, 6, 100])
def test_the_head_ends_at_a_line_longer_than_the_bound(tmp_path: Path, bound: int) -> None:
    data = b"ab\nabcde\nx\n" + b"y" * 4
    expected = []
    for line in io.BytesIO(data).readlines():
        if len(line.rstrip(b"\n")) > bound:
            break
        expected.append(line)
    assert list(iter_head_lines(io.BytesIO(data), max_bytes=1000, bound=bound)) == expected
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as handle, mapped(handle) as buffer:
        assert list(head_lines(buffer, max_bytes=1000, bound=bound)) == expected


def test_the_search_passes_over_lines_longer_than_the_bound(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setattr(tail, "SCAN", 5)  # many pieces, needles across their edges
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"one mark\n" + b"x" * 30 + b"mark" + b"y" * 30 + b"\nmark two\nthree")
    with open(path, "rb") as handle, mapped(handle) as buffer:
        assert list(lines_containing(buffer, b"mark", bound=20)) == [b"one mark\n",
                                                                     b"mark two\n"]
        assert len(list(lines_containing(buffer, b"mark", bound=100))) == 3
        assert complete_length(buffer) == buffer.rfind(b"\n") + 1


def _peak_mb(*args: str, env: dict[str, str]) -> tuple[int, subprocess.CompletedProcess[bytes]]:
    """Run the entry point under a parent of its own; its peak RSS in MB (ru_maxrss)."""
    probe = ("import resource, subprocess, sys; "
             "p = subprocess.run(sys.argv[1:], capture_output=True); "
             "sys.stdout.buffer.write(p.stdout); sys.stderr.buffer.write(p.stderr); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, "
             "file=sys.stderr); sys.exit(p.returncode)")
    proc = subprocess.run([sys.executable, "-c", probe, *ctxtool_executable(), *args],
                          capture_output=True, env=env, timeout=300, check=False)
    *_, peak = proc.stderr.split()
    return int(peak), proc


def _huge_line(path: Path, *, before: bytes = b"", prefix: bytes = b"",
               after: bytes = b"") -> Path:
    """``before``, then a line of HUGE bytes (``prefix`` and a hole: NUL bytes read from no
    disk), then ``after``."""
    with open(path, "wb") as out:
        out.write(before + prefix)
        out.truncate(len(before) + HUGE)
        if after:
            out.seek(0, os.SEEK_END)
            out.write(b"\n" + after)
    return path


def _session(entries: list[dict]) -> bytes:
    return b"".join(orjson.dumps({**e, "cwd": APP, "sessionId": "s1"}) + b"\n" for e in entries)


HEAD = _session([user("the first prompt")])
TAIL = _session([user("go on"), assistant("fine", msg_id="m2", usage=usage(10, 0, 42_000, 5))])


@pytest.mark.parametrize("shape", ["no newline", "a huge last line", "a huge line inside"])
def test_statusline_memory_is_bounded(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "s1.jsonl"
    if shape == "no newline":
        _huge_line(path)
    elif shape == "a huge last line":
        _huge_line(path, before=HEAD + TAIL, prefix=b'{"type":"user","usage":"')
    else:
        _huge_line(path, before=HEAD, prefix=b'{"type":"user","usage":"', after=TAIL)
    peak, proc = _peak_mb("statusline", "--format", "{tokens}", str(path),
                          env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert path.stat().st_size >= HUGE
    # a line past the window is not read: the last call is found only before it
    assert proc.stdout == (b"42.0K\n" if shape == "a huge line inside" else b"24.0K\n")
    assert peak < PEAK_MB


@pytest.mark.parametrize("shape", ["no newline", "a huge compaction line inside"])
def test_sessions_memory_is_bounded(tmp_path: Path, shape: str) -> None:
    path = write_session(tmp_path / "config", APP, "11111111-2222-3333-4444-555555555555", [])
    if shape == "no newline":
        _huge_line(path)
    else:
        _huge_line(path, before=HEAD, after=TAIL,
                   prefix=b'{"type":"system","subtype":"compact_boundary","content":"')
    peak, proc = _peak_mb("sessions", "--json", env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    row = orjson.loads(proc.stdout)
    assert row["size"] == path.stat().st_size >= HUGE
    if shape != "no newline":
        # the boundary line is longer than the window: not counted, not parsed
        small = write_session(tmp_path / "small", APP, "s2", [])
        small.write_bytes(HEAD + TAIL)
        assert (row["first_prompt"], row["context_tokens"], row["compactions"]) == \
            ("the first prompt", full_estimate(small).context_tokens, 0)
    assert peak < PEAK_MB


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    home = tmp_path / "home"
    return {**env, "CLAUDE_CONFIG_DIR": str(tmp_path / "config"), "CTXTOOL_CACHE_DIR": "off",
            "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
            "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache")}
