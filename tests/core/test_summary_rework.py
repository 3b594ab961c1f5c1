"""A change that reworks what a step of the same file wrote moments ago (issue 28): it is part of
that step, which tells its net change once - the names brought in and kept, not those tried and
taken out - in the words of the step it refines. The room it frees goes to the older changed
files, each of which says on its line what its change did."""

from __future__ import annotations

from collections.abc import Iterable

from ctxtool.core.summarizing.offline import files_and_code
from ctxtool.core.summarizing.work import TEXTS, WorkLog
from tests.summarize_builder import Session, least_detail, text_block

PATH = "/w/lib/shop/application.ex"
BEFORE = "defmodule Shop.Application do\n  use Application\n\n  def start(_type, _args) do\n" \
         "    children = [Shop.Repo]\n"
WIRED = "defmodule Shop.Application do\n  use Application\n\n  def start(_type, _args) do\n" \
        "    # start the metrics reporter before the children\n    Shop.Metrics.Reporter.attach()\n\n" \
        "    children = [Shop.Repo]\n"
ALIASED = "defmodule Shop.Application do\n  use Application\n\n  alias Shop.Metrics.Reporter\n\n" \
          "  def start(_type, _args) do\n    # start the metrics reporter before the children\n" \
          "    Reporter.attach()\n"


def in_order(names: Iterable[str], count: int) -> list[str]:
    return list(names)[:count]


def wired(work: WorkLog) -> None:
    work.changed(PATH, "Edit", BEFORE, WIRED, 1, True, "Now let me wire the reporter into start:")


def test_a_fix_up_of_what_a_step_just_wrote_joins_it_and_the_step_tells_the_net_change() -> None:
    work = WorkLog()
    wired(work)
    old = WIRED[:WIRED.index("\n\n    children")]
    step = work.changed(PATH, "Edit", old, ALIASED, 2, True,
                        "The linter wants the nested module aliased. Let me fix it:")
    assert step.intent == "Wire the reporter into start"
    # the call first written in full, then through the alias: only the second is the change
    assert work.file_lines(PATH, 3, in_order) == [
        "Wire the reporter into start: added Reporter.attach, alias Shop.Metrics.Reporter; "
        "changed Shop.Application"]


def test_names_a_step_added_and_its_fix_up_took_out_are_neither_added_nor_removed() -> None:
    work = WorkLog()
    path = "/w/config/runtime.exs"
    first = "if prod do\n  sample_ratio = String.to_float(System.get_env(\"SAMPLE_RATE\"))\n" \
            "  config :metrics, sampler: sample_ratio\nend\n"
    work.changed(path, "Edit", "if prod do\nend\n", first, 1, True,
                 "Let me add runtime overrides for the metrics:")
    second = "if prod do\n  config :metrics, exporter: System.get_env(\"METRICS_EXPORTER\")\nend\n"
    work.changed(path, "Edit", first, second, 2, True, "Use the documented format instead:")
    lines = work.file_lines(path, 3, in_order)
    assert len(lines) == 1 and lines[0].startswith("Add runtime overrides for the metrics: added ")
    assert "METRICS_EXPORTER" in lines[0] and "exporter" in lines[0]
    assert "sample_ratio" not in lines[0] and "removed" not in lines[0]


def test_a_change_is_its_own_step_after_a_commit_in_another_task_or_as_a_plan_item() -> None:
    old = WIRED[:WIRED.index("\n\n    children")]
    fix = "The linter wants the nested module aliased. Let me fix it:"
    committed = WorkLog()
    wired(committed)
    committed.commit('git commit -m "wire the reporter"', "[main 1a2b3c4] wire the reporter", 2)
    committed.changed(PATH, "Edit", old, ALIASED, 3, True, fix)
    moved_on = WorkLog()
    wired(moved_on)
    moved_on.task_list([("completed", "Wire the reporter"), ("in_progress", "Alias modules")], 2)
    moved_on.changed(PATH, "Edit", old, ALIASED, 3, True, fix)
    planned = WorkLog()
    wired(planned)
    planned.changed(PATH, "Edit", old, ALIASED, 3, True, "2. Alias the nested modules", own=True)
    for work in (committed, moved_on, planned):
        assert len(work.file_lines(PATH, 3, in_order)) == 2


