"""Format detection: realistic first lines of each format, ambiguous starts resolved by later
lines, --format overriding detection, and one clear error for input that is no transcript."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.errors import InputError, UsageError
from ctxtool.formats.detect import PEEK, classify, detect_format
from ctxtool.formats.jsonl import iter_entries
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI, OPENCODE, Entry
from tests.conftest import FIXTURES, corpus_params

CC_USER = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/p",
           "sessionId": "5f0c1e2a", "version": "2.1.39", "type": "user",
           "message": {"role": "user", "content": "fix the test"}, "uuid": "u1",
           "timestamp": "2026-02-12T10:00:00.000Z"}
CC_SNAPSHOT = {"type": "file-history-snapshot", "messageId": "u1",
               "snapshot": {"messageId": "u1", "trackedFileBackups": {}}, "isSnapshotUpdate": False}
CC_SUMMARY = {"type": "summary", "summary": "Fixing the calc tests", "leafUuid": "a9"}
CC_QUEUE = {"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": "s"}
PLAIN_USER = {"role": "user", "content": "What is in this folder?"}
PLAIN_ASSISTANT = {"role": "assistant", "content": "Let me look."}
ANTHROPIC_TOOL = {"role": "assistant", "content": [
    {"type": "text", "text": "Listing."},
    {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "ls"}}]}
ANTHROPIC_RESULT = {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.py\nb.py"}]}
OPENAI_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}
OPENAI_TOOL = {"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"}
OPENCODE_MESSAGE = {"info": {"id": "msg_1", "role": "user", "sessionID": "ses_1"},
                    "parts": [{"type": "text", "text": "hi"}]}


def entries_of(*objs: dict[str, Any]) -> list[Entry]:
    data = b"".join(orjson.dumps(o) + b"\n" for o in objs)
    return list(iter_entries(io.BytesIO(data), "t.jsonl"))


def detect(*objs: dict[str, Any], forced: str | None = None) -> str:
    fmt, _ = detect_format(entries_of(*objs), forced)
    return fmt


@pytest.mark.parametrize("lines, expected", [
    ((CC_USER,), CLAUDE_CODE),
    ((CC_SNAPSHOT, CC_USER), CLAUDE_CODE),  # Claude Code files often start with a snapshot
    ((CC_SUMMARY, CC_USER), CLAUDE_CODE),  # older files start with summaries
    ((CC_QUEUE,), CLAUDE_CODE),
    ((ANTHROPIC_TOOL, ANTHROPIC_RESULT), ANTHROPIC),
    ((OPENAI_CALL, OPENAI_TOOL), OPENAI),
    (({"role": "system", "content": "Be brief."}, PLAIN_USER), OPENAI),
    (({"role": "developer", "content": "Be brief."},), OPENAI),
    (({"role": "function", "name": "ls", "content": "a.py"},), OPENAI),
    (({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]},), OPENAI),
    (({"role": "user", "content": [{"type": "document", "source": {"type": "base64"}}]},), ANTHROPIC),
    ((OPENCODE_MESSAGE,), OPENCODE),
], ids=["cc-user", "cc-snapshot-first", "cc-summary-first", "cc-queue", "anthropic-tools",
        "openai-tools", "openai-system", "openai-developer", "openai-function", "openai-image",
        "anthropic-document", "opencode"])
def test_each_format_from_realistic_lines(lines: tuple[dict[str, Any], ...], expected: str) -> None:
    assert detect(*lines) == expected


def test_ambiguous_first_line_is_resolved_by_a_later_one() -> None:
    # {"role","content"} strings are valid in both message formats: look further
    assert detect(PLAIN_USER, PLAIN_ASSISTANT, OPENAI_CALL) == OPENAI
    assert detect(PLAIN_USER, PLAIN_ASSISTANT, ANTHROPIC_TOOL) == ANTHROPIC
    assert classify(PLAIN_USER) is None


def test_only_plain_messages_read_as_anthropic() -> None:
    assert detect(PLAIN_USER, PLAIN_ASSISTANT) == ANTHROPIC


def test_clue_beyond_the_peek_window_is_not_needed() -> None:
    lines = [PLAIN_USER, PLAIN_ASSISTANT] * PEEK + [OPENAI_CALL]
    assert detect(*lines) == ANTHROPIC  # bounded look-ahead: no clue in the first PEEK lines


def test_every_entry_is_still_yielded_in_order() -> None:
    entries = entries_of(PLAIN_USER, PLAIN_ASSISTANT, OPENAI_CALL, OPENAI_TOOL)
    fmt, again = detect_format(iter(entries))
    assert fmt == OPENAI and list(again) == entries
    assert [e.lineno for e in entries] == [1, 2, 3, 4]


def test_format_option_overrides_detection() -> None:
    assert detect(CC_USER, forced=OPENAI) == OPENAI
    fmt, it = detect_format(iter(entries_of(CC_USER)), ANTHROPIC)
    assert fmt == ANTHROPIC and [dict(e) for e in it] == [CC_USER]


def test_unknown_forced_format_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown format 'kiro'"):
        detect_format([], "kiro")


def test_unknown_format_is_one_clear_error() -> None:
    usage_only = {"timestamp": "2026-01-09T10:00:00Z", "sessionId": "s",
                  "message": {"role": "assistant", "usage": {"input_tokens": 1}}, "costUSD": 0.1}
    with pytest.raises(InputError) as info:
        detect(usage_only, usage_only)
    error = info.value
    assert (error.source, error.lineno) == ("t.jsonl", 1)
    assert "unknown transcript format" in error.message and "--format" in (error.hint or "")


def test_plain_dicts_from_the_python_api() -> None:
    # dicts have no .invalid: detection must not need it
    with pytest.raises(InputError, match="unknown transcript format"):
        detect_format([{"x": 1}])
    fmt, it = detect_format([{"role": "user", "content": "hi"}, OPENAI_TOOL])
    assert fmt == OPENAI and len(list(it)) == 2


def test_empty_input_and_invalid_lines_default_to_claude_code() -> None:
    assert detect_format([])[0] == CLAUDE_CODE
    bad = list(iter_entries(io.BytesIO(b"{\n  \"a\": 1\n}\n"), "doc.json", on_invalid="keep"))
    assert all(e.invalid for e in bad) and detect_format(bad)[0] == CLAUDE_CODE


def test_format_option_on_the_command_line(runner, tmp_path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_bytes(orjson.dumps({"role": "system", "content": "x"}) + b"\n")
    assert runner.invoke(cli, ["validate", str(path)]).exit_code == 0  # detected as openai
    forced = runner.invoke(cli, ["validate", "--format", "anthropic", str(path)])
    assert forced.exit_code == 3 and "[schema]" in forced.stdout
    bad = runner.invoke(cli, ["validate", "--format", "kiro", str(path)])
    assert bad.exit_code == 2 and "kiro" in bad.stderr


def test_fixture_session_is_claude_code() -> None:
    with (FIXTURES / "validate_session.jsonl").open("rb") as stream:
        assert detect_format(list(iter_entries(stream, "s")))[0] == CLAUDE_CODE


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_corpus_files(path: Any) -> None:
    with path.open("rb") as stream:
        entries = list(iter_entries(stream, str(path), on_invalid="keep"))
    if len(entries) == 1 and (entries[0].raw or b"").count(b"\n") > 1:  # one JSON document
        assert detect_format(entries)[0] == "gemini"  # an older Gemini CLI session, read whole
    elif not any(isinstance(e.get("type"), str) for e in entries):  # ccusage's usage-only lines
        with pytest.raises(InputError, match="unknown transcript format"):
            detect_format(entries)
    else:
        assert detect_format(entries)[0] == CLAUDE_CODE
