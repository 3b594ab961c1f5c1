"""The real OpenCode (1.18.33) never reads its ``event`` rows back for a session: with them gone
(deleted by hand, then by ``ctxtool vacuum``) it resumes the session and sends the same request
as from the untouched database; vacuum shrinks the file and ``restore --in-place`` gives every row
back (docs/vacuum.md says why, from OpenCode's source).

One installation, one session of several turns (a ``read`` tool call and its result, text
turns); the database is saved aside and put back before each resume, so every resume starts from
the same rows and asks the same question with the same scripted answer.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_messages import FakeMessages, say, tool
from tests.e2e.opencode_cli import OpenCode, opencode_in
from tests.opencode_db_builder import snapshot

FILE_TEXT = "the secret word is pelican"
IDS = re.compile(rb"\b(?:ses|msg|prt|evt|toolu)_[0-9A-Za-z]+")


@pytest.fixture(scope="module")
def opencode(opencode_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenCode]:
    with FakeMessages() as api:
        found = opencode_in(opencode_bin, tmp_path_factory.mktemp("opencode"), api)
        (found.project / "notes.txt").write_text(FILE_TEXT + "\n" + "".join(
            f"filler line {n} of the notes\n" for n in range(1, 200)))
        yield found


@pytest.fixture(scope="module")
def session(opencode: OpenCode, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The session after four turns, and its database saved aside."""
    opencode.api.push(tool("read", {"filePath": str(opencode.project / "notes.txt")}),
                      say("It says pelican."))
    opencode.prompt("What does notes.txt say?")
    ident = opencode.newest_session()
    for text in ("Remember that.", "And the filler?", "Good."):
        opencode.api.push(say(f"Noted: {text}"))
        opencode.prompt(text, ident)
    return ident, snapshot(opencode.db, tmp_path_factory.mktemp("saved") / "as-written")


@pytest.fixture(scope="module")
def untouched(opencode: OpenCode, session: tuple[str, Path]) -> list[bytes]:
    """What OpenCode sends resuming the session from the database as it wrote it."""
    ident, saved = session
    _put(saved, opencode.db)
    return _resume(opencode, ident)


def _put(saved: Path, db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
        if Path(f"{saved}{suffix}").exists():
            Path(f"{db}{suffix}").write_bytes(Path(f"{saved}{suffix}").read_bytes())


def _resume(opencode: OpenCode, ident: str) -> list[bytes]:
    """The requests OpenCode sends resuming the session, ids aside."""
    opencode.api.push(say("Resumed."))
    sent = [b for b in opencode.prompt("Where were we?", ident) if b.get("tools")]
    assert sent
    return [IDS.sub(b"<id>", json.dumps(body, sort_keys=True).encode()) for body in sent]


def _sql(db: Path, query: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(query).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def _env(opencode: OpenCode) -> dict[str, str]:
    return {**opencode.env, "CLAUDE_CONFIG_DIR": str(opencode.home / "claude"),
            "CODEX_HOME": str(opencode.home / "codex")}


def test_opencode_resumes_the_same_without_its_event_rows(
        opencode: OpenCode, session: tuple[str, Path], untouched: list[bytes]) -> None:
    ident, saved = session
    _put(saved, opencode.db)
    (seq,) = _sql(opencode.db, f"SELECT seq FROM event_sequence WHERE aggregate_id = '{ident}'")
    kinds = dict(_sql(opencode.db, "SELECT type, count(*) FROM event GROUP BY type"))
    # 1.18.33 logs the v1 session events only: no v2 engine (session.next.*) rows, no workspace
    assert kinds and not [k for k in kinds if k.startswith("session.next.")], kinds
    assert _sql(opencode.db, "SELECT count(*) FROM event_sequence WHERE owner_id IS NOT NULL") \
        == [(0,)]
    _sql(opencode.db, "DELETE FROM event")
    assert _resume(opencode, ident) == untouched
    # OpenCode went on numbering the session's events from event_sequence
    assert _sql(opencode.db, f"SELECT min(seq) FROM event WHERE aggregate_id = '{ident}'") == \
        [(seq[0] + 1,)]


def test_vacuum_shrinks_the_file_and_resuming_is_the_same(
        opencode: OpenCode, session: tuple[str, Path], untouched: list[bytes]) -> None:
    ident, saved = session
    _put(saved, opencode.db)
    before = {table: _sql(opencode.db, f"SELECT * FROM {table} ORDER BY 1")
              for table in ("event", "event_sequence", "session", "message", "part")}
    event_bytes = _sql(opencode.db, "SELECT sum(length(data)) FROM event")[0][0]
    done = run_ctxtool("vacuum", "--all", "--apply", "--json", "--agent", "opencode",
                       env=_env(opencode))
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout.splitlines()[0])
    assert record["path"] == str(opencode.db)
    assert record["removed"] == {"event rows OpenCode never reads back": len(before["event"])}
    assert record["bytes_after"] < record["bytes_before"] - event_bytes // 2
    assert opencode.db.stat().st_size == record["bytes_after"]  # checkpointed: no WAL left
    assert _sql(opencode.db, "SELECT count(*) FROM event") == [(0,)]
    assert _sql(opencode.db, "PRAGMA integrity_check") == [("ok",)]

    back = run_ctxtool("restore", "--in-place", str(opencode.db), env=_env(opencode))
    assert back.returncode == 0, back.stderr
    assert {table: _sql(opencode.db, f"SELECT * FROM {table} ORDER BY 1")
            for table in before} == before  # row for row

    assert run_ctxtool("vacuum", "--all", "--apply", "--agent", "opencode",
                       env=_env(opencode)).returncode == 0
    assert _resume(opencode, ident) == untouched
