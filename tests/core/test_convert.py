"""convert: transcripts as plain Anthropic / OpenAI API message lists."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from ctxtool.core.messages.convert import (
    INTERRUPTED, NOT_INCLUDED, ConvertReport, merge_streamed, to_anthropic, to_openai,
)
from tests.api_message_rules import anthropic_problems, openai_problems

CC = "claude-code"
PNG = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def entry(kind: str, uuid: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if "mid" in extra:
        message["id"] = extra.pop("mid")
    return {"type": kind, "uuid": uuid, "parentUuid": None, "isSidechain": False,
            "message": message, **extra}


def use(tool_id: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": "ls"}, **extra}


def result(tool_id: str, content: Any = "out", **extra: Any) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, **extra}


def anthropic(entries: list[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    out = list(to_anthropic(entries, CC, **options))
    assert anthropic_problems(out) == []
    return out


def openai(entries: list[dict[str, Any]], fmt: str = CC, **options: Any) -> list[dict[str, Any]]:
    out = list(to_openai(entries, fmt, **options))
    assert openai_problems(out) == []
    return out


SESSION = [
    {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
    entry("user", "u1", "list the files"),
    entry("assistant", "a1", [{"type": "thinking", "thinking": "hmm", "signature": "sig"}],
          mid="m1"),
    entry("assistant", "a2", [{"type": "text", "text": "Listing."}], mid="m1"),
    entry("assistant", "a3", [use("t1", caller={"type": "direct"})], mid="m1"),
    {"type": "progress", "uuid": "p", "data": {}},
    entry("user", "r1", [result("t1", "a.py\nb.py")]),
    entry("assistant", "a4", [use("t2")], mid="m1"),
    entry("user", "r2", [result("t2", [{"type": "text", "text": "c.py"},
                                       {"type": "image", "source": PNG}])]),
    {"type": "system", "subtype": "turn_duration", "uuid": "s"},
    entry("assistant", "a5", [{"type": "text", "text": "Three files.  \n"}], mid="m2"),
]


def test_a_claude_code_session_becomes_anthropic_messages() -> None:
    before = copy.deepcopy(SESSION)
    report = ConvertReport()
    out = anthropic(SESSION, report=report)
    assert out == [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.py\nb.py"},
            {"type": "tool_result", "tool_use_id": "t2", "content": [
                {"type": "text", "text": "c.py"}, {"type": "image", "source": PNG}]}]},
        {"role": "assistant", "content": "Three files."},
    ]
    assert report.streamed_lines_merged == 3 and report.same_role_merged == 1
    assert report.dropped_blocks == {"thinking": 1} and report.messages_out == 4
    assert SESSION == before


def test_signed_thinking_is_kept_on_request() -> None:
    out = anthropic(SESSION, thinking="keep")
    assert out[1]["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    unsigned = [entry("user", "u", "q"), entry("assistant", "a", [
        {"type": "thinking", "thinking": "no signature"}, {"type": "text", "text": "ok"}])]
    assert anthropic(unsigned, thinking="keep")[1] == {"role": "assistant", "content": "ok"}


def test_a_dangling_tool_use_gets_an_interrupted_error_result() -> None:
    entries = [entry("user", "u", "go"), entry("assistant", "a", [use("t1"), use("t2")]),
               entry("user", "r", [result("t2")]),
               entry("user", "i", [{"type": "text", "text": "[Request interrupted by user]"}]),
               entry("assistant", "b", [use("t3")])]
    report = ConvertReport()
    out = anthropic(entries, report=report)
    assert out[2]["content"][:2] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": INTERRUPTED, "is_error": True},
        result("t2")]
    assert out[2]["content"][2]["text"] == "[Request interrupted by user]"
    assert out[-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t3", "content": INTERRUPTED, "is_error": True}]}
    assert report.interrupted_results == 2


def test_results_without_their_tool_use_become_text() -> None:
    entries = [entry("user", "r", [result("gone", "old output")]),
               entry("assistant", "a", [use("t1")]),
               entry("user", "r2", [result("t1"), result("t1", "again")])]
    report = ConvertReport()
    out = anthropic(entries, report=report)
    assert out[0] == {"role": "user", "content": "[tool result for gone]\nold output"}
    assert out[2]["content"] == [result("t1"),
                                 {"type": "text", "text": "[tool result for t1]\nagain"}]
    assert report.orphan_results == 2


def test_text_before_results_is_moved_after_them() -> None:
    entries = [entry("user", "u", "go"), entry("assistant", "a", [use("t1")]),
               entry("user", "m", "a note typed while the tool ran", isMeta=True),
               entry("user", "r", [result("t1")])]
    assert anthropic(entries)[2]["content"] == [
        result("t1"), {"type": "text", "text": "a note typed while the tool ran"}]


def test_a_list_that_starts_with_the_assistant_gets_a_first_user_message() -> None:
    out = anthropic([entry("assistant", "a", [{"type": "text", "text": "hello"}]),
                     entry("user", "u", "hi")])
    assert out[0] == {"role": "user", "content": NOT_INCLUDED}


def test_empty_messages_api_errors_and_unknown_blocks_are_left_out() -> None:
    entries = [entry("user", "u", "q"),
               {**entry("assistant", "e", [{"type": "text", "text": "API Error: 529"}]),
                "isApiErrorMessage": True},
               entry("assistant", "a", [{"type": "server_tool_use", "id": "s", "name": "web"},
                                        {"type": "text", "text": "   "}]),
               entry("user", "u2", [{"type": "text", "text": ""},
                                    {"type": "text", "text": "more"}])]
    report = ConvertReport()
    assert anthropic(entries, report=report) == [{"role": "user", "content": [
        {"type": "text", "text": "q"}, {"type": "text", "text": "more"}]}]
    assert report.dropped_blocks == {"server_tool_use": 1}


@pytest.mark.parametrize("run", [1, 2, 3, 5, 20_000])
def test_a_run_of_one_role_becomes_one_message_with_every_block_in_order(run: int) -> None:
    users = [entry("user", f"u{i}", f"line {i}") for i in range(run)]
    entries = [entry("assistant", "a0", [{"type": "text", "text": "hi"}]), *users,
               entry("assistant", "a1", [{"type": "text", "text": "bye"}])]
    before = copy.deepcopy(entries)
    report = ConvertReport()
    out = anthropic(entries, report=report)
    blocks = [{"type": "text", "text": f"line {i}"} for i in range(run)]
    assert out[2] == {"role": "user", "content": blocks if run > 1 else "line 0"}
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant"]
    assert report.same_role_merged == run - 1 and report.messages_out == 4
    assert entries == before


def test_a_merged_run_answers_every_call_of_the_run_before_it() -> None:
    calls = [entry("assistant", f"a{i}", [use(f"t{i}")]) for i in range(3000)]
    results = [entry("user", f"r{i}", [result(f"t{i}", f"out {i}")]) for i in reversed(range(3000))]
    stray = entry("user", "s", [result({"not": "a string"}, "odd")])
    report = ConvertReport()
    out = anthropic([entry("user", "u", "go"), *calls, *results, stray], report=report)
    assert [b["id"] for b in out[1]["content"]] == [f"t{i}" for i in range(3000)]
    assert out[2]["content"][:3000] == [result(f"t{i}", f"out {i}") for i in range(3000)]
    assert out[2]["content"][3000] == {"type": "text",
                                       "text": "[tool result for {'not': 'a string'}]\nodd"}
    assert (report.same_role_merged, report.orphan_results, report.interrupted_results) == \
        (2999 + 3000, 1, 0)


def test_a_response_streamed_as_many_lines_keeps_each_block_once_in_order() -> None:
    lines = [entry("assistant", f"l{i}", [{"type": "text", "text": f"part {i % 15_000}"}],
                   mid="m1") for i in range(20_000)]  # the last 5,000 repeat earlier blocks
    lines += [entry("assistant", "n1", [use("t1", input={"n": 1})], mid="m1"),
              entry("assistant", "n2", [use("t1", input={"n": 1.0})], mid="m1"),  # == the above
              entry("assistant", "n3", [use("t1", input={"n": 2})], mid="m1"),
              # hash(-1) == hash(-2) in Python: unequal blocks of one hash are both kept
              entry("assistant", "h1", [use("t2", input={"n": -1})], mid="m1"),
              entry("assistant", "h2", [use("t2", input={"n": -2}), use("t2", input={"n": -1})],
                    mid="m1"),
              entry("assistant", "h3", [use("t2", input={"n": -2})], mid="m1")]
    report = ConvertReport()
    (merged,) = list(merge_streamed(lines, report=report))
    content = merged["message"]["content"]
    assert content[:15_000] == [{"type": "text", "text": f"part {i}"} for i in range(15_000)]
    assert content[15_000:] == [use("t1", input={"n": 1}), use("t1", input={"n": 2}),
                                use("t2", input={"n": -1}), use("t2", input={"n": -2})]
    assert report.streamed_lines_merged == 20_005


def test_merge_streamed_keeps_single_lines_untouched() -> None:
    single = entry("assistant", "a", [{"type": "text", "text": "x"}], mid="m9")
    lines = [entry("assistant", "l1", [use("t1")], mid="m1"),
             entry("user", "r1", [result("t1")]),
             entry("assistant", "l2", [use("t1")], mid="m1"),  # a repeated block adds nothing
             single]
    out = list(merge_streamed(lines))
    assert [e["uuid"] for e in out] == ["l1", "r1", "a"]
    assert out[0]["message"]["content"] == [use("t1")] and out[2] is single


def test_openai_messages() -> None:
    report = ConvertReport()
    out = openai(SESSION, report=report)
    assert out == [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "Listing.", "tool_calls": [
            {"id": "t1", "type": "function",
             "function": {"name": "Bash", "arguments": '{"command":"ls"}'}},
            {"id": "t2", "type": "function",
             "function": {"name": "Bash", "arguments": '{"command":"ls"}'}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "a.py\nb.py"},
        {"role": "tool", "tool_call_id": "t2", "content": "c.py\n[image]"},
        {"role": "assistant", "content": "Three files.  \n"},
    ]
    assert report.images_as_text == 1


def test_openai_images_and_dangling_calls() -> None:
    entries = [entry("user", "u", [{"type": "text", "text": "what is this"},
                                   {"type": "image", "source": PNG},
                                   {"type": "image",
                                    "source": {"type": "url", "url": "https://x/y.png"}}]),
               entry("assistant", "a", [use("t1")])]
    out = openai(entries)
    assert out[0]["content"][1:] == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    assert out[-1] == {"role": "tool", "tool_call_id": "t1", "content": INTERRUPTED}


def test_openai_input_round_trips_and_maps_to_anthropic() -> None:
    source = [{"role": "system", "content": "be brief"},
              {"role": "user", "content": [{"type": "text", "text": "look"},
                                           {"type": "image_url", "image_url": {
                                               "url": "data:image/png;base64,iVBORw0KGgo="}}]},
              {"role": "assistant", "content": None, "tool_calls": [
                  {"id": "c1", "type": "function",
                   "function": {"name": "grep", "arguments": "{\"q\": \"x\"}"}}]},
              {"role": "tool", "tool_call_id": "c1", "content": "match"},
              {"role": "assistant", "content": "found it"}]
    back = openai(source, "openai")
    assert back[0] == source[0] and back[3:] == source[3:]
    assert orjson.loads(back[2]["tool_calls"][0]["function"]["arguments"]) == {"q": "x"}
    out = list(to_anthropic(source, "openai"))
    assert anthropic_problems(out) == []
    assert out[0]["content"][0] == {"type": "text", "text": "[system] be brief"}
    assert out[0]["content"][2] == {"type": "image", "source": PNG}
    assert out[1]["content"] == [{"type": "tool_use", "id": "c1", "name": "grep",
                                  "input": {"q": "x"}}]


def test_opencode_messages_convert_too() -> None:
    from tests.opencode_builders import assistant, tool, user

    entries = [user(1), assistant(2, 1, tool("ls", output="a.py"), {"type": "text", "text": "ok"})]
    out = list(to_anthropic(entries, "opencode"))
    assert anthropic_problems(out) == []
    assert out[1]["content"][0]["type"] == "tool_use"
    assert out[2]["content"][0] == {"type": "tool_result", "tool_use_id": "ls", "content": "a.py"}
