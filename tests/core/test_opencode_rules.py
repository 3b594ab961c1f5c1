"""OpenCode's own rules: filterCompacted, the usage anchor and overflow, prune, compaction records."""

from __future__ import annotations

import copy

import pytest

from ctxtool.formats.opencode.export import entries_from_export, loads_document
from ctxtool.formats.opencode.session import (
    CONTINUE_TEXT, PRUNE_MINIMUM, PRUNE_PROTECT, append_compaction, compaction_messages,
    estimate_opencode, filter_compacted_opencode, is_older_session, max_output_tokens, new_id, overflow,
    prune_marks, token_count, usage_anchor,
)
from ctxtool.formats.opencode.view import is_message
from tests.conftest import CORPUS
from tests.opencode_builders import (
    FIXTURE, ZERO, assistant, compaction, ids, mid, tool, user,
)

HEADER = {"session": {"id": "ses_test"}}


def fixture_entries() -> list[dict]:
    data = (FIXTURE / "export.json").read_bytes()
    return entries_from_export(loads_document(data, "export.json"), "export.json")


# --- filterCompacted -------------------------------------------------------------------------------

def test_no_compaction_keeps_everything_in_order() -> None:
    entries = [HEADER, user(1), assistant(2, 1), user(3), assistant(4, 3)]
    assert filter_compacted_opencode(entries) == entries


def test_cut_at_the_user_message_of_the_newest_finished_summary() -> None:
    entries = [HEADER, user(1), assistant(2, 1), user(3, compaction()),
               assistant(4, 3, summary=True), user(5), assistant(6, 5)]
    out = filter_compacted_opencode(entries)
    assert out[0] is HEADER and ids(out) == [mid(3), mid(4), mid(5), mid(6)]


@pytest.mark.parametrize("summary", [
    assistant(4, 3, summary=True, finish=None),                       # still running
    assistant(4, 3, summary=True, error={"name": "APIError"}),         # failed
    assistant(4, 3, summary=False),                                    # not a summary
])
def test_unfinished_failed_or_plain_answers_do_not_cut(summary: dict) -> None:
    entries = [user(1), assistant(2, 1), user(3, compaction()), summary, user(5)]
    assert ids(filter_compacted_opencode(entries)) == ids(entries)


def test_the_parent_must_hold_a_compaction_part() -> None:
    entries = [user(1), assistant(2, 1), user(3), assistant(4, 3, summary=True), user(5)]
    assert ids(filter_compacted_opencode(entries)) == ids(entries)


def test_two_compactions_cut_at_the_newest() -> None:
    entries = [user(1), user(2, compaction()), assistant(3, 2, summary=True), user(4),
               user(5, compaction(auto=True)), assistant(6, 5, summary=True), user(7)]
    assert ids(filter_compacted_opencode(entries)) == [mid(5), mid(6), mid(7)]


def test_a_tail_is_kept_and_moved_after_the_summary() -> None:
    entries = [user(1), assistant(2, 1), user(3), assistant(4, 3),
               user(5, compaction(auto=True, tail=mid(3))), assistant(6, 5, summary=True),
               user(7), assistant(8, 7)]
    assert ids(filter_compacted_opencode(entries)) == [mid(5), mid(6), mid(3), mid(4), mid(7), mid(8)]


def test_a_tail_that_is_not_there_keeps_everything() -> None:
    entries = [user(1), assistant(2, 1), user(5, compaction(tail="msg_gone")),
               assistant(6, 5, summary=True), user(7)]
    assert ids(filter_compacted_opencode(entries)) == ids(entries)


def test_the_fixture_keeps_its_tail_and_the_pending_tools() -> None:
    out = filter_compacted_opencode(fixture_entries())
    assert "session" in out[0]
    assert [i[13:16] for i in ids(out)] == ["010", "011", "008", "009", "012", "013"]
    without_tail = copy.deepcopy(fixture_entries())
    del without_tail[10]["parts"][0]["tail_start_id"]
    assert [i[13:16] for i in ids(filter_compacted_opencode(without_tail))] == ["010", "011", "012", "013"]


