"""Every command reads OpenCode's database; --in-place writes the session back into it; each
kind of bad database gives one line and its exit code, and leaves the database as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.storage import opencode_db
from tests.conftest import run_ctxtool
from tests.opencode_builders import PRUNE_ON, SESSION, assistant, text, tool, user
from tests.opencode_db_builder import add_session, integrity, make_db, rows

BIG = "x" * 4000


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = make_db(tmp_path / "data" / "opencode" / "opencode.db"
                   if (tmp_path / "data" / "opencode").mkdir(parents=True) is None else tmp_path)
    add_session(path, [user(1), assistant(2, 1, tool("cat a", output=BIG), finish="tool-calls"),
                       assistant(3, 1, text("read it")), user(4), assistant(5, 4), user(6),
                       assistant(7, 6)])
    add_session(path, [user(11)], session="ses_other", updated=1)
    return path


def test_convert_and_estimate_read_the_database(db: Path, tmp_path: Path) -> None:
    by_file = run_ctxtool("convert", str(db), "--session", SESSION)
    by_folder = run_ctxtool("convert", str(db.parent))  # default: the newest session
    assert by_file.returncode == 0 and by_file.stdout == by_folder.stdout
    (tmp_path / "s.jsonl").write_bytes(by_file.stdout)
    export = run_ctxtool("convert", str(tmp_path / "s.jsonl"), "--to", "opencode-export")
    (tmp_path / "s.json").write_bytes(export.stdout)
    assert run_ctxtool("convert", str(tmp_path / "s.json")).stdout == by_file.stdout
    from_db = run_ctxtool("estimate", "--json", str(db), "--session", SESSION)
    from_jsonl = run_ctxtool("estimate", "--json", str(tmp_path / "s.jsonl"))
    assert from_db.returncode == 0, from_db.stderr
    assert from_db.stdout.replace(str(db).encode(), b"S") == \
        from_jsonl.stdout.replace(str(tmp_path / "s.jsonl").encode(), b"S")
    other = run_ctxtool("convert", str(db), "--session", "ses_other")
    assert b"msg_011" in other.stdout and b"msg_001" not in other.stdout


def test_microcompact_and_restore_in_place(db: Path) -> None:
    before = rows(db)
    pruned = run_ctxtool("microcompact", "--strategy", "opencode", "--force", "--target", "0",
                         "--in-place", str(db), "--session", SESSION, env=PRUNE_ON)
    assert pruned.returncode == 0, pruned.stderr
    assert b"1 rows updated" in pruned.stderr
    changed = [r for r in rows(db) if r not in before]
    assert [r[1] for r in changed] == ["prt_00200"]
    part = orjson.loads(changed[0][-1])
    assert "compacted" in part["state"]["time"] and part["state"]["output"] == BIG
    restored = run_ctxtool("restore", "--in-place", str(db), "--session", SESSION)
    assert restored.returncode == 0, restored.stderr
    assert [r[:-2] for r in rows(db)] == [r[:-2] for r in before]  # time_updated aside
    assert [orjson.loads(r[-1]) for r in rows(db) if r[0] != "session"] == \
        [orjson.loads(r[-1]) for r in before if r[0] != "session"]
    # each write left the rows it replaced beside the database; the first one's, put back,
    # gives every row back as it was, time_updated included
    first, second = sorted(db.parent.glob("opencode.db.ctxtool-backup-*.jsonl"))
    assert first.stat().st_size < len(BIG) + 2000
    put_back = run_ctxtool("restore", "--stats", str(first))
    assert put_back.returncode == 0 and put_back.stdout == b"", put_back.stderr
    assert b"1 row(s) put back" in put_back.stderr
    assert rows(db) == before


def test_summarize_in_place_adds_opencode_s_compaction_messages(db: Path) -> None:
    result = run_ctxtool("summarize", "--llm", "offline", "--in-place", str(db),
                         "--session", SESSION)
    assert result.returncode == 0, result.stderr
    entries = opencode_db.read_session(db, SESSION)
    assert any(p.get("type") == "compaction" for e in entries[1:] for p in e["parts"])
    assert any(e["info"].get("summary") is True for e in entries[1:])


def test_bad_databases_give_one_line_and_their_exit_code(db: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    before = rows(db)
    missing = run_ctxtool("estimate", str(db), "--session", "ses_nope")
    assert missing.returncode == 3 and missing.stderr.count(b"\n") == 1
    assert b"no session ses_nope" in missing.stderr
    bad = tmp_path / "bad.db"
    bad.write_bytes(b'{"not": "sqlite"}\n')
    not_sqlite = run_ctxtool("estimate", str(bad))
    assert not_sqlite.returncode == 3 and b"not an SQLite database" in not_sqlite.stderr
    refused = run_ctxtool("convert", str(db), "-o", str(db))
    assert refused.returncode == 4 and b"only with --in-place" in refused.stderr
    monkeypatch.setattr(opencode_db, "BUSY_TIMEOUT", 0.1)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        locked = CliRunner().invoke(cli, ["microcompact", "--strategy", "opencode", "--force",
                                          "--target", "0", "--in-place", str(db)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert locked.exit_code == 4 and "database is locked" in locked.stderr
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO migration VALUES ('20991231000000_from_the_future', 1)")
    conn.commit()
    conn.close()
    unknown = run_ctxtool("microcompact", "--strategy", "opencode", "--force", "--target", "0",
                          "--in-place", str(db))
    assert unknown.returncode == 4 and b"unknown OpenCode database schema" in unknown.stderr
    assert unknown.stderr.count(b"\n") == 1
    assert rows(db) == before
    assert not list(db.parent.glob("*backup*"))


def test_the_database_backup_keeps_the_owner_and_mode(db: Path) -> None:
    """Root rewriting another user's private database (issue 27 item 2): the database itself
    is written by SQLite in place; its backup copy is theirs, 0600 like it, not root's 0644."""
    import os
    import pwd
    import stat

    if os.geteuid() != 0:
        pytest.skip("needs root, to own a file as another user")
    nobody = pwd.getpwnam("nobody")
    os.chown(db, nobody.pw_uid, nobody.pw_gid)
    os.chmod(db, 0o600)
    pruned = run_ctxtool("microcompact", "--strategy", "opencode", "--force", "--target", "0",
                         "--in-place", str(db), "--session", SESSION, env=PRUNE_ON)
    assert pruned.returncode == 0, pruned.stderr
    (backup,) = db.parent.glob("opencode.db.ctxtool-backup-*.jsonl")
    for path in (db, backup):
        st = os.stat(path)
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == \
            (nobody.pw_uid, nobody.pw_gid, 0o600), path


