"""Faults around the commands, through the real entry point: a store that cannot be written (a
full disk, a read-only folder), a reader that goes away (``| head -1``), Ctrl-C while an output
file or an --in-place rewrite is being written, and stdout or stderr closed (``>&-``, ``2>&-``).

How each fault is made, since the tests run as root:

* full disk: RLIMIT_FSIZE in the child (with SIGXFSZ ignored), so every write past 10 KB fails
  with EFBIG - the same path as ENOSPC through ctxtool (an OSError from write);
* read-only store: root ignores permission bits, so the store is a path under a regular file
  (every mkdir fails with ENOTDIR); where ``chattr +i`` works (ext4 and friends, as root) an
  immutable store folder is tried as well, else that variant is skipped. Remounting read-only
  needs privileges containers rarely have, so it is not used;
* SIGINT: the command runs on a ~50 MB transcript; the signal is sent once its temp output file
  exists (the command is then writing), and nothing but the original may be left afterwards.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ctxtool.errors import ExitCode
from ctxtool.storage.marker import MARKER
from tests.conftest import ctxtool_executable, run_ctxtool
from tests.robustness.strategies import cc_entry, compact, tool_result_message, tool_use_message

NOW = "2026-01-02T00:00:00Z"
SESSION = "5f0c4c4e-0000-4000-8000-000000000001"


def transcript(turns: int, result_chars: int, files: int = 20) -> bytes:
    """A prompt, then per turn a Read of one of ``files`` files with a large result and a reply:
    what persist (results over 50,000 chars), snip (files read again) and microcompact act on."""
    lines = [compact(cc_entry("user", "u0", None, {"role": "user", "content": "go"}))]
    parent = "u0"
    body = "    42\u2192some code line, 中文 included\n"
    for turn in range(turns):
        use, result, reply = f"a{turn}", f"r{turn}", f"t{turn}"
        tool_id = f"toolu_{turn:05d}"
        lines.append(compact(cc_entry("assistant", use, parent, tool_use_message(
            f"msg_{turn}", tool_id, "Read", {"file_path": f"/w/app/f{turn % files}.py"}),
            second=3 * turn + 1)))
        text = (f"turn {turn}\n" + body * (result_chars // len(body)))[:result_chars]
        lines.append(compact(cc_entry("user", result, use, tool_result_message(tool_id, text),
                                      second=3 * turn + 2)))
        lines.append(compact(cc_entry("assistant", reply, result, {
            "id": f"msg_{turn}b", "role": "assistant", "content": [{"type": "text",
                                                                     "text": "noted"}]},
            second=3 * turn + 3)))
        parent = reply
    return b"".join(lines)


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults") / "small.jsonl"
    path.write_bytes(transcript(6, 60_000, files=3))
    return path


@pytest.fixture(scope="module")
def medium(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 6 MB: far more output than a pipe holds."""
    path = tmp_path_factory.mktemp("faults") / "medium.jsonl"
    path.write_bytes(transcript(100, 60_000))
    return path


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 50 MB: each command runs long enough to be interrupted while writing."""
    path = tmp_path_factory.mktemp("faults") / "large.jsonl"
    path.write_bytes(transcript(800, 60_000))
    return path


def leftovers(folder: Path) -> list[Path]:
    """Temp files a failed or interrupted write could leave behind."""
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")
            or (".ctxtool-" in p.name and p.name != MARKER)]  # the store's mark is no temp file


# --- a store that cannot be written ---------------------------------------------------------------

# what each command that saves content does when it cannot: persist keeps the results in place
# and says so (exit 4, the input passes through); the others refuse (exit 4, nothing written)
SAVERS = {
    "persist": (["persist"], "left in place"),
    "snip": (["snip", "--keep", "0"], None),
    "microcompact": (["microcompact", "--force", "--keep", "0", "--target", "0"], None),
}


def run_limited(args: list[str], cwd: Path,
                size: int = 10_000) -> subprocess.CompletedProcess[bytes]:
    """The real entry point with a file-size limit (10 KB: a full disk for every file it
    writes)."""
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return subprocess.run([*ctxtool_executable(), *args], capture_output=True, cwd=cwd,
                          preexec_fn=limit, check=False, timeout=120, env={**os.environ})


def assert_failed_save(name: str, proc: subprocess.CompletedProcess[bytes], data: bytes,
                       problem: str) -> None:
    stderr = proc.stderr.decode()
    assert "Traceback" not in stderr
    assert proc.returncode == ExitCode.STORAGE, stderr
    assert problem in stderr, stderr
    if SAVERS[name][1]:  # persist: every line unchanged, and why
        assert proc.stdout == data
        assert SAVERS[name][1] in stderr
    else:
        assert proc.stdout == b""
        assert sum(line.startswith("ctxtool: error: ") for line in stderr.splitlines()) == 1


@pytest.mark.parametrize("name", list(SAVERS))
def test_full_disk_under_the_store(name: str, small: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    proc = run_limited([*SAVERS[name][0], "--store", str(store), str(small)], tmp_path)
    assert_failed_save(name, proc, small.read_bytes(), "File too large")
    assert not leftovers(tmp_path)
    assert all(p.stat().st_size == 0 or p.is_dir() or p.name == MARKER for p in store.rglob("*"))


@pytest.mark.parametrize("output", ["stdout", "-o", "--in-place"])
def test_full_disk_for_one_store_file(output: str, tmp_path: Path) -> None:
    """A 200 KB limit: the output fits, the first result cleared (300 KB) does not. One line
    naming that file, exit 4, nothing on stdout, the -o target, the --in-place file and the
    input untouched, no temp files, no store file (an unnamed one was never linked)."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(transcript(12, 300_000, files=2))
    data = source.read_bytes()
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"the old output\n")
    store = tmp_path / "store"
    args = ["microcompact", "--force", "--keep", "0", "--target", "0", "--now", NOW,  # all
            "--store", str(store)]
    if output == "-o":
        args += [str(source), "-o", str(out)]
    elif output == "--in-place":
        args += ["--in-place", str(out)]
        out.write_bytes(data)
        os.utime(out, (1, 1))  # not a live session
    else:
        args += [str(source)]
    before = out.read_bytes()
    proc = run_limited(args, tmp_path, size=200_000)
    assert proc.returncode == ExitCode.STORAGE, proc.stderr.decode()
    first = store / SESSION / "tool-results" / "toolu_00000.txt"  # the first one cleared
    assert proc.stderr.decode().splitlines() == [
        f"ctxtool: error: {first}: cannot write: File too large"]
    assert proc.stdout == b""
    assert out.read_bytes() == before and source.read_bytes() == data
    assert not leftovers(tmp_path)
    assert not [p for p in store.rglob("*") if p.suffix in (".txt", ".json")]


