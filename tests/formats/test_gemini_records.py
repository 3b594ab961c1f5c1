"""Replaying a Gemini CLI session as Gemini CLI 0.61.0 loads it (formats/gemini/records.py) and
the history it sends on resume (formats/gemini/history.py): on the sessions the real client
wrote (tests/fixtures/gemini-cli-0.61.0) and on small logs written here for the rules the
fixtures do not show ($rewindTo, a metadata line with messages, the one-document form)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from ctxtool.formats.gemini.history import ViewRecord, sent_records
from ctxtool.formats.gemini.compaction import is_compression_line as is_compression
from ctxtool.formats.gemini.records import (Where, every_record, line_kind, record_at, replay,
                                            replay_document)
from ctxtool.formats.jsonl import iter_entries
from tests.conftest import FIXTURES

GEMINI = FIXTURES / "gemini-cli-0.61.0"
CONTEXT_ID = "d04923d38bb0f6017037e74183378ef4"
META = {"sessionId": "s1", "projectHash": "h1", "startTime": "t0", "lastUpdated": "t0",
        "kind": "main"}


def read(name: str) -> list[Any]:
    return list(iter_entries(io.BytesIO((GEMINI / name).read_bytes()), name))


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "timestamp": "t", "type": "user", "content": [{"text": text}]}


def model(message_id: str, text: str, **more: Any) -> dict[str, Any]:
    return {"id": message_id, "timestamp": "t", "type": "gemini", "content": text, **more}


def ids(entries: list[Any]) -> list[str]:
    return [m.id for m in replay(entries).messages]


def test_new_session_keeps_the_call_in_its_first_place_with_its_last_record() -> None:
    entries = read("new.jsonl")
    conversation = replay(entries)
    assert conversation.session_id == "5e551011-0000-4000-8000-000000000001"
    assert conversation.is_complete and conversation.checkpoint == 1
    assert [m.id for m in conversation.messages] == [
        CONTEXT_ID, entries[2]["id"], entries[4]["id"], entries[7]["id"], entries[9]["id"]]
    call = conversation.messages[2]
    assert call.record is entries[6] and "toolCalls" in call.record  # line 7, not line 5
    assert call.writes == [Where(4), Where(6)]
    assert conversation.messages[0].where == Where(1, 0)  # in the start checkpoint
    assert "messages" not in conversation.metadata
    assert conversation.metadata["lastUpdated"] == entries[-1]["$set"]["lastUpdated"]


def test_resumed_session_folds_the_response_listed_twice() -> None:
    entries = read("resumed.jsonl")
    conversation = replay(entries)
    got = [m.id for m in conversation.messages]
    call_id = entries[6]["id"]
    assert got.count(f"{call_id}_response") == 1
    response = conversation.by_id()[f"{call_id}_response"]
    assert [w.line for w in response.writes] == [18, 18]  # line 19 lists it twice
    assert response.where == Where(18, 4)
    assert got[-2:] == [entries[19]["id"], entries[21]["id"]]  # appended after line 19
    assert record_at(entries, response.where) is response.record


def test_compression_replaces_the_history() -> None:
    entries = read("compressed.jsonl")
    conversation = replay(entries)
    assert conversation.checkpoint == 19
    texts = [m.record["content"] for m in conversation.messages[:2]]
    assert texts[1][0]["text"].startswith("<state_snapshot>")
    assert entries[17]["id"] not in ids(entries)  # the kept call is there under a new id
    assert [is_compression(e) for e in entries].count(True) == 1
    assert is_compression(entries[19]) and not is_compression(entries[12])
    # every message ever written is still in the file, the old ones as dead bytes
    assert entries[17]["id"] in every_record(entries)


def test_same_minute_restart_then_resume_restores_the_history() -> None:
    entries = read("same-minute.jsonl")
    assert replay(entries[:13]).records()[0]["id"] == CONTEXT_ID
    assert len(replay(entries[:13]).messages) == 1  # the fresh start dropped the history
    assert len(replay(entries).messages) == 8


def test_rewind_drops_the_message_and_every_later_one() -> None:
    lines = [META, user("u1", "one"), model("m1", "1"), user("u2", "two"), model("m2", "2"),
             {"$rewindTo": "u2"}, user("u3", "three")]
    assert ids(lines) == ["u1", "m1", "u3"]


def test_rewind_to_an_unknown_id_drops_everything() -> None:
    assert ids([META, user("u1", "one"), {"$rewindTo": "nope"}, user("u2", "two")]) == ["u2"]


def test_a_rewind_is_tested_first_and_lines_gemini_skips_are_skipped() -> None:
    odd = {"$rewindTo": "u1", "id": "x", "type": "user"}  # a rewind, whatever else it holds
    assert line_kind(odd) == "rewind"
    lines = [META, user("u1", "one"), [1, 2], "text", {"id": 7}, {"other": 1}, odd]
    assert ids(lines) == []


def test_a_metadata_line_with_messages_adds_them() -> None:
    lines = [user("u0", "before"), {**META, "messages": [user("u1", "one"), model("m1", "1")]}]
    conversation = replay(lines)
    assert [m.id for m in conversation.messages] == ["u0", "u1", "m1"]
    assert conversation.messages[2].where == Where(1, 1)
    assert conversation.is_complete


def test_a_checkpoint_clears_what_came_before_and_merges_metadata() -> None:
    lines = [META, user("u1", "one"), {"$set": {"messages": [user("u2", "two")], "summary": "S"}},
             {"$set": {"lastUpdated": "t9"}}]
    conversation = replay(lines)
    assert [m.id for m in conversation.messages] == ["u2"]
    assert conversation.metadata["summary"] == "S" and conversation.metadata["lastUpdated"] == "t9"


def test_lines_without_the_session_names_are_incomplete() -> None:
    assert not replay([user("u1", "one")]).is_complete


def test_the_one_document_form_keeps_its_list_as_it_is() -> None:
    document = {**META, "messages": [user("u1", "one"), user("u1", "again"), model("m1", "1")]}
    conversation = replay_document(document)
    assert conversation is not None
    assert [m.id for m in conversation.messages] == ["u1", "u1", "m1"]
    assert conversation.messages[2].where == Where(0, 2)
    assert replay_document({"messages": []}) is None and replay_document([1]) is None


def call(call_id: str, output: str) -> dict[str, Any]:
    return {"id": call_id, "name": "read_file", "args": {"file_path": "a"},
            "result": [{"functionResponse": {"id": call_id, "name": "read_file",
                                             "response": {"output": output}}}]}


def test_the_first_resume_sends_each_result_twice() -> None:
    entries = read("new.jsonl")
    view = sent_records(replay(entries), entries)
    kinds = [(r["type"], r["id"][-9:]) for r in view]
    call_id = entries[6]["id"]
    assert [r["id"] for r in view] == [CONTEXT_ID, entries[2]["id"], call_id,
                                       f"{call_id}_response", entries[7]["id"], entries[9]["id"]]
    assert view[3]["content"] == entries[7]["content"]  # the copy from toolCalls[].result
    assert view[2] is entries[6] or isinstance(view[2], ViewRecord), kinds
    anchor = view[-1]
    assert isinstance(anchor, ViewRecord) and anchor.resent == entries[7]["content"]
    assert anchor.location == "new.jsonl:10"


def test_the_next_resume_sends_it_three_times_and_nothing_is_resent() -> None:
    entries = read("resumed.jsonl")
    view = sent_records(replay(entries), entries)
    call_id = entries[6]["id"]
    assert [r["id"] for r in view].count(f"{call_id}_response") == 2  # the copy and the record
    results = [r for r in view if any("functionResponse" in p for p in r.get("content") or []
                                      if isinstance(p, dict))]
    assert len(results) == 3
    assert view[-1].resent == []  # its call was already sent all three


def test_notices_and_commands_are_not_sent_and_one_session_context_leads() -> None:
    context = user(CONTEXT_ID, "<session_context>\nhere")
    lines = [META, {"$set": {"messages": [context]}}, user("u1", "/help"),
             {"id": "i1", "timestamp": "t", "type": "info", "content": "Request cancelled."},
             user("u2", "real"), model("m1", ""), model("m2", "answer"),
             user("u3", "<session_context>\nagain")]
    assert [r["id"] for r in sent_records(replay(lines), lines)] == [CONTEXT_ID, "u2", "m2"]


def test_a_string_result_is_sent_as_its_output() -> None:
    lines = [META, model("m1", "reading", toolCalls=[{**call("c1", "x"), "result": "plain"}])]
    view = sent_records(replay(lines), lines)
    assert view[1]["content"] == [{"functionResponse": {"id": "c1", "name": "read_file",
                                                        "response": {"output": "plain"}}}]


@pytest.mark.parametrize("name", ["new.jsonl", "resumed.jsonl", "compressed.jsonl",
                                  "same-minute.jsonl"])
def test_every_view_record_names_its_line(name: str) -> None:
    entries = read(name)
    for record in sent_records(replay(entries), entries):
        assert record.location.startswith(f"{name}:")
