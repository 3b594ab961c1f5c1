"""microcompact core: the three strategies at their numeric boundaries, placeholders, the
boundary entry, idempotence and restorability - on lists of dicts with an in-memory store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
import pytest

from ctxtool.formats.claude_code.boundary import NO_FINAL_NEWLINE, is_own_boundary
from ctxtool.core.clearing.microcompact import MicrocompactOptions, MicrocompactReport, microcompact
from ctxtool.core.clearing.replace import (CLEARED, microcompact_placeholder,
                                           placeholder_cost)
from ctxtool.core.clearing.restore import restore
from ctxtool.core.sizing.tokens import estimate_text_tokens, thresholds
from ctxtool.errors import UsageError
from ctxtool.formats.jsonl import iter_entries
from ctxtool.storage.store import ToolResultStore
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI
from tests.clearing_helpers import (MemoryStore, Session, result_contents, text_with_chars,
                                    text_with_tokens)

NOW = datetime(2026, 1, 2, tzinfo=timezone.utc)
# The boundary Claude Code 2.1.12-2.1.20 writes (entireio/cli corpus files), key by key.
REAL_BOUNDARY_KEYS = ["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version",
                      "type", "subtype", "content", "isMeta", "timestamp", "uuid", "level",
                      "microcompactMetadata"]
REAL_METADATA_KEYS = ["trigger", "preTokens", "tokensSaved", "compactedToolIds",
                      "clearedAttachmentUUIDs"]


def run(entries: list[dict[str, Any]], fmt: str = CLAUDE_CODE, store: Any = None,
        **options: Any) -> tuple[list[dict[str, Any]], MicrocompactReport]:
    report = MicrocompactReport()
    out = list(microcompact(entries, fmt=fmt, store=store, now=options.pop("now", NOW),
                            options=MicrocompactOptions(**options), report=report))
    return out, report


def cleared_ids(entries: list[dict[str, Any]]) -> list[str]:
    return [tid for tid, content in result_contents(entries).items()
            if content == CLEARED or (isinstance(content, str) and "saved to:" in content)]


BIG = (30_000, 30_000, 30_000, 100, 100, 100)  # 90300 tokens: the two oldest get cleared


def session_of_sizes(*sizes: int, name: str = "Bash") -> tuple[Session, list[str]]:
    """Results Claude Code counts at ``sizes`` (characters / 4: what its rule decides by)."""
    session = Session().user("please work")
    ids = [session.counted_call(name, size) for size in sizes]
    session.assistant("done")
    return session, ids


def placeholder_tokens(store: Any) -> int:
    return placeholder_cost(microcompact_placeholder, store)


# --- claude-code: the numbers ---------------------------------------------------------------------

@pytest.mark.parametrize(("total", "cleared"), [(39_999, False), (40_000, False), (40_001, True)])
def test_clears_only_while_results_exceed_the_target(total: int, cleared: bool) -> None:
    session, ids = session_of_sizes(total - 3000, 1000, 1000, 1000)
    out, report = run(session.entries, force=True)
    assert cleared_ids(out) == (ids[:1] if cleared else [])
    assert report.selection.tokens_before == total


def test_stops_once_under_the_target() -> None:
    session, ids = session_of_sizes(30_000, 30_000, 30_000, 100, 100, 100)
    out, report = run(session.entries, force=True)
    assert cleared_ids(out) == ids[:2]  # 90300 -> 60300 -> 30300 <= 40000: the third stays
    # Claude Code's count of what went (as its boundary records it); ctxtool's estimate, net
    # of the placeholders, is what estimate takes off
    assert report.selection.tokens_saved == report.agent_tokens_saved == 60_000
    before = sum(estimate_text_tokens(result_contents(session.entries)[i]) for i in ids[:2])
    assert report.tokens_saved == before - 2 * placeholder_tokens(None)
    meta = out[-1]["microcompactMetadata"]
    assert (meta["tokensSaved"], meta["ctxtoolTokensSaved"]) == (60_000, report.tokens_saved)


def test_a_result_no_larger_than_its_placeholder_is_never_cleared(tmp_path) -> None:
    store = ToolResultStore(tmp_path)
    cost = placeholder_tokens(store)
    assert cost > placeholder_tokens(None)  # the path of the saved file costs too
    session = Session().user("please work")
    ids = [session.sized_call("Bash", size) for size in (cost, cost + 50, 100, 100, 100)]
    session.assistant("done")
    out, report = run(session.entries, force=True, target=0, store=store)
    assert cleared_ids(out) == [ids[1]]  # the first would not shrink: left as it was
    after = report.clear.per_tool["Bash"].tokens_after
    assert after < cost + 50 and report.tokens_saved == cost + 50 - after
    meta = out[-1]["microcompactMetadata"]
    assert meta["ctxtoolTokensSaved"] == report.tokens_saved
    assert meta["compactedToolIds"] == [ids[1]]
    assert meta["tokensSaved"] == len(result_contents(session.entries)[ids[1]]) // 4


def test_a_result_its_real_placeholder_would_not_shrink_leaves_no_store_file(tmp_path) -> None:
    """The placeholder naming the file is sized before the file is written: a result above the
    estimated placeholder cost (a path of cheap letters) but not above what the placeholder
    with its real path costs (digits and punctuation cost more) stays, with nothing saved."""
    store = ToolResultStore(tmp_path)
    tool_id = "toolu_" + "-".join(str(n) for n in range(10, 50))  # a path that costs a lot
    real = estimate_text_tokens(microcompact_placeholder(store.path_for(
        "x", tool_use_id=tool_id, session_id=None)))
    assert real > placeholder_tokens(store) + 1
    session = Session().user("please work")
    ids = [session.call("Bash", {"command": "ls"}, text_with_tokens(real - 1, "r1"),
                        tool_id=tool_id),
           session.sized_call("Bash", real + 50)]
    for _ in range(3):
        session.sized_call("Bash", 100)
    session.assistant("done")
    out, report = run(session.entries, force=True, target=0, store=store)
    assert cleared_ids(out) == [ids[1]]
    saved = sorted(p.name for p in tmp_path.rglob("tool-results/*"))
    assert saved == [f"{ids[1]}.txt"] and report.clear.files_saved == 1


def test_store_path_for_is_where_save_puts_a_new_file(tmp_path) -> None:
    store = ToolResultStore(tmp_path)
    for content in ("text", [{"type": "text", "text": "blocks"}]):
        expected = store.path_for(content, tool_use_id="toolu_9/..", session_id="s 1")
        assert store.save(content, tool_use_id="toolu_9/..", session_id="s 1") == expected


@pytest.mark.parametrize(("extra", "cleared"), [(-1, False), (0, True), (1, True)])
def test_clears_nothing_unless_it_saves_clear_at_least(extra: int, cleared: bool) -> None:
    # as Claude Code counts it (its placeholder not taken off), the first saves 20000 + extra
    session, ids = session_of_sizes(20_000 + extra, 13_000, 13_000, 14_000)
    out, report = run(session.entries, trigger=0)
    assert cleared_ids(out) == (ids[:1] if cleared else [])
    if not cleared:
        assert "less than --clear-at-least 20,000" in str(report.selection.skipped)


def test_keep_protects_the_3_newest_and_not_the_4th() -> None:
    session, ids = session_of_sizes(15_000, 15_000, 15_000, 15_000, 15_000)
    out, _ = run(session.entries, force=True, target=0)
    assert cleared_ids(out) == ids[:2]  # the 4th newest goes, the 3rd newest stays
    out, _ = run(session.entries, force=True, target=0, keep=1)
    assert cleared_ids(out) == ids[:4]


def test_the_newest_3_calls_are_kept_whatever_their_size() -> None:
    """Claude Code keeps its newest 3 compactable calls, small or already cleared ones
    included: a small newest result does not push an older large one out of the kept three."""
    session, ids = session_of_sizes(30_000, 30_000, 30_000, 10, 10)
    out, report = run(session.entries, force=True)
    assert cleared_ids(out) == ids[:2]  # kept: the 3rd 30,000 and the two small ones
    assert report.selection.tokens_before == 90_020


def claude_code_boundary(parent: dict[str, Any], ids: list[str], saved: int) -> dict[str, Any]:
    """A microcompact_boundary as Claude Code 2.1.20 writes it (its uuid not ctxtool's)."""
    return {"parentUuid": parent["uuid"], "isSidechain": False, "sessionId": "sess-1",
            "version": "2.1.19", "type": "system", "subtype": "microcompact_boundary",
            "content": "Context microcompacted", "isMeta": False, "level": "info",
            "timestamp": "2026-01-01T01:00:00.000Z",
            "uuid": "9b1dc4f2-0000-4000-8000-000000000001",
            "microcompactMetadata": {"trigger": "auto", "preTokens": 90_000, "tokensSaved": saved,
                                     "compactedToolIds": ids, "clearedAttachmentUUIDs": []}}


def test_results_claude_code_cleared_are_neither_cleared_nor_counted_again() -> None:
    session, ids = session_of_sizes(30_000, 30_000, 30_000, 30_000, 100, 100, 100)
    entries = list(session.entries)
    entries.insert(9, claude_code_boundary(entries[8], ids[:2], 60_000))  # after the 2nd result
    out, report = run(entries, force=True)
    # its own record lists the two oldest: their content is still in the file, untouched;
    # the rest is counted without them: 60,300 > 40,000, the 3rd goes, 30,300 is under
    assert cleared_ids(out) == ids[2:3]
    assert report.selection.tokens_before == 60_300
    assert result_contents(out)[ids[0]] == result_contents(entries)[ids[0]]
    assert out[-1]["microcompactMetadata"]["compactedToolIds"] == ids[2:3]
    assert out[-1]["microcompactMetadata"]["tokensSaved"] == 30_000
    # after a compaction its list no longer applies (nor do the results)
    session.compact()
    newer = [session.counted_call("Bash", 20_000) for _ in range(5)]
    out, _ = run([*entries, *session.entries[len(entries) - 1:]], force=True)
    assert cleared_ids(out) == newer[:2]


def test_trigger_compares_the_context_with_the_warning_threshold() -> None:
    session, _ = session_of_sizes(30_000, 30_000, 1000, 1000, 1000)
    # the session says Claude Code 2.1.19 wrote it: that version's warning (135,000)
    limits = thresholds(model="claude-sonnet-4-5", version="2.1.19")
    assert limits.warning == 135_000
    big = {"input_tokens": limits.warning + 5000, "output_tokens": 10}
    small = {"input_tokens": limits.warning - 30_000, "output_tokens": 10}
    for usage, cleared in ((small, False), (big, True)):
        entries = [*session.entries, Session().assistant("ok", usage=usage).entries[0]]
        out, report = run(entries)
        assert bool(cleared_ids(out)) is cleared
        assert report.threshold == limits.warning
        assert (report.context_tokens or 0) >= limits.warning if cleared else True
    out, report = run([*session.entries, Session().assistant("ok", usage=small).entries[0]],
                      trigger=1000)
    assert cleared_ids(out) and report.threshold == 1000


def test_force_skips_trigger_and_minimum_and_says_manual() -> None:
    session, ids = session_of_sizes(5000, 40_000, 100, 100, 100)
    out, report = run(session.entries)
    assert cleared_ids(out) == [] and report.selection.skipped
    out, report = run(session.entries, force=True)
    assert cleared_ids(out) == ids[:2]
    assert out[-1]["microcompactMetadata"]["trigger"] == "manual"


def test_only_compactable_tools_and_the_tool_options() -> None:
    session = Session().user("go")
    task = session.sized_call("Task", 30_000)
    mcp = session.sized_call("mcp__db__query", 30_000)
    read = session.sized_call("Read", 30_000, {"file_path": "/a.py"})
    grep = session.sized_call("Grep", 30_000, {"pattern": "x"})
    for _ in range(3):
        session.sized_call("Bash", 100)
    out, _ = run(session.entries, force=True, target=0)
    assert cleared_ids(out) == [read, grep]
    out, _ = run(session.entries, force=True, target=0, include_mcp=True,
                 exclude_tools=frozenset({"Grep"}))
    assert cleared_ids(out) == [mcp, read]
    out, _ = run(session.entries, force=True, target=0, keep=0, tools=frozenset({"Task"}))
    assert cleared_ids(out) == [task]


# --- what changes, and what does not --------------------------------------------------------------

def test_only_tool_result_content_changes() -> None:
    session, ids = session_of_sizes(*BIG)
    out, _ = run(session.entries, force=True, store=MemoryStore())
    assert len(out) == len(session.entries) + 1
    for before, after in zip(session.entries, out):
        if before is after:
            continue
        assert [k for k in before] == [k for k in after]
        assert {k: v for k, v in before.items() if k != "message"} == \
            {k: v for k, v in after.items() if k != "message"}
        block, new_block = before["message"]["content"][0], after["message"]["content"][0]
        assert {k: v for k, v in block.items() if k != "content"} == \
            {k: v for k, v in new_block.items() if k != "content"}
        assert block["tool_use_id"] in ids
    assert [e["uuid"] for e in out[:-1]] == [e["uuid"] for e in session.entries]


def test_saved_placeholder_is_claude_codes_and_restore_brings_it_back() -> None:
    session, ids = session_of_sizes(*BIG)
    store = MemoryStore()
    out, report = run(session.entries, force=True, store=store)
    path = f"/mem/sess-1/tool-results/{ids[0]}.txt"
    assert result_contents(out)[ids[0]] == (
        f"<persisted-output>Tool result saved to: {path}\n\nUse Read to view</persisted-output>")
    assert store.files[path] == result_contents(session.entries)[ids[0]]
    assert report.clear.files_saved == 2
    assert list(restore(out, fmt=CLAUDE_CODE, store=store)) == session.entries


def test_no_save_writes_the_bare_placeholder() -> None:
    session, ids = session_of_sizes(*BIG)
    out, _ = run(session.entries, force=True, store=None)
    assert result_contents(out)[ids[0]] == CLEARED == "[Old tool result content cleared]"


def test_block_list_results_with_images_are_saved_as_lists() -> None:
    session = Session().user("look")
    blocks = [{"type": "text", "text": text_with_chars(30_000, "shot")},
              {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                           "data": "iVBORw0KGgo="}}]
    shot = session.call("Read", {"file_path": "/shot.png"}, blocks)
    for _ in range(3):
        session.sized_call("Bash", 100)
    store = MemoryStore()
    out, report = run(session.entries, force=True, target=0, store=store)
    assert store.files[f"/mem/sess-1/tool-results/{shot}.json"] == blocks
    # Claude Code's count: the text's characters / 4 + 2000 for the image
    assert report.selection.tokens_saved == report.agent_tokens_saved == 32_000
    assert report.tokens_saved == report.clear.tokens_before - report.clear.tokens_after
    assert list(restore(out, fmt=CLAUDE_CODE, store=store)) == session.entries


