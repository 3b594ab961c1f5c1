"""Removing OpenCode session trees from its database (storage/opencode_cleanup.py), on databases
with OpenCode 1.18.33's tables (tests/opencode_db_builder.py), and their archives
(storage/opencode_archive.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from ctxtool.errors import StoreError
from ctxtool.formats.opencode.usage import usage_only
from ctxtool.storage import opencode_cleanup as oc
from ctxtool.storage.opencode_archive import write_export
from tests.opencode_builders import T0, ZERO
from tests.opencode_db_builder import add_records, add_session, keyed_rows, make_db

DAY = 86_400_000


def messages(session: str, start: int, *, output: str | None = None) -> list[dict[str, Any]]:
    """A user message and an assistant reply with a tool part, ids unique to ``session``."""
    def ident(kind: str, n: int) -> str:
        return f"{kind}_{session}_{n}"

    tool = {"type": "tool", "tool": "bash", "callID": "c1",
            "state": {"status": "completed", "input": {}, "output": "...",
                      "metadata": {"outputPath": output} if output else {}}}
    return [
        {"info": {"id": ident("msg", 1), "role": "user", "time": {"created": start}},
         "parts": [{"id": ident("prt", 1), "type": "text", "text": "hello"}]},
        {"info": {"id": ident("msg", 2), "role": "assistant", "time": {"created": start + 1},
                  "modelID": "m", "providerID": "p", "cost": 0.5,
                  "tokens": {**ZERO, "input": 10, "output": 3}},
         "parts": [{"id": ident("prt", 2), **tool}]},
    ]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder: ``old`` (60 days) with a child ``old-kid``, ``new`` (today)."""
    folder = tmp_path / "opencode"
    (folder / "tool-output").mkdir(parents=True)
    db = make_db(folder / "opencode.db", records=True)
    out = folder / "tool-output" / "tool_old1"
    out.write_text("full output\n")
    add_session(db, messages("old", T0, output=str(out)), session="old", updated=T0 + 5,
                slug="old-slug")
    add_session(db, messages("kid", T0 + 10), session="kid", updated=T0 + 20, parent_id="old")
    add_session(db, messages("new", T0 + 60 * DAY), session="new", updated=T0 + 60 * DAY)
    for session in ("old", "kid", "new"):
        add_records(db, session)
    return folder


def test_a_child_session_goes_with_its_parent_and_dates_it(data: Path) -> None:
    trees = oc.scan(data / "opencode.db")
    assert [(tree.id, tree.ids) for tree in trees] == [("new", ["new"]), ("old", ["old", "kid"])]
    old = trees[1]
    assert old.last_ms == T0 + 20  # the child's update is the tree's newest
    assert old.title == "A test session" and old.directory == "/w"


def test_measure_counts_every_table_and_finds_the_side_files(data: Path) -> None:
    (data / "plans").mkdir()
    (data / "plans" / f"{T0}-old-slug.md").write_text("# plan\n")
    (data / "storage" / "session_diff").mkdir(parents=True)
    (data / "storage" / "session_diff" / "kid.json").write_text("[]")
    trees = oc.scan(data / "opencode.db")
    old = trees[1]
    oc.measure(data / "opencode.db", str(data), [old])
    assert old.rows == {"part": 4, "message": 4, "todo": 2, "session_share": 2,
                        "session_context_epoch": 2, "session_input": 2, "session_message": 2,
                        "event": 6, "event_sequence": 2, "session": 2}
    assert sorted(f.rel for f in old.files) == [f"plans/{T0}-old-slug.md",
                                                "storage/session_diff/kid.json",
                                                "tool-output/tool_old1"]
    assert old.bytes > sum(f.bytes for f in old.files) > 0
    assert old.protected == []


def test_a_tool_output_outside_the_folder_or_named_by_another_tree_stays(tmp_path: Path,
                                                                           data: Path) -> None:
    elsewhere = tmp_path / "secret"
    elsewhere.write_text("not OpenCode's")
    db = data / "opencode.db"
    add_session(db, messages("x", T0, output=str(elsewhere)), session="x")
    add_session(db, messages("y", T0 + 70 * DAY, output=str(data / "tool-output" / "tool_old1")),
                session="y", updated=T0 + 70 * DAY)
    trees = {tree.id: tree for tree in oc.scan(db)}
    oc.measure(db, str(data), [trees["old"], trees["x"]])
    assert trees["x"].files == []
    assert trees["old"].files == [] and trees["old"].protected == ["tool-output/tool_old1"]


