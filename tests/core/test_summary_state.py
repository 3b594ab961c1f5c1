"""The offline summary keeps every kind of user message, states what is current at the cut, and
keeps the names and files a session is about - on small fixtures built here."""

from __future__ import annotations

from typing import Any

from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.core.summarizing.offline import offline_summary
from ctxtool.core.summarizing.prompt import HEADINGS, continuation_text, split_sections
from ctxtool.core.summarizing.request import build_request
from ctxtool.llm.base import QUEUED
from ctxtool.types import CLAUDE_CODE
from tests.summarize_builder import SESSION, Session, text_block, tool_use

REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
            "it was a file edit, the new_string was NOT written to the file). ")


def sections(s: Session, **kwargs: Any) -> dict[str, str]:
    found = split_sections(offline_summary(build_request(s.entries, CLAUDE_CODE, **kwargs)))
    assert found is not None and list(found) == list(HEADINGS)
    return found


def queue(s: Session, operation: str, content: str | None = None) -> None:
    entry: dict[str, Any] = {"type": "queue-operation", "operation": operation,
                             "timestamp": "2026-01-05T10:00:00.000Z", "sessionId": SESSION}
    if content is not None:
        entry["content"] = content
    s.add(entry)


def messages_of(s: Session) -> list[str]:
    lines = sections(s)["All user messages"].splitlines()
    return [ln.strip()[2:] for ln in lines if ln.strip().startswith("- ")]


# --- every kind of user message, in order --------------------------------------------------------

def test_queued_messages_are_listed_once_in_order() -> None:
    s = Session()
    s.user("Refactor the loader")
    s.assistant(tool_use("b1", "Bash", {"command": "pytest -q"}))
    queue(s, "enqueue", "also rename load() to read_all()")
    queue(s, "remove")
    s.add({**s._base(), "type": "attachment",  # newer versions deliver it as an attachment too
           "attachment": {"type": "queued_command", "prompt": "also rename load() to read_all()"}})
    s.result("b1", "3 passed")
    s.assistant(text_block("Done; renamed as well."))
    s.user("thanks")
    assert messages_of(s) == ["Refactor the loader",
                              "(typed while the assistant was working) also rename load() to read_all()",
                              "thanks"]
    request = build_request(s.entries, CLAUDE_CODE)
    assert [t.kind for t in request.turns if t.is_user_message][1] == QUEUED


def test_queued_message_delivered_later_as_a_prompt_is_not_repeated() -> None:
    s = Session()
    s.user("start")
    queue(s, "enqueue", "and check the docs")
    queue(s, "dequeue")
    s.user("and check the docs")
    assert messages_of(s) == ["start", "(typed while the assistant was working) and check the docs"]


def test_text_beside_tool_results_is_a_user_message() -> None:
    s = Session()
    s.user("Open a PR")
    s.assistant(tool_use("b1", "Bash", {"command": "gh pr create"}))
    s.user([{"type": "tool_result", "tool_use_id": "b1", "content": "https://github.com/x/y/pull/1"},
            text_block("my github user is octocat")])
    assert messages_of(s) == ["Open a PR", "my github user is octocat"]


def test_replies_to_rejected_tool_calls_are_user_messages() -> None:
    s = Session()
    s.user("Clean up the hooks")
    s.assistant(tool_use("e1", "Edit", {"file_path": "/work/app/hooks.py", "old_string": "a",
                                        "new_string": "b"}))
    s.result("e1", REJECTED + "To tell you how to proceed, the user said:\n"
             "keep the hook types separate for clarity", error=True)
    s.assistant(tool_use("b2", "Bash", {"command": "npm install"}))
    s.result("b2", REJECTED + "The user provided the following reason for the rejection:  use pnpm",
             error=True)
    s.assistant(tool_use("b3", "Bash", {"command": "rm -rf build"}))
    s.result("b3", "The user doesn't want to proceed with this tool use.", error=True)  # no words
    assert messages_of(s) == ["Clean up the hooks", "keep the hook types separate for clarity",
                              "use pnpm"]