def test_running_twice_changes_nothing_the_second_time() -> None:
    session, _ = session_of_sizes(30_000, 30_000, 30_000, 100, 100, 100)
    store = MemoryStore()
    once, _ = run(session.entries, force=True, store=store)
    twice, report = run(once, force=True, store=store)
    assert twice == once
    assert report.clear.results_cleared == 0 and not report.boundary


def test_results_before_the_last_compaction_are_left_alone() -> None:
    session = Session().user("first")
    old = session.sized_call("Bash", 50_000)
    session.compact()
    new = [session.sized_call("Bash", 20_000) for _ in range(5)]
    out, _ = run(session.entries, force=True)
    assert old not in cleared_ids(out)
    assert cleared_ids(out) == new[:2]


# --- the boundary entry ---------------------------------------------------------------------------

def test_boundary_is_shaped_like_claude_codes() -> None:
    session, ids = session_of_sizes(*BIG)
    out, report = run(session.entries, force=True, now=NOW + timedelta(milliseconds=305))
    boundary = out[-1]
    keys = [k for k in boundary if k != "gitBranch" and k != "slug"]
    assert keys == REAL_BOUNDARY_KEYS
    assert list(boundary["microcompactMetadata"]) == [*REAL_METADATA_KEYS, "ctxtoolTokensSaved"]
    assert boundary["parentUuid"] == session.entries[-1]["uuid"]
    assert boundary["sessionId"] == "sess-1" and boundary["cwd"] == "/tmp/proj"
    assert boundary["timestamp"] == "2026-01-02T00:00:00.305Z"
    assert boundary["content"] == "Context microcompacted"
    meta = boundary["microcompactMetadata"]
    assert {k: v for k, v in meta.items() if k != "ctxtoolTokensSaved"} == {
        "trigger": "manual", "preTokens": 90_300, "tokensSaved": 60_000,
        "compactedToolIds": ids[:2], "clearedAttachmentUUIDs": []}
    assert meta["ctxtoolTokensSaved"] == report.tokens_saved
    assert is_own_boundary(boundary) and report.boundary
    again, _ = run(session.entries, force=True, now=NOW + timedelta(milliseconds=305))
    assert again[-1] == boundary  # deterministic, uuid included


