"""``-o`` naming something that is not a regular file — ``/dev/null``, a FIFO — is written into,
never replaced. The atomic write of a regular file renames a temp file over its target; done to
``/dev/null`` by root, that left a regular file in its place for every program on the machine
(it happened on a shared test machine)."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.robustness.test_input_kinds import transcript

COMMANDS = [("estimate", "--json"), ("snip",), ("microcompact", "--force"), ("summarize",),
            ("filter-compacted",), ("convert", "--to", "anthropic")]


def drain(fifo: Path, into: list[bytes]) -> threading.Thread:
    """A reader for ``fifo`` on a thread: ctxtool's open blocks until someone reads."""
    def read() -> None:
        with open(fifo, "rb") as handle:
            into.append(handle.read())
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_fifo_output_gets_the_bytes_and_stays_a_fifo(tmp_path: Path, command: tuple[str, ...]):
    session = tmp_path / "s.jsonl"
    session.write_bytes(transcript())
    extra = ("--now", "2026-01-03T00:00:00Z") if command[0] in ("snip", "microcompact", "summarize") else ()
    to_stdout = run_ctxtool(*command, str(session), *extra)
    assert to_stdout.returncode == 0 and to_stdout.stdout, to_stdout.stderr.decode()
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = drain(fifo, got)
    proc = run_ctxtool(*command, str(session), *extra, "-o", str(fifo))
    reader.join(timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got == [to_stdout.stdout]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.fifo.")]


def test_dev_null_stays_a_device(tmp_path: Path):
    session = tmp_path / "s.jsonl"
    session.write_bytes(transcript())
    before = os.stat("/dev/null")
    proc = run_ctxtool("estimate", str(session), "-o", "/dev/null")
    assert proc.returncode == 0, proc.stderr.decode()
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


# Every file the user names for an output (issue 27 item 1): -o, --report, --timeline and
# cleanup's --report. {out} is the named output; {session} the input, {root} a config folder.
NAMED = {
    "-o": ("persist", "--quiet", "{session}", "-o", "{out}"),
    "persist --report": ("persist", "--quiet", "{session}", "-o", "{sink}", "--report", "{out}"),
    "estimate --timeline": ("estimate", "{session}", "-o", "{sink}", "--timeline", "{out}"),
    "cleanup --report": ("cleanup", "--root", "{root}", "--quiet", "--report", "{out}"),
}


def _named_run(tmp_path: Path, how: str, out: Path):
    session = tmp_path / "s.jsonl"
    session.write_bytes(transcript())
    (tmp_path / "root" / "projects").mkdir(parents=True, exist_ok=True)
    fill = {"session": str(session), "out": str(out), "sink": str(tmp_path / "sink"),
            "root": str(tmp_path / "root")}
    return run_ctxtool(*(arg.format(**fill) for arg in NAMED[how]),
                       env={"CTXTOOL_STORE": str(tmp_path / "store")})


@pytest.mark.parametrize("how", NAMED)
def test_a_named_device_is_written_into_never_replaced(tmp_path: Path, how: str):
    null = tmp_path / "null.html"  # the timeline wants .html or .svg
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    proc = _named_run(tmp_path, how, null)
    assert proc.returncode == 0, proc.stderr.decode()
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    full = tmp_path / "full.svg"  # /dev/full: the write fails, and says so
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    proc = _named_run(tmp_path, how, full)
    assert proc.returncode == 4, proc.stderr.decode()
    assert b"No space left on device" in proc.stderr and proc.stderr.count(b"\n") == 1
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith((".null", ".full"))]


@pytest.mark.parametrize("how", NAMED)
def test_a_named_symlink_is_written_through_and_stays(tmp_path: Path, how: str):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.html"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    proc = _named_run(tmp_path, how, link)
    assert proc.returncode == 0, proc.stderr.decode()
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() not in (b"old\n", b"")
    dangling = tmp_path / "new.html"  # a link to a file not there yet: created there, as `>` does
    dangling.symlink_to(tmp_path / "real" / "new.html")
    proc = _named_run(tmp_path, how, dangling)
    assert proc.returncode == 0, proc.stderr.decode()
    assert dangling.is_symlink() and (tmp_path / "real" / "new.html").stat().st_size > 0
