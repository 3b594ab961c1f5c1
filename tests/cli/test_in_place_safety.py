"""--in-place leaves what it does not change alone, keeps the file's owner, and never loses a
backup (issue 27 items 2-4): subprocess runs of the real entry point, as root on a file owned
by ``nobody``."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.robustness.test_input_kinds import transcript

OLD = 1_600_000_000  # an mtime far outside the live window
NOW = ("--now", "2026-01-03T00:00:00Z")
# each command with options that leave the small session below exactly as it is
UNCHANGING = {
    "persist": ("persist",),
    "snip": ("snip", *NOW, "--force"),
    "microcompact": ("microcompact", *NOW),
    "summarize --auto": ("summarize", "--auto", *NOW),
    "restore": ("restore",),
}


def small_session() -> bytes:
    """Two short lines with nothing any command would change."""
    return (b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":'
            b'"2026-01-01T00:00:00Z","message":{"role":"user","content":"hello"}}\n'
            b'{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","timestamp":'
            b'"2026-01-01T00:00:01Z","message":{"role":"assistant","content":[{"type":"text",'
            b'"text":"hi"}]}}\n')


def session_file(tmp_path: Path, data: bytes, name: str = "s.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    os.utime(path, (OLD, OLD))
    return path


def in_place(path: Path, *args: str, tmp_path: Path):
    return run_ctxtool(*args, "--in-place", str(path),
                       env={"CTXTOOL_STORE": str(tmp_path / "store")})


@pytest.mark.parametrize("command", UNCHANGING)
def test_an_in_place_run_that_changes_nothing_leaves_the_file_alone(tmp_path: Path, command: str):
    path = session_file(tmp_path, small_session())
    before = os.stat(path)
    proc = in_place(path, *UNCHANGING[command], "--backup", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert path.read_bytes() == small_session()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("s.", ".s."))) \
        == ["s.jsonl"]  # no backup, no temp file left


def test_an_in_place_run_that_shortens_or_changes_the_file_still_replaces_it(tmp_path: Path):
    path = session_file(tmp_path, transcript())
    before = os.stat(path)
    proc = in_place(path, "persist", "--max-chars", "1000", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert os.stat(path).st_ino != before.st_ino
    assert b"<persisted-output>" in path.read_bytes()
    os.utime(path, (OLD, OLD))
    again = os.stat(path)  # and restoring it is a change too: the original comes back
    proc = in_place(path, "restore", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert os.stat(path).st_ino != again.st_ino and path.read_bytes() == transcript()


def test_in_place_as_root_keeps_another_users_owner_group_and_mode(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("needs root, to own a file as another user")
    nobody = pwd.getpwnam("nobody")
    path = session_file(tmp_path, transcript())
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    os.chmod(path, 0o640)
    proc = in_place(path, "persist", "--max-chars", "1000", "--backup", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    st = os.stat(path)
    assert b"<persisted-output>" in path.read_bytes()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (nobody.pw_uid, nobody.pw_gid, 0o640)
    backup = os.stat(str(path) + ".bak")
    assert (backup.st_uid, backup.st_gid) == (nobody.pw_uid, nobody.pw_gid)


def test_a_backup_is_never_overwritten_by_a_later_state(tmp_path: Path):
    first = transcript()
    path = session_file(tmp_path, first)
    proc = in_place(path, "persist", "--max-chars", "1000", "--backup", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    bak = tmp_path / "s.jsonl.bak"
    assert bak.read_bytes() == first
    second = path.read_bytes()
    os.utime(path, (OLD, OLD))
    proc = in_place(path, "restore", "--backup", tmp_path=tmp_path)  # changes it again
    assert proc.returncode == 0, proc.stderr.decode()
    assert bak.read_bytes() == first  # the original is still there
    assert (tmp_path / "s.jsonl.bak.1").read_bytes() == second
    os.utime(path, (OLD, OLD))
    proc = in_place(path, "persist", "--max-chars", "1000", "--backup=.orig", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (tmp_path / "s.jsonl.orig").read_bytes() == first
    third = path.read_bytes()
    os.utime(path, (OLD, OLD))
    proc = in_place(path, "restore", "--backup=.orig", tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    assert (tmp_path / "s.jsonl.orig").read_bytes() == first
    assert (tmp_path / "s.jsonl.orig.1").read_bytes() == third
    assert not (tmp_path / "s.jsonl.bak.2").exists()



def test_in_place_refuses_when_it_cannot_keep_the_owner(tmp_path: Path):
    """Without the right to give a file away (root without CAP_CHOWN here, as any user on
    someone else's file), the new file would be the runner's: nothing is replaced (exit 4, one
    line naming the file)."""
    import shutil
    import subprocess
    import sys

    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv, to own a file as another user")
    nobody = pwd.getpwnam("nobody")
    path = session_file(tmp_path, transcript())
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    script = Path(sys.executable).with_name("ctxtool")
    proc = subprocess.run([setpriv, "--bounding-set=-chown", str(script), "persist",
                           "--max-chars", "1000", "--in-place", str(path)],
                          capture_output=True, timeout=120,
                          env={**os.environ, "CTXTOOL_STORE": str(tmp_path / "store")})
    assert proc.returncode == 4, proc.stderr.decode()
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "cannot keep its owner" in lines[0] and str(path) in lines[0]
    assert path.read_bytes() == transcript() and path.stat().st_uid == nobody.pw_uid
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".s.jsonl.")]
