"""What each change did (issue 28): one line per piece of work - the file, what the assistant
said it was for, the names it added, changed and removed, its telling line of code - more
lines for a file changed often, the tests a file gained, and a short ranked names list."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from ctxtool.core.summarizing.names import declarations_in, enclosing_definition
from ctxtool.core.summarizing.facts import Facts
from ctxtool.core.summarizing.offline import offline_summary
from ctxtool.core.summarizing.prompt import render_turn, split_sections
from ctxtool.core.summarizing.request import INPUT_VALUE_CHARS, build_request, entry_turn
from ctxtool.core.summarizing.work import _SALIENT, WorkLog, config_keys, new_lines
from ctxtool.core.summarizing.work import tests_in as defined_tests
from ctxtool.types import CLAUDE_CODE
from tests.summarize_builder import Session, text_block, tool_use


def files_section(s: Session) -> str:
    found = split_sections(offline_summary(build_request(s.entries, CLAUDE_CODE)))
    assert found is not None
    return textwrap.dedent("   " + found["Files and Code Sections"])


def in_order(names: Iterable[str], count: int) -> list[str]:  # a ranking: the first ones
    return list(names)[:count]


def test_a_config_change_says_what_for_and_the_entry_it_added_on_one_line() -> None:
    s = Session()
    s.user("Send the traces to stdout in dev")
    s.call("r1", "Read", {"file_path": "/work/app/config/dev.exs"}, "import Config\n")
    s.assistant(text_block("Now let me add the exporter configuration for dev:"))
    s.call("e1", "Edit", {"file_path": "/work/app/config/dev.exs", "old_string": "import Config",
                          "new_string": "import Config\n\nconfig :opentelemetry,\n"
                                        "  traces_exporter: :stdout"}, "updated")
    s.assistant(text_block("Done."))
    line = next(ln for ln in files_section(s).splitlines() if "config/dev.exs" in ln)
    # the statement that goes on over two lines is one line of code here
    assert line == "- config/dev.exs (edited x1): Add the exporter configuration for dev: " \
        "added traces_exporter; `config :opentelemetry, traces_exporter: :stdout`"


def test_each_step_of_a_file_changed_often_gets_its_own_line() -> None:
    s = Session()
    s.user("Instrument the controller")
    actions = ["commit_event", "file_snapshot", "tool_call", "session_start", "session_end"]
    for n, action in enumerate(actions):
        s.assistant(text_block(f"Now let me wrap the {action} action in a span:"))
        s.call(f"e{n}", "Edit", {"file_path": "/work/app/hooks_controller.ex",
                                 "old_string": f"  def {action}(conn, params) do\n    run()",
                                 "new_string": f"  def {action}(conn, params) do\n"
                                               f"    with_span(\"hook.{action}\", fn -> run() end)"},
               "updated")
        s.assistant(text_block("Let me check the file."))
        s.call(f"r{n}", "Read", {"file_path": "/work/app/hooks_controller.ex"}, "defmodule X do")
    s.call("e9", "Edit", {"file_path": "/work/app/other.ex", "old_string": "a",
                          "new_string": "def helper_one(x), do: x"}, "updated")
    s.assistant(text_block("All wrapped."))
    files = files_section(s)
    steps = [ln for ln in files.splitlines() if ln.startswith("  - Wrap the ")]
    assert len(steps) >= 3  # five changes: more than the two a file changed once or twice gets
    # the code names nothing new: left out; the function the words before it name, too
    assert steps[0] == "  - Wrap the commit_event action in a span: added with_span, " \
        "hook.commit_event"
    assert "- other.ex (edited x1): added: helper_one" in files


def test_steps_chosen_are_those_that_did_most_in_their_order_and_code_is_shown_once() -> None:
    work = WorkLog()
    path = "/w/app.py"
    work.changed(path, "Edit", "", "x = 1", 1, True, "Let me tidy it:")
    work.changed(path, "Edit", "", "def parse_rows(text):\n    return split_rows(text)", 2, True,
                 "Now let me add the parser:")
    work.changed(path, "Edit", "", "API_URL = \"/api/v2/rows\"", 3, True, "Let me point it at v2:")
    work.changed(path, "Edit", "", "API_URL = \"/api/v2/rows\"", 4, True, "Let me point it again:")
    lines = work.file_lines(path, 2, in_order)
    assert lines == ["Add the parser: added parse_rows, split_rows",
                     "Point it at v2: added API_URL, /api/v2/rows; `API_URL = \"/api/v2/rows\"`"]
    again = work.file_lines(path, 3, in_order)
    assert again[2].startswith("Point it again") and "`" not in again[2]  # shown once only


def test_a_test_file_says_how_many_tests_it_gained_and_those_the_steps_do_not_name() -> None:
    work = WorkLog()
    path = "/w/parse_test.go"
    work.changed(path, "Write", "", "func TestParse(t *testing.T) {}\nfunc TestSplit(t *testing.T) {}\n"
                 "func helper() {}", 1, False, "Let me write the tests:")
    work.changed(path, "Edit", "func TestSplit(t *testing.T) {}", "", 2, True, "Drop the split test:")
    work.changed(path, "Edit", "", "func TestEmpty(t *testing.T) {}\nfunc TestNil(t *testing.T) {}",
                 3, True, "")
    lines = work.file_lines(path, 1, in_order)
    # the split test went; TestParse is named on its step's line already
    assert lines[-1] == "tests added: 3 (TestEmpty, TestNil)"
    assert defined_tests('test "renders a row" do\n  it("keeps order", fn)\ndef test_rows():') == [
'"renders a row"', '"keeps order"', "test_rows"]


def test_a_data_file_read_is_known_by_its_keys() -> None:
    read = '     1\u2192{\n     2\u2192  "sessionId": "a",\n     3\u2192  "projectHash": "b",\n' \
           '     4\u2192  "messages": []\n'
    assert config_keys("/tmp/chats/session.json", read) == ["sessionId", "projectHash"]
    assert config_keys("/w/app.py", "sessionId = 1") == []  # code has definitions instead
    s = Session()
    s.user("What does a saved session hold?")
    s.call("r1", "Read", {"file_path": "/tmp/chats/session.json"}, read)
    s.assistant(text_block("It holds the `sessionId` and the `projectHash` of the project."))
    assert "- /tmp/chats/session.json (read x1): sessionId, projectHash" in files_section(s)


def test_a_map_entry_is_code_but_not_a_config_line() -> None:
    line = '"spotter.session_id" => session_id, size: 20'  # the statement goes on: joined
    assert new_lines("", '"spotter.session_id" => session_id,\n  size: 20', "/w/a.ex") == [
        (line, 2.0)]
    assert _SALIENT.search('"spotter.session_id" => session_id') is None
    assert _SALIENT.search("size: 20") and _SALIENT.search('{:opentelemetry_api, "~> 1.5"},')


def test_the_names_line_gives_the_latest_work_its_share() -> None:
    s = Session()
    s.user("Why does `load_rows` drop rows?")
    for n in range(30):  # names discussed often early on
        s.assistant(text_block(f"`early_{n}` and `early_{n}` and `early_{n}`."))
    s.user("And what calls `check_header`?")
    s.assistant(text_block("Let me look at `read_header_once`, which calls it."))
    s.call("g1", "Grep", {"pattern": "check_header"}, "app/read.py")
    s.assistant(text_block("Only one caller."))
    line = next(ln for ln in split_sections(offline_summary(build_request(
        s.entries, CLAUDE_CODE)))["Key Technical Concepts"].splitlines() if "Names in play" in ln)
    names = line.split(": ", 1)[1].split(", ")
    assert len(names) == 12 and "read_header_once" in names  # the latest work's name...
    assert sum(name.startswith("early_") for name in names) >= 6  # ...beside the central ones


def test_an_edit_inside_a_function_body_names_the_function_it_changed() -> None:
    work = WorkLog()
    path = "/w/conv.go"
    work.read(path, "     1\tpackage conv\n     2\t\n     3\tfunc toStrategy(s *State) *Saved {\n"
                    "     4\t\treturn &Saved{\n     5\t\t\tStartedAt: s.StartedAt,\n     6\t\t}\n"
                    "     7\t}\n     8\t\n     9\tvar limit = 3\n", True)
    work.changed(path, "Edit", "\t\tStartedAt: s.StartedAt,",
                 "\t\tStartedAt: s.StartedAt,\n\t\tEndedAt: s.EndedAt,", 1, True,
                 "Now update the conversion function:")
    work.changed(path, "Edit", "var limit = 3", "var limit = 5", 2, True, "Raise the limit:")
    lines = work.file_lines(path, 2, in_order, any_code=False)
    assert lines[0] == "Update the conversion function: added s.EndedAt; changed toStrategy"
    assert "changed" not in lines[1]  # a top-level line is inside no function
    # the text follows the edits: the next edit is found where the first one left it (after
    # a commit: a step of its own, not a rework of the first)
    work.commit('git commit -m "conversion"', "[main 1a2b3c4] conversion", 3)
    work.changed(path, "Edit", "\t\tEndedAt: s.EndedAt,", "\t\tEndedAt: s.EndedAt(),", 3,
                 True, "Call it:")
    assert work.file_lines(path, 3, in_order, any_code=False)[2] == \
        "Call it: changed toStrategy"


def test_files_only_referenced_are_a_short_list_each_path_once() -> None:
    s = Session()
    s.user("Why did the export change?")
    s.call("e1", "Edit", {"file_path": "/work/app/src/export.py", "old_string": "a",
                          "new_string": "def export_rows(x): pass"}, "updated")
    diff = "diff --git a/src/export.py b/src/export.py\n" + "".join(
        f"see docs/part{n}.md\n" for n in range(30))
    s.call("b1", "Bash", {"command": "git diff"}, diff)
    s.assistant(text_block("See /work/app/docs/part1.md and docs/part1.md."))
    line = next(ln for ln in files_section(s).splitlines() if ln.startswith("- Also referenced"))
    named = line.split(": ", 1)[1].split(" and ")[0].split(", ")
    assert len(named) <= 10 and len(set(named)) == len(named)  # short, and no path twice
    assert "a/src/export.py" not in line and "b/src/export.py" not in line  # the changed file


def test_the_function_a_change_is_in_is_never_a_class_or_module() -> None:
    code = "class Pager:\n    def pages(self, n):\n        total = n\n"
    assert enclosing_definition(code, 8) == "pages"  # a line of its body
    assert enclosing_definition(code, 4) == ""  # a new method: in the class, in no function
    assert enclosing_definition("defmodule App.Web do\n  def show(conn) do\n", 4) == "show"


def test_a_step_lists_every_definition_it_brought_in_when_few_before_names_it_used() -> None:
    work = WorkLog()
    path = "/w/render.ex"
    work.changed(path, "Edit", "", "defp classify_line(a, b), do: Enum.map(a, &plain_line/1)\n"
                 "defp infer_language(a, b), do: String.trim(b)\n"
                 "defp language_of(ext), do: Map.get(@langs, ext)\n"
                 "defp group_lines(x), do: Enum.group_by(x, &line_kind/1)\n"
                 "defp mark_hidden(x), do: Enum.reject(x, &is_nil/1)", 1, True,
                 "Now let me add the code classification:")
    # five definitions with a limit of four names: all five, and no name they merely use
    assert work.file_lines(path, 1, in_order) == [
        "Add the code classification: added classify_line, infer_language, language_of, "
        "group_lines, mark_hidden"]


def test_imports_a_step_adds_or_removes_are_told_with_their_keyword() -> None:
    work = WorkLog()
    path = "/w/lib/session_live.ex"
    work.changed(path, "Edit", "  alias Spotter.TranscriptRenderer\n  alias Spotter.Sync",
                 "  use AshComputer.LiveView\n  import SpotterWeb.TranscriptComponents\n"
                 "  alias Spotter.Sync", 1, True, "Let me switch it to the shared components:")
    work.changed(path, "Edit", "  alias SpotterWeb.OtelTraceHelpers",
                 "  alias SpotterWeb.OtelTraceHelpers\n  require SpotterWeb.OtelTraceHelpers", 2,
                 True, "It uses a macro: require it")
    assert work.file_lines(path, 2, in_order) == [
        "Switch it to the shared components: added use AshComputer.LiveView, "
        "import SpotterWeb.TranscriptComponents; removed alias Spotter.TranscriptRenderer",
        # the name was there already; the statement is what is new
        "It uses a macro: require it: added require SpotterWeb.OtelTraceHelpers"]


def test_a_go_file_s_imports_are_told_by_their_package_path_in_or_out_of_a_block() -> None:
    work = WorkLog()
    path = "/w/cmd/explain.go"
    work.changed(path, "Edit", '\t"fmt"\n\t"os"',
                 '\t"fmt"\n\t"os"\n\n\t"example.com/cli/logging"', 1, True,
                 "Log the error instead of dropping it:")
    work.changed(path, "Edit", 'import "strings"\n\nfunc a() {}',
                 'import str "strings"\n\nfunc a() {}', 2, True, "Alias the strings package:")
    assert work.file_lines(path, 2, in_order) == [
        "Log the error instead of dropping it: added import example.com/cli/logging",
        "Alias the strings package"]  # the same package: no import added or removed
    # a quoted line of another language is no import
    work.changed("/w/app.py", "Edit", "X = [\n]", 'X = [\n    "example.com/a"\n]', 3, True,
                 "Add the host:")
    assert "import" not in " ".join(work.file_lines("/w/app.py", 1, in_order))


def test_an_intent_cut_short_ends_at_a_whole_word_marked_before_the_names() -> None:
    work = WorkLog()
    path = "/w/app/retry.py"
    said = ("The retry loop gives up too early on a slow network, and the backoff never grows "
            "past one second, so the third attempt always lands during the same outage window")
    assert len(said) > 160  # longer than an intent is kept
    work.changed(path, "Edit", "def fetch():\n    pass", "def fetch():\n    pass\n\n"
                 "def delay_for(n):\n    return 2 ** n", 1, True, said)
    line = work.file_lines(path, 1, in_order)[0]
    assert line.endswith(" during the same outage \u2026: added delay_for"), line
    # a step that added no names ends the same way
    work.changed("/w/app/notes.txt", "Write", "", "slow networks\n", 2, False, said)
    assert work.file_lines("/w/app/notes.txt", 1, in_order)[0].endswith(" the same outage \u2026")


def test_a_step_is_told_in_the_words_of_the_report_that_names_what_it_added() -> None:
    work = WorkLog()
    path = "/w/hooks.go"
    work.changed(path, "Edit", "", "func handleSessionEnd() {}\nfunc markEnded() {}", 1, True,
                 "Adding the handler and the shared helper. Check the end of the file")
    work.changed("/w/other.go", "Edit", "", "func tidyRows() {}", 2, True, "Tidy up")
    work.report("Done:\n- Added `handleSessionEnd()` handler and `markEnded()` shared helper\n"
                "- Tidied the rest", 3)
    assert work.file_lines(path, 1, in_order) == [
        "Added `handleSessionEnd()` handler and `markEnded()` shared helper"]
    assert work.file_lines("/w/other.go", 1, in_order) == ["Tidy up: added tidyRows"]
    # a later report names steps done since the one before only
    work.report("- Added `handleSessionEnd()` handler again", 4)
    assert len(work.files[path].steps["Adding the handler and the shared helper. Check the "
                                      "end of the file"].reports) == 1


def test_the_items_of_a_report_that_name_new_tests_tell_the_step_that_added_them() -> None:
    work = WorkLog()
    path = "/w/transcript_test.go"
    work.changed(path, "Edit", "", "func TestParse_ArrayContent(t *testing.T) {}\n"
                 "func TestParse_NullContent(t *testing.T) {}", 1, True, "Write the failing tests")
    # no verb of work done on the items: they name what the work added
    work.report("Added 2 new tests:\n- `TestParse_ArrayContent` — mixed array and string content\n"
                "- `TestParse_NullContent` — null content field\n- `TestOther` — not ours", 2)
    assert work.file_lines(path, 1, in_order)[0] == (
        "`TestParse_ArrayContent` — mixed array and string content; "
        "`TestParse_NullContent` — null content field: added testing.T")
    assert [ln.text for ln in work.lines] == [
        "Added 2 new tests", "`TestParse_ArrayContent` — mixed array and string content",
        "`TestParse_NullContent` — null content field"]


def test_a_commit_message_and_a_pull_request_body_tell_the_steps_they_name() -> None:
    work = WorkLog()
    path = "/w/hooks.go"
    # the function it changed is not known (the file was never read): the intent names it
    work.changed(path, "Edit", "x", "seenBlank := false", 1, True,
                 "Fix `addTrailer` - a single paragraph cannot have trailers")
    work.changed("/w/hooks_test.go", "Edit", "", "func TestAddTrailer_Subject(t *testing.T) {}",
                 2, True, "Write the failing test first")
    work.commit("git commit -m \"$(cat <<'EOF'\nfix: trailer for one-line commits\n\n"
                "addTrailer falsely took subjects like \"docs: x\" for trailers. Now scans "
                "upward past the trailer block.\nEOF\n)\"", "[main 1a2b3c4] fix", 3)
    work.posted("gh pr create --title 'fix' --body \"$(cat <<'EOF'\n## Test plan\n"
                "- [x] `TestAddTrailer_Subject` — 4 \"conventional\" commit patterns\nEOF\n)\"", 4)
    assert work.file_lines(path, 1, in_order) == [
        "addTrailer falsely took subjects like \"docs: x\" for trailers. Now scans upward past "
        "the trailer block: added seenBlank"]
    # the body's quotes do not end it: the whole heredoc is read
    assert work.file_lines("/w/hooks_test.go", 1, in_order)[0] == (
        "`TestAddTrailer_Subject` — 4 \"conventional\" commit patterns: added testing.T")


def test_a_step_takes_a_report_line_once_however_often_it_is_repeated() -> None:
    work = WorkLog()
    path = "/w/explain.go"
    work.changed(path, "Edit", "", "if point == nil { continue }", 1, True,
                 "Add nil check after `ReadCommitted`")
    work.report("- Nil check added after `ReadCommitted`: it returns (nil, nil) for a deleted "
                "checkpoint", 2)
    work.posted("gh api -X POST replies -f body='Fixed in 1a2b3c4 - added nil check after "
                "ReadCommitted.'", 3)
    assert work.file_lines(path, 1, in_order) == [
        "Nil check added after `ReadCommitted`: it returns (nil, nil) for a deleted checkpoint"]


def _big_module(middle: str) -> str:
    """An Elixir module past the summarizer's cut, ``middle`` where the cut falls."""
    pad = "".join(f"  # note {n}: a comment that says nothing about any name at all\n"
                  for n in range(60))
    return f"defmodule Render do\n  def render_row(x), do: x\n{pad}{middle}{pad}end\n"