def test_messages_quoted_by_an_earlier_summary_come_first_and_are_never_nested() -> None:
    prior = continuation_text(
        "1. Primary Request and Intent:\n   Build the pager\n   From the earlier summary:\n"
        "      Older intent\n2. Key Technical Concepts:\n   - paging\n3. Files and Code Sections:\n"
        "   None\n4. Errors and fixes:\n   None\n5. Problem Solving:\n   None\n"
        "6. All user messages:\n   - \"Start the pager\"\n   - \"Use 20 per page\"\n"
        "7. Pending Tasks:\n   - Write the docs\n   - Add a CLI flag\n8. Current Work:\n   paging\n"
        "9. Optional Next Step:\n   None")
    s = Session()
    s.boundary(prior)
    s.user("Now the docs please")
    s.assistant(text_block("Wrote the docs for the pager: README updated and done."))
    found = sections(s)
    assert messages_of(s)[:3] == ["\"Start the pager\"", "\"Use 20 per page\"", "Now the docs please"]
    primary = found["Primary Request and Intent"]
    assert primary.count("From the earlier summary") == 1 and "Older intent" in primary
    pending = found["Pending Tasks"]
    assert "Add a CLI flag" in pending  # nothing later settles it
    assert "Write the docs" not in pending  # "Wrote the docs ... done" settles it


def test_an_earlier_compaction_inside_the_transcript_adds_nothing_twice() -> None:
    s = Session()
    s.user("Build the pager")
    s.assistant(text_block("Built."))
    s.boundary(continuation_text("1. Primary Request and Intent:\n   Build the pager\n"
                                 "6. All user messages:\n   - Build the pager\n"
                                 "7. Pending Tasks:\n   - Stale thing from the old summary"))
    s.user("Now add tests")
    s.assistant(text_block("Added tests."))
    found = sections(s)
    assert messages_of(s) == ["Build the pager", "Now add tests"]
    assert "From the earlier summary" not in "\n".join(found.values())
    assert "Stale thing" not in found["Pending Tasks"]


# --- state current at the cut ----------------------------------------------------------------------

def todo(s: Session, tool_id: str, *items: tuple[str, str]) -> None:
    s.call(tool_id, "TodoWrite", {"todos": [{"content": c, "status": st, "activeForm": c}
                                            for c, st in items]}, "Todos have been modified")


def test_todo_items_settled_later_are_not_pending() -> None:
    s = Session()
    s.user("Fix deferred condensation, then update the changelog")
    todo(s, "t1", ("Fix deferred condensation", "in_progress"), ("Update the changelog", "pending"))
    s.call("e1", "Edit", {"file_path": "/work/app/condense.py", "old_string": "x", "new_string": "y"},
           "updated")
    s.call("b1", "Bash", {"command": "pytest -q"}, "12 passed")
    s.assistant(text_block("Fixed the deferred condensation; all tests pass and it is committed."))
    found = sections(s)
    pending = found["Pending Tasks"]
    assert "[in_progress] Fix deferred condensation" not in pending
    assert "Done since the todo list was last updated" in pending
    assert "- [pending] Update the changelog" in pending
    assert "The task in progress" not in found["Optional Next Step"]


def test_answered_request_leaves_nothing_pending_and_no_next_step() -> None:
    s = Session()
    s.user("What does pages() return for 0?")
    s.call("r1", "Read", {"file_path": "/work/app/pager.py"}, "def pages(n, size): ...")
    s.assistant(text_block("It returns 0. Nothing to change."))
    found = sections(s)
    assert found["Pending Tasks"].startswith("None")
    assert "was answered" in found["Optional Next Step"] and "wait for the user" in found["Optional Next Step"]


def test_request_cut_mid_work_is_in_progress_and_the_next_step() -> None:
    s = Session()
    s.user("Port the parser to the new API")
    s.assistant(text_block("Reading the parser first."))
    s.assistant(tool_use("r1", "Read", {"file_path": "/work/app/parser.py"}))  # no result yet
    found = sections(s)
    assert "[in_progress] The user's latest request" in found["Pending Tasks"]
    step = found["Optional Next Step"]
    assert 'Continue the user\'s latest request, verbatim: "Port the parser to the new API"' in step
    assert "The last tool call: Read /work/app/parser.py (no result yet)" in step


