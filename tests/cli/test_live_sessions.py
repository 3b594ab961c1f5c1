"""--in-place on sessions that may be live (io/live.py).

The acceptance test of issue 13: lines appended to a 100 MB session while ``snip --in-place``
rewrites it are never lost, over 20 runs that start appending at different moments of the run
(before it reads, while it reads, while it writes, around the rename, after it), at different
rates, some writing each line in two pieces. The appender writes the way Claude Code does: open,
append, close, for each line. The session is generated once per module (a few big tool results,
two superseded reads that snip clears, so a microcompact_boundary is appended too).

A line in two pieces is written that way only into the file ctxtool replaces (the appender
opened it before the swap): ctxtool must wait for the rest before it carries the line over. Into
the new file a line goes in one ``write``, as Claude Code writes it: Linux never interleaves one
``write`` to a regular file with another process's ``O_APPEND`` write, and that is what keeps the
lines ctxtool adds after the swap whole. A writer that splits a line into several writes there
could get ctxtool's lines in the middle of it: nothing can prevent that without a lock the writer
takes too (docs/internals.md, "Rewriting a session in place").
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import orjson
import pytest

from ctxtool.errors import ExitCode
from tests.conftest import ctxtool_executable, run_ctxtool
from tests.robustness.strategies import cc_entry, compact, tool_result_message, tool_use_message

MB = 1 << 20
SNIP = ["snip", "--min-usage", "0", "--keep", "0", "--now", "2026-01-02T00:00:00Z"]
HOURS_AGO = time.time() - 2 * 3600


def session(size: int) -> bytes:
    """A Claude Code session of about ``size`` bytes: 1 MB Read results of distinct files, and
    two small reads of one file (the older one is superseded: snip clears it)."""
    lines = [compact(cc_entry("user", "u0", None, {"role": "user", "content": "go"}))]
    parent, turn, total = "u0", 0, 0
    while total < size:
        turn += 1
        small = turn <= 2
        use = tool_use_message(f"msg_{turn}", f"toolu_{turn}", "Read",
                               {"file_path": "/w/app/same.py" if small else f"/w/app/f{turn}.py"})
        text = "small read\n" * 50 if small else f"{turn}\n" + "x" * MB
        pair = [compact(cc_entry("assistant", f"a{turn}", parent, use, second=turn)),
                compact(cc_entry("user", f"r{turn}", f"a{turn}",
                                 tool_result_message(f"toolu_{turn}", text), second=turn))]
        lines += pair
        total += sum(map(len, pair))
        parent = f"r{turn}"
    return b"".join(lines)


def without_boundary(lines: list[bytes]) -> list[bytes]:
    """``lines`` without the appended ones and snip's one microcompact_boundary."""
    boundaries = [line for line in lines if b'"subtype":"microcompact_boundary"' in line]
    assert len(boundaries) == 1
    return [line for line in lines if line not in boundaries and b'"uuid":"live-' not in line]


def appended_line(run: int, n: int) -> bytes:
    return compact({"type": "user", "uuid": f"live-{run}-{n}", "parentUuid": None,
                    "message": {"role": "user", "content": f"typed while ctxtool ran {n}"}})


@pytest.fixture(scope="module")
def big_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("live") / "big.jsonl"
    path.write_bytes(session(100 * MB))
    return path


class Appender(threading.Thread):
    """Appends lines to ``path`` like Claude Code: open, append, close; from ``start`` seconds
    on, one every ``interval`` seconds, until told to stop (then a few more)."""

    def __init__(self, path: Path, run: int, *, start: float, interval: float,
                 split: bool) -> None:
        super().__init__(daemon=True)
        self.path, self.run_id, self.start_after = path, run, start
        self.interval, self.split = interval, split
        self.written: list[bytes] = []
        self.done = threading.Event()

    def run(self) -> None:
        original = os.stat(self.path).st_ino  # the file ctxtool replaces
        time.sleep(self.start_after)
        extra = 3
        while extra:
            if self.done.is_set():
                extra -= 1
            line = appended_line(self.run_id, len(self.written))
            with open(self.path, "ab") as out:
                # a line in two pieces, straddling the swap when it comes in between; only into
                # the file replaced (module docstring)
                if self.split and os.fstat(out.fileno()).st_ino == original:
                    out.write(line[:20])
                    out.flush()
                    time.sleep(0.002)
                    out.write(line[20:])
                else:
                    out.write(line)
            self.written.append(line)
            time.sleep(self.interval)


def test_lines_appended_during_snip_in_place_are_never_lost(big_session: Path,
                                                            tmp_path: Path) -> None:
    store = tmp_path / "store"
    target = tmp_path / "session.jsonl"
    shutil.copyfile(big_session, target)
    os.utime(target, (HOURS_AGO, HOURS_AGO))
    began = time.monotonic()
    quiet = run_ctxtool(*SNIP, "--store", str(store), "--in-place", str(target), cwd=tmp_path)
    duration = time.monotonic() - began
    assert quiet.returncode == 0, quiet.stderr
    expected = target.read_bytes()  # what snip makes of the session with nobody writing
    assert b'"compactedToolIds":["toolu_1"]' in expected  # the older small read cleared
    randomness = random.Random(13)
    for run in range(20):
        shutil.copyfile(big_session, target)
        os.utime(target, (HOURS_AGO, HOURS_AGO))
        appender = Appender(target, run, start=duration * 1.2 * run / 19,
                            interval=randomness.choice([0.0005, 0.002, 0.01, 0.05]),
                            split=run % 3 == 2)
        appender.start()
        # --force: a session written to right now is refused otherwise (tested below)
        proc = subprocess.run([*ctxtool_executable(), *SNIP, "--store", str(store),
                               "--in-place", "--force", str(target)], capture_output=True,
                              cwd=tmp_path, timeout=300, check=False)
        appender.done.set()
        appender.join(timeout=30)
        assert proc.returncode == 0, (run, proc.stderr)
        lines = target.read_bytes().splitlines(keepends=True)
        for line in lines:  # whole lines only: none cut, none glued to another
            assert line.endswith(b"\n") and isinstance(orjson.loads(line), dict), (run, line)
        appended = [line for line in lines if line.startswith(b'{"type":"user","uuid":"live-')]
        assert sorted(appended) == sorted(appender.written), run  # each exactly once
        # the rest is snip's work on the session (its boundary names whatever came last)
        assert without_boundary(lines) == without_boundary(expected.splitlines(keepends=True))


