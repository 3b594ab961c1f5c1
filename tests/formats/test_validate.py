"""Per-entry checks: the shipped JSON Schemas, their error messages, and line framing findings."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from ctxtool.errors import InputError
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.schemas import load_schema, schema_names
from ctxtool.formats.validate import SCHEMA_OF, _validator, entry_checker, line_findings
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI, OPENCODE
from tests.conftest import FIXTURES, corpus_params

INPUT_SCHEMAS = ["anthropic-message", "claude-code-entry", "openai-message", "opencode-message"]


def read(data: bytes) -> list[Any]:
    return list(iter_entries(io.BytesIO(data), "t.jsonl", on_invalid="keep"))


def codes(fmt: str, entry: dict[str, Any]) -> list[str]:
    return [message for _, _, message in entry_checker(fmt)(entry)]


# --- the schema files ----------------------------------------------------------------------------

def test_input_schemas_are_shipped_and_valid_draft_2020_12() -> None:
    assert set(INPUT_SCHEMAS) <= set(schema_names())
    for name in INPUT_SCHEMAS:
        schema = load_schema(name)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"urn:ctxtool:schema:{name}"


def test_load_schema_reads_each_file_once_and_names_unknown_ones() -> None:
    assert load_schema("claude-code-entry") is load_schema("claude-code-entry")
    with pytest.raises(FileNotFoundError, match="no schema named 'nope'"):
        load_schema("nope")


# --- Claude Code entries -------------------------------------------------------------------------

GOOD_CC = [
    {"type": "user", "uuid": "u", "parentUuid": None, "message": {"role": "user", "content": "hi"}},
    {"type": "assistant", "uuid": "a", "parentUuid": "u", "message": {
        "id": "msg", "role": "assistant", "model": "m", "content": [
            {"type": "thinking", "thinking": "t", "signature": "s"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}},
            {"type": "brand_new_block", "anything": 1}],
        "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 0}}},
    {"type": "user", "uuid": "r", "parentUuid": "a", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "is_error": False,
         "content": [{"type": "text", "text": "x"}, {"type": "tool_reference", "tool_name": "y"}]}]}},
    {"type": "system", "subtype": "compact_boundary", "uuid": "b", "parentUuid": None,
     "logicalParentUuid": "r", "content": "Conversation compacted",
     "compactMetadata": {"trigger": "auto", "preTokens": 1}},
    {"type": "system", "subtype": "session_start", "uuid": "s", "content": None},
    {"type": "summary", "summary": "Fixing tests", "leafUuid": "elsewhere"},
    {"type": "file-history-snapshot", "messageId": "u", "snapshot": {}},
    {"type": "progress", "uuid": "p", "parentUuid": "a", "data": {"type": "hook_progress"}},
    {"type": "attachment", "uuid": "t", "attachment": {"type": "date_change"}},
    {"type": "queue-operation", "operation": "enqueue", "content": ["a"]},
    {"type": "worktree-state", "whatever": {"nested": [1, 2]}},
]


@pytest.mark.parametrize("entry", GOOD_CC, ids=lambda e: str(e["type"]))
def test_claude_code_schema_accepts_real_shapes(entry: dict[str, Any]) -> None:
    assert codes(CLAUDE_CODE, entry) == []


@pytest.mark.parametrize("entry, message", [
    ({"uuid": "u"}, "entry: 'type' is missing"),
    ({"type": 3}, "type: expected string, got integer"),
    ({"type": "user", "uuid": "u"}, "entry: 'message' is missing"),
    ({"type": "user", "uuid": "u", "parentUuid": 7, "message": {"role": "user", "content": "x"}},
     "parentUuid: expected string or null, got integer"),
    ({"type": "user", "uuid": "u", "message": {"role": "assistant", "content": "x"}},
     'message.role: expected "user", got "assistant"'),
    ({"type": "assistant", "uuid": "a", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "ok"}, {"type": "tool_use", "name": "Bash", "input": {}}]}},
     "message.content[1]: 'id' is missing"),
    ({"type": "assistant", "uuid": "a", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "Bash", "input": "ls"}]}},
     "message.content[0].input: expected object, got string"),
    ({"type": "user", "uuid": "u", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "image"}]}]}},
     "message.content[0].content[0]: 'source' is missing"),
    ({"type": "assistant", "uuid": "a", "message": {"role": "assistant", "content": [],
                                                     "usage": {"output_tokens": -1}}},
     "message.usage.output_tokens: -1 is less than the minimum of 0"),
    ({"type": "summary", "summary": "s"}, "entry: 'leafUuid' is missing"),
    ({"type": "user", "uuid": "u", "message": {"role": "user", "content": 42}},
     "message.content: expected string or array, got integer"),
])
def test_claude_code_schema_names_path_and_problem(entry: dict[str, Any], message: str) -> None:
    assert codes(CLAUDE_CODE, entry) == [message]


def test_schema_findings_are_capped_per_entry() -> None:
    blocks = [{"type": "text"} for _ in range(9)]
    found = entry_checker(CLAUDE_CODE)({"type": "user", "uuid": "u",
                                        "message": {"role": "user", "content": blocks}})
    assert len(found) == 6 and found[-1][2] == "more schema errors in this entry not shown"
    assert {code for _, code, _ in found} == {"schema"}


# --- Anthropic and OpenAI messages ------------------------------------------------------------------

@pytest.mark.parametrize("fmt, entry, expected", [
    (ANTHROPIC, {"role": "user", "content": "hi"}, []),
    (ANTHROPIC, {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n",
                                                   "input": {}}], "id": "msg_1"}, []),
    (ANTHROPIC, {"role": "system", "content": "x"},
     ['role: expected one of "user", "assistant", got "system"']),
    (ANTHROPIC, {"role": "user"}, ["entry: 'content' is missing"]),
    (ANTHROPIC, {"role": "user", "content": [{"type": "redacted_thinking"}]},
     ["content[0]: 'data' is missing"]),
    (OPENAI, {"role": "system", "content": "be brief"}, []),
    (OPENAI, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}, []),
    (OPENAI, {"role": "user", "content": [{"type": "text", "text": "x"},
                                          {"type": "image_url", "image_url": {"url": "u"}}]}, []),
    (OPENAI, {"role": "tool", "content": "x"}, ["entry: 'tool_call_id' is missing"]),
    (OPENAI, {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "ls",
                                                                           "arguments": {}}}]},
     ["tool_calls[0].function.arguments: expected string, got object"]),
    (OPENAI, {"role": "user"}, ["entry: 'content' is missing"]),
])
def test_message_schemas(fmt: str, entry: dict[str, Any], expected: list[str]) -> None:
    assert codes(fmt, entry) == expected


def test_opencode_lines_are_checked_against_their_schema_and_framing() -> None:
    assert SCHEMA_OF[OPENCODE] == "opencode-message"
    assert codes(OPENCODE, {"session": {"id": "ses_1", "anything": 1}, "todos": []}) == []
    assert codes(OPENCODE, {"info": {}, "parts": "not checked"}) == [
        "info: 'id' is missing", "info: 'sessionID' is missing", "info: 'role' is missing",
        "info: 'time' is missing", "parts: expected array, got string"]
    line = b'{"info":{"id":"m","sessionID":"s","role":"user","time":{"created":1}},"parts":[]}'
    (glued,) = [e for e in read(line + line + b"\n") if e.glued]
    assert [code for _, code, _ in entry_checker(OPENCODE)(glued)] == ["glued-line"]


# --- the discriminator fast path gives exactly the standard validator's errors ----------------------

def standard_errors(name: str, entry: dict[str, Any]) -> list[tuple[str, str]]:
    fast = _validator(name)
    plain = Draft202012Validator(load_schema(name), registry=fast._registry)
    return sorted((e.json_path, e.message) for e in plain.iter_errors(entry))


def fast_errors(name: str, entry: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((e.json_path, e.message) for e in _validator(name).iter_errors(entry))


@pytest.mark.parametrize("entry", [
    {"type": "user"}, {"type": "assistant", "uuid": 1, "message": {"content": [{"type": "text"}]}},
    {"type": "summary"}, {"type": "attachment", "attachment": []}, {"uuid": "no type"},
    {"type": "user", "uuid": "u", "message": {"role": "user", "content": [
        {"type": "tool_result"}, {"type": "image"}, {"type": 5}, "not a block", {}]}},
    {"type": "system", "content": 1, "level": 2}, {"type": "queue-operation"},
], ids=repr)
def test_fast_path_matches_standard_validator(entry: dict[str, Any]) -> None:
    assert fast_errors("claude-code-entry", entry) == standard_errors("claude-code-entry", entry)


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params()[:12])
def test_fast_path_matches_standard_validator_on_corpus(path: Any) -> None:
    entries = [e for e in read(path.read_bytes()) if not e.invalid][:150]
    for entry in entries:
        assert fast_errors("claude-code-entry", entry) == standard_errors("claude-code-entry", entry)


# --- line framing -------------------------------------------------------------------------------------

def test_glued_line_is_a_warning_on_the_second_object() -> None:
    first, second = read(b'{"type":"x","uuid":"a"}{"type":"y","uuid":"b"}\n')
    assert line_findings(first) == []
    ((severity, code, message),) = line_findings(second)
    assert (severity, code) == ("warning", "glued-line") and "newline is missing" in message


def test_truncated_last_line_is_a_warning() -> None:
    _, last = read(b'{"type":"x"}\n{"type":"user","message":{"ro')
    ((severity, code, message),) = entry_checker(CLAUDE_CODE)(last)
    assert (severity, code) == ("warning", "truncated") and "killed mid-write" in message


@pytest.mark.parametrize("line, code, words", [
    (b"{oops}\n", "invalid-json", "invalid JSON"),
    (b"[1, 2]\n", "not-an-object", "expected a JSON object, got an array"),
    (b'"text"\n', "not-an-object", "got a string"),
])
def test_bad_line_in_the_middle_is_an_error(line: bytes, code: str, words: str) -> None:
    _, bad, _ = read(b'{"type":"x"}\n' + line + b'{"type":"y"}\n')
    ((severity, found, message),) = entry_checker(CLAUDE_CODE)(bad)
    assert (severity, found) == ("error", code) and words in message


def test_pretty_printed_json_document_raises_one_input_error() -> None:
    document = orjson.dumps({"sessionId": "s", "messages": [{"type": "user"}]},
                            option=orjson.OPT_INDENT_2)
    first = read(document)[0]
    with pytest.raises(InputError, match="pretty-printed JSON document") as info:
        entry_checker(CLAUDE_CODE)(first)
    assert (info.value.source, info.value.lineno) == ("t.jsonl", 1)


def test_file_of_blank_lines_has_no_findings() -> None:
    (only,) = read(b"\n\r\n\n")
    assert only.invalid and entry_checker(CLAUDE_CODE)(only) == []


def test_fixture_session_is_clean() -> None:
    check = entry_checker(CLAUDE_CODE)
    entries = read((FIXTURES / "validate_session.jsonl").read_bytes())
    assert entries and [f for e in entries for f in check(e)] == []