def test_a_change_that_only_takes_out_all_a_step_brought_in_is_a_step_of_its_own() -> None:
    work = WorkLog()
    path = "/w/trailer.go"
    first = "func hasTrailer(lines []string) bool {\n\tseenBlank := false\n\treturn seenBlank\n}\n"
    work.changed(path, "Edit", "func hasTrailer(lines []string) bool {\n}\n", first, 1, True,
                 "Let me make it look for the blank line:")
    second = "func hasTrailer(lines []string) bool {\n\treturn false\n}\n"
    work.changed(path, "Edit", first, second, 2, True, "Rethink the scanning instead:")
    lines = work.file_lines(path, 3, in_order)
    assert lines == ["Make it look for the blank line: added seenBlank; changed hasTrailer",
                     "Rethink the scanning instead: changed hasTrailer; removed seenBlank"]


def test_a_name_taken_out_that_the_file_still_holds_is_not_removed() -> None:
    work = WorkLog()
    path = "/w/helpers.py"
    text = "def safe_attrs(x):\n    return x\n\n\ndef other():\n    return safe_attrs(1)\n" \
           "\n\ndef safe_attrs(x):\n    return x\n"
    work.read(path, text, whole=True)
    work.changed(path, "Edit", "\n\ndef safe_attrs(x):\n    return x\n", "\n", 1, True,
                 "Remove the duplicate definition:")
    assert work.file_lines(path, 1, in_order) == ["Remove the duplicate definition"]


def test_a_report_goes_with_the_step_a_fix_up_joined_by_what_the_fix_up_was_about() -> None:
    work = WorkLog()
    wired(work)
    work.changed("/w/test/shop_test.exs", "Edit", "", "test \"starts\" do\n  assert Reporter.attach()",
                 2, True, "Check that `Reporter.attach` starts:")
    old = WIRED[:WIRED.index("\n\n    children")]
    work.changed(PATH, "Edit", old, ALIASED, 3, True,
                 "`Shop.Metrics.Reporter.attach` is nested: alias it. Let me fix it:")
    work.report("- Aliased `Shop.Metrics.Reporter.attach` so the linter passes", 4)
    assert work.file_lines(PATH, 1, in_order)[0].startswith(
        "Aliased `Shop.Metrics.Reporter.attach` so the linter passes")


def test_a_changed_file_older_than_those_described_still_says_what_its_change_did() -> None:
    s = Session()
    s.user("Add the metrics")
    s.assistant(text_block("Let me add the metrics dependencies first:"))
    s.call("m", "Edit", {"file_path": "/w/mix.exs", "old_string": "  defp deps do\n    [\n",
                         "new_string": "  defp deps do\n    [\n      {:metrics_core, \"~> 1.5\"},\n"},
           "updated")
    for n in range(13):  # newer changes: the least detail describes 12 files
        s.assistant(text_block(f"Now the handler number {n}:"))
        s.call(f"e{n}", "Edit", {"file_path": f"/w/lib/handler_{n}.ex", "old_string": "",
                                 "new_string": f"def handle_{n}(x), do: x"}, "updated")
    s.assistant(text_block("Done."))
    lines = least_detail(s, files_and_code)
    assert lines[-2:] == [
        "- /w/lib/handler_0.ex (edited x1): The handler number 0: added handle_0",
        "- /w/mix.exs (edited x1): Add the metrics dependencies first: added metrics_core; "
        "`{:metrics_core, \"~> 1.5\"},`"]


def test_a_file_s_one_step_too_long_to_share_its_line_gets_a_line_of_its_own() -> None:
    s = Session()
    s.user("Add the handlers")
    names = [f"handle_dashboard_event_number_{n}" for n in range(8)]
    s.assistant(text_block("Let me add the event handlers for every kind of event the dashboard "
                           "receives from the hooks, each with its own clause:"))
    s.call("e", "Edit", {"file_path": "/w/lib/shop_web/live/dashboard_live_handlers.ex",
                         "old_string": "", "new_string": "\n".join(
                             f"def {n}(socket), do: socket" for n in names)}, "updated")
    s.assistant(text_block("Done."))
    lines = least_detail(s, files_and_code)
    assert lines[0] == "- /w/lib/shop_web/live/dashboard_live_handlers.ex (edited x1)"
    assert lines[1].startswith("  - Add the event handlers for every kind of event")
    assert all(len(line) <= 400 for line in lines)