def test_full_disk_when_summarize_saves_the_original(tmp_path: Path) -> None:
    """summarize keeps a message list's original in the store before replacing it."""
    messages = [{"role": "user", "content": "go " * 5000}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "more"}, {"role": "assistant", "content": "done"}]
    source = tmp_path / "chat.jsonl"
    source.write_bytes(b"".join(compact(m) for m in messages))
    proc = run_limited(["summarize", "--llm", "offline", "--store", str(tmp_path / "s"),
                        str(source)], tmp_path)
    assert proc.returncode == ExitCode.STORAGE and proc.stdout == b""
    assert b"File too large" in proc.stderr and b"Traceback" not in proc.stderr
    assert not leftovers(tmp_path)


@pytest.mark.parametrize("name", ["persist", "restore", "filter-compacted", "summarize"])
def test_full_disk_for_the_output_file(name: str, small: Path, tmp_path: Path) -> None:
    """-o FILE on a full disk: exit 4, no partial file, the input untouched."""
    data = small.read_bytes()
    out = tmp_path / "out.jsonl"
    extra = ["--llm", "offline"] if name == "summarize" else []
    store = ["--store", str(tmp_path / "s")] if name in ("persist", "summarize") else []
    args = [name, *extra, *store, "--truncate"] if name == "persist" else [name, *extra, *store]
    proc = run_limited([*args, str(small), "-o", str(out)], tmp_path)
    assert proc.returncode == ExitCode.STORAGE, proc.stderr
    assert b"File too large" in proc.stderr and b"Traceback" not in proc.stderr
    assert not out.exists() and not leftovers(tmp_path)
    assert small.read_bytes() == data


