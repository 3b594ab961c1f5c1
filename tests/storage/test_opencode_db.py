"""OpenCode's database: read a session as convert's JSONL, write changed rows back, refuse
what ctxtool does not know (tests on small databases with OpenCode 1.18.33's schema)."""

from __future__ import annotations

import copy
import io
import sqlite3
from pathlib import Path

import orjson
import pytest

from ctxtool.errors import InputError, StoreError
from ctxtool.formats.jsonl import write_entries
from ctxtool.formats.opencode.export import entries_from_export
from ctxtool.storage import opencode_backup, opencode_db
from tests.opencode_builders import FIXTURE, SESSION, T0, assistant, text, tool, user
from tests.opencode_db_builder import add_session, make_db, rows


def session_messages() -> list[dict]:
    return [user(1), assistant(2, 1, tool("ls", output="a\nb"), text("done")),
            user(3), assistant(4, 3)]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = make_db(tmp_path / "opencode.db")
    add_session(path, session_messages())
    return path


def jsonl(entries: list[dict]) -> bytes:
    out = io.BytesIO()
    write_entries(entries, out)
    return out.getvalue()


def test_messages_read_as_export_gives_them(tmp_path: Path) -> None:
    document = orjson.loads((FIXTURE / "export.json").read_bytes())
    path = make_db(tmp_path / "opencode.db")
    add_session(path, document["messages"], session=document["info"]["id"])
    got = opencode_db.read_session(path)
    want = entries_from_export(document, "export.json")
    # the same records; OpenCode 1.18 puts the ids after the data (this fixture, made by hand
    # for 1.1, has them first): the e2e test compares bytes against the real export
    assert got[1:] == want[1:]
    assert list(got[1]["info"])[-2:] == ["id", "sessionID"]
    assert list(got[1]["parts"][0])[-3:] == ["id", "sessionID", "messageID"]


def test_session_line_is_opencode_s_record(db: Path) -> None:
    """Keys in the order OpenCode 1.18.33's export prints them; NULL columns left out; a REAL
    cost of 0 printed as JavaScript does."""
    header = opencode_db.read_session(db)[0]["session"]
    assert list(header) == ["id", "slug", "projectID", "directory", "path", "title", "agent",
                            "model", "version", "cost", "tokens", "permission", "time"]
    assert header["model"] == {"id": "claude-x", "providerID": "anthropic", "variant": "default"}
    assert header["cost"] == 0 and isinstance(header["cost"], int)
    assert header["time"] == {"created": T0, "updated": T0}


def test_summary_share_and_compacting_columns(tmp_path: Path) -> None:
    path = make_db(tmp_path / "o.db")
    add_session(path, [user(1)], summary_additions=3, summary_files=1, share_url="https://x/s",
                time_compacting=T0 + 5, cost=0.25)
    header = opencode_db.read_session(path)[0]["session"]
    assert header["summary"] == {"additions": 3, "deletions": 0, "files": 1}
    assert header["share"] == {"url": "https://x/s"} and header["cost"] == 0.25
    assert header["time"]["compacting"] == T0 + 5


def test_default_is_most_recently_updated_and_listing(db: Path) -> None:
    add_session(db, [user(9)], session="ses_newer", updated=T0 + 10, title="Newer")
    assert opencode_db.read_session(db)[0]["session"]["id"] == "ses_newer"
    assert opencode_db.read_session(db, SESSION)[0]["session"]["id"] == SESSION
    listed = opencode_db.list_sessions(db.parent)
    assert [(s.id, s.title, s.directory, s.updated) for s in listed] == [
        ("ses_newer", "Newer", "/w", T0 + 10), (SESSION, "A test session", "/w", T0)]