def test_boundary_remembers_a_missing_final_newline() -> None:
    session, _ = session_of_sizes(*BIG)
    raw = session.jsonl()[:-1]
    entries = list(iter_entries(raw.splitlines(keepends=True), "s.jsonl"))
    out, _ = run(entries, force=True)
    assert out[-1][NO_FINAL_NEWLINE] is True
    out, _ = run(list(iter_entries(session.jsonl().splitlines(keepends=True), "s.jsonl")),
                 force=True)
    assert NO_FINAL_NEWLINE not in out[-1]


def test_other_formats_get_no_boundary() -> None:
    messages = [{"role": "user", "content": "go"}]
    for i in range(5):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}",
             "content": text_with_tokens(20_000, str(i))}]})
    out, report = run(messages, fmt=ANTHROPIC, force=True)
    assert len(out) == len(messages) and report.clear.results_cleared == 2
    assert out[2]["content"][0]["content"] == CLEARED


# --- opencode -------------------------------------------------------------------------------------

def turns(*sizes_per_turn: list[int], tools: str = "bash") -> tuple[Session, list[list[str]]]:
    session = Session()
    ids = []
    for number, sizes in enumerate(sizes_per_turn, 1):
        session.user(f"turn {number}")
        ids.append([session.sized_call(tools, size) for size in sizes])
        session.assistant(f"done {number}")
    return session, ids


