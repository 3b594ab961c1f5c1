"""Rollouts the real Codex CLI 0.171.0 wrote (scripts/make_codex_fixture.py): what the Codex
adapter reads in them - detection, items as blocks, tool outputs by call_id, the usage anchor of
``token_count``, the context after Codex's own ``compacted`` records, the store - and the schema."""

from __future__ import annotations

import io
from pathlib import Path

import jsonschema
import orjson
import pytest

from ctxtool.errors import InputError
from ctxtool.formats import codex
from ctxtool.formats.detect import classify, detect_format
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.registry import adapter_for
from ctxtool.formats.schemas import load_schema
from tests.conftest import FIXTURES

FOLDER = FIXTURES / "codex-0.171.0"
TOOLS = [orjson.loads(line) for line in (FOLDER / "tools.jsonl").read_bytes().splitlines()]
COMPACTED = [orjson.loads(line) for line in (FOLDER / "compacted.jsonl").read_bytes().splitlines()]
ADAPTER = adapter_for("codex")


def items(entries: list[dict], kind: str) -> list[dict]:
    return [e["payload"] for e in entries if e["type"] == "response_item"
            and e["payload"]["type"] == kind]


def test_written_by_0_169_0() -> None:
    meta = TOOLS[0]
    assert meta["type"] == "session_meta" and meta["payload"]["cli_version"] == "0.171.0"
    assert codex.session_id_of(meta) == meta["payload"]["id"] and ADAPTER.session_id_of(meta)
    assert len(codex.base_instructions(meta)) > 1000
    assert {"timestamp", "ordinal", "type", "payload"} == set(TOOLS[1])


@pytest.mark.parametrize("entries", [TOOLS, COMPACTED], ids=["tools", "compacted"])
def test_every_line_is_claimed_by_codex_and_detected(entries: list[dict]) -> None:
    assert {classify(e) for e in entries} == {"codex"}
    data = b"".join(orjson.dumps(e) + b"\n" for e in entries)
    fmt, again = detect_format(iter_entries(io.BytesIO(data), "rollout.jsonl"))
    assert fmt == "codex" and len(list(again)) == len(entries)


def test_other_formats_are_not_claimed() -> None:
    claude = {"type": "user", "uuid": "u1", "sessionId": "s", "payload": {},
              "message": {"role": "user", "content": "hi"}}
    assert not codex.claims(claude) and classify(claude) == "claude-code"
    assert not codex.claims({"role": "user", "content": "hi"})
    assert not codex.claims({"type": "response_item", "payload": "not an object"})


@pytest.mark.parametrize("lines", [
    [{"payload": {"type": "message"}}],
    [{"type": "event", "data": {"x": 1}}, {"type": "event", "data": {"x": 2}}],
], ids=["payload-without-type", "typed-lines-of-another-tool"])
def test_an_unknown_format_is_an_error_not_a_claude_code_guess(lines: list[dict]) -> None:
    data = b"".join(orjson.dumps(e) + b"\n" for e in lines)
    with pytest.raises(InputError, match="unknown transcript format") as info:
        detect_format(list(iter_entries(io.BytesIO(data), "other.jsonl")))
    assert (info.value.source, info.value.lineno) == ("other.jsonl", 1)
    assert "--format" in (info.value.hint or "")


def test_tool_calls_and_outputs_pair_by_call_id_as_blocks() -> None:
    calls = [e for e in TOOLS if (e.get("payload") or {}).get("type") == "function_call"]
    outputs = [e for e in TOOLS if (e.get("payload") or {}).get("type") == "function_call_output"]
    assert len(calls) == len(outputs) == 5
    uses = [ADAPTER.role_and_blocks(e) for e in calls]
    assert all(role == "assistant" and blocks[0]["type"] == "tool_use" for role, blocks in uses)
    assert uses[0][1][0]["input"] == {"cmd": "ls -la"} and uses[0][1][0]["name"] == "exec_command"
    results = [ADAPTER.role_and_blocks(e) for e in outputs]
    assert [b[0]["tool_use_id"] for _, b in results] == [b[0]["id"] for _, b in uses]
    big = max(outputs, key=lambda e: len(e["payload"]["output"]))
    assert "truncated output" in big["payload"]["output"]  # Codex's own truncation, kept as is
    slot, = ADAPTER.result_slots(big)
    assert (slot.tool_use_id, slot.content) == (big["payload"]["call_id"], big["payload"]["output"])


def test_messages_keep_their_role_and_text() -> None:
    roles = [ADAPTER.role_and_blocks(e)[0] for e in TOOLS if e["type"] == "response_item"
             and e["payload"]["type"] == "message"]
    assert roles[:2] == ["developer", "user"] and "assistant" in roles
    user = next(e for e in TOOLS if e["type"] == "response_item"
                and e["payload"].get("role") == "user"
                and "What is in this project?" in str(e["payload"]["content"]))
    assert ADAPTER.role_and_blocks(user) == ("user", [{"type": "text",
                                                      "text": "What is in this project?"}])
    assert ADAPTER.is_instruction(next(e for e in TOOLS if e["type"] == "response_item"))
    assert ADAPTER.role_and_blocks(TOOLS[0]) == (None, [])  # session_meta is no message


def test_changing_an_output_copies_only_that_line() -> None:
    line = next(e for e in TOOLS if (e.get("payload") or {}).get("type") == "function_call_output")
    before = orjson.dumps(line)
    call_id = line["payload"]["call_id"]
    new = ADAPTER.with_tool_result_content(line, call_id, [{"type": "text", "text": "[cleared]"}])
    assert new["payload"]["output"] == "[cleared]" and orjson.dumps(line) == before
    assert list(new) == list(line) and list(new["payload"]) == list(line["payload"])
    assert ADAPTER.with_tool_result_content(line, "other", "x") is line


