"""The offline summary hands the work over from the session's own record (issue 28): tasks and
their states, commits and pushes, what each change did, tests after the last change, errors and
what resolved them, the assistant's reports, the user's constraints - for every agent, through
its adapter."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from ctxtool.core.summarizing.facts import Facts
from ctxtool.core.summarizing.offline import View, offline_summary, problem_solving
from ctxtool.core.summarizing.prompt import HEADINGS, split_sections
from ctxtool.core.summarizing.request import build_request
from ctxtool.core.summarizing.work import (WorkLog, commit_message, intent_of, purpose_of,
                                           report_lines, telling_words)
from ctxtool.types import CLAUDE_CODE

CODEX = "codex"
from tests.summarize_builder import Session, text_block


def sections(entries: list[dict[str, Any]], fmt: str = CLAUDE_CODE) -> dict[str, str]:
    """Each section's body, without the indent the summary gives it."""
    found = split_sections(offline_summary(build_request(entries, fmt)))
    assert found is not None and list(found) == list(HEADINGS)
    return {title: textwrap.dedent("   " + body) for title, body in found.items()}


def todo(s: Session, tool_id: str, *items: tuple[str, str]) -> None:
    s.call(tool_id, "TodoWrite", {"todos": [{"content": c, "status": st, "activeForm": c}
                                            for c, st in items]}, "Todos have been modified")


def shipped_session() -> Session:
    """Two tasks: the first done, committed and pushed; the second started, its test failing,
    then fixed."""
    s = Session()
    s.user("Add the export command, then a --format option. Don't touch the importer.")
    todo(s, "t1", ("Add the export command", "in_progress"), ("Add a --format option", "pending"))
    s.call("w1", "Write", {"file_path": "/work/app/cli/export.py",
                           "content": "import click\n\n@click.command()\ndef export(path):\n"
                                      "    return dump_rows(path)\n"}, "File created")
    s.call("b1", "Bash", {"command": "pytest -q tests/test_export.py"}, "4 passed in 0.2s")
    s.call("c1", "Bash", {"command": "git add -A && git commit -m \"$(cat <<'EOF'\n"
                                     "feat: export command\n\n- Add export() writing the rows\n"
                                     "  of a session as CSV\n\nCo-Authored-By: A <a@b.c>\nEOF\n)\""},
           "[main 1a2b3c4] feat: export command\n 1 file changed")
    s.call("p1", "Bash", {"command": "git push origin main"}, "To github.com:x/y.git")
    todo(s, "t2", ("Add the export command", "completed"), ("Add a --format option", "in_progress"))
    s.call("e1", "Edit", {"file_path": "/work/app/cli/export.py",
                          "old_string": "def export(path):\n    return dump_rows(path)",
                          "new_string": "@click.option(\"--format\", default=\"csv\")\n"
                                        "def export(path, format):\n"
                                        "    return dump_rows(path, format)"}, "updated")
    s.call("b2", "Bash", {"command": "pytest -q tests/test_export.py"},
           "Exit code 1\nFAILED tests/test_export.py::test_json - KeyError: 'json'", error=True)
    s.call("e2", "Edit", {"file_path": "/work/app/cli/rows.py", "old_string": "WRITERS = {'csv': w}",
                          "new_string": "WRITERS = {'csv': w, 'json': write_json}"}, "updated")
    s.call("b3", "Bash", {"command": "pytest -q tests/test_export.py -k json"}, "5 passed in 0.3s")
    s.assistant(text_block("Done:\n- Added the `--format` option to `export`\n"
                           "- Fixed the JSON writer in rows.py; tests pass\n\nWant me to commit?"))
    return s


