"""The offline summary: nine sections from the transcript itself, within the token bound."""

from __future__ import annotations

from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.core.summarizing.offline import offline_summary
from ctxtool.core.summarizing.prompt import HEADINGS, continuation_text, missing_headings, split_sections
from ctxtool.core.summarizing.request import build_request
from ctxtool.core.summarizing.tools import error_gist
from ctxtool.types import CLAUDE_CODE
from tests.summarize_builder import Session, coding_session, text_block


def sections_of(summary: str) -> dict[str, str]:
    found = split_sections(summary)
    assert found is not None and list(found) == list(HEADINGS), summary
    return found


def summary_of(session: Session, **kwargs: object) -> str:
    return offline_summary(build_request(session.entries, CLAUDE_CODE, **kwargs))  # type: ignore[arg-type]


def test_all_nine_sections_in_order() -> None:
    summary = summary_of(coding_session())
    assert missing_headings(summary) == []
    assert [line.split(":")[0] for line in summary.splitlines() if line[:1].isdigit()] == [
        f"{n}. {title}" for n, title in enumerate(HEADINGS, start=1)]


def test_every_user_message_verbatim_and_the_latest_request_quoted() -> None:
    sections = sections_of(summary_of(coding_session()))
    messages = sections["All user messages"]
    assert "- Fix the off-by-one in app/pager.py and add a test" in messages
    assert "- Thanks! Now make the page size configurable via PAGER_SIZE" in messages
    assert "Fix the off-by-one" in sections["Primary Request and Intent"]
    assert "Latest request: Thanks! Now make the page size configurable" in \
        sections["Primary Request and Intent"]


def test_files_with_counts_and_latest_edit() -> None:
    files = sections_of(summary_of(coding_session()))["Files and Code Sections"]
    assert "- app/pager.py (edited x1)" in files  # relative to the working directory
    # what the assistant said before the write, the names it brought in, the tests it added
    assert "- tests/test_pager.py (new, written x1)\n     - The test file does not exist yet; " \
        "creating it: added test_pages" in files
    assert "     - tests added: 1\n" in files
    assert "return -(-n // size)" in files and "assert pages(11, 5) == 3" in files


def test_errors_and_what_followed() -> None:
    errors = sections_of(summary_of(coding_session()))["Errors and fixes"]
    # the error, what the assistant made of it, the change after it, the run that passed
    assert errors.strip() == (
        "- Test failure (`pytest tests/test_pager.py`): ERROR: file or directory not found: "
        "tests/test_pager.py. The test file does not exist yet; creating it. Fixed: test_pager.py; "
        "`def test_pages():`; added app.pager. Then it passed (1 passed)")


def test_error_gist_picks_the_telling_line() -> None:
    trace = "Exit code 1\nTraceback (most recent call last):\n  File x\nValueError: bad value"
    assert error_gist(trace, 200) == "Exit code 1: ValueError: bad value"
    assert error_gist("<tool_use_error>File does not exist.</tool_use_error>", 200) == "File does not exist."
    assert error_gist("", 10) == "(no output)"


def test_pending_tasks_are_the_last_todo_state_and_next_step_follows() -> None:
    sections = sections_of(summary_of(coding_session()))
    assert "- [in_progress] Fix pages() rounding" in sections["Pending Tasks"]
    assert "- [pending] Add a pager test" in sections["Pending Tasks"]
    # the assistant ended its turn with a question: the next step is the user's answer
    assert 'asked the user: "I\'ll add an environment variable; should it default to 20?"' in \
        sections["Optional Next Step"]
    assert "Continue" not in sections["Optional Next Step"]


