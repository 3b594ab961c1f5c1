"""One meaning of "newest": ``--latest`` reads the session ``ctxtool sessions`` lists first (the
latest activity recorded in it), not the file written last (a copy, an --in-place rewrite)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.estimate_builders import assistant, usage, user
from tests.sessions.helpers import APP, LIB, write_session

T0 = 1_780_000_000  # 2026-05-28T20:26:40Z


def at(seconds: int) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(T0 + seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def session(config: Path, cwd: str, sid: str, active: int, written: int) -> Path:
    """A session last active at T0 + ``active`` whose file was last written at T0 + ``written``."""
    return write_session(config, cwd, sid, [
        {**user(f"work on {sid}"), "timestamp": at(active - 60)},
        {**assistant("ok", msg_id=f"m-{sid}", usage=usage(10, 0, 1000, 5)), "timestamp": at(active)},
    ], mtime=T0 + written)


def first_listed(config: Path, *args: str) -> str:
    proc = run_ctxtool("sessions", "--json", *args, env={"CLAUDE_CONFIG_DIR": str(config)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[0])["id"]


def latest(config: Path, *args: str) -> str:
    proc = run_ctxtool("estimate", "--latest", "--json", *args,
                       env={"CLAUDE_CONFIG_DIR": str(config)})
    assert proc.returncode == 0, proc.stderr
    return Path(json.loads(proc.stdout)["source"]).stem


def test_a_rewritten_older_session_is_not_the_latest(tmp_path: Path) -> None:
    session(tmp_path, APP, "worked-on-last", active=3600, written=3600)
    session(tmp_path, LIB, "rewritten-later", active=60, written=7200)  # e.g. an --in-place run
    assert first_listed(tmp_path) == "worked-on-last"
    assert latest(tmp_path) == "worked-on-last"


@pytest.mark.parametrize("seed", range(4))
def test_latest_is_always_what_sessions_lists_first(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    for n in range(8):
        active = rng.randrange(0, 10_000)
        session(tmp_path, rng.choice([APP, LIB]), f"s{seed}-{n}", active=active,
                written=active + rng.choice([0, 5, rng.randrange(0, 20_000)]))
    assert latest(tmp_path) == first_listed(tmp_path)
    assert latest(tmp_path, "--project", LIB) == first_listed(tmp_path, "--project", LIB)
