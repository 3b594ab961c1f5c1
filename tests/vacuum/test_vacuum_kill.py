"""``vacuum --all --apply`` killed at any point leaves every session untouched or vacuumed, and
a vacuumed one restorable: at the crash points (mid-file, after the store and recipe, right
after the replace) and at moments chosen by a clock; the next run finishes the rest and leaves
no temp file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ctxtool.storage.durable import CRASH_ENV
from tests.conftest import ctxtool_executable, run_ctxtool
from tests.vacuum.builders import doubled_session, write_session

SESSIONS = 6


def sweep_folder(tmp_path: Path) -> tuple[dict[Path, bytes], dict[str, str]]:
    originals = {}
    for number in range(SESSIONS):
        data, _ = doubled_session(count=40 + number, repeated=20)
        session = f"5f0c8a52-0c0e-4f39-9a57-{number:012d}"
        data = data.replace(b"5f0c8a52-0c0e-4f39-9a57-2b8d9d8a1c11", session.encode())
        originals[write_session(tmp_path / "cfg", data, name=session)] = data
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "codex"),
           "HOME": str(tmp_path / "home"), "CTXTOOL_STORE": ""}
    return originals, env


def vacuumed(data: bytes, tmp_path: Path) -> bytes:
    source = tmp_path / "one.jsonl"
    source.write_bytes(data)
    return run_ctxtool("vacuum", str(source), "--store", str(tmp_path / "scratch")).stdout


def expected(originals: dict[Path, bytes], tmp_path: Path) -> dict[Path, bytes]:
    return {path: vacuumed(data, tmp_path) for path, data in originals.items()}


def check(originals: dict[Path, bytes], after: dict[Path, bytes]) -> int:
    """Every session untouched or vacuumed; how many are vacuumed."""
    done = 0
    for path, data in originals.items():
        now = path.read_bytes()
        if now != data:
            assert now == after[path], path
            done += 1
    return done


def restorable(originals: dict[Path, bytes], env: dict[str, str]) -> None:
    for path, data in originals.items():
        back = run_ctxtool("restore", str(path), env=env)
        assert back.returncode == 0 and back.stdout == data, back.stderr


@pytest.mark.parametrize("point", ["vacuum-mid-file", "vacuum-after-recipe", "after-replace"])
def test_killed_at_a_crash_point(tmp_path: Path, point: str) -> None:
    originals, env = sweep_folder(tmp_path)
    after = expected(originals, tmp_path)
    killed = run_ctxtool("vacuum", "--all", "--apply", env={**env, CRASH_ENV: point})
    assert killed.returncode == -signal.SIGKILL
    assert check(originals, after) == (1 if point == "after-replace" else 0)
    if point == "after-replace":
        restorable({p: d for p, d in originals.items() if p.read_bytes() != d}, env)
    again = run_ctxtool("vacuum", "--all", "--apply", env=env)
    assert again.returncode == 0, again.stderr
    assert check(originals, after) == SESSIONS
    restorable(originals, env)
    leftovers = [p for p in (tmp_path / "cfg").rglob("*") if p.name.startswith(".ctxtool-")]
    assert leftovers == []


def test_killed_by_the_clock_again_and_again(tmp_path: Path) -> None:
    originals, env = sweep_folder(tmp_path)
    after = expected(originals, tmp_path)
    delay, kills = 0.05, 0
    while True:
        proc = subprocess.Popen([*ctxtool_executable(), "vacuum", "--all", "--apply"],
                                env={**os.environ, **env},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.kill()
        code = proc.wait()
        check(originals, after)
        if code == 0:
            break
        kills += 1
        delay *= 1.5
        assert kills < 30, "the sweep never finished"
    assert kills > 0 and check(originals, after) == SESSIONS
    restorable(originals, env)
