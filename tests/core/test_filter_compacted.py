"""filter_compacted on lists of dicts: where the cut is, preserved segments, side chains, the
model view, message lists and OpenCode sessions."""

from __future__ import annotations

import copy
from typing import Any

from ctxtool.core.clearing.replace import CLEARED
from ctxtool.core.messages.filter_compacted import (
    SUMMARY_MARKER, FilterReport, filter_compacted, is_summary_message, plan_cut,
)
from tests.opencode_builders import assistant as oc_assistant
from tests.opencode_builders import compaction, ids
from tests.opencode_builders import user as oc_user

CC = "claude-code"


def msg(kind: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    return {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": uuid,
            "message": {"role": kind, "content": content}, **extra}


def boundary(uuid: str, logical: str, **metadata: Any) -> dict[str, Any]:
    return {"parentUuid": None, "logicalParentUuid": logical, "isSidechain": False,
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "uuid": uuid, "compactMetadata": {"trigger": "auto", "preTokens": 150000, **metadata}}


def summary(uuid: str, parent: str) -> dict[str, Any]:
    return msg("user", uuid, parent, "This session is being continued from a previous "
               "conversation that ran out of context.", isCompactSummary=True,
               isVisibleInTranscriptOnly=True)


def view(entries: list[dict[str, Any]], fmt: str = CC, **options: Any) -> list[dict[str, Any]]:
    return list(filter_compacted(entries, plan_cut(entries, fmt), **options))


def uuids(entries: list[dict[str, Any]]) -> list[str | None]:
    return [e.get("uuid") for e in entries]


HISTORY = [
    {"type": "summary", "summary": "Fix the parser", "leafUuid": "a2"},
    msg("user", "u1", None, "fix the parser"),
    msg("assistant", "a1", "u1", [{"type": "text", "text": "On it."}]),
    boundary("b1", "a1"),
    summary("s1", "b1"),
    msg("user", "u2", "s1", "now the tests"),
    msg("assistant", "side1", "u2", "subagent turn", isSidechain=True),
    {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
    msg("assistant", "a2", "u2", [{"type": "text", "text": "Done."}]),
]


def test_without_a_compaction_the_view_is_the_input_itself() -> None:
    entries = [e for e in HISTORY if e.get("uuid") not in ("b1", "s1")]
    out = view(entries)
    assert len(out) == len(entries) and all(a is b for a, b in zip(out, entries))


def test_title_summaries_are_not_compactions() -> None:
    entries = [{"type": "summary", "summary": "a title", "leafUuid": "x"},
               msg("user", "u1", None, "hi"),
               {"type": "summary", "summary": "another title", "leafUuid": "u1"}]
    plan = plan_cut(entries, CC)
    assert plan.cut is None and plan.compactions == 0
    assert view(entries) == entries


def test_the_view_starts_at_the_boundary_and_keeps_everything_after_it_in_file_order() -> None:
    out = view(HISTORY)
    assert uuids(out) == ["b1", "s1", "u2", None, "a2"]  # the side chain turn is left out
    assert out[0] is HISTORY[3] and out[-1] is HISTORY[-1]  # untouched: written byte-identical


def test_several_boundaries_cut_at_the_last_one() -> None:
    entries = [*HISTORY, boundary("b2", "a2"), summary("s2", "b2"), msg("user", "u3", "s2", "go")]
    plan = plan_cut(entries, CC)
    assert plan.compactions == 2 and plan.cut == len(HISTORY)
    assert uuids(view(entries)) == ["b2", "s2", "u3"]


def test_sidechains_are_kept_on_request() -> None:
    assert "side1" in uuids(view(HISTORY, sidechains=True))


def test_a_subagent_transcript_is_its_own_thread() -> None:
    entries = [{**e, "isSidechain": True} for e in HISTORY if e.get("type") != "summary"]
    plan = plan_cut(entries, CC)
    assert plan.sidechain_thread and plan.cut == 2
    assert uuids(view(entries)) == ["b1", "s1", "u2", "side1", None, "a2"]


def _preserved_session(**metadata: Any) -> list[dict[str, Any]]:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 140000, "output_tokens": 50}
    kept_answer = msg("assistant", "a2", "u2", [{"type": "text", "text": "kept"}])
    kept_answer["message"]["usage"] = usage
    return [
        msg("user", "u1", None, "start"),
        msg("assistant", "a1", "u1", "old answer"),
        msg("user", "u2", "a1", "keep me"),  # the preserved segment: u2 .. a2
        kept_answer,
        boundary("b1", "a2", **metadata),
        summary("s1", "b1"),
        msg("user", "x1", "s1", "attached to the summary"),
        msg("user", "u3", "a2", "new prompt"),
    ]


SEGMENT = {"headUuid": "u2", "anchorUuid": "s1", "tailUuid": "a2"}


def test_a_preserved_segment_is_spliced_in_after_its_anchor() -> None:
    entries = _preserved_session(preservedSegment=SEGMENT)
    before = copy.deepcopy(entries)
    plan = plan_cut(entries, CC)
    assert plan.preserved == {"u2", "a2"} and plan.problem is None
    out = list(filter_compacted(entries, plan))
    assert uuids(out) == ["b1", "s1", "u2", "a2", "x1", "u3"]
    by_uuid = {e["uuid"]: e for e in out}
    assert by_uuid["u2"]["parentUuid"] == "s1"  # the head hangs from the anchor now
    assert by_uuid["a2"]["message"]["usage"] == {"input_tokens": 0, "cache_read_input_tokens": 0,
                                                 "output_tokens": 0}
    assert by_uuid["x1"]["parentUuid"] == "a2"  # the anchor's other children follow the tail
    assert by_uuid["u3"] is entries[-1]
    assert entries == before  # copy-on-write: the input entries are untouched


def test_preserved_messages_listed_by_uuid() -> None:
    entries = _preserved_session(preservedMessages={"anchorUuid": "s1", "uuids": ["u2", "a2"],
                                                    "allUuids": ["u2", "a2"]})
    assert uuids(view(entries)) == ["b1", "s1", "u2", "a2", "x1", "u3"]


def test_a_segment_anchored_at_the_boundary_comes_before_the_summary() -> None:
    entries = _preserved_session(preservedSegment={**SEGMENT, "anchorUuid": "b1"})
    out = view(entries)
    assert uuids(out) == ["b1", "u2", "a2", "s1", "x1", "u3"]
    assert out[1]["parentUuid"] == "b1" and out[3]["parentUuid"] == "a2"


def test_a_broken_segment_is_reported_and_left_out() -> None:
    entries = _preserved_session(preservedSegment={**SEGMENT, "headUuid": "gone"})
    plan = plan_cut(entries, CC)
    assert plan.preserved == frozenset() and "not a complete chain" in (plan.problem or "")
    assert uuids(list(filter_compacted(entries, plan))) == ["b1", "s1", "x1", "u3"]
    listed = _preserved_session(preservedMessages={"anchorUuid": "s1", "uuids": ["u2", "nope"]})
    assert "1 preserved message(s) not in the file" == plan_cut(listed, CC).problem


def _streamed_session() -> list[dict[str, Any]]:
    use1 = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}
    use2 = {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/b"}}

    def line(uuid: str, parent: str, block: dict[str, Any], out: int) -> dict[str, Any]:
        return {"parentUuid": parent, "isSidechain": False, "type": "assistant", "uuid": uuid,
                "requestId": "req1", "message": {"id": "msg_1", "role": "assistant",
                                                 "content": [block], "stop_reason": None,
                                                 "usage": {"output_tokens": out}}}

    def result(uuid: str, parent: str, tool_id: str) -> dict[str, Any]:
        return {**msg("user", uuid, parent, [{"type": "tool_result", "tool_use_id": tool_id,
                                              "content": "file body " * 20}]),
                "toolUseResult": {"file": {"content": "file body " * 20}}}

    return [
        msg("user", "u0", None, "before the compaction"),
        boundary("b1", "u0"),
        summary("s1", "b1"),
        {"type": "progress", "uuid": "p1", "parentUuid": "s1", "data": {}},
        line("l1", "p1", {"type": "text", "text": "Reading both."}, 5),
        line("l2", "l1", use1, 9),
        result("r1", "l2", "t1"),
        line("l3", "r1", use2, 12),
        result("r2", "l3", "t2"),
        {"type": "system", "subtype": "microcompact_boundary", "uuid": "mc", "parentUuid": "r2",
         "isSidechain": False, "microcompactMetadata": {"compactedToolIds": ["t1"]}},
        {**msg("assistant", "err", "mc", [{"type": "text", "text": "API Error: 529"}]),
         "isApiErrorMessage": True},
        msg("assistant", "a9", "err", [{"type": "text", "text": "Both read."}]),
        msg("assistant", "side", "a9", "side chain", isSidechain=True),
    ]


def test_the_model_view_shows_what_the_model_receives() -> None:
    entries = _streamed_session()
    report = FilterReport()
    out = view(entries, view="model", report=report)
    assert uuids(out) == ["s1", "l1", "r1", "r2", "a9"]
    merged = out[1]["message"]
    assert [b["type"] for b in merged["content"]] == ["text", "tool_use", "tool_use"]
    assert merged["usage"] == {"output_tokens": 12}
    assert out[2]["message"]["content"][0]["content"] == CLEARED and "toolUseResult" not in out[2]
    assert out[3]["message"] is entries[8]["message"]  # not listed by the microcompact boundary
    # one linear chain, past everything left out and the merged-away lines l2 and l3
    assert [e["parentUuid"] for e in out] == [None, "s1", "l1", "r1", "r2"]
    assert report.cleared_results == 1 and report.convert.streamed_lines_merged == 2
    assert report.dropped == 4  # boundary, progress line, microcompact boundary, API error
    assert entries == _streamed_session()


def test_the_model_view_without_a_compaction_drops_only_what_the_model_does_not_see() -> None:
    entries = [e for e in HISTORY if e.get("uuid") not in ("b1", "s1")]
    assert uuids(view(entries, view="model")) == ["u1", "a1", "u2", "a2"]


def test_summary_marker_in_message_lists() -> None:
    marked = {"role": "user", "content": f"\n {SUMMARY_MARKER}\nsummary"}
    assert is_summary_message(marked, "anthropic")
    assert is_summary_message({"role": "user", "content": [
        {"type": "text", "text": f"{SUMMARY_MARKER} of earlier work"},
        {"type": "text", "text": "more"}]}, "anthropic")
    assert not is_summary_message({"role": "user", "content": f"see {SUMMARY_MARKER}"}, "openai")
    assert not is_summary_message({"role": "user", "content": [
        {"type": "image", "source": {}}]}, "anthropic")
    assert is_summary_message(summary("s", "b"), CC)
    assert not is_summary_message(msg("user", "u", None, SUMMARY_MARKER), CC)


def test_message_lists_are_cut_at_ctxtools_last_summary() -> None:
    entries = [{"role": "system", "content": "be brief"},
               {"role": "user", "content": "a"},
               {"role": "assistant", "content": "b"},
               {"role": "user", "content": f"{SUMMARY_MARKER}\nold summary"},
               {"role": "assistant", "content": "c"},
               {"role": "user", "content": f"{SUMMARY_MARKER}\nnewer summary"},
               {"role": "assistant", "content": "d"}]
    out = view(entries, "openai")
    assert out == [entries[0], entries[5], entries[6]]  # the system prompt stays
    anthropic = entries[1:]
    assert view(anthropic, "anthropic") == anthropic[4:]
    assert view(anthropic[:2], "anthropic") == anthropic[:2]


def test_opencode_sessions_use_opencodes_own_rule() -> None:
    session = {"session": {"id": "ses_test"}}
    entries = [session, oc_user(1), oc_assistant(2, 1), oc_user(3, compaction()),
               oc_assistant(4, 3, summary=True), oc_user(5), oc_assistant(6, 5)]
    out = view(entries, "opencode")
    assert out[0] is session
    assert ids(out) == ["msg_003", "msg_004", "msg_005", "msg_006"]
    assert ids(view(entries, "opencode", view="model")) == ids(out)
    unfinished = [*entries[:4], oc_assistant(4, 3, summary=True, finish=None)]
    assert ids(view(unfinished, "opencode")) == ["msg_001", "msg_002", "msg_003", "msg_004"]


def test_opencode_ids_of_another_type_never_crash_the_plan() -> None:
    """A request id and a summary parentID both of the wrong type (lists): both read as absent,
    and looking the parent up must not use the raw, unhashable value."""
    request = oc_user(1, compaction())
    request["info"]["id"] = ["x"]
    summary = oc_assistant(2, 1, summary=True)
    summary["info"]["parentID"] = [1]
    plan = plan_cut([request, summary], "opencode")
    assert (plan.cut, plan.compactions) == (0, 1)  # as for two missing ids, which match
