"""A session the real OpenCode 1.18.33 wrote into its own database (scripts/make_opencode_db_fixture.py:
three turns, the first calling ``read``, against the fake Messages API): detection, estimate with
1.18's rule, validate, the sessions listing and the write/restore round trips read what the
current client writes. (tests/fixtures/opencode/ is the hand-built 1.1.48 session: the rule
before 1.18 is tested on it.)"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson

from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import iter_entries
from tests.conftest import FIXTURES, run_ctxtool
from tests.opencode_builders import FIXTURE as OLD_FIXTURE
from tests.opencode_builders import PRUNE_ON
from tests.opencode_db_builder import rows

FOLDER = FIXTURES / "opencode-1.18.33"
DB = FOLDER / "opencode.db"
EXPORT = FOLDER / "export.json"
DOCUMENT = orjson.loads(EXPORT.read_bytes())
SESSION = DOCUMENT["info"]["id"]
LAST = [m["info"] for m in DOCUMENT["messages"] if m["info"]["role"] == "assistant"][-1]


def ok(*args: str, env: dict[str, str] | None = None) -> bytes:
    proc = run_ctxtool(*args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def test_written_by_1_18_33_with_a_tool_call() -> None:
    conn = sqlite3.connect(f"file:{DB}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT id, version FROM session").fetchall() == [(SESSION, "1.18.33")]
    finally:
        conn.close()
    parts = [p for m in DOCUMENT["messages"] for p in m["parts"]]
    tools = [p for p in parts if p["type"] == "tool"]
    assert [(p["tool"], p["state"]["status"]) for p in tools] == [("read", "completed")]
    assert sum(m["info"]["role"] == "user" for m in DOCUMENT["messages"]) == 3
    assert DB.stat().st_size < 400_000 and b"/tmp/" not in DB.read_bytes()


def test_detected_as_opencode_from_the_database_and_the_export_alike() -> None:
    from_db = ok("convert", str(DB))
    assert ok("convert", str(EXPORT)) == from_db
    fmt, entries = detect_format(iter_entries(from_db.splitlines(keepends=True), "s.jsonl"))
    assert fmt == "opencode"
    assert next(iter(entries))["session"]["version"] == "1.18.33"


def estimate(path: Path, *args: str) -> dict[str, Any]:
    return orjson.loads(ok("estimate", "--json", str(path), *args))


def test_estimate_anchors_on_the_last_usage_with_the_1_18_rule(tmp_path: Path) -> None:
    report = estimate(DB)
    rule = report["opencode"]
    assert report["method"] == "usage" and report["anchor"]["message_id"] == LAST["id"]
    # 1.18 counts tokens.total; its reserve is min(20,000, max output), not the older 0
    assert rule["anchor"] == LAST["id"] and rule["count"] == LAST["tokens"]["total"]
    assert rule["reserved"] == 20_000 and rule["usable"] == 200_000 - 32_000
    assert not rule["overflow"] and report["context_tokens"] == LAST["tokens"]["total"]
    text = run_ctxtool("estimate", str(DB)).stdout.decode()
    assert "OpenCode: window 200,000 - max output 32,000;" in text
    (tmp_path / "old.jsonl").write_bytes(ok("convert", str(OLD_FIXTURE / "export.json")))
    assert "before 1.18" in run_ctxtool("estimate", str(tmp_path / "old.jsonl")).stdout.decode()


def test_validate_is_quiet(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(ok("convert", str(EXPORT)))  # validate reads JSONL
    for path in (DB, tmp_path / "s.jsonl"):
        proc = run_ctxtool("validate", "--strict", str(path))
        assert proc.returncode == 0 and proc.stdout == b"", proc.stderr.decode()


def test_sessions_lists_it_with_estimate_s_figures(tmp_path: Path) -> None:
    (tmp_path / "data" / "opencode").mkdir(parents=True)
    shutil.copyfile(DB, tmp_path / "data" / "opencode" / "opencode.db")
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "CODEX_HOME": str(tmp_path / "codex"),
           "CTXTOOL_CACHE_DIR": str(tmp_path / "cache")}
    [row] = [orjson.loads(line) for line in ok("sessions", "--json", env=env).splitlines()]
    assert (row["id"], row["agent"], row["project"]) == (SESSION, "opencode", "/home/user/project")
    assert row["context_tokens"] == estimate(DB)["context_tokens"] and row["compactions"] == 0
    assert "notes.txt" in row["first_prompt"]


def test_persist_then_restore_gives_the_session_back(tmp_path: Path) -> None:
    converted = ok("convert", str(DB))
    (tmp_path / "s.jsonl").write_bytes(converted)
    env = {"CTXTOOL_STORE": str(tmp_path / "store")}
    persisted = ok("persist", "--style", "opencode", "--max-lines", "3", "--max-bytes", "200",
                   str(tmp_path / "s.jsonl"), env=env)
    assert persisted != converted
    (tmp_path / "p.jsonl").write_bytes(persisted)
    assert ok("restore", str(tmp_path / "p.jsonl"), env=env) == converted


def test_microcompact_and_restore_in_place_leave_the_database_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(DB, db)
    before = rows(db)
    ok("microcompact", "--strategy", "opencode", "--force", "--target", "0", "--in-place",
       str(db), "--session", SESSION, env=PRUNE_ON)
    changed = [r for r in rows(db) if r not in before]
    assert [r[0] for r in changed] == ["part"]
    assert "compacted" in orjson.loads(changed[0][-1])["state"]["time"]
    ok("restore", "--in-place", str(db), "--session", SESSION)
    assert [orjson.loads(r[-1]) for r in rows(db) if r[0] != "session"] == \
        [orjson.loads(r[-1]) for r in before if r[0] != "session"]