def test_queued_message_after_the_last_reply_is_pending() -> None:
    s = Session()
    s.user("Rename the module")
    s.call("b1", "Bash", {"command": "git mv a.py b.py"}, "")
    queue(s, "enqueue", "and bump the version")
    s.assistant(text_block("Renamed."))
    queue(s, "enqueue", "also update the changelog")
    found = sections(s)
    assert "Queued by the user, not yet answered: \"also update the changelog\"" not in found["Pending Tasks"]
    assert "[in_progress] The user's latest request" in found["Pending Tasks"]
    assert "also update the changelog" in found["Optional Next Step"]


def test_tests_commits_and_pushes_after_the_last_edit() -> None:
    s = Session()
    s.user("Fix it and ship it")
    s.call("b0", "Bash", {"command": "pytest -q"}, "Exit code 1\nFAILED tests/test_a.py::test_one", error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/a.py", "old_string": "1", "new_string": "2"}, "ok")
    s.call("b1", "Bash", {"command": "cd /work/app && uv run pytest -q"}, "3 passed")
    s.call("b2", "Bash", {"command": "git commit -am 'fix: run pytest in CI'"}, "[main abc1234] fix")
    s.call("b3", "Bash", {"command": "git push origin main"}, "ok")
    s.assistant(text_block("Fixed, tested, committed and pushed."))
    work = sections(s)["Current Work"]
    assert "- `uv run pytest -q` passed after the last change (3 passed)." in work
    assert "Last commit: abc1234 \"fix: run pytest in CI\" done, then pushed to origin main." \
        in work
    done = sections(s)["Problem Solving"]
    assert "- Test failure (`pytest`): FAILED tests/test_a.py::test_one (test_one) Fixed: a.py. " \
        "Then " \
        "`uv run pytest` passed (3 passed)" in sections(s)["Errors and fixes"]
    assert "- `uv run pytest -q` passed: 3 passed\n   - Committed abc1234 \"fix: run pytest in CI\" (a.py)" \
        ", then pushed to origin main\n" in done


# --- names, files and size --------------------------------------------------------------------------

def test_names_and_files_from_every_tool_are_kept() -> None:
    s = Session()
    s.user("Why does `load_session_data` drop rows?")
    s.call("g1", "Grep", {"pattern": "TranscriptRenderer", "path": "/work/app/lib"},
           "/work/app/lib/renderer.ex\n/work/app/lib/live/session_live.ex")
    s.call("a1", "Task", {"prompt": "Look at lib/spotter/otel.ex and report", "description": "explore"},
           "The `Otel.setup` call in lib/spotter/otel.ex is made twice.")
    s.call("e1", "Edit", {"file_path": "/work/app/lib/loader.ex", "old_string": "x",
                          "new_string": "def compute_expand_groups(rows) do\n  rows\nend"}, "ok")
    s.assistant(text_block("`compute_expand_groups` now keeps every row; `SessionLive.mount` calls it."))
    found = sections(s)
    names = "\n".join(found.values())  # each once: the names line skips those shown elsewhere
    for name in ("load_session_data", "TranscriptRenderer", "Otel.setup", "compute_expand_groups",
                 "SessionLive.mount"):
        assert name in names, name
    files = found["Files and Code Sections"]
    # the edit is told in the words of the report after it, which names what it added
    assert "- lib/loader.ex (edited x1): `compute_expand_groups` now keeps every row; " \
        "`SessionLive.mount` calls it." in files
    for path in ("renderer.ex", "session_live.ex", "lib/spotter/otel.ex"):
        assert path in files, path


def test_the_bound_holds_whatever_the_number_of_messages() -> None:
    s = Session()
    for n in range(3000):
        s.user(f"message number {n}: please look at module {n} and tell me what it does")
        s.assistant(text_block(f"Module {n} parses things."))
    summary = offline_summary(build_request(s.entries, CLAUDE_CODE, max_summary_tokens=4000))
    assert estimate_text_tokens(summary) <= 4000
    listed = split_sections(summary)["All user messages"]  # type: ignore[index]
    assert "message number 0:" in listed and "message number 2999:" in listed
    assert "more user messages here are left out to fit the size bound" in listed


def test_a_short_session_gets_a_short_summary() -> None:
    s = Session()
    s.user("List the files")
    s.call("b1", "Bash", {"command": "ls"}, "a.py\nb.py")
    s.assistant(text_block("Two files: a.py and b.py."))
    assert estimate_text_tokens(offline_summary(build_request(s.entries, CLAUDE_CODE))) < 800
