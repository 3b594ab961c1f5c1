"""The commands on OpenCode sessions, in the core: the meter and estimate, snip/restore, persist's
OpenCode style, microcompact's marking."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

import pytest

from ctxtool.core.clearing.microcompact import MicrocompactOptions, MicrocompactReport, microcompact
from ctxtool.core.clearing.persist import PersistOptions, PersistReport, persist
from ctxtool.core.clearing.restore import restore
from ctxtool.core.clearing.snip import SnipOptions, SnipReport, snip
from ctxtool.formats.opencode.tools import for_opencode
from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS, ContextMeter
from ctxtool.core.sizing.tokens import estimate_block_tokens, estimate_entry_tokens
from ctxtool.errors import UsageError
from ctxtool.formats.opencode.context import context_entries, last_step_split
from ctxtool.formats.opencode.session import filter_compacted_opencode
from ctxtool.formats.opencode.truncate import (HINT_HEAD, HINT_TAIL, over_limits, persisted_path,
                                            truncated_output)
from ctxtool.formats.opencode.view import CLEARED, is_message, message_blocks
from ctxtool.storage.store import ToolResultStore
from ctxtool.types import OPENCODE
from tests.opencode_builders import SESSION, assistant, compaction, mid, text, tool, user
from tests.opencode_sessions import (HEADER, NOW_MS, big, file_tool, fixture_entries,
                                     persist_session, prune_session, snip_session, tokens,
                                     tools_of, usage_session)

NOW = datetime(2026, 1, 5, tzinfo=timezone.utc)


def view_tokens(entries: list[dict]) -> int:
    return sum(estimate_entry_tokens(e, OPENCODE) for e in filter_compacted_opencode(entries)
               if is_message(e))


# --- the meter: anchor, last step, compactions -----------------------------------------------------

def test_the_anchor_is_the_last_finished_message_and_later_messages_are_estimated() -> None:
    entries = usage_session()
    meter = ContextMeter(OPENCODE)
    for entry in entries:
        meter.add(entry)
    assert meter.anchor is not None and meter.anchor.key == (mid(2), "")
    assert (meter.anchor.prompt_tokens, meter.anchor.output_tokens) == (21_300, 50)
    after = estimate_entry_tokens(entries[3], OPENCODE) + estimate_entry_tokens(entries[4], OPENCODE)
    assert meter.context_tokens == 21_300 + 50 + after  # input + cache + output, then estimates


def test_the_results_of_the_anchors_last_step_are_counted_after_it() -> None:
    message = assistant(2, 1, {"type": "step-start"}, tool("t1", output=big(3_000)),
                        {"type": "step-start"}, text("next"), tool("t2", output=big(1_000)),
                        finish="tool-calls", tokens=tokens(500, 40, 9_000))
    meter = ContextMeter(OPENCODE)
    meter.add(user(1))
    meter.add(message)
    last_step = message_blocks({"info": message["info"], "parts": message["parts"][3:]})
    results = sum(estimate_block_tokens(b) for b in last_step if b["type"] == "tool_result")
    produced = sum(estimate_block_tokens(b) for b in last_step if b["type"] != "tool_result")
    assert last_step_split(message, estimate_block_tokens) == (produced, results)
    # t1's result was in the prompt of the second step; t2's came after the recorded call
    assert meter.context_tokens == 9_500 + max(40, produced) + results
    assert results > 900


def test_a_summary_is_never_an_anchor_and_a_compaction_restarts_with_its_tail() -> None:
    entries = fixture_entries()
    meter = ContextMeter(OPENCODE)
    for entry in entries:
        meter.add(entry)
    # the last finished messages are a summary (never an anchor) and the tail before it
    assert meter.anchor is None
    # the system prompt and tools: what the session's first call showed, not the fixed default
    first = next(e for e in entries if e.get("info", {}).get("role") == "assistant"
                 and e["info"].get("tokens", {}).get("input"))
    assert 0 < meter.observed_system <= sum(first["info"]["tokens"]["cache"].values()) + \
        first["info"]["tokens"]["input"]
    assert meter.context_tokens == meter.observed_system + view_tokens(entries)
    given = ContextMeter(OPENCODE, system_tokens=DEFAULT_SYSTEM_TOKENS)
    for entry in entries:
        given.add(entry)
    assert given.context_tokens == DEFAULT_SYSTEM_TOKENS + view_tokens(entries)


def test_context_entries_are_the_view_in_file_order() -> None:
    entries = fixture_entries()
    kept = context_entries(entries)
    assert kept[0] is entries[0]
    assert [e["info"]["id"][13:16] for e in kept[1:]] == ["008", "009", "010", "011", "012", "013"]


# --- estimate --------------------------------------------------------------------------------------

def test_estimate_cuts_where_opencode_cuts_and_reports_its_overflow_rule() -> None:
    entries = fixture_entries()
    report = estimate(entries, fmt=OPENCODE)
    data = report.as_dict()
    assert (data["compact_boundaries"], data["messages"], data["entries"]) == (2, 6, 14)
    compacted = sum(estimate_entry_tokens(e, OPENCODE) for e in entries
                    if is_message(e) and e not in filter_compacted_opencode(entries))
    assert data["total_tokens"] == data["context_tokens"] + compacted
    assert data["model"] == "claude-sonnet-4-5" and data["method"] == "heuristic"
    assert data["breakdown"]["compact_summaries"] == estimate_entry_tokens(entries[11], OPENCODE)
    # OpenCode's own check reads the last finished message of its view: the kept tail's 009
    assert data["opencode"] == {
        "window": 200_000, "max_output": 32_000, "reserved": 0, "input_limit": None,
        "usable": 168_000, "count": 152_500, "anchor": "msg_b5e0a1c2d009QrStUvWxYz0123",
        "anchor_is_summary": False, "overflow": False, "context_overflow": False,
        "switched_off": None}
    assert data["tokens_until_auto_compact"] == 168_000 - data["context_tokens"]
    assert "opencode" not in estimate([], fmt="claude-code").as_dict()


def test_estimate_anchors_on_usage_and_honours_the_input_limit_and_output_cap() -> None:
    report = estimate(usage_session(), fmt=OPENCODE, input_limit=30_000,
                      env={"OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX": "8000"})
    data = report.as_dict()
    assert data["method"] == "usage" and data["anchor"]["message_id"] == mid(2)
    assert data["anchor"]["prompt_tokens"] == 21_300
    rule = data["opencode"]
    assert (rule["max_output"], rule["reserved"], rule["usable"]) == (8_000, 8_000, 22_000)
    assert (rule["count"], rule["overflow"]) == (21_350, False)
    assert rule["context_overflow"] is (data["context_tokens"] >= 22_000)
    assert data["status"] == ("auto_compact" if rule["context_overflow"] else "ok")


def test_a_summary_as_the_last_finished_message_is_not_checked() -> None:
    entries = [HEADER, user(1), assistant(2, 1, tokens=tokens(190_000, 10)),
               user(3, compaction()), assistant(4, 3, summary=True, tokens=tokens(190_000, 500))]
    rule = estimate(entries, fmt=OPENCODE).as_dict()["opencode"]
    assert (rule["anchor"], rule["anchor_is_summary"], rule["overflow"]) == (mid(4), True, False)


# --- snip and restore ------------------------------------------------------------------------------

def test_snip_clears_a_superseded_read_and_restore_brings_it_back(tmp_path) -> None:
    entries = snip_session()
    pristine = copy.deepcopy(entries)
    store = ToolResultStore(tmp_path)
    report = SnipReport()
    out = list(snip(entries, fmt=OPENCODE, store=store, report=report))
    assert entries == pristine and report.clear.cleared_ids == ["r1"]
    assert dict(report.reasons) == {"read again later": 1}
    part = tools_of(out)["r1"]
    saved = tmp_path / SESSION / "tool-results" / "r1.txt"
    assert part["state"]["output"] == f"[Content snipped - re-read if needed]\nTool result saved to: {saved}"
    assert part["state"]["input"] == {"filePath": "/w/app.py"}  # the call stays
    assert saved.read_text() == pristine[2]["parts"][0]["state"]["output"]
    assert [o is e for o, e in zip(out, entries)] == [True, True, False, True, True, True, True]
    assert list(snip(out, fmt=OPENCODE, store=store)) == out  # a second run changes nothing
    assert list(restore(out, fmt=OPENCODE, store=store)) == pristine


def test_snip_on_opencode_matches_tool_names_in_either_case() -> None:
    opencode = for_opencode(SnipOptions())
    assert {"read", "Read"} <= opencode.read_tools and {"grep", "list"} <= opencode.search_tools
    assert "read" not in SnipOptions().read_tools  # other formats keep their exact names
    renamed = copy.deepcopy(snip_session())
    for entry in renamed[1:]:
        for part in entry["parts"]:
            if part.get("tool") == "read":
                part["tool"] = "Read"
    assert tools_of(list(snip(renamed, fmt=OPENCODE, store=None)))["r1"]["state"]["output"] \
        .startswith("[Content snipped")


def test_snip_looks_only_after_opencodes_last_compaction() -> None:
    source = "".join(f"{i}\n" for i in range(400))
    entries = [HEADER, user(1), assistant(2, 1, file_tool("old", "read", "/w/a", source)),
               user(3, compaction()), assistant(4, 3, summary=True),
               user(5), assistant(6, 5, file_tool("new", "read", "/w/a", source)),
               user(7), assistant(8, 7, tool("b1"), tool("b2"), tool("b3"))]
    report = SnipReport()
    assert list(snip(entries, fmt=OPENCODE, store=None, report=report)) == entries
    assert report.skipped == "no superseded tool result"


# --- persist: OpenCode's truncation ----------------------------------------------------------------

def test_truncated_output_is_opencodes_text() -> None:
    text = "\n".join(f"r{i}" for i in range(2003))
    cut = truncated_output(text, "/s/tool-results/c.txt")
    head = "\n".join(f"r{i}" for i in range(2000))
    assert cut == (f"{head}\n\n...3 lines truncated...\n\n{HINT_HEAD}/s/tool-results/c.txt\n"
                   f"{HINT_TAIL}")
    assert persisted_path(cut) == "/s/tool-results/c.txt"
    wide = truncated_output("ab\n" + "é" * 30_000, "/s/tool-results/w.txt")
    # whole lines only; the removed count includes the newline after "ab", as OpenCode counts
    assert wide.startswith("ab\n\n...60001 bytes truncated...\n\n")
    assert persisted_path(truncated_output(text, "/home/u/.local/share/opencode/tool-output/t")) is None


@pytest.mark.parametrize(("text", "over"), [
    ("\n".join(["x"] * 2000), False), ("\n".join(["x"] * 2001), True),
    ("x" * 51_200, False), ("x" * 51_201, True), ("é" * 25_600, False), ("é" * 25_601, True)])
def test_over_limits_counts_lines_and_utf8_bytes(text: str, over: bool) -> None:
    assert over_limits(text) is over


def test_persist_follows_opencode_on_its_sessions_and_restore_undoes_it(tmp_path) -> None:
    entries = persist_session()
    store = ToolResultStore(tmp_path)
    report = PersistReport()
    out = list(persist(entries, fmt=OPENCODE, store=store, options=PersistOptions(), report=report))
    parts = tools_of(out)
    folder = tmp_path / SESSION / "tool-results"
    assert parts["long"]["state"]["output"].endswith(
        f"...1000 lines truncated...\n\n{HINT_HEAD}{folder / 'long.txt'}\n{HINT_TAIL}")
    assert parts["wide"]["state"]["output"].startswith("\n\n...60000 bytes truncated...")
    assert parts["small"]["state"]["output"] == "fine"
    assert (report.persisted, report.files, report.results) == (2, 2, 3)
    assert list(persist(out, fmt=OPENCODE, store=store)) == out  # idempotent
    assert list(restore(out, fmt=OPENCODE, store=store)) == entries


def test_persist_claude_code_style_on_opencode_parts(tmp_path) -> None:
    entries = persist_session()
    store = ToolResultStore(tmp_path)
    out = list(persist(entries, fmt=OPENCODE, store=store,
                       options=PersistOptions(style="claude-code")))
    parts = tools_of(out)
    assert parts["wide"]["state"]["output"].startswith("<persisted-output>\nOutput too large")
    assert parts["long"]["state"]["output"] == entries[2]["parts"][0]["state"]["output"]  # 28K chars
    assert list(restore(out, fmt=OPENCODE, store=store)) == entries
    with pytest.raises(UsageError, match="choose one"):
        PersistOptions(truncate=True, style="opencode")


def test_opencode_style_on_claude_code_block_lists_measures_their_text(tmp_path) -> None:
    text_ = "\n".join(f"l{i}" for i in range(2500))  # 2500 lines, but one line of JSON
    entries = [{"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s1",
                "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1",
                     "content": [{"type": "text", "text": text_}]}]}}]
    store = ToolResultStore(tmp_path)
    out = list(persist(entries, fmt="claude-code", store=store,
                       options=PersistOptions(style="opencode")))
    cut = out[0]["message"]["content"][0]["content"]
    assert cut.startswith("l0\nl1\n") and "...500 lines truncated..." in cut
    assert persisted_path(cut) == str(tmp_path / "s1" / "tool-results" / "t1.json")
    assert list(restore(out, fmt="claude-code", store=store)) == entries


def test_persist_leaves_compacted_parts_and_keeps_attachments(tmp_path) -> None:
    image = {"id": "prt_img", "sessionID": SESSION, "messageID": mid(2), "type": "file",
             "mime": "image/png", "url": "data:image/png;base64,AAAA"}
    entries = [HEADER, user(1),
               assistant(2, 1, tool("shot", "read", "y\n" * 2500, attachments=[image]),
                         tool("gone", "bash", "z\n" * 2500, compacted=5))]
    out = list(persist(entries, fmt=OPENCODE, store=ToolResultStore(tmp_path)))
    parts = tools_of(out)
    assert parts["shot"]["state"]["attachments"] == [image]
    assert "lines truncated" in parts["shot"]["state"]["output"]
    assert parts["gone"] is entries[2]["parts"][1]


# --- microcompact: marks, never rewrites ------------------------------------------------------------

def run_microcompact(entries: list[dict], **options) -> tuple[list[dict], MicrocompactReport]:
    report = MicrocompactReport()
    out = list(microcompact(entries, fmt=OPENCODE, store=None, now=NOW,
                            options=MicrocompactOptions(**options), report=report))
    return out, report


def test_opencode_strategy_marks_pruned_parts_and_keeps_their_output() -> None:
    entries = prune_session()
    pristine = copy.deepcopy(entries)
    out, report = run_microcompact(entries, strategy="opencode")
    assert entries == pristine
    old1 = tools_of(out)["old1"]["state"]
    assert old1["time"]["compacted"] == NOW_MS and old1["output"] == pristine[2]["parts"][0]["state"]["output"]
    assert "compacted" not in tools_of(out)["old2"]["state"]["time"]  # the newest 40K kept
    assert [o is e for o, e in zip(out, entries)] == [True, True, False, *[True] * 6]
    data = report.as_dict()
    assert data["marked_compacted"] is True and data["results_cleared"] == 1
    assert data["files_saved"] == 0 and data["boundary_appended"] is False
    assert message_blocks(out[2])[1]["content"] == CLEARED  # what OpenCode then sends
    again, second = run_microcompact(out, strategy="opencode")
    assert again == out and second.as_dict()["results_cleared"] == 0


def test_opencode_strategy_knobs() -> None:
    entries = prune_session()
    assert run_microcompact(entries, strategy="opencode", clear_at_least=40_000)[1] \
        .as_dict()["skipped"].startswith("pruning would remove")
    assert run_microcompact(entries, strategy="opencode", target=0, protect_turns=1)[1] \
        .clear.cleared_ids == ["old1", "old2", "new1"]
    assert run_microcompact(entries, strategy="opencode", target=0,
                            protect=frozenset({"BASH"}))[1].clear.cleared_ids == ["old2"]


def test_other_strategies_mark_what_they_choose() -> None:
    entries = prune_session()
    out, report = run_microcompact(entries, strategy="claude-code", force=True, keep=1)
    assert report.clear.cleared_ids == ["old1"]  # Bash/Read match bash/read; 31K left <= 40K
    assert tools_of(out)["old1"]["state"]["time"]["compacted"] == NOW_MS
    idle = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(days=30)
    report = MicrocompactReport()
    list(microcompact(entries, fmt=OPENCODE, store=None, now=idle,
                      options=MicrocompactOptions(strategy="idle", keep=1), report=report))
    assert report.clear.cleared_ids == ["old1", "old2"]
    with pytest.raises(UsageError, match="does not apply to OpenCode"):
        run_microcompact(entries, strategy="opencode", clear_tool_inputs=True)