def test_a_long_intent_gives_way_to_the_names_on_its_step_s_line() -> None:
    work = WorkLog()
    path = "/w/lib/renderer.ex"
    names = [f"render_dashboard_section_number_{n}" for n in range(8)]
    work.changed(path, "Edit", "", "\n".join(f"def {n}(rows), do: rows" for n in names), 1, True,
                 "Let me do these: keep every result line instead of the first five rows; "
                 "group the rows of one tool call under a header; mark numbered output as code")
    line = work.file_lines(path, 1, in_order)[0]
    # the intent ends after a whole clause, and every definition is named
    assert line.startswith("Do these: keep every result line instead of the first five rows: added ")
    assert all(n in line for n in names) and len(line) <= 390


def test_a_declaration_taken_out_is_removed_though_a_use_of_it_is_left() -> None:
    work = WorkLog()
    path = "/w/lib/renderer.ex"
    work.read(path, "defmodule Renderer do\n  @max_rows 5\n\n  def rows(all) do\n"
                    "    Enum.take(all, @max_rows)\n  end\nend\n", whole=True)
    work.changed(path, "Edit", "  @max_rows 5\n", "  @visible_rows 10\n", 1, True,
                 "Keep every row visible:")
    assert work.file_lines(path, 1, in_order) == [
        "Keep every row visible: added @visible_rows; removed @max_rows"]


def test_the_comment_over_a_new_clause_of_a_function_says_what_it_is_for() -> None:
    work = WorkLog()
    path = "/w/lib/shop_web/live/cart_live.ex"
    work.read(path, "defmodule ShopWeb.CartLive do\n  def handle_event(\"add\", _p, socket) do\n"
                    "    {:noreply, socket}\n  end\nend\n", whole=True)
    work.changed(path, "Write", "", "defmodule ShopWeb.CartLive do\n  def handle_event(\"add\", _p, "
                 "socket) do\n    {:noreply, socket}\n  end\n\n  # No-op handler for badge clicks "
                 "(badges do not navigate)\n  def handle_event(\"badge_clicked\", _p, socket) do\n"
                 "    {:noreply, socket}\n  end\nend\n", 1, True, "Let me rewrite the cart view:",
                 ["ShopWeb.CartLive", "handle_event"])
    assert work.file_lines(path, 1, in_order, any_code=False) == [
        "Rewrite the cart view: added badge_clicked; changed handle_event; "
        "`# No-op handler for badge clicks (badges do not navigate)`"]
    # a new function is told by its name, not by the comment over it
    work.changed(path, "Edit", "end\nend\n", "end\n\n  # Counts the items for the badge\n"
                 "  def badge_count(cart), do: length(cart)\nend\n", 2, True, "Count them:")
    assert work.file_lines(path, 2, in_order, any_code=False)[1] == "Count them: added badge_count"


def test_what_steps_wrote_is_let_go_once_many_other_files_changed_since() -> None:
    work = WorkLog()
    wired(work)
    for i in range(TEXTS):
        work.changed(f"/w/lib/shop/part{i}.ex", "Edit", "x = 1", "x = 2", 2 + i, True, "Bump:")
    # a long session's writes are not all held: the oldest file's steps keep none of theirs...
    assert all(not s.wrote and not s.fresh for s in work.files[PATH].steps.values())
    assert all(s.wrote for s in work.files["/w/lib/shop/part0.ex"].steps.values())
    # ...so a change of what it wrote long ago is a step of its own
    old = WIRED[:WIRED.index("\n\n    children")]
    step = work.changed(PATH, "Edit", old, ALIASED, 99, True, "Alias the nested module:")
    assert step.intent == "Alias the nested module"
