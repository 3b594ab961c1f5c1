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