def test_missing_session_and_not_sqlite(db: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no session ses_nope"):
        opencode_db.read_session(db, "ses_nope")
    bad = tmp_path / "bad.db"
    bad.write_text("not a database\n")
    with pytest.raises(InputError, match="not an SQLite database"):
        opencode_db.read_session(bad)
    assert opencode_db.find_database(tmp_path) is None or opencode_db.find_database(tmp_path) == db


def test_data_folder_and_its_parent_find_the_database(db: Path, tmp_path: Path) -> None:
    folder = tmp_path / "share" / "opencode"
    folder.mkdir(parents=True)
    moved = folder / "opencode.db"
    db.rename(moved)
    assert opencode_db.find_database(folder) == moved
    assert opencode_db.find_database(folder.parent) == moved


def _mark(entries: list[dict]) -> list[dict]:
    changed = copy.deepcopy(entries)
    changed[2]["parts"][0]["state"]["time"]["compacted"] = T0 + 99
    return changed


def test_write_changes_only_the_rows_that_differ(db: Path) -> None:
    before = rows(db)
    entries = opencode_db.read_session(db)
    result = opencode_db.write_session(db, _mark(entries), expected=entries)
    assert result.updated == ["prt_00200"] and not result.inserted
    assert result.unchanged == 8  # 4 messages and 5 parts, one changed
    after = rows(db)
    assert [r for r in after if r not in before] == [r for r in after if r[1] == "prt_00200"]
    assert opencode_db.read_session(db)[2]["parts"][0]["state"]["time"]["compacted"] == T0 + 99
    # the backup holds the one row replaced, as it was; putting it back gives every row back
    backup = orjson.loads(Path(str(result.backup)).read_bytes().splitlines()[1])
    assert (backup["table"], backup["id"]) == ("part", "prt_00200")
    assert [tuple(backup["row"].values())] == [r[1:] for r in before if r[1] == "prt_00200"]
    opencode_db.restore_backup(str(result.backup))
    assert rows(db) == before


def test_write_inserts_new_messages_and_leaves_unmentioned_rows(db: Path) -> None:
    entries = opencode_db.read_session(db)
    new = assistant(5, 3, text("a summary"), summary=True)
    result = opencode_db.write_session(db, [*entries[:3], new])
    assert result.inserted == ["msg_005", "prt_00500"]
    assert result.left == 4  # message 3 and 4 with their parts stay
    ids = [e["info"]["id"] for e in opencode_db.read_session(db)[1:]]
    assert ids == ["msg_001", "msg_002", "msg_003", "msg_004", "msg_005"]


def test_identical_entries_write_nothing_and_make_no_backup(db: Path) -> None:
    result = opencode_db.write_session(db, opencode_db.read_session(db))
    assert result.backup is None and not result.updated
    assert sorted(p.name for p in db.parent.iterdir() if "backup" in p.name) == []


def test_a_row_opencode_changed_meanwhile_stops_the_write(db: Path) -> None:
    entries = opencode_db.read_session(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE part SET data = replace(data, 'a\\nb', 'new') WHERE id = 'prt_00200'")
    conn.commit()
    conn.close()
    before = rows(db)
    with pytest.raises(StoreError, match="OpenCode changed part prt_00200"):
        opencode_db.write_session(db, _mark(entries), expected=entries)
    assert rows(db) == before
    assert not [p for p in db.parent.iterdir() if "backup" in p.name]


def test_locked_database_leaves_it_untouched(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(opencode_db, "BUSY_TIMEOUT", 0.1)
    entries = opencode_db.read_session(db)
    before = rows(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        assert opencode_db.read_session(db) == entries  # readers are not blocked (WAL)
        with pytest.raises(StoreError, match="locked"):
            opencode_db.write_session(db, _mark(entries))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rows(db) == before
    assert not [p for p in db.parent.iterdir() if "backup" in p.name]


def test_unknown_migration_blocks_writing_not_reading(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO migration VALUES ('20991231000000_from_the_future', 1)")
    conn.commit()
    conn.close()
    entries = opencode_db.read_session(db)
    before = rows(db)
    with pytest.raises(StoreError, match="unknown OpenCode database schema"):
        opencode_db.write_session(db, _mark(entries))
    assert rows(db) == before


def test_missing_columns_are_an_unknown_schema(tmp_path: Path) -> None:
    path = tmp_path / "o.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE session (id text); CREATE TABLE message (id text, body text);"
                       "CREATE TABLE part (id text);")
    conn.close()
    with pytest.raises(StoreError, match="table session lacks directory"):
        opencode_db.read_session(path)


# --- the backup: the rows a write replaces ---------------------------------------------------------

BIG_PART = "y" * 200_000


def _big_other_session(db: Path) -> None:
    add_session(db, [user(21), assistant(22, 21, *[tool(f"cat {n}", output=BIG_PART)
                                                   for n in range(10)])],
                session="ses_big", updated=T0 - 1)


def test_the_backup_is_as_big_as_what_the_write_touches_not_the_database(db: Path) -> None:
    _big_other_session(db)  # 2 MB of another session
    before = rows(db)
    entries = opencode_db.read_session(db, SESSION)
    result = opencode_db.write_session(db, _mark(entries), expected=entries)
    backup = Path(str(result.backup))
    assert backup.name.startswith("opencode.db.ctxtool-backup-") and backup.suffix == ".jsonl"
    touched = sum(len(str(r)) for r in before if r[1] == "prt_00200")
    assert backup.stat().st_size < touched + 400
    assert backup.stat().st_size * 1000 < db.stat().st_size
    assert opencode_db.restore_backup(str(backup)).rows_put_back == 1
    assert rows(db) == before


def test_restoring_removes_the_rows_the_write_added(db: Path) -> None:
    before = rows(db)
    entries = opencode_db.read_session(db)
    changed = _mark(entries)
    result = opencode_db.write_session(db, [*changed, assistant(5, 3, text("a summary"),
                                                                summary=True)])
    assert result.inserted == ["msg_005", "prt_00500"]
    done = opencode_db.restore_backup(str(result.backup))
    assert (done.rows_put_back, done.rows_removed) == (1, 2)
    assert rows(db) == before
    assert opencode_db.restore_backup(str(result.backup)).rows_removed == 0  # again: the same rows
    assert rows(db) == before


def test_a_reader_on_an_old_snapshot_does_not_stop_the_write(db: Path) -> None:
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM part").fetchone()  # holds the snapshot of now
        add_session(db, [user(7)], session="ses_later", updated=T0 + 1)
        before = rows(db)
        entries = opencode_db.read_session(db, SESSION)
        result = opencode_db.write_session(db, _mark(entries), expected=entries)
    finally:
        reader.close()
    opencode_db.restore_backup(str(result.backup))
    assert rows(db) == before


def _backup_with(db: Path, tmp_path: Path, *records: dict) -> str:
    header = {"backup": opencode_backup.KIND, "version": 1, "database": str(db),
              "session": SESSION}
    path = tmp_path / "made.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (header, *records)))
    return str(path)


@pytest.mark.parametrize(("record", "error", "message"), [
    ({"table": "session", "id": "x", "row": None}, InputError, "not a saved message or part"),
    ({"table": "part", "id": "prt_00200", "row": {"id": "other"}}, InputError, "row's id"),
    ({"table": "part", "id": "prt_00200", "row": {"id": "prt_00200", "evil\" = 1; --": 1}},
     StoreError, "columns the database lacks"),
    ({"table": "part", "id": "prt_00200", "row": {"id": "prt_00200", "data": [1]}},
     StoreError, "no SQLite column takes"),
])
def test_a_bad_backup_changes_nothing(db: Path, tmp_path: Path, record: dict,
                                      error: type[Exception], message: str) -> None:
    before = rows(db)
    # a good row first: the bad one after it rolls the whole restore back
    good = {"table": "message", "id": "msg_001", "row": None}
    with pytest.raises(error, match=message):
        opencode_db.restore_backup(_backup_with(db, tmp_path, good, record))
    assert rows(db) == before
    assert not opencode_backup.is_backup(str(db))