# --- usage anchor and overflow ---------------------------------------------------------------------

def test_token_count_prefers_total() -> None:
    tokens = {"input": 10, "output": 5, "reasoning": 100, "cache": {"read": 1000, "write": 7}}
    assert token_count(tokens) == 1022
    assert token_count({**tokens, "total": 5000}) == 5000
    assert token_count({"total": 0, "input": 3}) == 3
    assert token_count(None) == 0


def test_anchor_is_the_last_finished_assistant_message() -> None:
    big = {"input": 100, "output": 20, "reasoning": 0, "cache": {"read": 5000, "write": 30}}
    entries = [HEADER, user(1), assistant(2, 1, tokens=big), user(3),
               assistant(4, 3, finish=None, tokens={**ZERO, "input": 9})]
    anchor = usage_anchor(entries)
    assert anchor is not None and (anchor.index, anchor.message_id, anchor.tokens) == (2, mid(2), 5150)
    assert anchor.summary is False
    assert usage_anchor([HEADER, user(1)]) is None
    summary = usage_anchor(fixture_entries())
    assert summary is not None and summary.summary is True


@pytest.mark.skipif(not (CORPUS / "ggfincke__opencode-to-ccusage").is_dir(), reason="corpus absent")
def test_anchor_on_the_corpus_export() -> None:
    path = CORPUS / "ggfincke__opencode-to-ccusage" / "test__fixtures__sample-export.json"
    entries = entries_from_export(loads_document(path.read_bytes(), str(path)), str(path))
    anchor = usage_anchor(entries)
    # the last message with `finish` is msg_assistant002: 150 + 300 + 500 + 0 (reasoning not added)
    assert anchor is not None and (anchor.message_id, anchor.tokens) == ("msg_assistant002", 950)


def test_overflow_rule_and_its_boundary() -> None:
    # OpenCode 1.18, 200K context, 32K output: usable 200K - 32K = 168K (no reserve off it)
    assert overflow(168_000, 200_000, 32_000).as_dict() == {
        "count": 168_000, "usable": 168_000, "reserved": 20_000, "overflow": True}
    assert overflow(167_999, 200_000, 32_000).overflow is False
    # what the real 1.18.33 did with limit.output 8,000: no compaction at 191,014, one at 193,014
    assert overflow(191_014, 200_000, 8_000).overflow is False
    assert overflow(193_014, 200_000, 8_000).overflow is True
    # releases before 1.18: no reserve, strictly more than 200K - 32K = 168K
    older = overflow(168_000, 200_000, 32_000, older=True)
    assert (older.usable, older.reserved, older.overflow) == (168_000, 0, False)
    assert overflow(168_001, 200_000, 32_000, older=True).overflow is True
    assert overflow(170_001, 400_000, 32_000, input_limit=170_000, older=True).as_dict() == {
        "count": 170_001, "usable": 170_000, "reserved": 0, "overflow": True}
    # ...counting input + cache read + output (not cache write, not total)
    tokens = {"input": 2_000, "output": 500, "total": 999_999,
              "cache": {"read": 150_000, "write": 4_000}}
    assert overflow(tokens, 200_000, 32_000, older=True).count == 152_500
    assert overflow(10, 0, 32_000, older=True).overflow is False
    assert overflow(10, 0, 32_000).overflow is False  # context 0: never
    limited = overflow(150_000, 400_000, 32_000, input_limit=170_000)
    assert (limited.usable, limited.overflow) == (150_000, True)
    assert overflow(100, 200_000, 32_000, reserved=0, older=True).usable == 168_000
    assert overflow({"input": 168_000, "output": 0, "cache": {"read": 0, "write": 0}},
                    200_000, 32_000).overflow is True


