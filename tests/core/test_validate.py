"""validate's structural rules, on lists of plain dicts: each rule fires on a real violation and
stays quiet on what Claude Code writes in normal operation."""

from __future__ import annotations

from typing import Any

import pytest

from ctxtool.core.validating.validate import ERROR, WARNING, Problem, validate
from ctxtool.errors import InputError
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI, Entry


def user(uuid: str, parent: str | None, content: Any = "hi", **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": False,
            "message": {"role": "user", "content": content}, **extra}


def assistant(uuid: str, parent: str | None, blocks: list[dict[str, Any]], msg_id: str,
              **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "isSidechain": False,
            "message": {"id": msg_id, "role": "assistant", "model": "claude-opus-4-6",
                        "content": blocks}, **extra}


def tool_use(tool_id: str, name: str = "Bash") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {"command": "ls"}}


def result(tool_id: str, text: str = "ok") -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]


def boundary(uuid: str, logical: str | None, **extra: Any) -> dict[str, Any]:
    entry = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
             "uuid": uuid, "parentUuid": None, "logicalParentUuid": logical,
             "compactMetadata": {"trigger": "auto", "preTokens": 155000}}
    entry.update(extra)
    return entry


def summary(uuid: str, parent: str) -> dict[str, Any]:
    return user(uuid, parent, "This session is being continued...", isCompactSummary=True,
                isVisibleInTranscriptOnly=True)


def problems(entries: list[dict[str, Any]], fmt: str = CLAUDE_CODE) -> list[tuple[int | None, str, str]]:
    return [(p.line, p.severity, p.code) for p in validate(entries, fmt=fmt, source="t.jsonl")]


def tool_loop() -> list[dict[str, Any]]:
    """A clean exchange: streamed assistant lines sharing message.id, then the result."""
    return [
        user("u1", None, "list the files"),
        assistant("a1", "u1", [{"type": "thinking", "thinking": "ls", "signature": "s"}], "msg_A"),
        assistant("a2", "a1", [tool_use("t1")], "msg_A"),
        {"type": "progress", "uuid": "p1", "parentUuid": "a2", "data": {"type": "hook_progress"}},
        user("u2", "a2", result("t1")),
        assistant("a3", "u2", [{"type": "text", "text": "two files"}], "msg_B"),
    ]


# --- clean transcripts -----------------------------------------------------------------------------

def test_clean_tool_loop_has_no_problems() -> None:
    assert problems(tool_loop()) == []


def test_dangling_tail_of_a_live_session_is_not_a_problem() -> None:
    entries = [*tool_loop(), assistant("a4", "a3", [tool_use("t2")], "msg_C")]
    assert problems(entries) == []


def test_parallel_tool_calls_killed_after_first_result_are_a_tail() -> None:
    entries = [user("u1", None), assistant("a1", "u1", [tool_use("t1")], "msg_A"),
               assistant("a2", "a1", [tool_use("t2")], "msg_A"), user("u2", "a2", result("t1"))]
    assert problems(entries) == []


def test_tool_use_cut_off_by_auto_compaction_is_not_a_problem() -> None:
    # Claude Code does not write the tool_result that triggered the auto-compaction; the
    # boundary's logicalParentUuid (and a progress entry) name that missing entry.
    entries = [user("u1", None), assistant("a1", "u1", [tool_use("t1", "Read")], "msg_A"),
               {"type": "progress", "uuid": "p1", "parentUuid": "missing-result"},
               boundary("b1", "missing-result"), summary("s1", "b1"),
               assistant("a2", "s1", [{"type": "text", "text": "continuing"}], "msg_B")]
    assert problems(entries) == []


def test_sidechain_file_pointing_into_its_parent_session() -> None:
    entries = [dict(user("x1", "in-parent-1"), isSidechain=True),
               dict(user("x2", "in-parent-2"), isSidechain=True),
               dict(assistant("x3", "x2", [{"type": "text", "text": "summary"}], "m"),
                    isSidechain=True)]
    assert problems(entries) == []


def test_file_starting_mid_session_with_an_answer_to_an_earlier_call() -> None:
    entries = [user("u9", "before-this-file", result("t0")),
               assistant("a9", "u9", [{"type": "text", "text": "done"}], "msg_Z")]
    assert problems(entries) == []


def test_an_entry_written_again_unchanged_is_a_warning_not_a_duplicate() -> None:
    first = assistant("a1", "u1", [tool_use("t1")], "msg_A", timestamp="T", version="2.1.7")
    again = assistant("a1", "u1", [tool_use("t1")], "msg_A", timestamp="T", version="2.1.12")
    again["message"] = {**again["message"], "context_management": None}
    entries = [user("u1", None), first, again, user("u2", "a1", result("t1"))]
    assert problems(entries) == [(3, WARNING, "entry-repeated")]