def test_work_is_listed_by_task_in_order_with_commits_pushes_tests_and_reports() -> None:
    done = sections(shipped_session().entries)["Problem Solving"]
    assert done.splitlines() == [
        '- Task "Add the export command" (done at the cut):',
        "  - `pytest -q tests/test_export.py` passed: 4 passed",
        # the push right after it is told on the commit's line
        '  - Committed 1a2b3c4 "feat: export command" (export.py), then pushed to origin main',
        "    - Add export() writing the rows of a session as CSV",  # the body, trailer left out
        # the assistant's report after the last update of the list settles it
        '- Task "Add a --format option" (done at the cut: the assistant said so after its last '
        'update):',
        # the failed run and the run that passed after it are told under Errors and fixes
        "  - Added the `--format` option to `export`",  # the end-of-turn report
        "  - Fixed the JSON writer in rows.py; tests pass",
    ]


def test_each_file_says_what_its_changes_did_and_whether_it_is_committed() -> None:
    files = sections(shipped_session().entries)["Files and Code Sections"]
    assert "- cli/rows.py (edited x1, not committed): added: write_json" in files  # one line
    assert "- cli/export.py (new, edited x1, written x1, not committed)" in files  # edited since
    assert "--format" in files


def test_errors_say_what_resolved_them_and_tests_their_state_after_the_last_change() -> None:
    found = sections(shipped_session().entries)
    errors = found["Errors and fixes"]
    # one line: the error's gist and failing test, the change after it, the run that passed
    assert errors == ("- Test failure (`pytest tests/test_export.py`): FAILED tests/test_export.py"
                      "::test_json - KeyError: 'json' (test_json) Fixed: rows.py; `WRITERS = "
                      "{'csv': w, 'json': write_json}`. Then it passed (5 passed)")
    work = found["Current Work"]
    assert "Task in progress" not in work  # the report settled it
    assert "- `pytest -q tests/test_export.py -k json` passed after the last change (5 passed)." in work
    assert "Changed since the last commit: export.py, rows.py" in work


def test_constraints_the_user_stated_are_kept() -> None:
    intent = sections(shipped_session().entries)["Primary Request and Intent"]
    assert "Constraints and decisions the user stated:\n   - Don't touch the importer." in intent


def test_nothing_settled_later_is_pending() -> None:
    pending = sections(shipped_session().entries)["Pending Tasks"]
    assert "[in_progress] Add the export command" not in pending  # a later update: completed
    assert "Completed (1): Add the export command" in pending
    assert "[in_progress] Add a --format option" not in pending  # the report: done
    assert "Done since the todo list was last updated (the session says so): Add a --format " \
        "option" in pending


def test_an_issue_tracker_closed_from_the_shell_is_a_task_done() -> None:
    s = Session()
    s.user("Work on the epic")
    s.call("b1", "Bash", {"command": "bd update app-7.1 --status in_progress"}, "Updated")
    s.call("b2", "Bash", {"command": "mix test"}, "12 tests, 0 failures")
    s.call("b3", "Bash", {"command": "bd close app-7.1 --reason \"Added the OTEL bootstrap\""},
           "Closed")
    done = sections(s.entries)["Problem Solving"]
    assert done.splitlines()[:3] == ['- Task "app-7.1" (done at the cut):',
                                     "  - `mix test` passed: 12 tests, 0 failures",
                                     "  - Closed app-7.1: Added the OTEL bootstrap"]


def test_an_issue_shown_from_the_shell_gives_its_task_a_title() -> None:
    s = Session()
    s.user("Work on the epic")
    s.call("b0", "Bash", {"command": "bd show app-7.1"},
           "\u25cb app-7.1 \u00b7 Add the OTEL bootstrap   [\u25cf P1 \u00b7 OPEN]\nOwner: M\n")
    s.call("b1", "Bash", {"command": "bd update app-7.1 --status in_progress"}, "Updated")
    s.call("b2", "Bash", {"command": "mix test"}, "12 tests, 0 failures")
    done = sections(s.entries)["Problem Solving"]
    assert done.splitlines()[0] == '- Task "app-7.1" (in progress at the cut) - Add the OTEL bootstrap:'
    log = WorkLog()
    assert log.tracker("gh issue view 12", "title:\tFix the pager\nstate:\tOPEN\n", 1)
    log.tracker("gh issue close 12", "Closed issue #12", 2)
    assert (log.tasks["12"].status, log.tasks["12"].detail) == ("completed", "Fix the pager")


