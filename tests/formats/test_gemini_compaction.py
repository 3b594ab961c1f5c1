"""Gemini CLI's compression as ctxtool reads and writes it (ctxtool/formats/gemini/compaction.py),
on the sessions the real client 0.61.0 wrote (tests/fixtures/gemini-cli-0.61.0) and small ones
made here."""

from __future__ import annotations

from typing import Any

import orjson

from ctxtool.formats.gemini.compaction import (ACKNOWLEDGEMENT, compression_starts,
                                               count_compressions, history_records,
                                               is_acknowledgement, is_context_message,
                                               is_snapshot, snapshot_text, wrap_snapshot)
from ctxtool.formats.gemini.records import checkpoint_list as checkpoint_messages
from tests.conftest import FIXTURES

GEMINI = FIXTURES / "gemini-cli-0.61.0"


def read(name: str) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in (GEMINI / name).read_bytes().splitlines()]


def last_checkpoint(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = [m for e in entries if (m := checkpoint_messages(e)) is not None]
    return found[-1]


def user(id_: str, text: str) -> dict[str, Any]:
    return {"id": id_, "timestamp": "2026-11-27T16:00:00.000Z", "type": "user",
            "content": [{"text": text}]}


def model(id_: str, text: str, **more: Any) -> dict[str, Any]:
    return {"id": id_, "timestamp": "2026-11-27T16:00:01.000Z", "type": "gemini",
            "content": text, **more}


def test_gemini_own_snapshot_is_recognised_in_the_compressed_fixture() -> None:
    entries = read("compressed.jsonl")
    messages = checkpoint_messages(entries[19])
    assert messages is not None
    context, snapshot, thanks, prompt, call = messages
    assert is_context_message(context) and not is_snapshot(context)
    assert is_snapshot(snapshot)
    assert snapshot_text(snapshot) == (
        "<overall_goal>Know what notes.txt holds.</overall_goal>\n<key_knowledge>notes.txt has 10 "
        "lines of alpha beta gamma.</key_knowledge>\n<task_state>Answered.</task_state>")
    assert is_acknowledgement(thanks) and not is_acknowledgement(call)
    assert not is_snapshot(prompt) and not is_context_message(prompt)
    assert [(i, where) for i, where in compression_starts(entries)] == [(19, None)]


def test_sessions_without_compression_count_none() -> None:
    for name in ("new.jsonl", "resumed.jsonl", "same-minute.jsonl"):
        assert count_compressions(read(name)) == 0, name
    assert count_compressions(read("compressed.jsonl")) == 1


def test_a_snapshot_written_again_by_a_resume_is_the_same_compression() -> None:
    entries = read("compressed.jsonl")
    again = {"$set": {"messages": checkpoint_messages(entries[19]) + [user("u9", "more?")]}}
    second = {"$set": {"messages": [user("ctx", "<session_context>\nx\n</session_context>"),
                                    user("s2", wrap_snapshot("newer summary")),
                                    model("a2", ACKNOWLEDGEMENT)]}}
    session = [*entries, again, second, again]
    assert [i for i, _ in compression_starts(session)] == [19, len(entries) + 1]
    # a snapshot record standing alone (filter-compacted's output) is one too
    alone = [entries[0], *checkpoint_messages(entries[19])]
    assert count_compressions(alone) == 1


def test_the_snapshot_wraps_a_summary_once() -> None:
    assert wrap_snapshot(" 1. Primary Request\n") == "<state_snapshot>\n1. Primary Request\n</state_snapshot>"
    own = "<state_snapshot>\n<overall_goal>x</overall_goal>\n</state_snapshot>"
    assert wrap_snapshot(own) == own
    assert snapshot_text(user("s", wrap_snapshot("the nine sections"))) == "the nine sections"
    assert snapshot_text(user("s", "<state_snapshot> not closed")) == "<state_snapshot> not closed"
    assert snapshot_text(model("m", "<state_snapshot>x</state_snapshot>")) is None


def test_history_records_are_what_a_resume_sends_each_result_once() -> None:
    """The resumed fixture's checkpoint holds the read_file result three times (the call's
    toolCalls, the <id>_response record, the user record that answered it): written as Gemini
    holds a history, the call's content carries the functionCall and the result comes once."""
    conversation = last_checkpoint(read("resumed.jsonl"))
    kept = history_records(conversation)
    assert [m["type"] for m in kept] == ["user", "gemini", "user", "gemini", "user", "gemini"]
    assert all(set(m) == {"id", "timestamp", "type", "content"} for m in kept)
    prompt, call, result = kept[:3]
    assert prompt["content"] == [{"text": "What is in notes.txt?"}]
    assert [list(p) for p in call["content"]] == [["text"], ["functionCall"]]
    assert result["id"] == conversation[3]["id"]  # the first of the three, <id>_response
    responses = [p for m in kept for p in m["content"] if "functionResponse" in p]
    assert len(responses) == 1 and "line 10: alpha beta gamma" in str(responses[0])
    assert kept[-2]["content"] == [{"text": "Which word comes second?"}]


def test_history_records_from_a_first_run_session() -> None:
    """new.jsonl's records (the call written with toolCalls, the result as a user record): the
    call's content gets the functionCall part from toolCalls, the thoughts come first, info
    messages and the session context are left out, a result nobody answered becomes
    <id>_response."""
    entries = read("new.jsonl")
    call = entries[6]
    thinking = {**call, "thoughts": [{"subject": "Plan", "description": "read the file"}]}
    records = [checkpoint_messages(entries[1])[0], entries[2], thinking,
               {"id": "i1", "type": "info", "content": "Switched model"}, entries[7], entries[9]]
    kept = history_records(records)
    assert [m["type"] for m in kept] == ["user", "gemini", "user", "gemini"]
    assert kept[1]["content"][0] == {"text": "**Plan** read the file", "thought": True}
    assert kept[1]["content"][1] == {"text": "Let me read it."}
    assert kept[1]["content"][2]["functionCall"]["name"] == "read_file"
    assert kept[2]["id"] == entries[7]["id"]
    unanswered = history_records([entries[2], call])
    assert unanswered[-1]["id"] == f"{call['id']}_response"
    assert unanswered[-1]["content"] == call["toolCalls"][0]["result"]


def test_user_messages_gemini_drops_on_resume() -> None:
    for text in ("/compress", "?", "<session_context>\nctx", "<hook_context>x", "  "):
        assert is_context_message(user("u", text)), text
    assert not is_context_message(user("u", "fix the bug /now"))
    result = {**user("r", ""), "content": [{"functionResponse": {"id": "c", "name": "ls"}}]}
    assert not is_context_message(result)
    assert history_records([user("a", "/stats"), user("b", "real request")]) == [
        user("b", "real request")]
