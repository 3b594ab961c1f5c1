"""Store files are on disk before the transcript that points at them replaces anything, paid
once per run (storage/durable.py) instead of one fsync per file.

A process killed right after the output replaced its target (``CTXTOOL_TEST_CRASH=
after-replace``, a test-only hook: SIGKILL, no cleanup) must leave every file the new transcript
references complete: ``restore`` of the output gives the input back byte for byte. A power cut
cannot be simulated here - a killed process leaves the page cache alone - so the order of the
system calls is checked as well, under strace: the store files are synced (one ``syncfs`` for a
large batch, an ``fsync`` per file and folder for a few) before the ``rename`` onto the output.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from ctxtool.storage import durable
from ctxtool.storage.store import ToolResultStore
from tests.conftest import ctxtool_executable, run_ctxtool
from tests.robustness.test_faults import NOW, transcript

CRASH = {**os.environ, durable.CRASH_ENV: "after-replace"}
COMMANDS = {
    "snip": ["snip"],
    "microcompact": ["microcompact", "--force", "--now", NOW],
    "persist": ["persist"],
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """snip and microcompact clear the earlier reads of 20 files read again and again (over
    FEW files: the syncfs path); persist saves 70 results over 50,000 characters."""
    return {"snip": transcript(150, 3000, files=20), "microcompact": transcript(150, 3000, files=20),
            "persist": transcript(70, 60_000, files=70)}


def stored_files(store: Path) -> list[Path]:
    return [p for p in store.rglob("*") if p.is_file() and p.suffix in (".txt", ".json")]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_killed_right_after_the_output_replaced_its_target(name: str, inputs: dict[str, bytes],
                                                          tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(inputs[name])
    out, store = tmp_path / "out.jsonl", tmp_path / "store"
    out.write_bytes(b"the old output\n")
    proc = run_ctxtool(*COMMANDS[name], "--store", str(store), "-o", str(out), str(source),
                       env=CRASH)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert out.read_bytes() != b"the old output\n"  # replaced before the kill
    assert len(stored_files(store)) >= durable.FEW
    back = run_ctxtool("restore", str(out))
    assert back.returncode == 0, back.stderr.decode()
    assert back.stdout == inputs[name]  # every referenced file complete


def test_killed_after_an_in_place_rewrite(inputs: dict[str, bytes], tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    session.write_bytes(inputs["snip"])
    os.utime(session, (1, 1))  # not a live session
    proc = run_ctxtool("snip", "--in-place", "--store", str(tmp_path / "store"), str(session),
                       env=CRASH)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert session.read_bytes() != inputs["snip"]
    assert run_ctxtool("restore", str(session)).stdout == inputs["snip"]


def strace_calls(args: list[str], cwd: Path) -> list[str]:
    """The fsync, syncfs and rename calls of a ctxtool run, in order (strace -f)."""
    log = cwd / "trace.txt"
    proc = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e",
                           "trace=fsync,fdatasync,syncfs,rename,renameat,renameat2,link,linkat",
                           *ctxtool_executable(), *args], cwd=cwd, capture_output=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [line.split(None, 1)[1] for line in log.read_text().splitlines()
            if " = -1 " not in line and "resumed" not in line]


@pytest.fixture(scope="module")
def strace() -> None:
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed: the order of the system calls is not checked "
                    "(the crash tests above still run)")
    probe = subprocess.run(["strace", "-qq", "-o", os.devnull, "true"], capture_output=True,
                           check=False)
    if probe.returncode != 0:
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode().strip()}")


@pytest.mark.parametrize("turns", [150, 6])
def test_store_files_are_synced_before_the_output_is_renamed(strace: None, turns: int,
                                                            tmp_path: Path) -> None:
    """150 turns: over FEW files, one syncfs for them all; 6 turns: a few files, an fsync each
    (and one per folder). Either way before the rename, and no fsync per file in between."""
    (tmp_path / "in.jsonl").write_bytes(transcript(turns, 3000, files=2))
    calls = strace_calls(["snip", "--store", "store", "-o", "out.jsonl", "in.jsonl"], tmp_path)
    renamed = [i for i, c in enumerate(calls) if c.startswith("rename") and "out.jsonl" in c]
    assert len(renamed) == 1
    links = [i for i, c in enumerate(calls) if c.startswith("link")]  # the store's names
    saved = len(stored_files(tmp_path / "store"))
    assert len(links) == saved > 0
    syncs = [i for i, c in enumerate(calls) if re.match(r"(fsync|fdatasync|syncfs)\(", c)]
    after_last_link = [i for i in syncs if links[-1] < i < renamed[0]]
    between_links = [i for i in syncs if links[0] < i < links[-1]]
    assert not between_links  # nothing fsynced file by file while the run saves
    if saved >= durable.FEW:
        assert [calls[i].split("(")[0] for i in after_last_link].count("syncfs") == 1
    else:
        # each file, its folders, and the output's own temp file
        assert len(after_last_link) >= saved + 2
        assert not any(calls[i].startswith("syncfs") for i in after_last_link)


def test_a_store_written_for_stdout_defers_nothing(tmp_path: Path) -> None:
    """On stdout the input still holds everything: nothing is made to wait for a flush."""
    durable.discard()  # what unit tests of the store left (their stores are durable)
    store = ToolResultStore(tmp_path / "store", durable=False)
    store.save("x" * 100, tool_use_id="toolu_1", session_id="s")
    assert durable.pending() == 0
    store = ToolResultStore(tmp_path / "store", durable=True)
    store.save("y" * 100, tool_use_id="toolu_2", session_id="s")
    assert durable.pending() == 1
    durable.flush()
    assert durable.pending() == 0
    assert (tmp_path / "store" / "s" / "tool-results" / "toolu_2.txt").read_text() == "y" * 100


def test_a_flush_that_fails_raises(tmp_path: Path) -> None:
    """A file that vanished before the flush (so could not be synced): OSError, and the caller
    replaces nothing (atomic_writer calls flush before its rename)."""
    durable.defer(str(tmp_path), "gone.txt")
    from ctxtool.storage.atomic import write_bytes_atomic
    from ctxtool.errors import StoreError

    with pytest.raises(StoreError):
        write_bytes_atomic(tmp_path / "out.jsonl", b"{}\n")
    assert not (tmp_path / "out.jsonl").exists()
    durable.discard()
