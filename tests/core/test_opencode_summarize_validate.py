"""summarize, validate and filter-compacted's plan on OpenCode sessions, in the core."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest

from ctxtool.core.messages.filter_compacted import plan_cut
from ctxtool.core.summarizing.offline import OfflineSummarizer
from ctxtool.core.summarizing.request import build_request
from ctxtool.core.summarizing.summarize import SummarizeOptions, compact
from ctxtool.core.validating.validate import validate
from ctxtool.errors import UsageError
from ctxtool.formats.opencode.session import CONTINUE_TEXT, filter_compacted_opencode
from ctxtool.llm.base import CONTEXT, PROMPT
from ctxtool.types import OPENCODE
from tests.opencode_builders import SESSION, assistant, compaction, ids, mid, text, tool, user
from tests.opencode_sessions import HEADER, file_tool, fixture_entries

NOW = datetime(2026, 1, 5, tzinfo=timezone.utc)
NOW_MS = 1_767_571_200_000


def coding_session() -> list[dict]:
    """Prompts (one with an @file expansion OpenCode adds as synthetic text), file tools, a todo
    list and a shell command, all with OpenCode's names and inputs."""
    todos = {"todos": [{"id": "1", "content": "add a regression test", "status": "pending",
                        "priority": "high"},
                       {"id": "2", "content": "fix the parser", "status": "completed",
                        "priority": "high"}]}
    todo = tool("td", "todowrite", "2 todos")
    todo["state"]["input"] = todos
    shell = tool("sh", "bash", "1 failed")
    shell["state"]["input"] = {"command": "pytest -q", "description": "run tests"}
    return [HEADER,
            user(1, text("Fix the parser bug in src/parse.py"),
                 text("Called the Read tool with the following input: {}", synthetic=True)),
            assistant(2, 1, file_tool("r1", "read", "/w/src/parse.py", "<file>\n00001| x\n</file>"),
                      file_tool("e1", "edit", "/w/src/parse.py", "edited", oldString="x",
                                newString="y"),
                      file_tool("w1", "write", "/w/tests/test_parse.py", "written",
                                content="def test(): pass\n"),
                      todo, shell, text("Fixed; one test still fails.")),
            user(3, text("now make the test pass")),
            assistant(4, 3, text("Working on it."))]


# --- what the summarizer reads ----------------------------------------------------------------------

def test_the_summary_request_reads_opencode_prompts_tools_and_prior_summaries() -> None:
    entries = [*coding_session(), user(5, compaction()), assistant(6, 5, text("## Goal\nOld goal."),
                                                                   summary=True),
               user(7, text(CONTINUE_TEXT, synthetic=True))]
    request = build_request(filter_compacted_opencode(entries), OPENCODE)
    assert request.prior_summaries == ("## Goal\nOld goal.",)
    assert [(t.kind, t.text) for t in request.turns if t.role == "user"] == [(CONTEXT, "")]
    full = build_request(coding_session(), OPENCODE)
    prompts = [t.text for t in full.turns if t.kind == PROMPT]
    assert prompts == ["Fix the parser bug in src/parse.py", "now make the test pass"]
    names = [b["name"] for t in full.turns for b in t.blocks if b["type"] == "tool_use"]
    assert names == ["Read", "Edit", "Write", "TodoWrite", "Bash"]
    edit = next(b for t in full.turns for b in t.blocks if b.get("name") == "Edit")
    assert edit["input"] == {"file_path": "/w/src/parse.py", "old_string": "x", "new_string": "y"}


def test_the_offline_summary_lists_files_todos_commands_and_user_messages() -> None:
    done = compact(coding_session(), fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW))
    summary = done.summary or ""
    assert "/w/src/parse.py (edited x1" in summary
    assert "/w/tests/test_parse.py (written x1)" in summary
    assert "add a regression test" in summary and "pytest" in summary
    assert "Fix the parser bug in src/parse.py" in summary
    assert "Called the Read tool" not in summary  # OpenCode's synthetic text is not the user's


# --- what summarize writes --------------------------------------------------------------------------

def test_summarize_appends_a_compaction_request_and_the_summary() -> None:
    entries = coding_session()
    pristine = copy.deepcopy(entries)
    done = compact(entries, fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW))
    out = done.entries
    assert out[:len(entries)] == pristine and all(a is b for a, b in zip(out, entries))
    request, answer = out[len(entries):]
    (part,) = request["parts"]
    assert part["type"] == "compaction" and part["auto"] is False and "tail_start_id" not in part
    assert "overflow" not in part  # 1.18 records none for a manual compaction
    assert request["info"]["role"] == "user" and request["info"]["time"]["created"] == NOW_MS
    assert request["info"]["model"] == entries[3]["info"]["model"]  # the newest user's model
    info = answer["info"]
    assert (info["summary"], info["finish"], info["parentID"], info["mode"]) == (
        True, "stop", request["info"]["id"], "compaction")
    assert answer["parts"][0]["text"] == done.summary and info["sessionID"] == SESSION
    assert ids(filter_compacted_opencode(out)) == [request["info"]["id"], info["id"]]
    assert done.report.compacted and done.report.tokens_after < done.report.tokens_before


