"""SIGTERM and SIGHUP end a command as Ctrl-C does, and what a SIGKILL leaves is swept later
(issue 27, item 13). Real signals to the real entry point in the middle of a write: the input is
a FIFO this test holds open, so the command sits mid-run with its temp output file made."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ctxtool_executable, run_ctxtool
from tests.robustness.test_faults import leftovers, start_when_writing, transcript

SIGNALS = {signal.SIGTERM: (143, "terminated (SIGTERM)"),  # 128 + the number, documented
           signal.SIGHUP: (129, "hung up (SIGHUP)")}
HOURS_AGO = time.time() - 2 * 3600


def wait_for(folder: Path, glob: str, proc: subprocess.Popen[bytes]) -> Path:
    deadline = time.monotonic() + 60
    while True:
        found = list(folder.glob(glob))
        if found:
            return found[0]
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.005)


@pytest.fixture
def mid_write(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """persist -o out.jsonl reading a FIFO that got part of a transcript and stays open: the
    command is blocked mid-write, its temp file beside out.jsonl. Yields (process, temp file)."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen([*ctxtool_executable(), "persist", "--store", str(tmp_path / "store"),
                             str(fifo), "-o", str(tmp_path / "out.jsonl")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    writer = os.open(fifo, os.O_WRONLY)  # waits for the command to open it
    try:
        os.write(writer, transcript(20, 3000)[:40_000])
        yield proc, wait_for(tmp_path, ".out.jsonl.*.tmp", proc)
    finally:
        os.close(writer)
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)


@pytest.mark.parametrize("sig", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_sigterm_and_sighup_during_an_output_file(
        sig: int, mid_write: tuple[subprocess.Popen[bytes], Path], tmp_path: Path) -> None:
    proc, temp = mid_write
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    code, line = SIGNALS[sig]
    assert proc.returncode == code == 128 + sig, stderr
    assert stderr.decode().splitlines()[-1] == f"ctxtool: error: {line}", stderr
    assert b"Traceback" not in stderr and stdout == b""
    assert not temp.exists() and not (tmp_path / "out.jsonl").exists()
    assert not leftovers(tmp_path)


@pytest.mark.parametrize("sig", list(SIGNALS), ids=lambda s: signal.Signals(s).name)
def test_sigterm_and_sighup_during_in_place(sig: int, tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.write_bytes(transcript(400, 60_000))  # ~25 MB: long enough to be caught writing
    before = target.read_bytes()
    proc = start_when_writing(["persist", "--store", str(tmp_path / "store"), "--in-place",
                               "--force", str(target)], ".session.jsonl.*.tmp", tmp_path)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    code, line = SIGNALS[sig]
    assert proc.returncode == code, stderr
    assert stderr.decode().splitlines()[-1] == f"ctxtool: error: {line}", stderr
    assert target.read_bytes() == before
    assert not leftovers(tmp_path)


def test_what_a_sigkill_left_goes_on_a_later_run_in_that_folder(
        mid_write: tuple[subprocess.Popen[bytes], Path], tmp_path: Path) -> None:
    proc, temp = mid_write
    proc.kill()
    proc.communicate(timeout=60)
    assert temp.exists()  # SIGKILL: nothing could remove it
    os.utime(temp, (HOURS_AGO, HOURS_AGO))
    fresh = tmp_path / ".other.jsonl.ctxtool-inuse000.tmp"  # a run in progress: not stale
    fresh.write_bytes(b"partial")
    foreign = tmp_path / ".notes.txt.k2v9_q0a.tmp"  # another program's look-alike: not ours
    foreign.write_bytes(b"theirs")
    os.utime(foreign, (HOURS_AGO, HOURS_AGO))
    # a later run writing another file in that folder sweeps it
    source = tmp_path / "s.jsonl"
    source.write_bytes(transcript(2, 100))
    later = run_ctxtool("snip", str(source), "-o", str(tmp_path / "other-output.jsonl"))
    assert later.returncode == 0, later.stderr
    assert not temp.exists()
    assert fresh.exists() and foreign.exists()


def test_cleanup_takes_a_sessions_stale_temp_files_with_it(tmp_path: Path) -> None:
    root = tmp_path / ".claude"
    project = root / "projects" / "-w-app"
    project.mkdir(parents=True)
    session = project / "5f0c4c4e-0000-4000-8000-000000000001.jsonl"
    session.write_bytes(transcript(2, 100))
    # what a killed ctxtool left beside it: this version's name and an older version's
    temps = [project / f".{session.name}.ctxtool-k2v9_q0a.tmp",
             project / f".{session.name}.k2v9_q0a.tmp"]
    year_ago = time.time() - 400 * 86400
    for path in [session, *temps]:
        if path != session:
            shutil.copyfile(session, path)
        os.utime(path, (year_ago, year_ago))
    result = run_ctxtool("cleanup", "--root", str(root), "--older-than", "30d", "--apply")
    assert result.returncode == 0, result.stderr
    assert not session.exists()
    assert not any(path.exists() for path in temps)
    assert not project.exists()  # nothing left in it: the empty project folder goes too


def test_a_partial_archive_of_any_session_goes_on_a_later_archiving_run(tmp_path: Path) -> None:
    root, archive = tmp_path / ".claude", tmp_path / "archive"
    project = root / "projects" / "-w-app"
    project.mkdir(parents=True)
    archive.mkdir()
    session = project / "5f0c4c4e-0000-4000-8000-000000000001.jsonl"
    session.write_bytes(transcript(2, 100))
    year_ago = time.time() - 400 * 86400
    os.utime(session, (year_ago, year_ago))
    # what a cleanup killed while archiving another session left
    partial = archive / ".projects--w-app-0a1b2c3d.ctxtool-k2v9_q0a.tmp"
    partial.write_bytes(b"\x1f\x8b partial")
    os.utime(partial, (HOURS_AGO, HOURS_AGO))
    result = run_ctxtool("cleanup", "--root", str(root), "--older-than", "30d", "--apply",
                         "--archive", str(archive))
    assert result.returncode == 0, result.stderr
    assert not partial.exists()
    assert [p.suffixes[-2:] for p in archive.iterdir()] == [[".tar", ".gz"]]


def test_a_partial_archive_is_named_as_ctxtool_s(tmp_path: Path) -> None:
    """What a killed archiving run leaves carries ctxtool's mark, so the sweep above takes it."""
    from ctxtool.storage.archive import write_archive

    base, archive = tmp_path / "base", tmp_path / "archive"
    base.mkdir()
    (base / "s.jsonl").write_bytes(transcript(2, 100))
    seen: list[str] = []

    def rels() -> Iterator[str]:
        seen.extend(path.name for path in archive.iterdir())  # while the archive is written
        yield "s.jsonl"

    write_archive(str(archive), "stem", str(base), rels())
    assert len(seen) == 1 and seen[0].startswith(".stem.ctxtool-") and seen[0].endswith(".tmp")
