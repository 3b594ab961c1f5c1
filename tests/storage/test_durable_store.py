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


def test_killed_right_after_stdout_got_the_transcript(inputs: dict[str, bytes],
                                                      tmp_path: Path) -> None:
    """Staged stdout (io/spool.py) is copied out once the run succeeded; killed right after
    (``after-stdout``), every file the transcript on stdout references is complete."""
    source, store = tmp_path / "in.jsonl", tmp_path / "store"
    source.write_bytes(inputs["snip"])
    proc = run_ctxtool("snip", "--store", str(store), str(source),
                       env={durable.CRASH_ENV: "after-stdout"})
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert proc.stdout.count(str(store).encode()) == len(stored_files(store)) >= durable.FEW
    out = tmp_path / "out.jsonl"
    out.write_bytes(proc.stdout)
    back = run_ctxtool("restore", str(out))
    assert back.returncode == 0, back.stderr.decode()
    assert back.stdout == inputs["snip"]


def strace_calls(args: list[str], cwd: Path) -> list[tuple[int, str]]:
    """The fsync, syncfs and rename calls of a ctxtool run, in order, each with the id of the
    thread that made it (strace -f)."""
    log = cwd / "trace.txt"
    proc = subprocess.run(["strace", "-f", "-qq", "-o", str(log), "-e",
                           "trace=fsync,fdatasync,syncfs,rename,renameat,renameat2,link,linkat",
                           *ctxtool_executable(), *args], cwd=cwd, capture_output=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    calls = []
    for line in log.read_text().splitlines():
        if " = -1 " in line or "resumed" in line:
            continue
        tid, call = line.split(None, 1)
        calls.append((int(tid), call.replace(" <unfinished ...>", ")")))
    return calls


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
    (and one per folder). Either way before the rename, by the thread that renames, and no
    fsync per file in between: what is synced meanwhile is the background thread's write-back
    (syncfs, or fdatasync of the output), a few calls whatever the number of files."""
    (tmp_path / "in.jsonl").write_bytes(transcript(turns, 3000, files=2))
    traced = strace_calls(["snip", "--store", "store", "-o", "out.jsonl", "in.jsonl"], tmp_path)
    calls = [call for _, call in traced]
    renamed = [i for i, c in enumerate(calls) if c.startswith("rename") and "out.jsonl" in c]
    assert len(renamed) == 1
    main = traced[renamed[0]][0]
    links = [i for i, c in enumerate(calls) if c.startswith("link")]  # the store's names
    saved = len(stored_files(tmp_path / "store"))
    assert len(links) == saved > 0
    syncs = [i for i, c in enumerate(calls) if re.match(r"(fsync|fdatasync|syncfs)\(", c)]
    after_last_link = [i for i in syncs if links[-1] < i < renamed[0] and traced[i][0] == main]
    between_links = [i for i in syncs if links[0] < i < links[-1]]
    assert all(traced[i][0] != main for i in between_links)  # none by the run itself
    assert all(calls[i].startswith(("syncfs", "fdatasync")) for i in between_links)
    if saved >= durable.FEW:
        assert [calls[i].split("(")[0] for i in after_last_link].count("syncfs") == 1
        assert len(between_links) < saved  # not per file (one a TICK at most)
    else:
        # each file, its folders, and the output's own temp file
        assert len(after_last_link) >= saved + 2
        assert not any(calls[i].startswith("syncfs") for i in syncs)


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


# --- the background write-back ----------------------------------------------------------------------

def wait_for(condition: object, seconds: float = 5.0) -> bool:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.005)
    return False


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The write-back calls made (name, thread id), with a short TICK; the real calls run."""
    import threading

    calls: list[tuple[str, int]] = []
    monkeypatch.setattr(durable, "TICK", 0.01)
    real_fdatasync = os.fdatasync

    def fdatasync(fd: int) -> None:
        calls.append(("fdatasync", threading.get_ident()))
        real_fdatasync(fd)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    real_syncfs = durable._syncfs()
    if real_syncfs is not None:
        def syncfs(fd: int) -> int:
            calls.append(("syncfs", threading.get_ident()))
            return real_syncfs(fd)
        monkeypatch.setattr(durable, "_syncfs", lambda: syncfs)
    durable.discard()
    yield calls
    durable.discard()


@pytest.mark.parametrize("files", [durable.FEW, 3])
def test_the_write_back_starts_while_the_output_is_written(recorded: list[tuple[str, int]],
                                                          files: int, tmp_path: Path) -> None:
    """While an output is watched, a thread starts the write-back: syncfs once the store wrote
    FEW files or more (where there is syncfs), fdatasync of the output otherwise; flush stops
    it and still does the whole sync itself."""
    import threading

    store = ToolResultStore(tmp_path / "store", durable=True)
    for n in range(files):
        store.save(f"result {n} " * 100, tool_use_id=f"toolu_{n}", session_id="s")
    with open(tmp_path / "out.jsonl", "wb") as out:
        out.write(b"{}\n" * 1000)
        out.flush()
        durable.watch(out.fileno())
        kind = "syncfs" if files >= durable.FEW and durable._syncfs() is not None else "fdatasync"
        assert wait_for(lambda: any(name == kind for name, _ in recorded))
        durable.unwatch(out.fileno())
    assert all(tid != threading.get_ident() for _, tid in recorded)
    assert {name for name, _ in recorded} == {kind}
    before = len(recorded)
    durable.flush()
    assert durable.pending() == 0
    if kind == "syncfs":
        assert recorded[before:] == [("syncfs", threading.get_ident())]


def test_a_write_back_error_stops_the_replacement(recorded: list[tuple[str, int]],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """An error the background write-back met (reported to it, so not again to the final
    fsync) is raised by the flush: the output replaces nothing and its temp file goes."""
    import errno

    from ctxtool.storage.atomic import atomic_writer

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(os, "fdatasync", failing)
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"the old output\n")
    with pytest.raises(OSError, match="Input/output error"):
        with atomic_writer(target) as handle:
            handle.write(b"{}\n")
            assert wait_for(lambda: bool(durable._errors))
    assert target.read_bytes() == b"the old output\n"
    assert os.listdir(tmp_path) == ["out.jsonl"]
    assert not durable._errors  # the next command starts clean


def test_an_in_place_rewrite_starts_the_write_back(recorded: list[tuple[str, int]],
                                                   tmp_path: Path) -> None:
    """--in-place (io/live.py) watches its new file as -o does: a thread starts the write-back
    while it is written; the rewrite itself goes on as before."""
    import threading

    from ctxtool.io.live import LiveFile, LiveOptions

    session = tmp_path / "session.jsonl"
    session.write_bytes(b"{}\n")
    live = LiveFile(str(session), LiveOptions(force=True))
    try:
        with live.replacing() as handle:
            handle.write(b"[]\n" * 1000)
            handle.flush()
            assert wait_for(lambda: bool(recorded))
    finally:
        live.close()
    assert session.read_bytes() == b"[]\n" * 1000
    assert recorded and all(tid != threading.get_ident() for _, tid in recorded)
    assert os.listdir(tmp_path) == ["session.jsonl"]


def test_a_write_back_error_stops_the_in_place_rewrite(recorded: list[tuple[str, int]],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    """An error the write-back thread met while the --in-place file was written is raised
    before the swap: the session stays as it was and the temp file goes."""
    import errno

    from ctxtool.io.live import LiveFile, LiveOptions
    from ctxtool.errors import StoreError

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(os, "fdatasync", failing)
    session = tmp_path / "session.jsonl"
    session.write_bytes(b"{}\n")
    live = LiveFile(str(session), LiveOptions(force=True))
    try:
        with pytest.raises(StoreError, match="Input/output error"):
            with live.replacing() as handle:
                handle.write(b"[]\n")
                assert wait_for(lambda: bool(durable._errors))
    finally:
        live.close()
    assert session.read_bytes() == b"{}\n"
    assert os.listdir(tmp_path) == ["session.jsonl"]
    assert not durable._errors


def test_a_database_write_back_starts_the_write_back(recorded: list[tuple[str, int]],
                                                     tmp_path: Path) -> None:
    """--in-place into OpenCode's database (io/database.py): the rows go in at the end, and
    while the command runs the thread starts the write-back (of the store files once there
    are FEW or more; here of the database file, which it leaves as it was)."""
    import threading

    from ctxtool.io import database
    from tests.opencode_builders import SESSION, assistant, user
    from tests.opencode_db_builder import add_session, make_db, rows

    db = make_db(tmp_path / "opencode.db")
    add_session(db, [user(1), assistant(2, 1)])
    before = rows(db)
    database.set_session(SESSION, in_place=True)
    try:
        data = database.input_bytes(str(db))
        assert data
        writer = database.output_writer(str(db))
        assert writer is not None
        with writer as out:
            out.write(data)
            assert wait_for(lambda: bool(recorded))
    finally:
        database.set_session(None)
    assert recorded and all(tid != threading.get_ident() for _, tid in recorded)
    assert rows(db) == before  # nothing changed: nothing written