def test_usage_anchor_is_the_last_token_count() -> None:
    counts = [e for e in TOOLS if codex.token_info(e) is not None]
    last = counts[-1]["payload"]["info"]
    usage = ADAPTER.usage_of(counts[-1])
    assert usage is not None
    assert usage.prompt_tokens == last["last_token_usage"]["input_tokens"]
    assert usage.output_tokens == last["last_token_usage"]["output_tokens"]
    assert codex.context_window_of(counts[-1]) == last["model_context_window"] == 258400
    assert all(ADAPTER.usage_of(e) is None for e in TOOLS if codex.token_info(e) is None)


def test_cached_input_is_a_cache_read_inside_the_prompt() -> None:
    line = {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": 1000, "cached_input_tokens": 600,
                             "output_tokens": 7}}}}
    usage = ADAPTER.usage_of(line)
    assert usage is not None and (usage.input_tokens, usage.cache_read_input_tokens) == (400, 600)
    assert usage.prompt_tokens == 1000


def test_the_zero_count_codex_writes_after_a_compaction_is_no_anchor() -> None:
    after = [COMPACTED[i + 1:] for i, e in enumerate(COMPACTED) if e["type"] == "compacted"]
    firsts = [next(e for e in rest if codex.token_info(e) is not None) for rest in after]
    assert all(ADAPTER.usage_of(e) is None for e in firsts)


def test_context_after_codex_compaction_is_its_replacement_history() -> None:
    records = [e for e in COMPACTED if ADAPTER.is_compaction_record(e)]
    assert len(records) == 4 and all(ADAPTER.is_summary_entry(e) for e in records)
    last = records[-1]
    assert last["payload"]["message"].startswith(codex.SUMMARY_PREFIX)
    at = COMPACTED.index(last)
    assert [e["type"] for e in COMPACTED[at + 1:at + 3]] == ["world_state", "turn_context"]
    view = ADAPTER.context_entries(COMPACTED)
    history = last["payload"]["replacement_history"]
    assert [e["payload"] for e in view[:len(history)]] == history
    assert view[len(history):] == COMPACTED[at + 1:]
    sent_outputs = {i["call_id"] for i in items(view, "function_call_output")}
    before = {i["call_id"] for i in items(COMPACTED[:at], "function_call_output")}
    assert sent_outputs.isdisjoint(before)


def test_a_record_without_replacement_history_keeps_user_messages_then_the_summary() -> None:
    record = {"timestamp": "t", "type": "compacted", "payload": {"message": "the summary"}}
    head = TOOLS[:-3]
    view = codex.context_entries([*head, record])
    assert view[-1] is record and ADAPTER.role_and_blocks(record) == (
        "user", [{"type": "text", "text": "the summary"}])
    assert all(e["payload"].get("role") == "user" for e in view[:-1])
    assert not items(view, "function_call_output")


def test_compaction_lines_follow_codex() -> None:
    last = {e["type"]: e for e in TOOLS if e["type"] in ("world_state", "turn_context")}
    kept = [e["payload"] for e in TOOLS if codex.is_instruction(e)]  # developer messages
    lines = codex.compaction_lines("S", kept, last, "2026-01-01T00:00:00.000Z", ordinal=51)
    assert lines == codex.summary_lines(TOOLS, TOOLS, [], "S", "2026-01-01T00:00:00.000Z")
    assert [e["ordinal"] for e in lines] == [51, 52, 53] == [len(TOOLS) + n for n in range(3)]
    assert list(lines[1]) == list(TOOLS[1])  # timestamp, ordinal, type, payload
    assert [e["type"] for e in lines] == ["compacted", "world_state", "turn_context"]
    payload = lines[0]["payload"]
    assert payload["message"] == f"{codex.SUMMARY_PREFIX}\nS"
    assert payload["replacement_history"][:-1] == kept
    assert payload["replacement_history"][-1]["content"][0]["text"] == payload["message"]
    assert lines[2]["payload"] == last["turn_context"]["payload"]
    view = codex.context_entries([*TOOLS, *lines])
    assert not items(view, "function_call_output") and view[-1] is lines[-1]


def test_store_is_codex_home_sessions(tmp_path: Path) -> None:
    assert ADAPTER.session_roots({"CODEX_HOME": str(tmp_path)})[0] == tmp_path / "sessions"
    assert ADAPTER.session_roots({"HOME": "/home/u"})[0] == Path("/home/u/.codex/sessions")


@pytest.mark.parametrize("entries", [TOOLS, COMPACTED], ids=["tools", "compacted"])
def test_schema_takes_every_line_codex_wrote(entries: list[dict]) -> None:
    validator = jsonschema.Draft202012Validator(load_schema("codex-rollout"))
    assert [list(validator.iter_errors(e)) for e in entries] == [[] for _ in entries]


@pytest.mark.parametrize("broken", [
    {"timestamp": "t", "type": "response_item", "payload": {"type": "function_call_output",
                                                             "output": "no call_id"}},
    {"timestamp": "t", "type": "compacted", "payload": {"replacement_history": []}},
    {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": -1, "output_tokens": 0}}}},
    {"type": "session_meta", "payload": {"id": "x"}},
], ids=["output-without-call-id", "compacted-without-message", "negative-usage", "no-timestamp"])
def test_schema_refuses_broken_lines(broken: dict) -> None:
    validator = jsonschema.Draft202012Validator(load_schema("codex-rollout"))
    assert list(validator.iter_errors(broken))
