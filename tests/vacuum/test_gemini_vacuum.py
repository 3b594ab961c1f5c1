"""What vacuum takes out of a Gemini CLI session file (ctxtool/formats/gemini/vacuum.py,
docs/vacuum.md#gemini-cli): records the loader no longer uses. The loader's side, replayed
here by ctxtool's own replay (formats/gemini/records.py); the real client's loader and resume
are tests/e2e/test_gemini_disk.py."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ctxtool.core.vacuuming.lines import FileVacuum, plan_lines
from ctxtool.core.vacuuming.recipe import rebuild
from ctxtool.formats.gemini.listing import is_resumable
from ctxtool.formats.gemini.records import replay
from ctxtool.formats.gemini.vacuum import (DEAD, OVERWRITTEN, REPEATED, first_prompt_text,
                                           gemini_dead_lines)
from tests.conftest import run_ctxtool
from tests.gemini_builders import FIXTURES, dump, metadata, random_session

FIXTURE_NAMES = ["new", "resumed", "compressed", "same-minute"]


def vacuumed(lines: list[bytes]) -> tuple[bytes, dict[str, Any], dict[str, bytes]]:
    plan = plan_lines(lines, "gemini", source="test")
    store: dict[str, bytes] = {}

    def keep(data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        store[digest] = data
        return digest

    writer = FileVacuum(plan, keep, source="test")
    out = b"".join(writer.write(lines))
    return out, writer.result(), store


def loaded(data: bytes) -> dict[str, Any]:
    """What the loader keeps of a file: metadata, messages, and the first prompt the session
    list shows (the first resumable user record with content, in file order)."""
    entries = []
    first = None
    for raw in data.splitlines(keepends=True):
        try:
            entry = json.loads(raw)
        except ValueError:
            entry = None
        entries.append(entry)
        listed = entry.get("$set", {}).get("messages") if isinstance(entry, dict) and \
            isinstance(entry.get("$set"), dict) else None
        for record in listed if isinstance(listed, list) else [entry]:
            if first is None and isinstance(record, dict) and isinstance(record.get("id"), str) \
                    and record.get("type") == "user" and record.get("content") \
                    and is_resumable(record) and first_prompt_text(record["content"]):
                first = first_prompt_text(record["content"])
    conversation = replay(e if e is not None else _Invalid() for e in entries)
    return {"metadata": conversation.metadata, "messages": conversation.records(),
            "first_prompt": first}


class _Invalid(dict):  # type: ignore[type-arg]
    invalid = True


def lines_of(name: str) -> list[bytes]:
    return (FIXTURES / f"{name}.jsonl").read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_the_real_sessions_load_the_same_and_restore_byte_for_byte(name: str) -> None:
    lines = lines_of(name)
    out, recipe, store = vacuumed(lines)
    original = b"".join(lines)
    assert len(out) < len(original)
    assert loaded(out) == loaded(original)
    assert b"".join(rebuild(recipe, out.splitlines(keepends=True), store.get, "t")) == original


def test_figures_on_the_real_sessions() -> None:
    """Bytes each fixture the real client wrote gives back (docs/vacuum.md quotes them)."""
    saved = {name: vacuumed(lines_of(name))[1]["original"]["bytes"] - len(vacuumed(lines_of(name))[0])
             for name in FIXTURE_NAMES}
    assert saved == {"new": 364, "resumed": 6977, "compressed": 7565, "same-minute": 3513}


@pytest.mark.parametrize("seed", range(60))
def test_random_logs_load_the_same_and_restore(seed: int) -> None:
    lines = random_session(seed)
    out, recipe, store = vacuumed(lines)
    assert loaded(out) == loaded(b"".join(lines))
    assert b"".join(rebuild(recipe, out.splitlines(keepends=True), store.get, "t")) \
        == b"".join(lines)


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "timestamp": "t", "type": "user", "content": [{"text": text}]}


def model(message_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": message_id, "timestamp": "t", "type": "gemini", "content": text, **extra}


def edits(records: list[Any]) -> dict[int, Any]:
    lines = [dump(metadata("s")), *(dump(r) if not isinstance(r, bytes) else r for r in records)]
    return {e.index: e for e in gemini_dead_lines(iter(lines))}


def test_before_the_last_checkpoint_records_go_the_first_prompt_stays() -> None:
    found = edits([{"$set": {"messages": [user("ctx", "<session_context>x</session_context>")],
                             "lastUpdated": "1"}},
                   user("a", "first question"), {"$set": {"lastUpdated": "2"}},
                   model("b", "answer"), {"$rewindTo": "b"}, user("c", "second"),
                   {"$set": {"messages": [user("a", "first question"), user("c", "second")],
                             "lastUpdated": "3"}},
                   {"$set": {"lastUpdated": "4"}}])
    assert {i: e.reason for i, e in found.items()} == {
        1: DEAD, 3: OVERWRITTEN, 4: DEAD, 5: DEAD, 6: DEAD}  # line 2: the first prompt
    assert all(e.new is None for e in found.values())


def test_a_write_replaced_by_a_later_one_keeps_its_place_as_a_bare_id() -> None:
    call = model("b", "calling", toolCalls=[{"id": "c", "name": "read_file", "result": []}])
    found = edits([{"$set": {"messages": [user("a", "hi")]}}, model("b", "calling"),
                   user("r", "result"), call])
    assert set(found) == {2}
    assert found[2].reason == REPEATED and found[2].new == b'{"id":"b"}\n'


def test_an_id_twice_in_the_last_checkpoint_keeps_its_first_place_and_last_record() -> None:
    response = {"id": "b_response", "type": "user", "content": [
        {"functionResponse": {"id": "c", "name": "read_file", "response": {"output": "x"}}}]}
    checkpoint = {"$set": {"messages": [user("a", "hi"), response, model("b", "ok"),
                                        response], "lastUpdated": "1"}}
    found = edits([checkpoint])
    new = json.loads(found[1].new)
    assert [m.get("type") for m in new["$set"]["messages"]] == ["user", None, "gemini", "user"]
    assert new["$set"]["messages"][1] == {"id": "b_response"}
    original = [dump(metadata("s")), dump(checkpoint)]
    assert loaded(vacuumed(original)[0]) == loaded(b"".join(original))


def test_the_memory_scratchpad_stays_stale_when_it_was() -> None:
    found = edits([{"$set": {"memoryScratchpad": "notes"}}, user("a", "hi"), model("b", "x"),
                   {"$set": {"messages": [user("a", "hi")], "lastUpdated": "1"}}])
    assert 2 not in found  # the first message after the scratchpad: it makes it stale
    assert 3 in found


def test_a_line_ctxtool_cannot_parse_leaves_the_file_alone() -> None:
    assert edits([{"$set": {"messages": [], "lastUpdated": "1"}}, b'{"broken\n',
                  {"$set": {"messages": [], "lastUpdated": "2"}}]) == {}


def test_a_last_line_being_written_is_left_and_a_one_document_session_too() -> None:
    lines = [dump(metadata("s")), dump({"$set": {"messages": [], "lastUpdated": "1"}}),
             dump({"$set": {"lastUpdated": "2"}}), b'{"$set":{"lastUpdated":"3"}}']
    assert list(gemini_dead_lines(iter(lines))) == []  # the last lastUpdated is line 2 yet
    document = json.dumps({**metadata("s"), "messages": [user("a", "hi")]}, indent=2)
    assert list(gemini_dead_lines(iter(document.encode().splitlines(keepends=True)))) == []


def test_an_earlier_checkpoint_keeps_a_key_nothing_later_sets() -> None:
    found = edits([user("a", "hi"),
                   {"$set": {"messages": [model("b", "x")], "summary": "old title"}},
                   {"$set": {"messages": [model("b", "x")], "lastUpdated": "2"}}])
    assert json.loads(found[2].new) == {"$set": {"summary": "old title"}}
    assert 1 not in found  # the first prompt


def test_vacuum_and_restore_from_the_command_line(tmp_path: Path) -> None:
    session = tmp_path / "session-2026-11-27T16-22-5e551011.jsonl"
    session.write_bytes((FIXTURES / "resumed.jsonl").read_bytes())
    result = run_ctxtool("vacuum", "--in-place", "--force", "--json", str(session))
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout.splitlines()[0])
    assert (record["format"], record["bytes_before"], record["bytes_after"]) == \
        ("gemini", 11436, 4459)
    back = run_ctxtool("restore", "--in-place", "--force", str(session))
    assert back.returncode == 0, back.stderr
    assert session.read_bytes() == (FIXTURES / "resumed.jsonl").read_bytes()


def test_the_sweep_finds_gemini_sessions_where_the_client_keeps_them(tmp_path: Path) -> None:
    from tests.gemini_builders import write_session

    path = write_session(tmp_path, "session-2026-11-27T16-22-5e551011.jsonl",
                         (FIXTURES / "resumed.jsonl").read_bytes())
    os.utime(path, (path.stat().st_mtime - 7200,) * 2)  # not in use
    env = {"HOME": str(tmp_path), "CTXTOOL_CACHE_DIR": "off"}
    result = run_ctxtool("vacuum", "--all", "--apply", "--agent", "gemini", "--json", env=env)
    assert result.returncode == 0, result.stderr
    session = json.loads(result.stdout.splitlines()[0])
    assert (session["path"], session["bytes_after"]) == (str(path), 4459)
    assert path.stat().st_size == 4459
    back = run_ctxtool("restore", "--in-place", "--force", str(path), env=env)
    assert back.returncode == 0 and path.read_bytes() == (FIXTURES / "resumed.jsonl").read_bytes()
