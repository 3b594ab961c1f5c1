"""Store files written by a thread (storage/background.py, ``store.background``).

snip and microcompact do not turn it on (slower at idle, see cli/clearing.py): the tests that
run them check the outcome a thread must give too (and fail if one is turned on and a commit
path forgets the drain); the in-process tests drive the thread itself.

What must hold: no committed output (stdout's staged copy, an -o file) references a file that
does not exist yet; a write error in the thread fails the run as the synchronous path does,
with nothing committed; memory is bounded; counts and bytes are those of synchronous writes.
``CTXTOOL_TEST_HOLD_WRITES=1`` (test-only) makes the thread write nothing until the run drains
it, so a commit path that forgot the drain would commit references to missing files.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ctxtool.errors import ExitCode, StoreError
from ctxtool.storage import background, durable
from ctxtool.storage.store import ToolResultStore
from tests.conftest import ctxtool_executable, run_ctxtool
from tests.robustness.test_faults import NOW, SESSION, leftovers, transcript

HELD = {background.HOLD_ENV: "1"}
SNIP = ["snip", "--now", NOW]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """150 reads of 20 files: snip clears 130 results (over durable.FEW files)."""
    path = tmp_path_factory.mktemp("background") / "in.jsonl"
    path.write_bytes(transcript(150, 3000, files=20))
    return path


def stored(store: Path) -> list[Path]:
    return sorted(p for p in store.rglob("*") if p.is_file() and p.suffix in (".txt", ".json"))


@pytest.fixture(autouse=True)
def clean() -> None:
    durable.discard()
    yield
    durable.discard()


# --- nothing committed references a missing file ----------------------------------------------

@pytest.mark.parametrize("output", ["stdout", "-o", "--in-place"])
def test_killed_right_after_the_commit_with_writes_held(output: str, source: Path,
                                                       tmp_path: Path) -> None:
    """The thread writes only when drained: the process killed right after stdout got the
    transcript (or the -o or --in-place file replaced its target) leaves every file it
    references complete, so the commit waited for the writes."""
    store, out = tmp_path / "store", tmp_path / "out.jsonl"
    args = [*SNIP, "--store", str(store), str(source)]
    crash = "after-stdout" if output == "stdout" else "after-replace"
    if output == "-o":
        args += ["-o", str(out)]
    elif output == "--in-place":
        out.write_bytes(source.read_bytes())
        os.utime(out, (1, 1))  # not a live session
        args[-1:] = ["--in-place", str(out)]
    proc = run_ctxtool(*args, env={**HELD, durable.CRASH_ENV: crash})
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    written = proc.stdout if output == "stdout" else out.read_bytes()
    assert written and written.count(str(store).encode()) == len(stored(store)) >= durable.FEW
    out.write_bytes(written)
    back = run_ctxtool("restore", str(out))
    assert back.returncode == 0, back.stderr.decode()
    assert back.stdout == source.read_bytes()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(background.HOLD_ENV, "1")


def background_store(root: Path) -> ToolResultStore:
    """A store as snip/microcompact make it (not durable: no output file to replace here)."""
    store = ToolResultStore(root, durable=False)
    store.background = True
    return store


def test_held_writes_are_written_by_the_drain(held: None, tmp_path: Path) -> None:
    """What the test above relies on: with the hold, a queued file is not there until the
    block ends (its drain), and save() named it all the same."""
    store = background_store(tmp_path / "store")
    with durable.staged():
        path = store.save("x" * 100, tool_use_id="toolu_1", session_id="s")
        time.sleep(0.05)
        assert not os.path.exists(path)
        assert store.files_written == 1
    assert Path(path).read_text() == "x" * 100


@pytest.mark.parametrize("target", ["--in-place", "database"])
def test_in_place_writers_are_staged_blocks(held: None, target: str, tmp_path: Path) -> None:
    """An --in-place file (cli/live.py) and a session written back into OpenCode's database
    (cli/database.py) replace their target once the command ended: the store may write files
    on the thread meanwhile, all written before the replacement."""
    from ctxtool.cli import database
    from ctxtool.cli.live import LiveFile, LiveOptions
    from tests.opencode_builders import SESSION as OPENCODE_SESSION, assistant, user
    from tests.opencode_db_builder import add_session, make_db

    store = background_store(tmp_path / "store")
    with contextlib.ExitStack() as stack:
        if target == "--in-place":
            session = tmp_path / "session.jsonl"
            session.write_bytes(b"{}\n")
            live = LiveFile(str(session), LiveOptions(force=True))
            stack.callback(live.close)
            writer = live.replacing()
            data = b"{}\n"
        else:
            db = make_db(tmp_path / "opencode.db")
            add_session(db, [user(1), assistant(2, 1)])
            database.set_session(OPENCODE_SESSION, in_place=True)
            stack.callback(database.set_session, None)
            data = database.input_bytes(str(db)) or b""
            writer = database.output_writer(str(db))
        with writer as out:
            path = store.save("x" * 100, tool_use_id="toolu_1", session_id="s")
            time.sleep(0.05)
            assert not os.path.exists(path)  # queued for the thread
            out.write(data)
    assert Path(path).read_text() == "x" * 100


def test_outside_a_staged_block_saves_are_synchronous(held: None, tmp_path: Path) -> None:
    """-o to a FIFO: no block, so each file exists when save() returns (the line naming it may
    be read at once)."""
    path = background_store(tmp_path / "store").save("x" * 100, tool_use_id="toolu_1",
                                                     session_id="s")
    assert Path(path).read_text() == "x" * 100
    assert not background._writers


def test_persist_stays_synchronous(source: Path, tmp_path: Path) -> None:
    """persist keeps a result it cannot save in place with a warning, and goes on: its store
    never writes in the background, not even for -o (a failed write is seen at once)."""
    store = tmp_path / "store"
    folder = store / SESSION / "tool-results"
    folder.mkdir(parents=True)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(folder)],
                                        capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not possible here")
    try:
        out = tmp_path / "out.jsonl"
        proc = run_ctxtool("persist", "--max-chars", "1000", "--store", str(store), str(source),
                           "-o", str(out))
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)
    assert proc.returncode == ExitCode.STORAGE, proc.stderr.decode()
    assert b"left in place" in proc.stderr
    assert out.read_bytes() == source.read_bytes()


# --- the same result as synchronous writes ---------------------------------------------------------

def saves(store: ToolResultStore, prefix: str = "") -> list[str]:
    return [store.save(f"result {n} " * 50 if n % 3 else [{"type": "text", "text": str(n)}],
                       tool_use_id=f"toolu_{n % 40}", session_id=f"s{n % 2}")
            for n in range(120)]


def tree(root: Path) -> dict[str, tuple[int, bytes]]:
    return {str(p.relative_to(root)): (p.stat().st_mode, p.read_bytes())
            for p in root.rglob("*") if p.is_file()}


def test_paths_counts_and_files_match_synchronous_writes(tmp_path: Path) -> None:
    """The same saves (names repeated with other content: the alternate names; a second store
    over the first's files: reuse) give the same paths, counts, bytes, modes and notices."""
    results = {}
    for mode in ("sync", "background"):
        notices: list[str] = []
        root = tmp_path / mode / "store"
        runs = []
        for _ in range(2):
            store = ToolResultStore(root, notice=notices.append, durable=False)
            store.background = mode == "background"
            with durable.staged():
                paths = [p.replace(str(root), "ROOT") for p in saves(store)]
            runs.append((paths, store.files_written, store.files_reused, store.bytes_written))
        results[mode] = (runs, [n.replace(str(root), "ROOT") for n in notices], tree(root))
    assert results["background"] == results["sync"]
    runs, notices, _ = results["sync"]
    assert (runs[0][1], runs[0][2]) == (120, 0)  # 80 names, 40 taken again by other content
    assert (runs[1][1], runs[1][2]) == (0, 120)  # all reused the second time
    assert len(notices) == 40


@pytest.mark.parametrize("there", [b"b" * 10, b"other"])
def test_a_name_taken_meanwhile(held: None, there: bytes, tmp_path: Path) -> None:
    """Another process created a queued name after the folder was listed: the thread compares.
    The same bytes: reused, not an error; other bytes: the run fails, the file stays."""
    store = background_store(tmp_path / "store")
    taken = tmp_path / "store" / "s" / "tool-results" / "toolu_2.txt"
    with contextlib.ExitStack() as stack:
        if there != b"b" * 10:
            stack.enter_context(pytest.raises(StoreError, match="toolu_2.txt was created "
                                              "meanwhile with other content"))
        with durable.staged():
            store.save("a" * 10, tool_use_id="toolu_1", session_id="s")
            taken.write_bytes(there)
            store.save("b" * 10, tool_use_id="toolu_2", session_id="s")
    assert taken.read_bytes() == there
    if there == b"b" * 10:
        assert (store.files_written, store.files_reused) == (1, 1)


# --- errors in the thread --------------------------------------------------------------------------

def run_limited(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """A 200 KB file-size limit (EFBIG past it, SIGXFSZ ignored): the 300 KB results fail."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))

    return subprocess.run([*ctxtool_executable(), *args], capture_output=True, cwd=cwd,
                          preexec_fn=limit, check=False, timeout=120, env={**os.environ, **env})


@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize("output", ["stdout", "-o"])
def test_a_write_error_in_the_thread_fails_the_run(output: str, held: bool,
                                                  tmp_path: Path) -> None:
    """EFBIG for the first big result, met by the thread (held: only at the drain, after
    every line was written to the staged output): the one-line error the synchronous path gives
    for that file, exit 4, nothing on stdout, the -o target and the input untouched, no temp
    files."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(transcript(12, 300_000, files=2))
    data = source.read_bytes()
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"the old output\n")
    store = tmp_path / "store"
    args = ["microcompact", "--force", "--keep", "0", "--target", "0", "--now", NOW,  # all
            "--store", str(store), str(source)] + (["-o", str(out)] if output == "-o" else [])
    proc = run_limited(args, tmp_path, HELD if held else {})
    assert proc.returncode == ExitCode.STORAGE, proc.stderr.decode()
    first = store / SESSION / "tool-results" / "toolu_00000.txt"  # the first one cleared
    assert proc.stderr.decode().splitlines() == [
        f"ctxtool: error: {first}: cannot write: File too large"]
    copy = tmp_path / "copy.jsonl"  # --in-place: the same message
    copy.write_bytes(data)
    os.utime(copy, (1, 1))  # not a live session
    sync = run_limited([*args[:-3 if output == "-o" else -1], "--in-place", str(copy)],
                       tmp_path, {})
    assert (sync.returncode, sync.stderr) == (proc.returncode, proc.stderr)
    assert proc.stdout == b""
    assert out.read_bytes() == b"the old output\n" and source.read_bytes() == data
    assert not leftovers(tmp_path) and stored(store) == []  # unnamed files were never linked


def test_a_store_folder_made_immutable_after_the_listing(tmp_path: Path) -> None:
    """The folder is listed when opened; made immutable (chattr +i: root too is refused) after
    that, the thread's next create fails and the run raises it as a StoreError."""
    chattr = shutil.which("chattr")
    store = background_store(tmp_path / "store")
    folder = None
    try:
        with pytest.raises(StoreError, match="cannot write: Operation not permitted"):
            with durable.staged():
                first = store.save("a" * 10, tool_use_id="toolu_1", session_id="s")
                store._wait_writer()
                folder = os.path.dirname(first)
                if chattr is None or subprocess.run([chattr, "+i", folder],
                                                    capture_output=True).returncode != 0:
                    folder = None
                    pytest.skip("chattr +i is not possible here")
                store.save("b" * 10, tool_use_id="toolu_2", session_id="s")
        assert os.listdir(folder) == ["toolu_1.txt"]
    finally:
        if folder is not None:
            subprocess.run([chattr, "-i", folder], check=True)  # type: ignore[list-item]


# --- memory and interruption -----------------------------------------------------------------------

def test_the_queue_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """submit() blocks while LIMIT bytes wait, and goes on once the thread wrote some."""
    monkeypatch.setattr(background, "LIMIT", 1000)
    release = threading.Event()
    written: list[int] = []

    def write(item: int) -> None:
        release.wait(10)
        written.append(item)

    writer = background.Writer(write)
    done: list[int] = []

    def submit_all() -> None:
        for n in range(5):
            writer.submit(n, 400)
            done.append(n)
    feeder = threading.Thread(target=submit_all)
    feeder.start()
    time.sleep(0.2)
    assert len(done) <= 3  # 2 in the queue and 1 taken by the thread at most: 1,200 bytes
    release.set()
    feeder.join(10)
    writer.close()
    background.drain()
    assert written == [0, 1, 2, 3, 4] and done == written


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_while_writing_in_the_background(sig: int, tmp_path: Path) -> None:
    """Ctrl-C mid-run: no hang, exit 130, no temp files, stdout empty. SIGTERM: killed by it
    (no handler, as before), no temp files either (the unnamed files vanish)."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(transcript(600, 60_000, files=20))
    proc = subprocess.Popen([*ctxtool_executable(), *SNIP, "--store", str(tmp_path / "store"),
                             str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path)
    deadline = time.monotonic() + 60
    while len(stored(tmp_path / "store")) < 20:
        assert proc.poll() is None, "finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert proc.returncode == ExitCode.INTERRUPTED, stderr
        assert stderr.decode().splitlines()[-1] == "ctxtool: error: interrupted"
    else:
        assert proc.returncode == -signal.SIGTERM, stderr
    assert stdout == b"" and not leftovers(tmp_path)