def test_commit_messages_and_report_lines() -> None:
    assert commit_message("git commit -m 'fix: a' -m 'Body line one\nwraps here'") == \
        ["fix: a", "Body line one wraps here"]
    assert commit_message("git commit -am \"feat: \\\"quoted\\\" name\"") == ['feat: "quoted" name']
    assert commit_message("git commit") == []
    assert report_lines("## Summary\n**Fixed** the parser in `p.py`\nShould I go on?\n| a | b |\n"
                        "- All tests passing") == ["Fixed the parser in `p.py`", "All tests passing"]
    # headings of a report say nothing themselves; a short line naming something does
    assert report_lines("Done. Summary:\n### Before the fix\n**Fixed `p.py`, `q.py`:**\nFixed docs") \
        == ["Fixed `p.py`, `q.py`", "Fixed docs"]
    assert telling_words("Done. Summary of `p.py`.") == {"summary", "p.py"}  # a full stop is no name


def test_intent_is_what_the_assistant_said_it_would_do_before_a_call() -> None:
    assert intent_of("Good! Now let me add the `--format` option to export:") == \
        "Add the `--format` option to export"
    assert intent_of("Tests pass.\n\nPerfect! Now I'll also wire it into **startup**.") == \
        "Wire it into startup"  # the last paragraph, markup off
    assert intent_of("Let's add test configuration to disable tracing by default:") == \
        "Add test configuration to disable tracing by default"
    assert intent_of("") == "" and intent_of("Now:") == ""
    # a short intent points at what was said just above it: that comes with it
    assert intent_of("The plan:\n1. Drop the 5-line cut\n2. Add `debug_payload` per row\n\n"
                     "Let me implement these changes:") == \
        "Implement these changes: The plan: Drop the 5-line cut; Add `debug_payload` per row"
    assert len(intent_of("Let me fix " + "the parser " * 40)) <= 160


def test_each_change_says_what_it_was_for_and_what_it_added_and_removed() -> None:
    s = Session()
    s.user("Replace the CSV writer with a JSON one")
    s.assistant(text_block("Now let me replace the CSV writer with a JSON writer:"))
    s.call("e1", "Edit", {"file_path": "/work/app/rows.py",
                          "old_string": "def write_csv(rows):\n    pass",
                          "new_string": "def write_json(rows):\n    return dumps(rows)"}, "updated")
    s.call("e2", "Edit", {"file_path": "/work/app/rows.py", "old_string": "WRITERS = {}",
                          "new_string": "WRITERS = {'json': write_json, 'jsonl': write_lines}"},
           "updated")  # no words in between: the same step
    s.assistant(text_block("Let me read the caller."))
    s.call("r1", "Read", {"file_path": "/work/app/cli.py"}, "import rows")
    s.call("e3", "Edit", {"file_path": "/work/app/cli.py", "old_string": "rows.write_csv(x)",
                          "new_string": "rows.write_json(x)"}, "updated")  # said nothing for it
    s.assistant(text_block("Done: the CSV writer is replaced."))
    files = sections(s.entries)["Files and Code Sections"]
    # one piece of work, one line: the file, what it was for, what it added and removed
    assert "- rows.py (edited x2): Replace the CSV writer with a JSON writer: added " \
        "write_json, write_lines; removed write_csv\n" in files
    assert "Read the caller" not in files  # those words were for the read
    assert "- cli.py (edited x1): added: rows.write_json; removed: rows.write_csv\n" in files