def test_a_large_write_is_read_whole_for_its_step_and_cut_for_the_names_in_play() -> None:
    helpers = "".join(f"  defp flood_{n}_helper(x), do: x\n" for n in range(3)) + \
        "".join(f"  @hint_{n}_value :x\n" for n in range(40))
    content = _big_module(helpers)
    assert len(content) > 2 * INPUT_VALUE_CHARS
    s = Session()
    s.user("Write the renderer")
    s.assistant(text_block("Now let me write the renderer module:"))
    s.call("w1", "Write", {"file_path": "/work/lib/render.ex", "content": content}, "File created")
    s.assistant(text_block("Written."))
    found = split_sections(offline_summary(build_request(s.entries, CLAUDE_CODE)))
    assert found is not None
    step = next(ln for ln in found["Files and Code Sections"].splitlines() if "render.ex" in ln)
    # the definitions in the middle, where the summarizer's copy is cut, are on the step's line
    assert ": added Render, render_row, flood_0_helper, flood_1_helper, flood_2_helper" in step
    # the names ranked are those the conversation saw: the middle's forty do not crowd them
    concepts = found["Key Technical Concepts"]
    assert "hint_" not in concepts and "flood_" not in concepts


def test_the_uncut_input_and_result_ride_beside_the_cut_ones_and_no_prompt_shows_them() -> None:
    s = Session()
    content = "HEAD\n" + "x = 1\n" * 2000 + "MIDDLE_MARK = 2\n" + "y = 1\n" * 2000
    call = s.assistant(tool_use("w1", "Write", {"file_path": "/w/a.py", "content": content}))
    turn = entry_turn(call[0], CLAUDE_CODE)
    assert turn is not None
    block = turn.blocks[0]
    assert "MIDDLE_MARK" not in block["input"]["content"]
    assert block["uncut_input"]["content"] == content
    result = entry_turn(s.result("w1", content), CLAUDE_CODE)
    assert result is not None and result.blocks[0]["uncut_content"] == content
    assert "MIDDLE_MARK" not in render_turn(turn, {}) + render_turn(result, {})
    small = entry_turn(s.assistant(tool_use("r1", "Read", {"file_path": "/w/a.py"}))[0],
                       CLAUDE_CODE)
    assert small is not None and "uncut_input" not in small.blocks[0]  # nothing cut: no copy