def test_opencode_protects_the_2_newest_user_turns_not_the_3rd() -> None:
    session, ids = turns([25_000], [25_000], [25_000])
    out, _ = run(session.entries, strategy="opencode", force=True, target=0)
    assert cleared_ids(out) == ids[0]


def test_opencode_keeps_the_newest_target_tokens_of_older_output() -> None:
    session, ids = turns([30_000, 30_000, 30_000], [100], [100])
    out, report = run(session.entries, strategy="opencode")
    # newest first: 30000 (total 30000, protected), 30000 (60000 > 40000: pruned), 30000
    assert cleared_ids(out) == ids[0][:2]
    assert report.selection.tokens_saved == 60_000


@pytest.mark.parametrize(("size", "pruned"), [(19_999, False), (20_000, False), (20_001, True)])
def test_opencode_prunes_only_more_than_the_minimum(size: int, pruned: bool) -> None:
    session, ids = turns([size], [100], [100])
    out, _ = run(session.entries, strategy="opencode", target=0)
    assert cleared_ids(out) == (ids[0] if pruned else [])


def test_opencode_never_prunes_protected_tools() -> None:
    session, ids = turns([25_000], [100], [100], tools="Skill")
    out, _ = run(session.entries, strategy="opencode", force=True, target=0)
    assert cleared_ids(out) == [] and ids[0]
    out, _ = run(session.entries, strategy="opencode", force=True, target=0,
                 protect=frozenset({"other"}))
    assert cleared_ids(out) == ids[0]