def test_older_sessions_are_told_apart_by_their_version() -> None:
    assert [is_older_session(v) for v in ("1.1.48", "1.17.9", "0.9", "1.18.0", "1.18.33",
                                          "2.0.1", None, "dev")] == [
        True, True, True, False, False, False, False, False]


def test_max_output_is_capped_like_opencode() -> None:
    assert max_output_tokens(64_000) == 32_000
    assert max_output_tokens(8_192) == 8_192
    assert max_output_tokens(None) == 32_000 and max_output_tokens(0) == 32_000


# --- prune -----------------------------------------------------------------------------------------

def out(tokens: int) -> str:
    return "y" * (tokens * 4)


def session(*sizes: int, tail: int = 2) -> list[dict]:
    """One old turn per size (a tool output of that many tokens), then ``tail`` newer turns."""
    entries: list[dict] = [HEADER]
    n = 1
    for size in sizes:
        entries += [user(n), assistant(n + 1, n, tool(f"c{n}", output=out(size)))]
        n += 2
    for _ in range(tail):
        entries += [user(n), assistant(n + 1, n, tool(f"c{n}", output=out(50_000)))]
        n += 2
    return entries


def test_estimate_is_javascript_length_over_four_rounded_half_up() -> None:
    assert [estimate_opencode("x" * n) for n in (0, 1, 2, 5, 6, 7)] == [0, 0, 1, 1, 2, 2]
    assert estimate_opencode("😀" * 2) == 1  # two UTF-16 units each


def test_the_two_newest_turns_and_40k_tokens_are_protected() -> None:
    entries = session(30_000, 15_000, 20_000)
    pristine = copy.deepcopy(entries)
    result = prune_marks(entries, now_ms=99)
    # newest first: 20K + 15K = 35K protected; 30K + ... crosses 40K -> c1 pruned (30K > 20K)
    assert result.marked == ["c1"] and (result.total, result.pruned) == (65_000, 30_000)
    assert entries == pristine  # copy-on-write
    marked = result.entries[2]["parts"][0]["state"]
    assert marked["time"] == {"start": 1, "end": 2, "compacted": 99} and marked["output"] == out(30_000)
    assert result.entries[4] is entries[4] and result.entries[0] is HEADER


def test_nothing_is_marked_unless_more_than_the_minimum_would_go() -> None:
    entries = session(PRUNE_MINIMUM, PRUNE_PROTECT)
    at_minimum = prune_marks(entries, now_ms=1)
    assert at_minimum.pruned == PRUNE_MINIMUM and at_minimum.marked == []
    assert all(e is o for e, o in zip(at_minimum.entries, entries, strict=True))
    above = prune_marks(session(PRUNE_MINIMUM + 1, PRUNE_PROTECT), now_ms=1)
    assert above.marked == ["c1"]
    exactly_protect = prune_marks(session(30_000, PRUNE_PROTECT - 30_000), now_ms=1)
    assert (exactly_protect.total, exactly_protect.pruned) == (PRUNE_PROTECT, 0)  # 40K: still kept
    one_over = prune_marks(session(30_001, PRUNE_PROTECT - 30_000), now_ms=1)
    assert one_over.pruned == 30_001 and one_over.marked == ["c1"]


def test_protected_tools_summaries_and_compacted_parts_stop_or_skip() -> None:
    skill = [HEADER, user(1), assistant(2, 1, tool("s", name="skill", output=out(90_000))),
             *session(45_000, tail=2)[1:]]
    assert "s" not in prune_marks(skill, now_ms=1).marked
    after_summary = [user(1), assistant(2, 1, tool("old", output=out(90_000))),
                     user(3, compaction()), assistant(4, 3, summary=True),
                     *session(45_000, tail=2)[1:]]
    assert prune_marks(after_summary, now_ms=1).marked == ["c1"]  # the walk ends at the summary
    no_summary = [*after_summary[:3], *after_summary[4:]]
    assert prune_marks(no_summary, now_ms=1).marked == ["old", "c1"]
    stop = [user(1), assistant(2, 1, tool("old", output=out(90_000))),
            user(3), assistant(4, 3, tool("done", output=out(10), compacted=5)),
            *session(45_000, tail=2)[1:]]
    result = prune_marks(stop, now_ms=1)
    assert "old" not in result.marked
    custom = prune_marks(skill, now_ms=1, protected_tools=())
    assert "s" in custom.marked