def test_a_rewrite_of_a_file_read_whole_is_told_as_the_edits_it_amounts_to() -> None:
    before = _big_module("  @max_rows 5\n  def old_trim(rows), do: Enum.take(rows, @max_rows)\n"
                         "  def shown_rows(rows) do\n    old_trim(rows)\n  end\n")
    after = before.replace(
        "  @max_rows 5\n  def old_trim(rows), do: Enum.take(rows, @max_rows)\n", "").replace(
        "    old_trim(rows)\n", "    annotate_groups(rows)\n").replace(
        "\nend\n", "\n  defp annotate_groups(rows), do: Enum.chunk_every(rows, 10)\nend\n")
    s = Session()
    s.user("Keep every row")
    s.call("r1", "Read", {"file_path": "/work/lib/render.ex"},
           "".join(f"{n:6}\t{line}\n" for n, line in enumerate(before.splitlines(), 1)))
    s.assistant(text_block("Now let me rewrite the renderer to keep every row:"))
    s.call("w1", "Write", {"file_path": "/work/lib/render.ex", "content": after}, "File written")
    s.assistant(text_block("Rewritten."))
    step = next(ln for ln in files_section(s).splitlines() if "render.ex" in ln)
    # what was there already (render_row) is not called new; the function whose body changed is
    assert "Rewrite the renderer to keep every row: added annotate_groups" in step
    assert "changed shown_rows" in step and "removed old_trim" in step
    assert "render_row" not in step.split(": ", 1)[1]