def test_opencode_stops_at_already_pruned_output() -> None:
    session, ids = turns([25_000], [25_000], [25_000], [100], [100])
    pruned = ids[1][0]
    for entry in session.entries:  # an earlier run pruned turn 2 (and turn 1 came later)
        for block in entry["message"]["content"] if isinstance(entry.get("message", {}).get(
                "content"), list) else []:
            if block.get("tool_use_id") == pruned:
                block["content"] = CLEARED
    out, _ = run(session.entries, strategy="opencode", force=True, target=0)
    assert cleared_ids(out) == ids[1] + ids[2]  # turn 3 pruned; turn 1 is past the stop


# --- idle -----------------------------------------------------------------------------------------

def test_idle_clears_all_but_5_after_the_gap_only() -> None:
    session, ids = session_of_sizes(*([8000] * 8))
    last = datetime.fromisoformat(session.entries[-1]["timestamp"].replace("Z", "+00:00"))
    out, report = run(session.entries, strategy="idle", now=last + timedelta(minutes=60))
    assert cleared_ids(out) == [] and "not more than 60 min" in str(report.selection.skipped)
    out, _ = run(session.entries, strategy="idle", now=last + timedelta(minutes=60, seconds=1))
    assert cleared_ids(out) == ids[:3]
    out, _ = run(session.entries, strategy="idle", idle=timedelta(minutes=5), keep=3,
                 now=last + timedelta(minutes=6))
    assert cleared_ids(out) == ids[:5]


def test_idle_needs_20000_tokens_saved_unless_forced() -> None:
    session, ids = session_of_sizes(*([6000] * 8))  # 3 cleared: 18,000
    later = NOW + timedelta(days=1)
    out, report = run(session.entries, strategy="idle", now=later)
    assert cleared_ids(out) == [] and "less than --clear-at-least 20000" in \
        str(report.selection.skipped)
    out, _ = run(session.entries, strategy="idle", now=later, force=True)
    assert cleared_ids(out) == ids[:3]


