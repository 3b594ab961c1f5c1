"""Where removed content goes: a session in Claude Code's own folders keeps Claude Code's place
(``<project>/<session>/tool-results``); a copy worked on elsewhere keeps its store beside it
(``ctxtool-store/``) and never writes into ``~/.claude``; ``$CTXTOOL_STORE`` and ``--store``
win; ``restore`` finds the files from anywhere."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_ctxtool

EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"


def first(key: str) -> str:
    for line in EXAMPLE.read_bytes().splitlines():
        value = json.loads(line).get(key)
        if value:
            return value
    raise AssertionError(key)


SESSION, CWD = first("sessionId"), first("cwd")
SLUG = CWD.replace("/", "-")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home whose Claude Code folder has other projects, not the example's."""
    home = tmp_path / "home"
    (home / ".claude" / "projects" / "-home-me-other").mkdir(parents=True)
    return home


def env_of(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CTXTOOL_STORE": ""}


def claude_projects(home: Path) -> list[str]:
    return sorted(p.name for p in (home / ".claude" / "projects").iterdir())


@pytest.mark.parametrize("stdin", [False, True], ids=["file", "stdin"])
def test_a_copy_keeps_its_store_beside_it(tmp_path: Path, home: Path, stdin: bool) -> None:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copyfile(EXAMPLE, work / "session.jsonl")
    args = ("persist", "--max-chars", "2000") + (() if stdin else ("session.jsonl",))
    proc = run_ctxtool(*args, cwd=work, env=env_of(home),
                       input=EXAMPLE.read_bytes() if stdin else None)
    assert proc.returncode == 0, proc.stderr
    assert claude_projects(home) == ["-home-me-other"]  # nothing written into ~/.claude
    saved = sorted((work / "ctxtool-store" / SESSION / "tool-results").iterdir())
    assert saved and all(str(p).encode() in proc.stdout for p in saved)
    assert f"saved under {work / 'ctxtool-store'}" in proc.stderr.decode()
    (work / "smaller.jsonl").write_bytes(proc.stdout)
    back = run_ctxtool("restore", str(work / "smaller.jsonl"), cwd=tmp_path, env=env_of(home))
    assert back.returncode == 0 and back.stdout == EXAMPLE.read_bytes(), back.stderr


def test_a_copy_named_from_another_folder_keeps_its_store_beside_it(tmp_path: Path,
                                                                   home: Path) -> None:
    (tmp_path / "work").mkdir()
    copy = tmp_path / "work" / "session.jsonl"
    shutil.copyfile(EXAMPLE, copy)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_ctxtool("persist", "--max-chars", "2000", str(copy), cwd=elsewhere,
                       env=env_of(home))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "work" / "ctxtool-store" / SESSION / "tool-results").is_dir()
    assert not os.listdir(elsewhere) and claude_projects(home) == ["-home-me-other"]


def test_a_session_in_claude_codes_folder_keeps_claude_codes_place(tmp_path: Path,
                                                                   home: Path) -> None:
    project = home / ".claude" / "projects" / SLUG
    project.mkdir()
    session = project / f"{SESSION}.jsonl"
    shutil.copyfile(EXAMPLE, session)
    for stdin in (False, True):  # named, or piped (its file is there: it is this machine's)
        proc = run_ctxtool("persist", "--max-chars", "2000", *(() if stdin else (str(session),)),
                           cwd=tmp_path, env=env_of(home),
                           input=session.read_bytes() if stdin else None)
        assert proc.returncode == 0, proc.stderr
        assert str(project / SESSION / "tool-results").encode() in proc.stdout
    assert not (tmp_path / "ctxtool-store").exists()


def test_ctxtool_store_still_wins(tmp_path: Path, home: Path) -> None:
    copy = tmp_path / "session.jsonl"
    shutil.copyfile(EXAMPLE, copy)
    proc = run_ctxtool("persist", "--max-chars", "2000", str(copy), cwd=tmp_path,
                       env={**env_of(home), "CTXTOOL_STORE": str(tmp_path / "mine")})
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "mine" / SESSION / "tool-results").is_dir()
    assert not (tmp_path / "ctxtool-store").exists()