def test_a_step_says_what_the_assistant_thought_it_would_do_when_it_said_nothing() -> None:
    s = Session()
    s.user("Use the shared helper")
    s.assistant({"type": "thinking", "signature": "x", "thinking":
                 "The helper exists in strategy.\n\nNow let me replace the remaining "
                 "`shorten_text` calls with `strategy.Shorten` and remove the local function."})
    s.call("e1", "Edit", {"file_path": "/w/explain.go", "old_string": "shorten_text(s, 80)",
                          "new_string": "strategy.Shorten(s, 80)"}, "updated")
    s.assistant({"type": "thinking", "signature": "x", "thinking": "Now the other file."},
                text_block("Let me make the same change in the report:"))
    s.call("e2", "Edit", {"file_path": "/w/report.go", "old_string": "shorten_text(s, 80)",
                          "new_string": "strategy.Shorten(s, 80)"}, "updated")
    files = files_section(s)
    assert "- /w/explain.go (edited x1): Replace the remaining `shorten_text` calls with " \
        "`strategy.Shorten` and remove the local function" in files
    # what it said aloud after thinking is the intent
    assert "- /w/report.go (edited x1): Make the same change in the report" in files


def test_a_step_carrying_out_an_item_of_a_plan_says_it_in_the_plan_s_words() -> None:
    s = Session()
    s.user("Track when a session ended")
    s.assistant(text_block("There are two parallel types. I need to:\n1. Add `EndedAt` to "
                           "`SessionState`\n2. Update the conversion functions to include "
                           "`EndedAt`"))
    s.call("e1", "Edit", {"file_path": "/w/types.go", "old_string": "StartedAt time.Time",
                          "new_string": "StartedAt time.Time\n\tEndedAt *time.Time"}, "updated")
    s.assistant(text_block("Now update the conversion functions:"))
    s.call("e2", "Edit", {"file_path": "/w/convert.go", "old_string": "StartedAt: s.StartedAt,",
                          "new_string": "StartedAt: s.StartedAt,\n\t\tEndedAt: s.EndedAt,"},
           "updated")
    s.assistant(text_block("Now update the docs:"))  # no item says more: its own words
    s.call("e3", "Edit", {"file_path": "/w/README.md", "old_string": "a", "new_string": "b"},
           "updated")
    files = files_section(s)
    assert "- /w/convert.go (edited x1): Update the conversion functions to include `EndedAt`" \
        in files
    assert "- /w/README.md (edited x1): Update the docs" in files