def test_unknown_entry_and_block_types_pass() -> None:
    entries = [{"type": "worktree-state", "uuid": "w1", "parentUuid": None},
               {"type": "queue-operation", "operation": "enqueue"},
               user("u1", "w1", [{"type": "fallback", "from": {"model": "x"}}])]
    assert problems(entries) == []


def test_synthetic_assistant_message_is_not_a_model_call() -> None:
    synthetic = assistant("a2", "a1", [{"type": "text", "text": "API Error"}], "msg_S")
    synthetic["message"]["model"] = "<synthetic>"
    entries = [user("u1", None), assistant("a1", "u1", [tool_use("t1")], "msg_A"), synthetic]
    assert problems(entries) == []


# --- tool pairing ------------------------------------------------------------------------------------

def test_tool_use_unanswered_before_the_next_call_is_an_error() -> None:
    entries = [user("u1", None), assistant("a1", "u1", [tool_use("t1")], "msg_A"),
               user("u2", "a1", "why did you stop?"),
               assistant("a2", "u2", [{"type": "text", "text": "sorry"}], "msg_B")]
    found = list(validate(entries, fmt=CLAUDE_CODE, source="t.jsonl"))
    assert [(p.line, p.code) for p in found] == [(2, "tool-use-unanswered")]
    assert "t1 (Bash)" in found[0].message and "line 4" in found[0].message


def test_unanswered_tool_use_on_another_branch_is_not_blamed() -> None:
    # a later call that does not descend from the tool_use (a compaction restarted the chain)
    entries = [user("u1", None), assistant("a1", "u1", [tool_use("t1")], "msg_A"),
               boundary("b1", "gone"), summary("s1", "b1"),
               assistant("a2", "s1", [{"type": "text", "text": "hi"}], "msg_B")]
    assert problems(entries) == []


def test_orphan_tool_result_inside_a_complete_file_is_an_error() -> None:
    entries = [user("u1", None), assistant("a1", "u1", [{"type": "text", "text": "x"}], "m"),
               user("u2", "a1", result("t-unknown"))]
    assert problems(entries) == [(3, ERROR, "tool-result-orphan")]


def test_second_result_and_result_before_use() -> None:
    entries = [user("u0", None, result("t1")), assistant("a1", "u0", [tool_use("t1")], "m"),
               user("u2", "a1", result("t1"))]
    assert problems(entries) == [(1, ERROR, "tool-result-before-use"),
                                 (3, ERROR, "tool-result-duplicate")]


def test_tool_use_id_used_twice() -> None:
    entries = [user("u1", None), assistant("a1", "u1", [tool_use("t1")], "m1"),
               user("u2", "a1", result("t1")), assistant("a2", "u2", [tool_use("t1")], "m2"),
               user("u3", "a2", result("t1"))]
    assert (4, ERROR, "tool-use-duplicate") in problems(entries)


# --- uuid chain ----------------------------------------------------------------------------------------

def test_duplicate_uuid_with_different_content_is_an_error() -> None:
    entries = [user("u1", None, "one"), user("u2", "u1", "two"), user("u2", "u1", "other")]
    found = list(validate(entries, fmt=CLAUDE_CODE, source="t.jsonl"))
    assert [(p.line, p.code) for p in found] == [(3, "duplicate-uuid")]
    assert "line 2" in found[0].message


def test_broken_chain_in_the_live_part_is_an_error() -> None:
    entries = [*tool_loop(), user("u9", "never-written", "next question")]
    assert problems(entries) == [(7, ERROR, "parent-missing")]


def test_broken_chain_before_a_compaction_is_a_warning() -> None:
    entries = [*tool_loop(), user("u9", "never-written", "next question"),
               boundary("b1", "u9"), summary("s1", "b1"), boundary("b2", "s1"), summary("s2", "b2")]
    found = list(validate(entries, fmt=CLAUDE_CODE))
    assert [(p.line, p.severity, p.code) for p in found] == [(7, WARNING, "parent-missing")]
    assert "compact boundary at line 8" in found[0].message


def test_null_and_absent_parents_are_roots() -> None:
    entries = [user("u1", None), {"type": "user", "uuid": "u2",
                                  "message": {"role": "user", "content": "x"}}]
    assert problems(entries) == []


# --- compaction --------------------------------------------------------------------------------------

def test_well_formed_compaction() -> None:
    entries = [*tool_loop(), boundary("b1", "a3"),
               {"type": "progress", "uuid": "p9", "parentUuid": "b1"}, summary("s1", "b1")]
    assert problems(entries) == []