@contextlib.contextmanager
def immutable(folder: Path) -> Iterator[bool]:
    """``chattr +i`` on ``folder`` (nothing can be created in it, even by root) when the
    filesystem and privileges allow; yields whether it worked, and always undoes it."""
    chattr = shutil.which("chattr")
    folder.mkdir(parents=True)
    done = chattr is not None and subprocess.run([chattr, "+i", str(folder)],
                                                 capture_output=True).returncode == 0
    try:
        yield done
    finally:
        if done:
            subprocess.run([chattr, "-i", str(folder)], check=True)  # type: ignore[list-item]


@pytest.mark.parametrize("name", list(SAVERS))
def test_store_under_a_regular_file(name: str, small: Path, tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("a file, not a folder")
    data = small.read_bytes()
    store = str(tmp_path / "file.txt" / "store")
    proc = run_ctxtool(*SAVERS[name][0], "--store", store, str(small), cwd=tmp_path)
    assert_failed_save(name, proc, data, "Not a directory")
    # -o and --in-place leave nothing half-done either
    out = tmp_path / "out.jsonl"
    proc = run_ctxtool(*SAVERS[name][0], "--strict" if name == "persist" else "--quiet",
                       "--store", store, str(small), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == ExitCode.STORAGE and not out.exists()
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(data)
    proc = run_ctxtool(*SAVERS[name][0], "--store", store, "--in-place", "--force", str(copy),
                       cwd=tmp_path)  # --force: a file written just now may be a live session
    assert proc.returncode == ExitCode.STORAGE and copy.read_bytes() == data
    assert not leftovers(tmp_path)


def test_persist_to_an_output_file_keeps_what_it_cannot_save(small: Path, tmp_path: Path) -> None:
    """persist goes on past a failed save, with -o too: each result stays in place with a
    warning, the -o file holds the input unchanged, exit 4."""
    (tmp_path / "file.txt").write_text("a file, not a folder")
    out = tmp_path / "out.jsonl"
    proc = run_ctxtool("persist", "--store", str(tmp_path / "file.txt" / "store"), str(small),
                       "-o", str(out), cwd=tmp_path)
    assert proc.returncode == ExitCode.STORAGE, proc.stderr.decode()
    assert b"left in place" in proc.stderr and b"Traceback" not in proc.stderr
    assert out.read_bytes() == small.read_bytes() and not leftovers(tmp_path)


@pytest.mark.parametrize("name", list(SAVERS))
def test_immutable_store_folder(name: str, small: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    with immutable(store) as done:
        if not done:
            pytest.skip("chattr +i is not available here (needs root and ext4-like fs)")
        proc = run_ctxtool(*SAVERS[name][0], "--store", str(store), str(small), cwd=tmp_path)
        assert_failed_save(name, proc, small.read_bytes(), "Operation not permitted")
        assert list(store.iterdir()) == []


# --- | head -1 ------------------------------------------------------------------------------------

def head_one(args: list[str], cwd: Path) -> tuple[int, bytes]:
    """Run ``ctxtool ARGS | head -1``; return ctxtool's own exit status and stderr."""
    exe = " ".join(ctxtool_executable())
    quoted = " ".join(f"'{a}'" for a in args)
    script = f'{exe} {quoted} 2> err.txt | head -1 > /dev/null; echo "${{PIPESTATUS[0]}}" > rc.txt'
    subprocess.run(["bash", "-c", script], cwd=cwd, check=True, timeout=300)
    return int((cwd / "rc.txt").read_text()), (cwd / "err.txt").read_bytes()


def many_problems(tmp_path: Path) -> Path:
    path = tmp_path / "problems.jsonl"
    path.write_bytes(b"not json at all\n" * 20_000)
    return path


def many_sessions(tmp_path: Path) -> Path:
    root = tmp_path / "claude"
    folder = root / "projects" / "-w-app"
    folder.mkdir(parents=True)
    for number in range(1500):
        path = folder / f"5f0c4c4e-0000-4000-8000-{number:012d}.jsonl"
        path.write_bytes(b'{"type":"user","timestamp":"2025-01-01T00:00:00Z"}\n')
        os.utime(path, (1_700_000_000, 1_700_000_000))
    return root


# --quiet: whatever is left on stderr can only come from the broken pipe
PIPED = {
    "estimate --per-entry": ["estimate", "--quiet", "--per-entry", "{medium}"],
    "validate --json": ["validate", "--quiet", "--json", "{problems}"],
    "persist": ["persist", "--quiet", "--store", "{store}", "{medium}"],
    "restore": ["restore", "--quiet", "{medium}"],
    "snip": ["snip", "--quiet", "--store", "{store}", "{medium}"],
    "microcompact": ["microcompact", "--quiet", "--force", "--store", "{store}", "{medium}"],
    "summarize": ["summarize", "--quiet", "--llm", "offline", "--store", "{store}", "--now", NOW,
                  "{medium}"],
    "filter-compacted": ["filter-compacted", "--quiet", "{medium}"],
    "convert": ["convert", "--quiet", "--to", "anthropic", "{medium}"],
    "cleanup": ["cleanup", "--quiet", "--now", NOW, "--root", "{root}"],
}


@pytest.mark.parametrize("name", list(PIPED))
def test_pipe_into_head_ends_quietly(name: str, medium: Path, tmp_path: Path) -> None:
    paths = {"medium": medium, "store": tmp_path / "store",
             "problems": many_problems(tmp_path) if name.startswith("validate") else "",
             "root": many_sessions(tmp_path) if name == "cleanup" else ""}
    code, stderr = head_one([a.format(**paths) for a in PIPED[name]], tmp_path)
    assert stderr == b""
    # killed by SIGPIPE (128 + 13), or done before head left; validate exits 3 for its problems
    assert code in (0, 128 + signal.SIGPIPE, 3 if name.startswith("validate") else 0)


# --- Ctrl-C while writing -------------------------------------------------------------------------

INTERRUPTED = {
    "persist": ["persist", "--store", "{store}"],
    "restore": ["restore"],
    "snip": ["snip", "--store", "{store}"],
    "microcompact": ["microcompact", "--force", "--keep", "1", "--target", "0", "--store",
                     "{store}"],
    "summarize": ["summarize", "--llm", "offline", "--store", "{store}", "--now", NOW],
    "filter-compacted": ["filter-compacted"],
    "convert": ["convert", "--to", "openai"],
    "estimate": ["estimate", "--per-entry"],
}
IN_PLACE = ("persist", "restore", "snip", "microcompact", "summarize")


def start_when_writing(args: list[str], temp_glob: str, folder: Path) -> subprocess.Popen[bytes]:
    """Start the command and return once its temp output file exists (it is mid-run)."""
    proc = subprocess.Popen([*ctxtool_executable(), *args], cwd=folder, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not list(folder.glob(temp_glob)):
        assert proc.poll() is None, "finished before it could be caught: use a larger input"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    return proc


ATTEMPTS = 5  # runs an interrupt may come too late for (the output written, the command done)


def interrupt_when_writing(args: list[str], temp_glob: str, folder: Path,
                           reset: Callable[[], object] = lambda: None
                           ) -> subprocess.CompletedProcess[bytes]:
    """Start the command, send SIGINT once its temp output file exists, and wait for it. A
    small output is written in milliseconds: when the signal came after the command had done
    its work (exit 0), ``reset`` puts its input back and it runs again; a command that never
    heeds the signal still fails the test, on its last run."""
    for _ in range(ATTEMPTS):
        reset()
        proc = start_when_writing(args, temp_glob, folder)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        if proc.returncode != 0:
            break
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def assert_interrupted(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert proc.returncode == ExitCode.INTERRUPTED, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert proc.stderr.decode().splitlines()[-1] == "ctxtool: error: interrupted"
    assert proc.stdout == b""


@pytest.mark.parametrize("name", list(INTERRUPTED))
def test_ctrl_c_during_output_file(name: str, large: Path, tmp_path: Path) -> None:
    data_size = large.stat().st_size
    out = tmp_path / "out.jsonl"
    args = [a.format(store=tmp_path / "store") for a in INTERRUPTED[name]]
    proc = interrupt_when_writing([*args, str(large), "-o", str(out)], ".out.jsonl.*.tmp",
                                  tmp_path, reset=lambda: out.unlink(missing_ok=True))
    assert_interrupted(proc)
    assert not out.exists() and not leftovers(tmp_path)
    assert large.stat().st_size == data_size


@pytest.mark.parametrize("name", IN_PLACE)
def test_ctrl_c_during_in_place(name: str, large: Path, tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    before = large.read_bytes()
    args = [a.format(store=tmp_path / "store") for a in INTERRUPTED[name]]
    proc = interrupt_when_writing([*args, "--in-place", "--force", str(target)],
                                  ".session.jsonl.*.tmp", tmp_path,
                                  reset=lambda: shutil.copyfile(large, target))
    assert_interrupted(proc)
    assert target.read_bytes() == before
    assert not leftovers(tmp_path)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_while_the_store_writes(sig: int, tmp_path: Path) -> None:
    """Stopped while snip saves results, its transcript staged for stdout: Ctrl-C gives exit
    130, SIGTERM 143, and nothing on stdout. Either way no temp file is left (a store file
    being written has no name yet)."""
    source, store = tmp_path / "in.jsonl", tmp_path / "store"
    source.write_bytes(transcript(600, 60_000, files=20))
    proc = subprocess.Popen([*ctxtool_executable(), "snip", "--now", NOW, "--store", str(store),
                             str(source)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=tmp_path)
    deadline = time.monotonic() + 60
    while len([p for p in store.rglob("*") if p.suffix == ".txt"]) < 20:
        assert proc.poll() is None, "finished before it could be interrupted"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    if sig == signal.SIGINT:
        assert_interrupted(subprocess.CompletedProcess(proc.args, proc.returncode, stdout,
                                                       stderr))
    else:
        assert proc.returncode == ExitCode.TERMINATED, stderr
        assert stderr.decode().splitlines()[-1] == "ctxtool: error: terminated (SIGTERM)"
        assert stdout == b""
    assert not leftovers(tmp_path)


# --- the file changes while --in-place rewrites it (a live session, another program) -------------

@pytest.mark.parametrize("change", ["replaced", "truncated", "appended"])
@pytest.mark.parametrize("name", IN_PLACE)
def test_in_place_when_the_file_changes_meanwhile(name: str, change: str, large: Path,
                                                  tmp_path: Path) -> None:
    """Appended lines are kept after what the command wrote; any other change: exit 4, one
    error line, nothing replaced (the other writer's file stays), no temp file left."""
    target = tmp_path / "session.jsonl"
    shutil.copyfile(large, target)
    args = [a.format(store=tmp_path / "store") for a in INTERRUPTED[name]]
    proc = start_when_writing([*args, "--in-place", "--force", str(target)],
                              ".session.jsonl.*.tmp", tmp_path)
    line = compact(cc_entry("user", "typed-meanwhile", None, {"role": "user", "content": "hi"}))
    if change == "replaced":
        (tmp_path / "other").write_bytes(line)
        os.replace(tmp_path / "other", target)
    elif change == "truncated":
        with open(target, "r+b") as handle:
            handle.truncate(1000)
    else:
        with open(target, "ab") as handle:
            handle.write(line)
    stdout, stderr = proc.communicate(timeout=300)
    assert b"Traceback" not in stderr and stdout == b""
    assert not leftovers(tmp_path)
    if change == "appended":
        assert proc.returncode == 0, stderr
        assert target.read_bytes().endswith(line) and target.read_bytes() != large.read_bytes()
        return
    assert proc.returncode == ExitCode.STORAGE, stderr
    errors = [x for x in stderr.decode().splitlines() if x.startswith("ctxtool: error: ")]
    assert len(errors) == 1 and "changed while it was rewritten" in errors[0], stderr
    assert target.read_bytes() == (line if change == "replaced" else large.read_bytes()[:1000])


# --- stdout or stderr closed ----------------------------------------------------------------------

CLOSED = {
    "estimate": ["estimate", "{small}"],
    "validate": ["validate", "{small}"],
    "persist": ["persist", "--store", "{store}", "{small}"],
    "restore": ["restore", "{small}"],
    "snip": ["snip", "--store", "{store}", "{small}"],
    "microcompact": ["microcompact", "--store", "{store}", "{small}"],
    "summarize": ["summarize", "--llm", "offline", "--store", "{store}", "{small}"],
    "filter-compacted": ["filter-compacted", "{small}"],
    "convert": ["convert", "--to", "anthropic", "{small}"],
    "cleanup": ["cleanup", "--root", "{root}"],
}


def run_closed(args: list[str], fd: int, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The real entry point started with ``fd`` closed, as the shell's ``>&-`` / ``2>&-``."""
    keep = subprocess.PIPE
    return subprocess.run([*ctxtool_executable(), *args], cwd=cwd, timeout=120, check=False,
                          stdout=keep if fd != 1 else None, stderr=keep if fd != 2 else None,
                          preexec_fn=lambda: os.close(fd))


@pytest.mark.parametrize("name", list(CLOSED))
def test_closed_stdout_is_a_clear_error(name: str, small: Path, tmp_path: Path) -> None:
    (tmp_path / "claude" / "projects").mkdir(parents=True)
    args = [a.format(small=small, store=tmp_path / "store", root=tmp_path / "claude")
            for a in CLOSED[name]]
    proc = run_closed(args, 1, tmp_path)
    assert proc.returncode == ExitCode.STORAGE
    assert proc.stderr.decode().splitlines()[-1].startswith(
        "ctxtool: error: cannot write the output: stdout is closed")
    assert b"Traceback" not in proc.stderr


def test_closed_stdout_with_an_output_file_works(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    proc = run_closed(["restore", str(small), "-o", str(out)], 1, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == small.read_bytes()


def test_closed_stderr_keeps_the_output_and_the_exit_code(small: Path, tmp_path: Path) -> None:
    """Warnings (a truncated last line) and errors with nowhere to go change nothing else."""
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_bytes(small.read_bytes()[:-20])
    proc = run_closed(["persist", "--stats", "--store", str(tmp_path / "s"), str(truncated)], 2,
                      tmp_path)
    last_line = truncated.read_bytes().rsplit(b"\n", 1)[1]
    # the truncated line passes through; persist's microcompact_boundary may follow it
    assert proc.returncode == 0 and proc.stdout.split(b"\n").count(last_line) == 1
    assert b"<persisted-output>" in proc.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"type":"user"}\n{oops\n')
    proc = run_closed(["restore", str(bad)], 2, tmp_path)
    assert proc.returncode == ExitCode.INVALID_INPUT


# --- what a killed run left behind -----------------------------------------------------------------

def test_stale_temp_files_are_removed_on_the_next_run(small: Path, tmp_path: Path) -> None:
    """Temp files of ctxtool's own naming older than an hour (a SIGKILL leaves them) go on the
    next run that writes in that folder; fresh ones (a run in progress) and look-alikes stay."""
    target = tmp_path / "in.jsonl"
    target.write_bytes(small.read_bytes())
    store = tmp_path / "store"
    results = store / SESSION / "tool-results"
    results.mkdir(parents=True)
    (store / MARKER).write_text("")
    hour_ago = time.time() - 3700
    stale = [tmp_path / ".in.jsonl.k2v9_q0a.tmp", results / ".ctxtool-8xz1m0qq.tmp"]
    kept = [tmp_path / ".in.jsonl.fresh123.tmp", tmp_path / ".in.jsonl.notours.tmp",
            tmp_path / ".other.jsonl.k2v9_q0a.tmp", results / ".ctxtool-abc.tmp"]
    for path in stale + kept:
        path.write_bytes(b"partial")
        if path.name != ".in.jsonl.fresh123.tmp":
            os.utime(path, (hour_ago, hour_ago))
    proc = run_ctxtool("persist", "--max-chars", "100", "--store", str(store), "--in-place",
                       "--force", str(target), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert b"<persisted-output>" in target.read_bytes()
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