def test_declarations_a_step_adds_or_removes_are_listed_after_its_definitions() -> None:
    assert declarations_in("  attr(:all_rows, :list, default: nil)\n  field :ended_at, :utc_datetime\n"
                           "  @max_rows 5\n  @doc \"Rows\"\n  @spec show_rows(list) :: list\n"
                           "  @pytest.fixture\n  @app.route(\"/rows\")\n  attr :title, :string\n") == [
        "all_rows", "ended_at", "@max_rows"]  # not Elixir's own attributes, decorators, plain words
    work = WorkLog()
    path = "/w/lib/rows.ex"
    work.changed(path, "Edit", "  @max_rows 5\n  def rows(x), do: Enum.take(x, @max_rows)",
                 "  attr :all_rows, :list\n  @page_size 10\n  def rows(x), do: x\n"
                 "  defp page_rows(x), do: Enum.chunk_every(x, @page_size)", 1, True,
                 "Now let me keep every row:")
    assert work.file_lines(path, 1, in_order) == [
        "Keep every row: added page_rows, all_rows, @page_size; removed @max_rows, Enum.take"]


def test_only_a_change_keeps_its_whole_input_and_only_until_its_result() -> None:
    big = "row = 1\n" * 2000
    s = Session()
    s.user("Write the rows")
    s.assistant(tool_use("b1", "Bash", {"command": f"cat > /w/rows.py <<'EOF'\n{big}EOF"}),
                tool_use("w1", "Write", {"file_path": "/w/rows.py", "content": big}))
    facts = Facts()
    for turn in build_request(s.entries, CLAUDE_CODE).turns:
        facts.add(turn)
    assert facts.open_calls["b1"].uncut is None  # a command's is never read
    call = facts.open_calls["w1"]
    assert call.uncut == {"file_path": "/w/rows.py", "content": big}
    s.result("w1", "<tool_use_error>File has not been read yet</tool_use_error>", error=True)
    for turn in build_request(s.entries[-1:], CLAUDE_CODE).turns:
        facts.add(turn)
    assert call.uncut is None  # the failed write's text is not kept