@pytest.mark.parametrize("change, words", [
    ({"parentUuid": "a3"}, "parentUuid"),
    ({"logicalParentUuid": None}, "logicalParentUuid"),
    ({"compactMetadata": {"trigger": "auto"}}, "compactMetadata"),
    ({"compactMetadata": {"trigger": "auto", "preTokens": "155000"}}, "compactMetadata"),
])
def test_malformed_boundary(change: dict[str, Any], words: str) -> None:
    entries = [*tool_loop(), boundary("b1", "a3", **change), summary("s1", "b1")]
    found = list(validate(entries, fmt=CLAUDE_CODE))
    assert [(p.line, p.code) for p in found] == [(7, "compact-boundary")]
    assert words in found[0].message


def test_boundary_without_summary_is_an_error() -> None:
    entries = [*tool_loop(), boundary("b1", "a3"), user("u9", "b1", "hello again")]
    assert problems(entries) == [(7, ERROR, "compact-summary-missing")]


def test_boundary_at_end_of_file_is_a_warning() -> None:
    entries = [*tool_loop(), boundary("b1", "a3")]
    assert problems(entries) == [(7, WARNING, "compact-summary-missing")]


def test_summary_must_come_before_the_next_boundary() -> None:
    entries = [*tool_loop(), boundary("b1", "a3"), user("u8", "b1", "x"), boundary("b2", "u8"),
               summary("s2", "b2")]
    assert problems(entries) == [(7, ERROR, "compact-summary-missing")]


# --- message formats without uuids ----------------------------------------------------------------------

def test_anthropic_messages_pairing() -> None:
    clean = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": [tool_use("t1")]},
             {"role": "user", "content": result("t1")},
             {"role": "assistant", "content": "done"}]
    assert problems(clean, ANTHROPIC) == []
    unanswered = [clean[0], clean[1], {"role": "user", "content": "??"}, clean[3]]
    assert problems(unanswered, ANTHROPIC) == [(2, ERROR, "tool-use-unanswered")]
    assert problems([clean[0], clean[2]], ANTHROPIC) == [(2, ERROR, "tool-result-orphan")]


def test_openai_messages_pairing() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    clean = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": None, "tool_calls": [call]},
             {"role": "tool", "tool_call_id": "call_1", "content": "a b"},
             {"role": "assistant", "content": "two"}]
    assert problems(clean, OPENAI) == []
    assert problems([clean[0], clean[1], clean[3]], OPENAI) == [(2, ERROR, "tool-use-unanswered")]


# --- the check_entry hook, locations and records -----------------------------------------------------------

def test_check_entry_findings_are_reported_at_the_entry() -> None:
    def check(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [("error", "schema", "bad")] if entry.get("bad") else []

    entries = [user("u1", None), dict(user("u2", "u1"), bad=True)]
    found = list(validate(entries, fmt=CLAUDE_CODE, source="f.jsonl", check_entry=check))
    assert found == [Problem("f.jsonl", 2, "schema", "bad", ERROR)]


def test_check_entry_raising_input_error_gives_one_problem_and_stops() -> None:
    def check(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
        raise InputError("not JSONL", source="g.json", lineno=1, hint="one object per line")

    found = list(validate([user("u1", "missing")], fmt=CLAUDE_CODE, check_entry=check))
    assert found == [Problem("g.json", 1, "not-a-transcript", "not JSONL — one object per line")]


def test_read_entries_report_their_own_file_and_line() -> None:
    entries = [Entry(user("u1", None), source="a.jsonl", lineno=4),
               Entry(user("u2", "gone"), source="a.jsonl", lineno=9)]
    found = list(validate(entries, fmt=CLAUDE_CODE, source="ignored"))
    assert [p.location for p in found] == ["a.jsonl:9"]


def test_invalid_entries_are_left_to_check_entry() -> None:
    bad = Entry({}, raw=b"{oops\n", source="a.jsonl", lineno=2, invalid=True)
    assert list(validate([Entry(user("u1", None), lineno=1), bad], fmt=CLAUDE_CODE)) == []


def test_problem_text_and_record() -> None:
    problem = Problem("s.jsonl", 12, "tool-result-orphan", "tool_result for t answers nothing")
    assert problem.format() == "s.jsonl:12: error: tool_result for t answers nothing [tool-result-orphan]"
    assert problem.to_dict() == {"file": "s.jsonl", "line": 12, "severity": "error",
                                 "code": "tool-result-orphan",
                                 "message": "tool_result for t answers nothing"}
    assert Problem("s.jsonl", None, "x", "m", WARNING).format() == "s.jsonl: warning: m [x]"


def test_validate_does_not_mutate_entries() -> None:
    entries = tool_loop() + [boundary("b1", "a3", parentUuid="a3")]
    before = repr(entries)
    list(validate(entries, fmt=CLAUDE_CODE))
    assert repr(entries) == before
