"""restore core: placeholder shapes, exact content back, original line bytes, missing files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxtool.core.clearing.persist import PersistOptions, persist, persisted_output
from ctxtool.core.clearing.replace import microcompact_placeholder, snip_placeholder
from ctxtool.core.clearing.restore import (RestoreReport, looks_like_placeholder, placeholder_path,
                                  restore)
from ctxtool.formats.jsonl import iter_entries, iter_lines_out
from ctxtool.formats.opencode.truncate import truncated_output
from ctxtool.storage.store import ToolResultStore
from ctxtool.types import Entry
from tests.persist_fixtures import SESSION, as_entries, big_text, cc_results, result_contents

PATH = "/home/u/.claude/projects/-home-u-p/s1/tool-results/toolu_01ABC.txt"


@pytest.mark.parametrize("text", [
    persisted_output(PATH, "anything"),
    persisted_output(PATH, big_text(10_000)),
    # Claude Code's own, as found in real transcripts
    "<persisted-output>\nOutput too large (35.1KB). Full output saved to: " + PATH
    + "\n\nPreview (first 2KB):\n[27] cmd/x.go:515 by @Copilot\n...\n</persisted-output>",
    # Claude Code's microcompact after saving
    f"<persisted-output>Tool result saved to: {PATH}\n\nUse Read to view</persisted-output>",
    microcompact_placeholder(PATH),
    snip_placeholder(PATH),
    [{"type": "text", "text": snip_placeholder(PATH)}],
    # persist --style opencode: the kept head may start with anything, "[" included
    truncated_output("plain\n" * 3000, PATH),
    truncated_output("[INFO] step 0 done\n" * 3000, PATH),
    truncated_output("[main 0000000] commit\n 1 file changed\n" * 1500, PATH),
    truncated_output("[\n" + "  1,\n" * 3000 + "]", PATH),
    truncated_output("<persisted-output>\n" * 3000, PATH),
])
def test_placeholder_shapes_name_their_file(text: Any) -> None:
    assert placeholder_path(text) == PATH


@pytest.mark.parametrize("text", [
    "Output saved to: " + PATH,  # a tool's own output mentioning a path
    "log line\n<persisted-output>Tool result saved to: /x\n\nUse Read to view</persisted-output>",
    "[Old tool result content cleared]", "[Content snipped - re-read if needed]",
    persisted_output(PATH, "x") + "\nmore",
    [{"type": "text", "text": persisted_output(PATH, "x")}, {"type": "text", "text": "y"}],
    None, 42, "",
])
def test_other_content_is_not_a_placeholder(text: Any) -> None:
    assert placeholder_path(text) is None


@pytest.mark.parametrize("text", [
    persisted_output(PATH, "x") + "\nmore",  # edited after persist
    "<persisted-output>\nOutput too large. Saved somewhere\n</persisted-output>",
    snip_placeholder(PATH).replace("saved to:", "saved to:\n"),
    truncated_output("[INFO]\n" * 3000, PATH).replace("...", "..", 1),
    [{"type": "text", "text": "<persisted-output>Tool result saved to: \n</persisted-output>"}],
])
def test_look_alikes_are_told_apart(text: Any) -> None:
    assert placeholder_path(text) is None and looks_like_placeholder(text)


@pytest.mark.parametrize("text", [
    "[Old tool result content cleared]",  # Claude Code's own clearing saved nothing
    "[Content snipped - re-read if needed]",
    "Output saved to: " + PATH,
    # OpenCode's own truncation names its tool-output folder: not ctxtool's to restore
    truncated_output("x\n" * 3000, "/home/u/.local/share/opencode/tool-output/tool_1"),
    "[INFO] all good", None, 42,
])
def test_ordinary_texts_do_not_look_like_placeholders(text: Any) -> None:
    assert not looks_like_placeholder(text)


def test_a_look_alike_is_counted_and_warned_about(tmp_path: Path) -> None:
    text = persisted_output(PATH, "x") + "\nmore"
    entry = cc_results(("a", text))
    warnings: list[str] = []
    report = RestoreReport()
    out = list(restore(as_entries([entry]), fmt="claude-code", store=ToolResultStore(tmp_path),
                       report=report, warn=warnings.append))
    assert result_contents(out[0]) == [text]
    assert (report.placeholders, report.unrecognized, report.not_restored) == (1, 1, 1)
    assert len(warnings) == 1 and "looks like a placeholder" in warnings[0]


def _round_trip(lines: bytes, store: ToolResultStore, **options: Any) -> tuple[bytes, bytes,
                                                                              RestoreReport]:
    entries = iter_entries(lines.splitlines(keepends=True), "in.jsonl")
    persisted = b"".join(iter_lines_out(persist(entries, fmt="claude-code", store=store,
                                                options=PersistOptions(**options))))
    report = RestoreReport()
    back = b"".join(iter_lines_out(restore(
        iter_entries(persisted.splitlines(keepends=True), "p.jsonl"), fmt="claude-code",
        store=store, report=report)))
    return persisted, back, report


def test_restore_gives_back_strings_and_block_lists_exactly(tmp_path: Path) -> None:
    blocks = [{"type": "text", "text": big_text(30_000)}, {"type": "text", "text": "π ≈ 3.14",
                                                           "x": 1.5e-7}]
    lines = b"".join(orjson.dumps(e) + b"\n" for e in [
        cc_results(("a", big_text(60_000)), ("b", blocks), ("c", "small")),
        {"type": "summary", "summary": "s"}])
    persisted, back, report = _round_trip(lines, ToolResultStore(tmp_path), max_chars=20_000)
    assert len(persisted) < len(lines) // 2
    assert back == lines
    assert (report.restored, report.missing, report.entries_changed) == (2, 0, 1)


@pytest.mark.parametrize("raw", [
    # spaced JSON, as some tools write it
    b'{"type": "user", "sessionId": "s", "message": {"role": "user", "content": '
    b'[{"type": "tool_result", "tool_use_id": "a", "content": "%s"}]}}\n',
    # \\u escapes and escaped slashes orjson would not write
    b'{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result",'
    b'"tool_use_id":"a","content":"\\u4e2d\\/%s"}]}}\n',
    # floats spelled differently, CRLF, no final newline
    b'{"type":"user","n":1E2,"sessionId":"s","message":{"role":"user","content":[{"type":'
    b'"tool_result","tool_use_id":"a","content":"%s"}]}}\r\n',
    b'{"type":"user","sessionId":"s","message":{"role":"user","content":[{"type":"tool_result",'
    b'"tool_use_id":"a","content":"%s"}]}}',
])
def test_original_line_bytes_come_back(tmp_path: Path, raw: bytes) -> None:
    line = raw.replace(b"%s", b"x" * 5000)
    lines = b'{"type":"summary","summary":"first"}\n' + line
    persisted, back, report = _round_trip(lines, ToolResultStore(tmp_path), max_chars=100)
    assert b"<persisted-output>" in persisted
    assert back == lines
    assert report.exact_lines == 1


def test_missing_file_warns_and_leaves_the_placeholder(tmp_path: Path) -> None:
    gone = str(tmp_path / "s" / "tool-results" / "gone.txt")
    entry = cc_results(("a", persisted_output(gone, "preview")), ("b", "kept"))
    warnings: list[str] = []
    report = RestoreReport()
    out = list(restore(as_entries([entry]), fmt="claude-code", store=ToolResultStore(tmp_path),
                       report=report, warn=warnings.append))
    assert result_contents(out[0])[0] == persisted_output(gone, "preview")
    assert (report.missing, report.restored) == (1, 0)
    assert len(warnings) == 1 and "t.jsonl:1" in warnings[0] and "gone.txt" in warnings[0]


def test_placeholders_naming_other_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("KEY")
    entry = cc_results(("a", f"<persisted-output>Tool result saved to: {tmp_path}/secret\n\n"
                             "Use Read to view</persisted-output>"))
    warnings: list[str] = []
    report = RestoreReport()
    out = list(restore([entry], fmt="claude-code", store=ToolResultStore(tmp_path),
                       report=report, warn=warnings.append))
    assert out[0] is entry and report.failed == 1
    assert "not a stored tool result" in warnings[0]


def test_partial_restore_keeps_the_rest(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    path = store.save("full content", tool_use_id="a", session_id=SESSION)
    gone = str(tmp_path / SESSION / "tool-results" / "gone.txt")
    entry = cc_results(("a", persisted_output(path, "full")), ("b", persisted_output(gone, "x")))
    out = list(restore([entry], fmt="claude-code", store=store))
    assert result_contents(out[0]) == ["full content", persisted_output(gone, "x")]


def test_snip_and_microcompact_placeholders_and_cleared_inputs(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    one = store.save("first", tool_use_id="a", session_id=SESSION)
    two = store.save([{"type": "text", "text": "second"}], tool_use_id="b", session_id=SESSION)
    tool_input = {"file_path": "/x.py", "limit": 10}
    saved_input = store.save(orjson.dumps(tool_input).decode(), tool_use_id="a-input",
                             session_id=SESSION)
    use = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "Read",
         "input": {"ctxtool_cleared_input": saved_input}}]}}
    results = cc_results(("a", snip_placeholder(one)), ("b", microcompact_placeholder(two)))
    out = list(restore([use, results], fmt="claude-code", store=store))
    assert out[0]["message"]["content"][0]["input"] == tool_input
    assert result_contents(out[1]) == ["first", [{"type": "text", "text": "second"}]]


def test_openai_tool_messages_and_arguments(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    content = [{"type": "text", "text": "parts list"}]
    path = store.save(content, tool_use_id="call_1", session_id=None)
    args_path = store.save('{"q": "exact  spelling"}', tool_use_id="call_1-input",
                           session_id=None)
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {
            "name": "search",
            "arguments": orjson.dumps({"ctxtool_cleared_input": args_path}).decode()}}]}
    tool = {"role": "tool", "tool_call_id": "call_1", "content": persisted_output(path, "p")}
    out = list(restore([call, tool], fmt="openai", store=store))
    assert out[0]["tool_calls"][0]["function"]["arguments"] == '{"q": "exact  spelling"}'
    assert out[1]["content"] == content


def test_entries_without_placeholders_are_the_same_objects(tmp_path: Path) -> None:
    entries = as_entries([cc_results(("a", "plain")), {"type": "summary", "summary": "x"}])
    out = list(restore(entries, fmt="claude-code", store=ToolResultStore(tmp_path)))
    assert all(a is b for a, b in zip(out, entries))
    assert all(isinstance(e, Entry) and e.raw for e in out)


def test_a_session_claude_code_continued_after_microcompact_keeps_its_chain(tmp_path: Path) -> None:
    """Claude Code parents its next entry on the file's last line: ctxtool's boundary. Restore
    drops the boundary and re-points that entry at the boundary's parent."""
    from datetime import datetime, timezone

    from ctxtool.core.clearing.microcompact import MicrocompactOptions, microcompact
    from ctxtool.core.validating.validate import validate
    from tests.clearing_helpers import Session

    session = Session()
    for _ in range(5):
        session.sized_call("Bash", 2_000)
    store = ToolResultStore(tmp_path)
    cleared = list(microcompact(session.entries, fmt="claude-code", store=store,
                                now=datetime(2026, 1, 2, tzinfo=timezone.utc),
                                options=MicrocompactOptions(force=True, target=0)))
    boundary = cleared[-1]
    assert boundary["subtype"] == "microcompact_boundary"
    resumed = {"type": "user", "uuid": "next-1", "parentUuid": boundary["uuid"],
               "sessionId": boundary["sessionId"], "message": {"role": "user", "content": "go on"}}
    out = list(restore([*cleared, resumed], fmt="claude-code", store=store))
    assert out[:-1] == session.entries  # every result back, the boundary gone
    assert out[-1]["parentUuid"] == session.entries[-1]["uuid"]
    assert not [p for p in validate(out, fmt="claude-code") if p.code == "parent-missing"]