WRITES = {"microcompact": ["microcompact", "--strategy", "opencode", "--force", "--target", "0"],
          "summarize": ["summarize", "--llm", "offline"]}  # 1 row replaced; 2 messages added


@pytest.mark.parametrize("where", ["after-backup", "mid-rows", "before-commit", "after-replace"])
@pytest.mark.parametrize("command", list(WRITES))
def test_a_write_killed_anywhere_leaves_the_database_whole(db: Path, where: str,
                                                           command: str) -> None:
    """SIGKILL of the real process: before the commit the database is as it was; after it,
    the backup beside it puts every row back."""
    before = rows(db)
    holder = sqlite3.connect(db)  # OpenCode's open connection: the WAL stays
    holder.execute("SELECT count(*) FROM session").fetchone()
    try:
        killed = run_ctxtool(*WRITES[command], "--in-place", str(db), "--session", SESSION,
                             env={**PRUNE_ON, "CTXTOOL_TEST_CRASH": where})
        assert killed.returncode == -9, killed.stderr
        assert integrity(db) == "ok"
        (backup,) = db.parent.glob("opencode.db.ctxtool-backup-*.jsonl")
        assert not list(db.parent.glob("*.partial"))
        if where == "after-replace":
            assert rows(db) != before
        else:
            assert rows(db) == before
        assert run_ctxtool("restore", str(backup)).returncode == 0
        assert rows(db) == before and integrity(db) == "ok"
    finally:
        holder.close()