def test_automatic_runs_add_the_continue_message_and_a_kept_tail_its_id() -> None:
    entries = coding_session()
    done = compact(entries, fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, auto=True, auto_compact_at=0, keep_last=1))
    request, answer, more = done.entries[len(entries):]
    # one message kept, moved back to the user message that opens its turn
    assert request["parts"][0] == {**request["parts"][0], "auto": True, "overflow": False,
                                   "tail_start_id": mid(3)}  # as 1.18 writes an automatic one
    assert more["parts"][0]["text"] == CONTINUE_TEXT and more["parts"][0]["synthetic"] is True
    view = ids(filter_compacted_opencode(done.entries))
    assert view == [request["info"]["id"], answer["info"]["id"], mid(3), mid(4), more["info"]["id"]]
    assert "## Important Details" in (done.summary or "")  # 1.18's template (no version: 1.18)
    assert "now make the test pass" not in (done.summary or "")  # kept, so not summarized


def test_summarize_refuses_restore_files_and_passes_below_the_auto_threshold() -> None:
    with pytest.raises(UsageError, match="OpenCode re-attaches no files"):
        compact(coding_session(), fmt=OPENCODE, summarizer=OfflineSummarizer(),
                options=SummarizeOptions(restore_files=2))
    done = compact(coding_session(), fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(auto=True, auto_compact_at=10**9))
    assert done.entries == coding_session() and "below the auto-compact threshold" in str(done.report.reason)


def test_a_second_compaction_summarizes_only_what_the_view_holds() -> None:
    first = compact(coding_session(), fmt=OPENCODE, summarizer=OfflineSummarizer(),
                    options=SummarizeOptions(now=NOW)).entries
    again = compact(first, fmt=OPENCODE, summarizer=OfflineSummarizer(),
                    options=SummarizeOptions(now=NOW))
    assert again.report.reason == "nothing to summarize: no messages since the last compaction"
    more = [*first, user(90, text("and document it")), assistant(91, 90, text("Documented."))]
    done = compact(more, fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW))
    # 1.18's template: the earlier summary's request and files carried forward, merged
    objective = (done.summary or "").split("## Important Details")[0]
    assert "Fix the parser bug in src/parse.py" in objective and "and document it" in objective
    assert (done.summary or "").count("/w/src/parse.py (edited x1") == 1
    assert (done.summary or "").count("## Objective") == 1


# --- validate --------------------------------------------------------------------------------------

def codes(entries: list[dict]) -> list[tuple[int | None, str]]:
    return [(p.line, p.code) for p in validate(entries, fmt=OPENCODE)]


def test_the_fixture_and_what_the_commands_write_are_valid() -> None:
    entries = fixture_entries()
    assert codes(entries) == []
    done = compact(entries, fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, auto=True, auto_compact_at=0))
    assert codes(done.entries) == []


def test_opencode_invariants() -> None:
    entries = fixture_entries()
    broken = copy.deepcopy(entries)
    broken[3]["info"]["parentID"] = "msg_gone"
    broken[5]["parts"][0]["messageID"] = "msg_other"
    broken[7]["parts"][0]["callID"] = broken[2]["parts"][3]["callID"]
    broken[9]["info"]["sessionID"] = "ses_other"
    broken.append(copy.deepcopy(entries[13]))  # 013 again: its id and both its callIDs
    assert codes(broken) == [
        (4, "opencode-parent-missing"), (6, "opencode-part-message"),
        (8, "opencode-callid-duplicate"), (10, "opencode-session"),
        (15, "opencode-duplicate-id"), (15, "opencode-callid-duplicate"),
        (15, "opencode-callid-duplicate")]


# --- filter-compacted's first pass -------------------------------------------------------------------

def test_the_plan_counts_completed_compactions_and_names_the_cut() -> None:
    plan = plan_cut(fixture_entries(), OPENCODE)
    assert (plan.entries, plan.compactions, plan.cut) == (14, 2, 10)
    unfinished = [user(1), user(2, compaction()), assistant(3, 2, summary=True, finish=None)]
    assert plan_cut(unfinished, OPENCODE).compactions == 0