def test_error_pending_and_running_tools_are_never_pruned() -> None:
    entries = [user(1), assistant(2, 1, tool("e", output=out(90_000), status="error"),
                                  tool("p", status="pending"), tool("r", status="running")),
               *session(45_000, tail=2)[1:]]
    result = prune_marks(entries, now_ms=1)
    assert not {"e", "p", "r"} & set(result.marked)


# --- compaction records ----------------------------------------------------------------------------

def test_manual_compaction_records() -> None:
    parent = user(3)
    records = compaction_messages("## Goal\nx", parent=parent, auto=False, now_ms=5_000,
                                  path={"cwd": "/w", "root": "/w"})
    assert len(records) == 2
    ask, summary = records
    assert ask["info"]["role"] == "user" and ask["info"]["agent"] == "build"
    assert ask["info"]["model"] == parent["info"]["model"] and ask["info"]["time"] == {"created": 5_000}
    assert ask["parts"] == [{"id": ask["parts"][0]["id"], "messageID": ask["info"]["id"],
                             "sessionID": "ses_test", "type": "compaction", "auto": False}]
    info = summary["info"]
    assert (info["summary"], info["finish"], info["parentID"], info["agent"]) == (
        True, "stop", ask["info"]["id"], "compaction")
    assert summary["parts"][0]["text"] == "## Goal\nx" and info["path"] == {"cwd": "/w", "root": "/w"}
    assert ask["info"]["id"].startswith("msg_") and ask["parts"][0]["id"].startswith("prt_")
    assert len(ask["info"]["id"]) == 4 + 26
    assert ask["info"]["id"] < summary["info"]["id"]  # ascending, like OpenCode's


def test_auto_compaction_adds_the_synthetic_continue_message() -> None:
    records = compaction_messages("s", parent=user(1), auto=True, now_ms=5_000, overflow=True,
                                  tail_start_id=mid(1))
    assert records[0]["parts"][0]["auto"] is True and records[0]["parts"][0]["overflow"] is True
    assert records[0]["parts"][0]["tail_start_id"] == mid(1)
    part = records[2]["parts"][0]
    assert (part["text"], part["synthetic"], part["metadata"]) == (
        CONTINUE_TEXT, True, {"compaction_continue": True})


def test_records_are_deterministic_and_filter_compacted_cuts_at_them() -> None:
    entries = [HEADER, user(1), assistant(2, 1), user(3), assistant(4, 3)]
    first = append_compaction(entries, "sum", auto=True, now_ms=1)
    assert first == append_compaction(entries, "sum", auto=True, now_ms=1)
    new = first[len(entries):]
    assert all(e["info"]["time"]["created"] > entries[-1]["info"]["time"]["created"] for e in new)
    view = filter_compacted_opencode(first)
    assert view[0] is HEADER and [m["parts"][0]["type"] for m in view[1:]] == ["compaction", "text", "text"]
    assert all(is_message(e) for e in view[1:])
    with pytest.raises(ValueError):
        append_compaction([HEADER], "s", auto=False, now_ms=1)


def test_new_ids_follow_the_clock_and_the_counter() -> None:
    a, b = new_id("msg", 1_000, 1, "s"), new_id("msg", 1_000, 2, "s")
    assert a[:16] < b[:16] and a[4:16] == f"{1_000 * 4096 + 1:012x}"
    assert new_id("msg", 1_000, 1, "other") != a