def test_an_active_session_is_refused_without_force(tmp_path: Path) -> None:
    data = session(3 * MB)
    target = tmp_path / "open-now.jsonl"
    target.write_bytes(data)  # modified just now: it may be the session in use
    store = ["--store", str(tmp_path / "store")]
    refused = run_ctxtool(*SNIP, *store, "--in-place", str(target), cwd=tmp_path)
    assert refused.returncode == 0, refused.stderr
    assert b"skipped: modified" in refused.stderr and b"pass --force" in refused.stderr
    assert target.read_bytes() == data and not (tmp_path / "store").exists()
    forced = run_ctxtool(*SNIP, *store, "--in-place", "--force", str(target), cwd=tmp_path)
    assert forced.returncode == 0 and target.read_bytes() != data
    target.write_bytes(data)
    off = run_ctxtool(*SNIP, *store, "--in-place", "--live-window", "0", str(target),
                      cwd=tmp_path)
    assert off.returncode == 0 and b"skipped" not in off.stderr and target.read_bytes() != data
    target.write_bytes(data)
    os.utime(target, (time.time() - 5, time.time() - 5))
    older = run_ctxtool(*SNIP, *store, "--in-place", str(target), cwd=tmp_path,
                        env={"CTXTOOL_LIVE_WINDOW": "2s"})
    assert older.returncode == 0 and b"skipped" not in older.stderr
    assert target.read_bytes() != data


def test_the_cron_recipe_skips_the_open_session_and_does_the_rest(tmp_path: Path) -> None:
    """`summarize --auto --passthrough-on-error --in-place ~/.claude/projects/*/*.jsonl`:
    the session in use is left alone with a warning, the others are done, exit 0."""
    old, live = tmp_path / "old.jsonl", tmp_path / "live.jsonl"
    for path in (old, live):
        path.write_bytes(session(MB // 4))
    os.utime(old, (HOURS_AGO, HOURS_AGO))
    before = live.read_bytes()
    proc = run_ctxtool("summarize", "--llm", "offline", "--context-window", "20000", "--auto",
                       "--passthrough-on-error", "--in-place", "--store", str(tmp_path / "s"),
                       str(old), str(live), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{live}: skipped".encode() in proc.stderr
    assert live.read_bytes() == before
    assert b'"compact_boundary"' in old.read_bytes()


def test_a_file_replaced_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    """Any change but an append (here: the file is rewritten by another program while snip
    runs) means nothing is replaced, exit 4, and the other program's file stays."""
    target = tmp_path / "s.jsonl"
    target.write_bytes(session(40 * MB))
    os.utime(target, (HOURS_AGO, HOURS_AGO))
    replacement = b'{"type":"user","uuid":"other","message":{"role":"user","content":"x"}}\n'
    proc = subprocess.Popen([*ctxtool_executable(), *SNIP, "--store", str(tmp_path / "st"),
                             "--in-place", str(target)], stderr=subprocess.PIPE, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not [p for p in tmp_path.iterdir() if p.name.startswith(".s.jsonl.")]:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.001)  # until snip has pinned the file and started writing its new one
    other = tmp_path / "other.tmp"
    other.write_bytes(replacement)
    os.replace(other, target)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == ExitCode.STORAGE, stderr
    assert b"changed while it was rewritten" in stderr and b"nothing was replaced" in stderr
    assert target.read_bytes() == replacement
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_backup_keeps_the_original(tmp_path: Path) -> None:
    data = session(MB)
    target = tmp_path / "s.jsonl"
    for argv, suffix in [(["--backup"], ".bak"), (["--backup=.orig"], ".orig")]:
        target.write_bytes(data)
        proc = run_ctxtool(*SNIP, "--store", str(tmp_path / "st"), "--in-place", "--force",
                           *argv, str(target), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert Path(f"{target}{suffix}").read_bytes() == data and target.read_bytes() != data
    # `--backup FILE`: click would read FILE as the suffix; it is taken as the input instead
    target.write_bytes(data)
    proc = run_ctxtool(*SNIP, "--store", str(tmp_path / "st"), "--in-place", "--force",
                       "--backup", str(target), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Path(f"{target}.bak").read_bytes() == data and target.read_bytes() != data


def test_in_place_follows_a_symlink_to_the_file(tmp_path: Path) -> None:
    data = session(MB)
    real = tmp_path / "real.jsonl"
    real.write_bytes(data)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    proc = run_ctxtool(*SNIP, "--store", str(tmp_path / "st"), "--in-place", "--force",
                       str(link), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() != data and b"microcompact_boundary" in real.read_bytes()


def test_in_place_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "s.jsonl"
    target.write_bytes(session(MB))
    target.chmod(0o600)
    proc = run_ctxtool(*SNIP, "--store", str(tmp_path / "st"), "--in-place", "--force",
                       str(target), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert target.stat().st_mode & 0o777 == 0o600
