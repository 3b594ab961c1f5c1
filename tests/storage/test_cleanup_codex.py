"""``cleanup`` covers Codex CLI sessions: rollouts under ``$CODEX_HOME/sessions/YYYY/MM/DD`` (the
real ones of tests/fixtures/codex-0.171.0, re-dated) go by the same age rule as Claude Code
sessions, through the real entry point, and nothing else in the Codex folder is touched."""

from __future__ import annotations

import json
import tarfile
from datetime import datetime, timedelta
from pathlib import Path

import orjson

from tests.cleanup_trees import NOW, NOW_ARG, iso, listing, write
from tests.conftest import FIXTURES, run_ctxtool

DAYS = timedelta(days=1)
OLD_ID = "01a20b26-0000-7000-8000-000000000001"
NEW_ID = "01a20b26-0000-7000-8000-000000000002"


def rollout(codex: Path, name: str, session: str, last: datetime) -> Path:
    """A real rollout with every timestamp set to ``last`` and its id changed to ``session``."""
    lines = []
    for line in (FIXTURES / "codex-0.171.0" / name).read_bytes().splitlines():
        entry = orjson.loads(line)
        entry["timestamp"] = iso(last)
        if entry["type"] == "session_meta":
            entry["payload"]["id"] = session
        lines.append(orjson.dumps(entry))
    day = codex / "sessions" / f"{last:%Y}" / f"{last:%m}" / f"{last:%d}"
    return write(day / f"rollout-{last:%Y-%m-%dT%H-%M-%S}-{session}.jsonl",
                 b"\n".join(lines) + b"\n", last)


def codex_home(tmp_path: Path) -> Path:
    codex = tmp_path / ".codex"
    write(codex / "config.toml", 'model = "gpt-5-codex"\n', NOW - 90 * DAYS)
    write(codex / "history.jsonl", json.dumps({"text": "hi"}) + "\n", NOW - 90 * DAYS)
    rollout(codex, "tools.jsonl", OLD_ID, NOW - 40 * DAYS)
    rollout(codex, "compacted.jsonl", NEW_ID, NOW - 2 * DAYS)
    return codex


def records(stdout: bytes) -> dict[str, dict]:
    return {r["path"]: r for r in map(orjson.loads, stdout.splitlines()) if "path" in r}  # not the summary


def test_old_codex_sessions_are_planned_by_age(tmp_path: Path) -> None:
    codex = codex_home(tmp_path)
    before = listing(codex)
    proc = run_ctxtool("cleanup", "--codex-home", str(codex), "--now", NOW_ARG,
                       env={"HOME": str(tmp_path / "home")})  # no ~/.claude there
    assert proc.returncode == 0, proc.stderr
    assert listing(codex) == before
    found = {path: r for path, r in records(proc.stdout).items() if "rollout-" in path}
    old, = (r for p, r in found.items() if OLD_ID in p)
    new, = (r for p, r in found.items() if NEW_ID in p)
    assert old["action"] == "delete" and old["session"] == OLD_ID
    assert old["category"] == "codex-sessions" and old["path"].startswith("sessions/")
    assert new["action"] == "keep" and new["reason"].startswith("recent")


def test_apply_archives_and_removes_only_the_old_rollout(tmp_path: Path) -> None:
    codex = codex_home(tmp_path)
    archive = tmp_path / "archive"
    proc = run_ctxtool("cleanup", "--codex-home", str(codex), "--now", NOW_ARG, "--apply",
                       "--archive", str(archive), env={"HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr
    left = listing(codex)
    assert not any(OLD_ID in p for p in left) and any(NEW_ID in p for p in left)
    assert "config.toml" in left and "history.jsonl" in left  # not sessions: never touched
    tarball, = archive.glob(f"{OLD_ID}*.tar.gz")
    with tarfile.open(tarball) as tar:
        assert any(OLD_ID in name and name.startswith("sessions/") for name in tar.getnames())


def test_codex_home_from_the_environment_without_root(tmp_path: Path) -> None:
    codex = codex_home(tmp_path)
    proc = run_ctxtool("cleanup", "--now", NOW_ARG,
                       env={"HOME": str(tmp_path / "home"), "CODEX_HOME": str(codex)})
    assert proc.returncode == 0, proc.stderr
    assert any(OLD_ID in p for p in records(proc.stdout))


def test_a_folder_that_is_not_codex_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    proc = run_ctxtool("cleanup", "--codex-home", str(folder), "--now", NOW_ARG, "--apply")
    assert proc.returncode == 2 and b"does not look like a Codex CLI folder" in proc.stderr