def test_task_tools_of_newer_versions_count_as_the_todo_list() -> None:
    s = Session()
    s.user("do the two things")
    s.call("t1", "TaskCreate", {"subject": "First thing", "description": "d"}, "Task #1 created successfully: First thing")
    s.call("t2", "TaskCreate", {"subject": "Second thing", "description": "d"}, "Task #2 created successfully: Second thing")
    s.call("t3", "TaskUpdate", {"taskId": "1", "status": "completed"}, "Updated task #1 status")
    tasks = sections_of(summary_of(s))["Pending Tasks"]
    assert "- [pending] Second thing" in tasks and "Completed (1): First thing" in tasks


def test_current_work_is_the_last_text_and_the_state_of_the_tests() -> None:
    work = sections_of(summary_of(coding_session()))["Current Work"]
    assert "should it default to 20?" in work
    assert "`pytest -q tests/test_pager.py` passed after the last change" in work
    assert "Latest tool calls" not in work  # the reply ended the turn: no call is in flight


def test_current_work_names_the_calls_in_flight() -> None:
    s = coding_session()
    s.user("Go on")
    s.call("r8", "Read", {"file_path": "/work/app/app/cli.py"}, "import click")
    s.call("r9", "Read", {"file_path": "/work/app/app/pager.py"}, "def pages(n, size):")
    found = sections_of(summary_of(s))
    work = found["Current Work"]
    # the last call once, under the next step
    assert "Tool calls before the last one:" in work and "- Read /work/app/app/cli.py (ok)" in work
    assert "app/pager.py" not in work
    assert "The last tool call: Read /work/app/app/pager.py" in found["Optional Next Step"]
    s.call("b9", "Bash", {"command": "pytest -q"}, "Exit code 1\nboom", error=True)
    work = sections_of(summary_of(s))["Current Work"]  # the next step does not say it failed
    assert "Latest tool calls:" in work and "- Bash `pytest -q` (error)" in work


def test_long_messages_are_cut_with_a_visible_marker_and_the_bound_holds() -> None:
    s = Session()
    for n in range(30):
        s.user(f"request {n}: " + "please refactor the whole module carefully " * 200)
        s.assistant(text_block("done " * 300))
    summary = summary_of(s, max_summary_tokens=3000)
    assert estimate_text_tokens(summary) <= 3000
    messages = sections_of(summary)["All user messages"]
    for n in range(30):
        assert f"- request {n}: please refactor" in messages
    assert "chars truncated ...]" in messages  # start and end kept around a visible marker
    assert messages.rstrip().endswith("refactor the whole module carefully")


def test_instructions_and_cjk_prompts() -> None:
    s = coding_session()
    s.user("ありがとう！READMEも更新してください。")
    sections = sections_of(summary_of(s, instructions="focus on the tests"))
    assert "Focus asked for this summary: focus on the tests" in sections["Primary Request and Intent"]
    assert "- ありがとう！READMEも更新してください。" in sections["All user messages"]


def test_prior_summary_sections_are_merged_without_repeating_messages() -> None:
    prior = continuation_text("1. Primary Request and Intent:\n   Build the pager module\n"
                              "2. Key Technical Concepts:\n   - pagination\n"
                              "3. Files and Code Sections:\n   - app/pager.py\n"
                              "4. Errors and fixes:\n   None\n5. Problem Solving:\n   None\n"
                              "6. All user messages:\n   - \"Start the pager module\"\n"
                              "   - \"Thanks! Now make the page size configurable via PAGER_SIZE\"\n"
                              "7. Pending Tasks:\n   - write docs\n8. Current Work:\n   pager\n"
                              "9. Optional Next Step:\n   none")
    s = Session()
    s.boundary(prior)
    s.user("Thanks! Now make the page size configurable via PAGER_SIZE")
    sections = sections_of(summary_of(s))
    assert "From the earlier summary:" in sections["Primary Request and Intent"]
    assert "Build the pager module" in sections["Primary Request and Intent"]
    assert "- [from the earlier summary] write docs" in sections["Pending Tasks"]
    messages = sections["All user messages"]
    assert "Start the pager module" in messages  # only in the earlier summary: kept
    assert messages.count("make the page size configurable") == 1  # in this transcript: once