def test_the_names_line_is_ranked_and_never_repeats_what_other_sections_show() -> None:
    s = Session()
    s.user("Why does `load_rows` drop rows?")
    s.assistant(text_block(" ".join(f"`name_{i}` and `name_{i}`." for i in range(80))))
    s.call("e1", "Edit", {"file_path": "/work/app/rows.py", "old_string": "x",
                          "new_string": "def keep_rows(rows):\n    return rows"}, "ok")
    s.assistant(text_block("Fixed in `keep_rows`."))
    concepts = sections(s.entries)["Key Technical Concepts"]
    line = next(ln for ln in concepts.splitlines() if ln.startswith("- Names in play"))
    names = line.split(": ", 1)[1].split(", ")
    assert len(names) == 12  # 80 names were discussed: a short ranked list, never a dump
    assert "load_rows" not in names and "keep_rows" not in names  # shown elsewhere already


def test_tasks_whose_work_is_left_out_keep_a_line_with_what_they_were_to_do() -> None:
    s = Session()
    s.user("Add the two hooks")
    s.call("t1", "TaskCreate", {"subject": "Add the start hook", "description":
                                "In hooks.go: add HookStart, register it in InstallHooks()"},
           "Task #1 created successfully: Add the start hook")
    s.call("t2", "TaskUpdate", {"taskId": "1", "status": "in_progress"}, "Updated task #1 status")
    s.call("e1", "Edit", {"file_path": "/work/app/hooks.go", "old_string": "x",
                          "new_string": "const HookStart = \"start\""}, "updated")
    s.call("t3", "TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated task #1 status")
    for n in range(80):  # later work pushes the task's own lines out of the section
        s.user(f"step {n}")
        s.assistant(text_block(f"Added the handler number {n} to `hooks.go`"))
    done = sections(s.entries)["Problem Solving"]
    assert "earlier pieces of work are left out here; the tasks they were for:\n" \
        '  - "Add the start hook" (done): In hooks.go: add HookStart, register it in ' \
        "InstallHooks()\n" in done
    assert "Added the handler number 79" in done


def test_a_commit_whose_body_starts_the_shown_work_keeps_its_subject() -> None:
    facts = Facts()
    facts.work.commit("git commit -m 'feat: the exporter' -m '- Add the CSV writer\n"
                      "- Add the JSON writer\n- Add the XML writer'", "[main 1a2b3c4] x", 1)
    for n in range(6):  # 10 lines: the 8 shown start inside the commit's body
        facts.work.report(f"Added the writer number {n}", 2 + n)
    s = Session()
    s.user("Ship it")
    done = problem_solving(View(build_request(s.entries, CLAUDE_CODE), facts), 0.0)
    assert done.splitlines()[:3] == ["- Committed 1a2b3c4 \"feat: the exporter\"",
                                     "  - Add the CSV writer", "  - Add the JSON writer"]
    assert done.splitlines()[-1] == "- Added the writer number 5"


def test_an_issue_shown_from_the_shell_says_what_its_task_is_for() -> None:
    s = Session()
    s.user("Work on the epic")
    s.call("b0", "Bash", {"command": "bd show app-7.1"},
           "\u25cb app-7.1 \u00b7 Add the OTEL bootstrap   [\u25cf P1 \u00b7 OPEN]\n"
           "Owner: Ada Lovelace \u00b7 Type: task \u00b7 Created: 2026-02-12 by the team lead\n\n"
           "DESCRIPTION\n## Why this task is needed\n- see the epic for the whole list of parts\n"
           "Traces stop at the web layer, so a slow import cannot be followed into the jobs it "
           "starts. This task wires the exporter first.\n")
    s.call("b1", "Bash", {"command": "bd update app-7.1 --status in_progress"}, "Updated")
    s.call("b2", "Bash", {"command": "mix test"}, "12 tests, 0 failures")
    done = sections(s.entries)["Problem Solving"]
    assert done.splitlines()[0] == (
        '- Task "app-7.1" (in progress at the cut) - Add the OTEL bootstrap (why: Traces stop at '
        "the web layer, so a slow import cannot be followed into the jobs it starts):")
    assert purpose_of("title:\tFix the pager\nstate:\tOPEN\n--\nShort body.\n") == ""