def test_remove_tree_takes_every_row_of_the_tree_and_nothing_else(data: Path) -> None:
    db = data / "opencode.db"
    trees = oc.scan(db)
    old = trees[1]
    oc.measure(db, str(data), [old])
    before_new = keyed_rows(db, "new")
    deleted = oc.remove_tree(db, old)
    assert deleted == old.rows
    assert all(n == 0 for n in keyed_rows(db, "old").values()) and not any(keyed_rows(db, "kid").values())
    assert keyed_rows(db, "new") == before_new and before_new["event"] == 3
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


def test_a_tree_that_changed_since_it_was_measured_stays_whole(data: Path) -> None:
    db = data / "opencode.db"
    old = oc.scan(db)[1]
    oc.measure(db, str(data), [old])
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO event VALUES ('evt_late', 'kid', 99, 'x', '{}')")
    conn.commit()
    conn.close()
    before = keyed_rows(db, "old")
    with pytest.raises(oc.TreeChanged):
        oc.remove_tree(db, old)
    assert keyed_rows(db, "old") == before


def test_an_archived_export_must_still_be_what_the_database_holds(data: Path) -> None:
    db = data / "opencode.db"
    old = oc.scan(db)[1]
    oc.measure(db, str(data), [old])
    exports = oc.read_exports(db, old.ids)
    document = json.loads(exports["old"])
    assert document["info"]["id"] == "old" and len(document["messages"]) == 2
    with pytest.raises(oc.TreeChanged, match="changed since it was archived"):
        oc.remove_tree(db, old, exports={**exports, "kid": exports["kid"] + b" "})
    assert keyed_rows(db, "old")["message"] == 2
    assert oc.remove_tree(db, old, exports=exports)["session"] == 2


def test_a_database_another_process_is_writing_is_left_alone(data: Path) -> None:
    db = data / "opencode.db"
    old = oc.scan(db)[1]
    oc.measure(db, str(data), [old])
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(oc.DatabaseBusy, match="busy"):
            oc.remove_tree(db, old, busy_timeout=0.1)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert keyed_rows(db, "old")["session"] == 1


def test_an_unknown_table_keyed_by_session_stops_the_removal(data: Path) -> None:
    db = data / "opencode.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE session_note (session_id text REFERENCES session(id))")
    conn.commit()
    conn.close()
    old = oc.scan(db)[1]
    with pytest.raises(StoreError, match="table session_note is keyed by session"):
        oc.measure(db, str(data), [old])


def test_an_export_archive_is_verified_private_and_never_overwritten(tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    first = write_export(str(folder), "ses_a", b'{"info": {}}\n')
    second = write_export(str(folder), "ses_a", b'{"other": 1}\n')
    assert Path(first).name == "ses_a.json" and Path(second).name == "ses_a.1.json"
    assert Path(first).read_bytes() == b'{"info": {}}\n'
    assert stat.S_IMODE(os.stat(first).st_mode) == 0o600
    assert sorted(os.listdir(folder)) == ["ses_a.1.json", "ses_a.json"]  # no temp file left


def test_usage_keeps_an_assistant_message_s_tokens_and_cost_only() -> None:
    info = {"id": "msg_1", "sessionID": "ses_1", "role": "assistant", "time": {"created": 5},
            "modelID": "m", "providerID": "p", "cost": 0.25, "tokens": ZERO,
            "path": {"cwd": "/secret"}, "error": {"message": "text"}, "summary": True}
    line = usage_only(info, {"directory": "/w", "parentID": "ses_0"})
    assert line == {"id": "msg_1", "sessionID": "ses_1", "role": "assistant",
                    "time": {"created": 5}, "providerID": "p", "modelID": "m", "cost": 0.25,
                    "tokens": ZERO, "directory": "/w", "parentSessionID": "ses_0"}
    assert usage_only({"role": "user", "id": "msg_0"}, {}) is None
