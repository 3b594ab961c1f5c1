"""The facts docs/gemini-format.md cites from the sessions the real Gemini CLI 0.61.0 wrote
(tests/fixtures/gemini-cli-0.61.0), held here so that regenerating them
(scripts/make_gemini_fixture.py) with another client version shows what changed."""

from __future__ import annotations

from typing import Any

import orjson

from tests.conftest import FIXTURES

GEMINI = FIXTURES / "gemini-cli-0.61.0"
CONTEXT_ID = "d04923d38bb0f6017037e74183378ef4"  # Gemini's <session_context> message


def lines(name: str) -> dict[int, dict[str, Any]]:
    """The session's lines by number (1-based, as the docs cite them)."""
    return {n: orjson.loads(raw) for n, raw in
            enumerate((GEMINI / name).read_bytes().splitlines(), start=1)}


def checkpoint(line: dict[str, Any]) -> list[dict[str, Any]]:
    return line["$set"]["messages"]


def test_new_session_lines() -> None:
    got = lines("new.jsonl")
    assert set(got[1]) == {"sessionId", "projectHash", "startTime", "lastUpdated", "kind"}
    assert [m["id"] for m in checkpoint(got[2])] == [CONTEXT_ID]
    assert checkpoint(got[2])[0]["content"][0]["text"].startswith("<session_context>")
    assert got[3]["type"] == "user" and got[3]["content"] == [{"text": "What is in notes.txt?"}]
    assert set(got[4]) == {"$set"} and set(got[4]["$set"]) == {"lastUpdated"}
    # the call's record twice under one id, first without toolCalls; same tokens
    assert got[5]["id"] == got[7]["id"] and "toolCalls" not in got[5]
    assert got[5]["tokens"] == got[7]["tokens"]
    assert set(got[5]["tokens"]) == {"input", "output", "cached", "thoughts", "tool", "total"}
    # its result stored twice: in toolCalls[].result and as the user record answering it
    assert got[7]["toolCalls"][0]["result"] == got[8]["content"]
    assert "functionResponse" in got[8]["content"][0]


def test_each_resume_writes_session_id_and_a_checkpoint() -> None:
    got = lines("resumed.jsonl")
    call_id = got[7]["id"]
    assert got[12] == {"$set": {"sessionId": got[1]["sessionId"]}} == got[18]
    ids = [m["id"] for m in checkpoint(got[13])]
    assert ids == [CONTEXT_ID, got[3]["id"], call_id, f"{call_id}_response", got[8]["id"],
                   got[10]["id"]]
    after = [m["id"] for m in checkpoint(got[19])]
    assert after.count(f"{call_id}_response") == 2
    # after a resume the call's content holds the functionCall part
    model = checkpoint(got[13])[2]
    assert [next(iter(p)) for p in model["content"]] == ["text", "functionCall"]


def test_compression_rewrites_the_history_under_new_ids() -> None:
    got = lines("compressed.jsonl")
    messages = checkpoint(got[20])
    assert got[19] == {"$set": {"sessionId": got[1]["sessionId"]}}
    assert messages[0]["id"] == CONTEXT_ID
    assert messages[1]["type"] == "user" and messages[1]["content"][0]["text"].startswith(
        "<state_snapshot>")
    assert messages[2]["content"] == [{"text": "Got it. Thanks for the additional context!"}]
    assert messages[3]["content"] == [{"text": "What does line 2 say?"}]
    kept_call = messages[4]
    assert "toolCalls" not in kept_call and "functionCall" in kept_call["content"][0]
    earlier = {line.get("id") for n, line in got.items() if n < 20}
    assert not {m["id"] for m in messages[1:]} & earlier  # new ids, the old call's record gone
    assert got[18]["toolCalls"] and got[21]["content"][0]["functionResponse"]


def test_a_resume_in_the_first_minute_writes_a_fresh_start_into_the_file() -> None:
    got = lines("same-minute.jsonl")
    assert set(got[12]) == set(got[1]) and got[12]["startTime"] > got[1]["startTime"]
    assert [m["id"] for m in checkpoint(got[13])] == [CONTEXT_ID]
    assert len(checkpoint(got[15])) == 6  # the resume's own checkpoint brings the history back