def test_a_commit_made_for_a_tracker_issue_in_progress_names_it() -> None:
    s = Session()
    s.user("Work on bead spotter-4te")
    s.call("b1", "Bash", {"command": "bd update spotter-4te.1 --status in_progress"}, "Updated")
    s.call("e1", "Edit", {"file_path": "/work/app/config/dev.exs", "old_string": "import Config",
                          "new_string": "import Config\nconfig :otel, exporter: :stdout"}, "ok")
    s.call("c1", "Bash", {"command": "git add -A && git commit -m 'feat: otel config'"},
           "[main 12e2d10] feat: otel config")
    s.assistant(text_block("Committed."))
    files = sections(s.entries)["Files and Code Sections"]
    assert "- config/dev.exs (edited x1, committed in 12e2d10 for spotter-4te.1)" in files


def test_a_piped_test_run_that_failed_counts_as_failed() -> None:
    s = Session()
    s.user("Run the tests")
    s.call("b1", "Bash", {"command": "go test ./... 2>&1 | tail -5"},
           "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\tentire.io/cli\t0.4s")  # tail exits 0
    s.call("b2", "Bash", {"command": "mise run lint 2>&1 | head"}, "[lint] 0 issues.")
    s.assistant(text_block("One test fails."))
    found = sections(s.entries)
    assert "- Test failure (`go test`): FAIL entire.io/cli 0.4s (TestParse) One test fails." in \
        found["Errors and fixes"]
    assert "- `mise run lint` passed" in found["Problem Solving"]  # a build check now too


def test_what_was_said_before_a_read_stays_the_intent_of_the_edit_after_it() -> None:
    s = Session()
    s.user("Fix the lint")
    s.assistant(text_block("Let me fix the errcheck issue:"))
    s.call("r1", "Read", {"file_path": "/work/app/h.go"}, "func end() {\n\tread()\n}")
    s.call("e1", "Edit", {"file_path": "/work/app/h.go", "old_string": "\tread()",
                          "new_string": "\tif err := read(); err != nil {\n\t\tlogWarn(err)\n\t}"},
           "updated")
    s.assistant(text_block("Let me check the caller."))
    s.call("r2", "Read", {"file_path": "/work/app/c.go"}, "func c() {}")
    s.call("e2", "Edit", {"file_path": "/work/app/c.go", "old_string": "func c() {}",
                          "new_string": "func c() { end() }"}, "updated")
    s.assistant(text_block("Both fixed."))
    files = sections(s.entries)["Files and Code Sections"]
    assert "- h.go (edited x1): Fix the errcheck issue: added logWarn" in files
    assert "Check the caller" not in files  # those words were for the read


def test_a_file_rewritten_whole_says_which_definitions_are_new() -> None:
    s = Session()
    s.user("Rewrite the renderer")
    s.call("r1", "Read", {"file_path": "/work/app/renderer.ex"},
           "defmodule Renderer do\n  def render(x), do: x\nend")
    s.assistant(text_block("Now I'll do a comprehensive rewrite of the renderer:"))
    s.call("w1", "Write", {"file_path": "/work/app/renderer.ex", "content":
                           "defmodule Renderer do\n  def render(x), do: classify_line(x)\n"
                           "  defp classify_line(x), do: x\nend"}, "File written")
    s.assistant(text_block("Rewritten."))
    files = sections(s.entries)["Files and Code Sections"]
    # compared with the text read: render's line changed, the module around it did not
    assert "- renderer.ex (written x1; about Renderer): Do a comprehensive rewrite of the " \
        "renderer: added classify_line\n" in files


# --- other agents, through their adapters ---------------------------------------------------------