def test_idle_waits_54_minutes_for_claude_code_with_idle_compaction() -> None:
    session, ids = session_of_sizes(*([8000] * 8))
    entries = [{**e, "version": "2.1.332"} for e in session.entries]
    last = datetime.fromisoformat(session.entries[-1]["timestamp"].replace("Z", "+00:00"))
    out, report = run(entries, strategy="idle", now=last + timedelta(minutes=54))
    assert cleared_ids(out) == [] and "not more than 54 min" in str(report.selection.skipped)
    out, _ = run(entries, strategy="idle", now=last + timedelta(minutes=54, seconds=1))
    assert cleared_ids(out) == ids[:3]


def test_idle_needs_a_timestamp() -> None:
    session, _ = session_of_sizes(*([200] * 8))
    entries = [{k: v for k, v in e.items() if k != "timestamp"} for e in session.entries]
    out, report = run(entries, strategy="idle")
    assert cleared_ids(out) == []
    assert report.selection.skipped == "no assistant entry with a timestamp"


# --- tool inputs, other formats, input kinds ------------------------------------------------------

def test_clear_tool_inputs_blanks_and_saves_the_inputs() -> None:
    session, ids = session_of_sizes(*BIG)
    store = MemoryStore()
    out, report = run(session.entries, force=True, clear_tool_inputs=True, store=store)
    uses = [e for e in out
            if e["type"] == "assistant" and e["message"]["content"][0].get("id") == ids[0]]
    path = f"/mem/sess-1/tool-results/{ids[0]}-input.txt"
    assert uses[0]["message"]["content"][0]["input"] == {"ctxtool_cleared_input": path}
    assert orjson.loads(store.files[path]) == {"command": "step 1"}
    assert report.clear.inputs_cleared == 2
    assert list(restore(out, fmt=CLAUDE_CODE, store=store)) == session.entries
    out, _ = run(session.entries, force=True, clear_tool_inputs=True, store=None)
    assert out[1]["message"]["content"][0]["input"] == {}


def test_openai_tool_messages_and_arguments() -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for i in range(5):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": "Bash", "arguments": '{"command": "ls -la"}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}",
                         "content": text_with_tokens(20_000, str(i))})
    store = MemoryStore()
    out, report = run(messages, fmt=OPENAI, force=True, clear_tool_inputs=True, store=store)
    assert report.clear.results_cleared == 2 and report.clear.inputs_cleared == 2
    assert out[2]["content"].startswith("<persisted-output>Tool result saved to: ")
    assert orjson.loads(out[1]["tool_calls"][0]["function"]["arguments"]) == {
        "ctxtool_cleared_input": "/mem/default/tool-results/call_0-input.txt"}
    assert list(restore(out, fmt=OPENAI, store=store)) == messages


def test_a_one_shot_iterator_is_buffered_and_unchanged_entries_pass_as_is() -> None:
    session, _ = session_of_sizes(*BIG)
    entries = list(iter_entries(session.jsonl().splitlines(keepends=True), "s.jsonl"))
    out = list(microcompact(iter(entries), fmt=CLAUDE_CODE, store=None, now=NOW,
                            options=MicrocompactOptions(force=True)))
    assert sum(a is b for a, b in zip(entries, out)) == len(entries) - 2
    assert len(out) == len(entries) + 1


def test_bad_options_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        MicrocompactOptions(strategy="nope")
    with pytest.raises(UsageError):
        MicrocompactOptions(keep=-1)


def test_side_chain_results_are_neither_cleared_nor_counted() -> None:
    # a subagent's calls stored in the main file (Claude Code 1.0): not this context
    session, ids = session_of_sizes(*BIG)
    side = Session(session_id=session.session_id).user("subagent task")
    side.calls = 100  # tool ids of its own
    side_ids = [side.sized_call("Bash", 30_000) for _ in range(3)]
    for entry in side.entries:
        entry["isSidechain"] = True
    entries = [*session.entries[:3], *side.entries, *session.entries[3:]]
    out, report = run(entries, force=True)
    assert set(cleared_ids(out)) == set(ids[:2])  # as without the side chain
    assert not set(side_ids) & set(cleared_ids(out))
    _, alone = run(session.entries, force=True)
    assert report.tokens_saved == alone.tokens_saved
