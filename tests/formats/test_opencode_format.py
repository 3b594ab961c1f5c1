"""OpenCode export documents <-> JSONL entries, and JSON.stringify(value, null, 2) formatting."""

from __future__ import annotations

import copy

import orjson
import pytest

from ctxtool.errors import InputError
from ctxtool.formats.detect import classify, detect_format
from ctxtool.formats.jsonl import iter_entries, iter_lines_out
from ctxtool.formats.opencode.export import (
    dumps_export, entries_from_export, export_document, js_number, js_stringify, loads_document,
    sort_messages,
)
from tests.conftest import CORPUS
from tests.opencode_builders import FIXTURE, assistant, ids, user

# (value, String(value) in node 20) - the digits JSON.stringify writes
JS_NUMBERS = [
    (0.00001234, "0.00001234"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (0.1, "0.1"),
    (123.456, "123.456"), (1e21, "1e+21"), (1.5e21, "1.5e+21"), (1e20, "100000000000000000000"),
    (0.000001, "0.000001"), (-2.5e-8, "-2.5e-8"), (1 / 3, "0.3333333333333333"),
    (1e300, "1e+300"), (5e-324, "5e-324"), (0.1 + 0.2, "0.30000000000000004"), (4.35, "4.35"),
    (5.0, "5"), (-0.0, "0"),
]


@pytest.mark.parametrize(("value", "expected"), JS_NUMBERS)
def test_floats_print_like_javascript(value: float, expected: str) -> None:
    assert js_number(value) == expected


def test_stringify_matches_node_layout_and_escapes() -> None:
    value = {"a": "\u0001\u001f\b\f\n\r\t\"\\\u007f\u2028é😀/<>", "e": [], "o": {},
             "n": [1, [2, {}], []], "b": True, "z": None, "f": 0.5}
    # produced by node: JSON.stringify(value, null, 2)
    expected = ('{\n  "a": "\\u0001\\u001f\\b\\f\\n\\r\\t\\"\\\\\u007f\u2028é😀/<>",\n'
                '  "e": [],\n  "o": {},\n  "n": [\n    1,\n    [\n      2,\n      {}\n    ],\n'
                '    []\n  ],\n  "b": true,\n  "z": null,\n  "f": 0.5\n}')
    assert js_stringify(value) == expected


def test_every_fixture_file_reserializes_byte_identical() -> None:
    files = sorted((FIXTURE / "storage").rglob("*.json"))
    assert len(files) > 40
    for path in files:
        data = path.read_bytes()
        assert js_stringify(orjson.loads(data)).encode() == data, path
    export = (FIXTURE / "export.json").read_bytes()
    assert dumps_export(orjson.loads(export)) == export


def test_export_to_entries_and_back_is_byte_identical() -> None:
    data = (FIXTURE / "export.json").read_bytes()
    document = loads_document(data, "export.json")
    pristine = copy.deepcopy(document)
    entries = entries_from_export(document, "export.json")
    assert set(entries[0]) == {"session"} and entries[0]["session"]["id"].startswith("ses_")
    assert len(entries) == 1 + len(document["messages"])
    assert all(set(e) == {"info", "parts"} for e in entries[1:])
    # through JSONL text and back
    lines = b"".join(iter_lines_out(entries))
    fmt, again = detect_format(iter_entries(lines.splitlines(keepends=True), "x.jsonl"))
    assert fmt == "opencode"
    assert dumps_export(export_document(list(again))) == data
    assert document == pristine  # nothing was mutated on the way


def test_extra_top_level_keys_ride_on_the_session_line() -> None:
    document = {"info": {"id": "ses_x"}, "messages": [user(1)], "todos": [{"content": "a"}]}
    entries = entries_from_export(document, "e.json")
    assert entries[0] == {"session": {"id": "ses_x"}, "todos": [{"content": "a"}]}
    assert export_document(entries) == document


def test_messages_come_out_in_time_order_then_id() -> None:
    late, early = user(1, created=200), user(2, created=100)
    tie_b, tie_a = assistant(9, 2, created=300), assistant(8, 2, created=300)
    assert ids(sort_messages([late, early, tie_b, tie_a])) == ["msg_002", "msg_001", "msg_008", "msg_009"]
    entries = entries_from_export({"info": {"id": "s"}, "messages": [late, early]}, "e")
    assert ids(entries) == ["msg_002", "msg_001"]


@pytest.mark.parametrize(("document", "problem"), [
    ([1, 2], "not an OpenCode export"),
    ({"info": {"id": "s"}}, "not an OpenCode export"),
    ({"info": {"id": "s"}, "messages": [{"parts": []}]}, "messages[0] is not an object with an 'info'"),
    ({"info": {"id": "s"}, "messages": [{"info": {"id": "m", "role": "user"}}]}, "messages[0] has no 'parts'"),
    ({"info": {"id": "s"}, "messages": [{"info": {"role": "user"}, "parts": []}]}, "has no info.id"),
    ({"info": {"id": "s"}, "messages": [{"info": {"id": "m", "role": "tool"}, "parts": []}]}, "unknown role 'tool'"),
    ({"info": {"id": "s"}, "messages": [{"info": {"id": "m", "role": "user"}, "parts": ["x"]}]}, "not an object"),
])
def test_bad_exports_are_one_clear_input_error(document: object, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        entries_from_export(document, "s.json")
    assert problem in str(caught.value) and caught.value.source == "s.json"
    assert "opencode export" in (caught.value.hint or "")


def test_invalid_json_document_names_its_line() -> None:
    with pytest.raises(InputError) as caught:
        loads_document(b'{\n  "info": {},\n  "messages": [,]\n}\n', "s.json")
    assert caught.value.lineno == 3 and "invalid JSON" in caught.value.message


def test_export_without_session_line_is_refused() -> None:
    with pytest.raises(InputError, match="session record"):
        export_document([user(1)], source="x.jsonl")


def test_classify_knows_both_opencode_lines() -> None:
    assert classify({"session": {"id": "ses_1"}}) == "opencode"
    assert classify(user(1)) == "opencode"
    assert classify({"session": {"id": "x"}, "type": "user", "uuid": "u"}) == "claude-code"


@pytest.mark.skipif(not (CORPUS / "ggfincke__opencode-to-ccusage").is_dir(), reason="corpus absent")
def test_the_corpus_export_reads_and_writes_back_unchanged() -> None:
    path = CORPUS / "ggfincke__opencode-to-ccusage" / "test__fixtures__sample-export.json"
    data = path.read_bytes()
    entries = entries_from_export(loads_document(data, str(path)), str(path))
    assert ids(entries)[:2] == ["msg_user001", "msg_assistant001"]
    assert dumps_export(export_document(entries)) == data  # byte for byte