def codex_line(payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-11-24T01:25:30.000Z", "type": "response_item", "payload": payload}


def test_codex_plan_shell_and_patch_are_read_as_todos_commands_and_edits() -> None:
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    run()\n"
             "+    run(retries=3)\n+    report_status()\n*** End Patch")
    entries = [
        codex_line({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "Add retries to main"}]}),
        codex_line({"type": "function_call", "name": "update_plan", "call_id": "c1", "arguments":
                    json.dumps({"plan": [{"step": "Add retries", "status": "in_progress"},
                                         {"step": "Run the tests", "status": "pending"}]})}),
        codex_line({"type": "function_call_output", "call_id": "c1", "output": "Plan updated"}),
        codex_line({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                    "input": patch}),
        codex_line({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success"}),
        codex_line({"type": "function_call", "name": "exec_command", "call_id": "c3",
                    "arguments": json.dumps({"cmd": "pytest -q", "workdir": "/w"})}),
        codex_line({"type": "function_call_output", "call_id": "c3",
                    "output": "Process exited with code 1\nOutput:\nFAILED test_app.py::test_x"}),
    ]
    found = sections(entries, CODEX)
    assert "- src/app.py (edited x1): added: report_status" in found["Files and Code Sections"]
    assert "- Test failure (`pytest`): FAILED test_app.py::test_x" in found["Errors and fixes"]
    assert "[pending] Run the tests" in found["Pending Tasks"]


def test_a_test_run_before_a_later_change_is_not_called_current() -> None:
    s = shipped_session()
    s.call("e9", "Edit", {"file_path": "/work/app/cli/rows.py", "old_string": "w}",
                          "new_string": "w, 'xml': write_xml}"}, "updated")
    work = sections(s.entries)["Current Work"]
    assert "- `pytest -q tests/test_export.py -k json` passed before the last change (not rerun " \
        "since) (5 passed)." in work


def test_a_finished_turn_is_quoted_by_its_opening_on_one_line() -> None:
    s = Session()
    s.user("Fix the parser")
    s.call("e1", "Edit", {"file_path": "/work/app/p.py", "old_string": "a", "new_string": "b"}, "ok")
    s.assistant(text_block("Perfect! Both are done:\n\n## Summary\n- **Fixed** the parser in `p.py`\n"
                           "- Added a test"))
    work = sections(s.entries)["Current Work"]
    # its lines are under Problem Solving; here only how it began, markup off
    assert work.splitlines()[0] == ("The assistant's last reply began: Both are done: Summary Fixed "
                                    "the parser in `p.py` Added a test")


def test_when_not_all_fit_the_work_a_section_above_tells_is_left_out_first() -> None:
    facts = Facts()
    facts.work.report("Added `handleSessionEnd()` handler and `markEnded()` shared helper", 1)
    for n in range(8):  # 9 lines: one more than the least detail lists
        facts.work.report(f"Fixed the check number {n} in the parser", 2 + n)
    s = Session()
    s.user("Ship it")
    view = View(build_request(s.entries, CLAUDE_CODE), facts)
    said = "- hooks.go: Added `handleSessionEnd()` handler and `markEnded()` shared helper"
    done = problem_solving(view, 0.0, said).splitlines()
    assert done[0] == "- 1 piece of work (earlier, or told above) is left out here."
    assert done[1:] == [f"- Fixed the check number {n} in the parser" for n in range(8)]
    # nothing above tells it: the newest are listed, as always
    assert problem_solving(view, 0.0).splitlines()[0] == \
        "- 1 earlier piece of work is left out here."


def test_a_codex_patch_larger_than_the_cut_is_read_whole_for_what_it_added() -> None:
    filler = "".join(f"+# step {n} of the retry loop, nothing named here\n" for n in range(80))
    patch = (f"*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    run()\n"
             f"+    run(retries=3)\n{filler}+def report_status():\n+    pass\n{filler}*** End Patch")
    assert len(patch) > 6000
    entries = [
        codex_line({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "Add retries to main"}]}),
        codex_line({"type": "custom_tool_call", "name": "apply_patch", "call_id": "c2",
                    "input": patch}),
        codex_line({"type": "custom_tool_call_output", "call_id": "c2", "output": "Success"}),
    ]
    files = sections(entries, CODEX)["Files and Code Sections"]
    assert "- src/app.py (edited x1): added: report_status" in files


