"""Gemini CLI's sessions in ``ctxtool sessions`` and the session selectors: found where Gemini
CLI 0.61.0 keeps them (``$GEMINI_CLI_HOME`` or the home folder, ``.gemini/tmp/<project>/chats``),
named by the id inside (the full id or the 8 characters of the file name), with the project,
title and size the listing shows (formats/gemini/sessions.py, formats/gemini/listing.py)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ctxtool.formats.gemini.listing import session_prompt, session_title
from ctxtool.formats.gemini.sessions import session_files
from ctxtool.storage.gemini_settings import gemini_dir
from tests.conftest import run_ctxtool
from tests.gemini_builders import FIXTURE_SESSION, FIXTURES, PROJECT_PATH, dump, metadata, \
    write_session

NAME = "session-2026-11-27T16-22-5e551011.jsonl"


def env_of(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "CTXTOOL_CACHE_DIR": "off", "CLAUDE_CONFIG_DIR": str(home / "c"),
            "CODEX_HOME": str(home / "x"), "XDG_DATA_HOME": str(home / "d"), **extra}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write_session(home, NAME, (FIXTURES / "resumed.jsonl").read_bytes())
    # what every resume leaves: a start with nothing to resume (the client lists none)
    start = (FIXTURES / "new.jsonl").read_bytes().splitlines(keepends=True)[:2]
    write_session(home, "session-2026-11-27T16-23-0f0f0f0f.jsonl", b"".join(start).replace(
        FIXTURE_SESSION.encode(), b"0f0f0f0f-0000-4000-8000-000000000009"))
    other = [dump(metadata("7a7a7a7a-0000-4000-8000-000000000002", "2026-11-20T09:00:00.000Z")),
             dump({"id": "u1", "timestamp": "2026-11-20T09:00:01.000Z", "type": "user",
                   "content": [{"text": "Refactor the parser"}]}),
             dump({"$set": {"summary": "Parser refactoring"}})]
    write_session(home, "session-2026-11-20T09-00-7a7a7a7a.jsonl", other, project="tool",
                  project_path="/home/user/work/tool")
    return home


def test_the_files_are_found_where_gemini_keeps_them(home: Path) -> None:
    found = {f.id: (f.path.name, f.where) for f in session_files(env_of(home))}
    assert found == {FIXTURE_SESSION: (NAME, PROJECT_PATH),
                     "7a7a7a7a-0000-4000-8000-000000000002": (
                         "session-2026-11-20T09-00-7a7a7a7a.jsonl", "/home/user/work/tool")}
    assert [f.id for f in session_files(env_of(home), "/home/user/work/tool")] == [
        "7a7a7a7a-0000-4000-8000-000000000002"]


def test_gemini_cli_home_moves_the_folder_as_it_does_for_the_client(home: Path,
                                                                     tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere"
    (home / ".gemini").rename(moved / ".gemini") if moved.mkdir() is None else None
    assert gemini_dir({"HOME": str(home), "GEMINI_CLI_HOME": str(moved)}) == moved / ".gemini"
    assert session_files(env_of(home)) == []
    assert len(session_files(env_of(home, GEMINI_CLI_HOME=str(moved)))) == 2


def test_a_project_folder_named_by_the_hash_older_versions_used(tmp_path: Path) -> None:
    project = "/srv/legacy"
    digest = hashlib.sha256(project.encode()).hexdigest()
    folder = tmp_path / ".gemini" / "tmp" / digest / "chats"
    folder.mkdir(parents=True)
    (folder / NAME).write_bytes((FIXTURES / "new.jsonl").read_bytes())
    assert [f.id for f in session_files({"HOME": str(tmp_path)}, project)] == [FIXTURE_SESSION]


def test_title_and_first_prompt_as_the_clients_list_shows_them() -> None:
    lines = [json.loads(line) for line in (FIXTURES / "new.jsonl").read_bytes().splitlines()]
    assert next(filter(None, map(session_prompt, lines))) == "What is in notes.txt?"
    assert session_title(lines) is None
    assert session_title([{"$set": {"summary": "a"}}, {"$set": {"summary": "b"}}]) == "b"
    assert session_prompt({"id": "x", "type": "user", "content": [{"text": "/help"}]}) is None


def test_sessions_lists_them_with_project_title_and_size(home: Path) -> None:
    result = run_ctxtool("sessions", "--json", env=env_of(home))
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["id"], r["agent"], r["project"], r["title"] or r["first_prompt"], r["size"])
            for r in rows] == [
        (FIXTURE_SESSION, "gemini", PROJECT_PATH, "What is in notes.txt?", 11436),
        ("7a7a7a7a-0000-4000-8000-000000000002", "gemini", None, "Parser refactoring",
         os.path.getsize(home / ".gemini/tmp/tool/chats/session-2026-11-20T09-00-7a7a7a7a.jsonl"))]
    assert rows[0]["last_activity"] == "2026-11-27T16:23:13.888Z"
    table = run_ctxtool("sessions", env=env_of(home, COLUMNS="120"))
    assert b"5e551011" in table.stdout and b"Parser refactoring" in table.stdout


@pytest.mark.parametrize("selector", ["5e551011", FIXTURE_SESSION, "--latest"])
def test_a_gemini_session_is_named_by_its_id_its_start_or_latest(home: Path,
                                                                 selector: str) -> None:
    direct = run_ctxtool("estimate", "--json", str(FIXTURES / "resumed.jsonl"), env=env_of(home))
    named = run_ctxtool("estimate", "--json", selector, env=env_of(home))
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["context_tokens"] == json.loads(direct.stdout)["context_tokens"]


def test_an_unknown_id_names_no_start_file(home: Path) -> None:
    result = run_ctxtool("estimate", "0f0f0f0f", env=env_of(home))
    assert result.returncode == 2 and b"no file or session named" in result.stderr


def test_the_listing_counts_gemini_s_compression_as_estimate_does(tmp_path: Path) -> None:
    """The compaction needle (``<state_snapshot>``) finds the compression checkpoint from the
    file's bytes: the listing's figure is estimate's."""
    write_session(tmp_path, NAME, (FIXTURES / "compressed.jsonl").read_bytes())
    listed = run_ctxtool("sessions", "--json", env=env_of(tmp_path))
    row = json.loads(listed.stdout.splitlines()[0])
    estimate = run_ctxtool("estimate", "--json", str(FIXTURES / "compressed.jsonl"))
    report = json.loads(estimate.stdout)
    assert row["compactions"] == report["compact_boundaries"] == 1
    assert row["context_tokens"] == report["context_tokens"]


@pytest.mark.parametrize("fixture", ["new.jsonl", "resumed.jsonl", "compressed.jsonl",
                                     "same-minute.jsonl"])
def test_the_listing_sizes_every_session_as_estimate_does(tmp_path: Path, fixture: str) -> None:
    """A resumed session sends again the tool results before its last lines: the listing reads
    it from its first line and its last checkpoint on, as the statusline does, not from the
    last call alone (which left out 156 tokens of new.jsonl)."""
    write_session(tmp_path, NAME, (FIXTURES / fixture).read_bytes())
    row = json.loads(run_ctxtool("sessions", "--json", env=env_of(tmp_path)).stdout)
    report = json.loads(run_ctxtool("estimate", "--json", str(FIXTURES / fixture)).stdout)
    assert (row["context_tokens"], row["compactions"]) == (report["context_tokens"],
                                                           report["compact_boundaries"])