def test_the_work_shown_is_the_newest_that_fits_in_its_room_not_a_count_of_lines() -> None:
    from ctxtool.core.summarizing.offline import WORK_SHOWN, _fitting
    from ctxtool.core.summarizing.work import WorkLine
    short = [WorkLine(i, "", f"Closed issue {i}") for i in range(40)]
    long = [WorkLine(i, "", f"Committed {i:07x} " + "a long message " * 12) for i in range(40)]
    assert _fitting(short, 1000, 200) == 0  # all 40 short lines fit
    assert _fitting(long, 1000, 200) == 40 - WORK_SHOWN  # the least shown, though over the room
    assert _fitting(long, 2000, 200) == 40 - 9  # each counted as shown: cut to 200 characters


def test_the_work_shown_keeps_a_head_with_the_lines_under_it_or_leaves_both_out() -> None:
    from ctxtool.core.summarizing.offline import _whole
    from ctxtool.core.summarizing.work import WorkLine
    lines = [WorkLine(0, "", "Committed 1a2b3c4 \"fix: pager\""),
             *(WorkLine(0, "", f"body line {i}: " + "words " * 30, detail=True) for i in range(4)),
             WorkLine(1, "", "Pushed")]
    assert _whole(lines, 3, 200) == 5  # three long lines under it would overflow: all left out
    assert _whole(lines, 5, 200) == 5 and _whole(lines, 0, 200) == 0
    short = [lines[0], WorkLine(0, "", "- a", detail=True), WorkLine(0, "", "- b", detail=True)]
    assert _whole(short, 2, 200) == 0  # the head and its first line fit in one line's room


def test_a_report_line_restating_a_shell_call_of_its_turn_names_its_command() -> None:
    s = Session()
    s.user("Make the build dir and show me the logs")
    s.call("b1", "Bash", {"command": "mkdir -p build/out", "description": "Create build output dir"},
           "")
    s.call("b2", "Bash", {"command": "du -sh logs/*.log", "description": "List the rotated logs "
                          "with their disk usage"}, "4.0K logs/a.log\n8.0K logs/b.log")
    s.call("b3", "Bash", {"command": "git status", "description": "List logs in git"}, "clean")
    s.assistant(text_block("Done:\n- Created the build output folder\n"
                           "- \u2705 Listed the logs: two files, 12K in all"))
    s.user("Thanks. Check the cache too")
    s.call("b4", "Bash", {"command": "du -sh cache", "description": "List cache size"}, "1M cache")
    s.call("b5", "Bash", {"command": "rm -rf cache/tmp", "description": "Remove cache tmp files"},
           "rm: cannot remove", error=True)
    s.assistant(text_block("- Created the cache report\n- Removed the cache tmp files, as asked"))
    done = sections(s.entries)["Problem Solving"].splitlines()
    # the purpose said what the line and command do not ("disk usage", "rotated") - told
    assert "- \u2705 Listed the logs: two files, 12K in all (ran `du -sh logs/*.log`: List the rotated " \
           "logs with their disk usage)" in done
    # the purpose adds nothing: the command alone; a git command is a git action, never this
    assert "- Created the build output folder (ran `mkdir -p build/out`)" in done
    # another turn's call, a failed call and a line whose verb no purpose opens with: as said
    assert done[-2:] == ["- Created the cache report", "- Removed the cache tmp files, as asked"]
    assert not any("rm -rf" in line or "git status" in line for line in done)
