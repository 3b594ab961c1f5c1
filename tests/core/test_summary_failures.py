"""Errors and fixes in the offline summary (issue 28): every failure that mattered, one line
each - the error's gist, the assistant's stated reason, the change after it and the run that
passed - repeats of one cause merged, noise left out."""

from __future__ import annotations

import textwrap

from ctxtool.core.summarizing.failures import (change_told, diagnosis, failed_count, failed_tests,
                                                failure_gist, kind_of, program_of, reason_of)
from ctxtool.core.summarizing.findings import check_words
from ctxtool.core.summarizing.offline import errors_and_fixes, offline_summary
from ctxtool.core.summarizing.prompt import split_sections
from ctxtool.core.summarizing.request import build_request
from ctxtool.core.summarizing.work import WorkLog
from ctxtool.types import CLAUDE_CODE
from tests.summarize_builder import Session, least_detail, text_block


def errors_of(s: Session) -> str:
    found = split_sections(offline_summary(build_request(s.entries, CLAUDE_CODE)))
    assert found is not None
    return textwrap.dedent("   " + found["Errors and fixes"])


def test_the_gist_is_the_first_diagnostic_or_exception() -> None:
    lint = ("Exit code 1\n[lint:go] Finished in 1s\n[lint:go] cmd/app/t.go:42:3: embedded fields "
            "should be listed before regular fields (embeddedstructfieldcheck)\n[lint:go] \t*Alias\n"
            "[lint:go] cmd/app/t.go:48:10: error returned from external package is unwrapped\n"
            "[lint:go] ERROR task failed")
    assert failure_gist(lint) == ("t.go:42:3: embedded fields should be listed before regular "
                                  "fields (embeddedstructfieldcheck); t.go:48:10: error returned "
                                  "from external package is unwrapped")
    # a linter that prints its message above the location
    credo = ("\u2503 [F] \u2192 Function is too complex (cyclomatic complexity is 13, max is 9).\n"
             "\u2503       lib/app/hooks.ex:144:7 #(App.Hooks.tool_call)\n")
    # its priority mark left out, the function it names said in words
    assert failure_gist(credo) == ("hooks.ex:144:7: Function is too complex (cyclomatic "
                                   "complexity is 13, max is 9) in `tool_call`")
    elixir = ("Compiling 3 files (.ex)\n** (Mix) Could not start application otel\n"
              "        ** (BadMapError) expected a map, got:\n  [exporter: {:stdout, []}]\n")
    # a named exception first; a message ending in a colon goes on on the next line
    assert failure_gist(elixir) == "BadMapError: expected a map, got: [exporter: {:stdout, []}]"
    python = "Traceback (most recent call last):\n  File \"a.py\", line 3\nValueError: bad value"
    assert failure_gist(python) == "ValueError: bad value"


def test_a_command_is_known_by_what_it_runs() -> None:
    assert program_of("cd app && git add -A && git commit -m 'x'") == "git commit"
    assert program_of("FOO=1 npm run lint -- --fix 2>&1 | tail") == "npm run lint"
    assert program_of("pytest -q tests/test_a.py") == "pytest tests/test_a.py"


def test_a_failure_says_its_kind() -> None:
    assert [kind_of(c) for c in ("go test", "mise run test:integration", "npm run lint",
                                 "mix credo", "cargo build", "git commit", "gh api", "WebFetch x")] \
        == ["Test failure", "Test failure", "Lint error", "Lint error", "Build error",
            "Commit failed", "Command failed", "WebFetch failed"]


def test_the_reason_is_what_the_assistant_made_of_it_not_what_it_does_next() -> None:
    said = "Good! I see the issue - the config format is wrong. Let me look at the README."
    # "I see the issue -" only leads in to what it is
    assert reason_of(said) == "The config format is wrong."
    assert reason_of("Let me fix the credo issues. First, the implicit try:") == ""


def test_words_after_a_failure_that_are_not_about_it_give_no_reason_but_a_later_line_may() -> None:
    failed = "node build.js /bin/sh: node: command not found"
    said = ("Done! I ran three commands at once:\n\n1. **Read**: read `build.js` back\n"
            "2. **Bash**: ran `node build.js` (failed because node isn't installed here)\n"
            "3. **Bash**: the disk has 4 GB free, no problem there\n\nLet me try again:")
    # the first words are about something else; the first line further on that says what
    # went wrong with what failed is the reason (not one naming it only, nor one only saying
    # something went wrong)
    assert reason_of(said, failed) == \
        "Bash: ran `node build.js` (failed because node isn't installed here)"
    assert reason_of("Here is the comparison of both branches.\n\nThey differ in 3 files.",
                     failed) == ""
    # words about it keep the first sentences, as they are without a failure to compare with
    assert reason_of("The node binary is not on PATH. Install it first.", failed) == \
        reason_of("The node binary is not on PATH. Install it first.")


def test_a_failure_its_reason_its_fix_and_the_run_that_passed_make_one_line() -> None:
    s = Session()
    s.user("Make the tests pass")
    s.call("b1", "Bash", {"command": "mix test 2>&1 | tail -20"},  # tail exits 0
           "** (BadMapError) expected a map, got: [exporter: :stdout]\n    (otel 1.7) config.erl:213")
    s.assistant(text_block("The processor config format is wrong; it wants a flat exporter key."))
    s.call("e1", "Edit", {"file_path": "/work/app/config/dev.exs", "old_string": "processors: []",
                          "new_string": "traces_exporter: :stdout"}, "updated",
           text="Let me use the flat traces_exporter format:")
    s.call("b2", "Bash", {"command": "mix test 2>&1 | tail -5"}, "297 tests, 0 failures")
    assert errors_of(s).strip() == (
        "- Test failure (`mix test`): BadMapError: expected a map, got: [exporter: :stdout]. The "
        "processor config format is wrong; it wants a flat exporter key. Fixed: dev.exs: Use the "
        "flat traces_exporter format; `traces_exporter: :stdout`. Then it passed (297 tests, 0 "
        "failures)")


def test_repeats_of_one_cause_are_merged_and_an_open_one_says_so() -> None:
    s = Session()
    s.user("Commit it")
    hook = "Pre-commit validation failed:\nlib/a.ex:57:13:pattern_match\nThe pattern can never match."
    s.call("c1", "Bash", {"command": "git add -A && git commit -m 'feat: a'"}, hook, error=True)
    s.call("w1", "Write", {"file_path": "/work/app/.dialyzerignore", "content": "lib/a.ex"}, "ok",
           text="The warning is a false positive. Let me add an ignore file.")
    s.call("c2", "Bash", {"command": "git commit -m 'feat: a'"}, hook, error=True)
    errors = errors_of(s)
    assert errors.count("\n") == 0  # one line for both
    assert errors.startswith("- Commit failed x2 (`git commit`): a.ex:57:13: pattern_match The "
                             "pattern can never match. The warning is a false positive.")
    assert errors.endswith("Tried: .dialyzerignore: Add an ignore file; `lib/a.ex`. Not passing "
                           "yet.")


def test_noise_is_left_out_refusals_counted() -> None:
    s = Session()
    s.user("Look around")
    s.call("g1", "Bash", {"command": "grep -r TODO src"}, "Exit code 1", error=True)  # no match
    s.call("b1", "Bash", {"command": "rm -rf build"},
           "The user doesn't want to proceed with this tool use. The tool use was rejected.",
           error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/a.py", "old_string": "x", "new_string": "y"},
           "<tool_use_error>String to replace not found in file.</tool_use_error>", error=True)
    s.assistant(text_block("Nothing to do."))
    assert errors_of(s).strip() == ("- Not listed: 1 calls the tool refused before running them "
                                    "(Edit x1), redone at once.")


def test_a_retry_without_a_change_is_what_followed() -> None:
    s = Session()
    s.user("Run the generator")
    s.call("b1", "Bash", {"command": "python gen.py"}, "Exit code 127\n/bin/bash: python: command not found",
           error=True)
    s.call("b2", "Bash", {"command": "python3 gen.py"}, "42")
    # a command that failed is not fixed by a change to the code: what followed is its retry
    assert errors_of(s).strip() == ("- Command failed (`python gen.py`): /bin/bash: python: "
                                    "command not found. Then `python3 gen.py` succeeded.")


def test_a_report_repeated_in_later_turns_is_listed_once() -> None:
    log = WorkLog()
    log.report("Done:\n- \u2705 Task 1: OTEL bootstrap (app-4te.1)\n- Added the Otel module", 1)
    log.report("Summary:\n- \u2705 Task 1: OTEL bootstrap (app-4te.1)\n- Added the trace helper", 2)
    assert [line.text for line in log.lines] == ["\u2705 Task 1: OTEL bootstrap (app-4te.1)",
                                                 "Added the Otel module", "Added the trace helper"]


def test_a_change_is_for_the_latest_failure_only() -> None:
    s = Session()
    s.user("Make lint and tests pass")
    s.call("l1", "Bash", {"command": "npm run lint"}, "Exit code 1\nsrc/a.ts:3:1: no-unused-vars 'x'",
           error=True)
    s.call("t1", "Bash", {"command": "npm test"}, "Exit code 1\nFAIL src/b.test.ts\nTypeError: y is undefined",
           error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/src/b.ts", "old_string": "let y",
                          "new_string": "let y = makeY()"}, "updated", text="Let me define y first.")
    s.call("t2", "Bash", {"command": "npm test"}, "Tests: 4 passed")
    lint, test = errors_of(s).strip().splitlines()
    assert lint == "- Lint error (`npm run lint`): a.ts:3:1: no-unused-vars 'x'. No fix followed."
    assert test.startswith("- Test failure (`npm test`): TypeError: y is undefined. Fixed: b.ts: "
                           "Define y first; `let y = makeY()`")


def test_a_finding_the_assistant_names_is_listed_when_no_failure_showed_it() -> None:
    # a hook's feedback on an edit is not kept in the transcript: the assistant's words are
    s = Session()
    s.user("Add the index")
    s.assistant({"type": "thinking", "thinking": "Let me fix the credo nesting issue in "
                                                 "`build_index` and then compile."})
    s.call("e1", "Edit", {"file_path": "/work/app/lib/index.ex", "old_string": "Enum.map(fn x ->",
                          "new_string": "Enum.map(&index_of/1)\n  defp index_of(x) do"}, "updated")
    s.call("b1", "Bash", {"command": "mix compile 2>&1 | tail -3"}, "Generated app")
    assert errors_of(s).strip() == (
        '- Lint error: "credo nesting issue in `build_index`". Fixed: index.ex; `defp index_of(x) '
        'do`. Then `mix compile` passed.')


def test_words_about_a_failure_seen_or_no_check_add_no_failure() -> None:
    s = Session()
    s.user("Address the review")
    s.assistant(text_block("Let me fix the medium severity issues first."))  # a review's, no check's
    s.call("e1", "Edit", {"file_path": "/work/app/a.go", "old_string": "x", "new_string": "y"},
           "updated")
    s.call("l1", "Bash", {"command": "golangci-lint run"},
           "Exit code 1\na.go:3:1: Error return value of `f` is not checked (errcheck)", error=True)
    s.assistant(text_block("Let me fix the errcheck issue in `f`."))  # the failure just seen
    s.call("e2", "Edit", {"file_path": "/work/app/a.go", "old_string": "f()",
                          "new_string": "if err := f(); err != nil {"}, "updated")
    s.assistant(text_block("Now the cyclomatic complexity issue in run is gone, and `f` is no longer "
                           "unused."))  # no finding named, and no failure is waiting
    errors = errors_of(s).strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("- Lint error: unchecked error (`golangci-lint "
                                                     "run`): a.go:3:1")


def test_words_that_wonder_about_a_finding_state_none() -> None:
    s = Session()
    s.user("Fix the checkpoint reuse")
    s.call("b1", "Bash", {"command": "go build ./..."}, "")
    s.assistant({"type": "thinking", "thinking": "There are two issues:1. `agent.GetByAgentType` "
                 "is undefined - let me check if it's the correct function name2. `x` might be "
                 "unused"})
    s.assistant(text_block("Is `y` unused? Maybe fix the lint error in `z` later."))
    s.call("w1", "Write", {"file_path": "/work/app/strategy_test.go", "content": "package x"},
           "written")
    assert errors_of(s).strip() == "No tool call failed."
    # the same finding stated, with a plan after it in another sentence, opens one
    s.assistant({"type": "thinking", "thinking": "`agent.GetByAgentType` is undefined. Let me "
                                                 "check if it was renamed."})
    s.call("e1", "Edit", {"file_path": "/work/app/registry.go", "old_string": "func Get(",
                          "new_string": "func GetByAgentType("}, "updated")
    assert errors_of(s).strip() == ('- Error: "`agent.GetByAgentType` is undefined". Tried: '
                                    'registry.go; `func GetByAgentType(`. Not passing yet.')


def test_a_formatter_run_is_a_fix() -> None:
    s = Session()
    s.user("Make lint pass")
    s.call("l1", "Bash", {"command": "golangci-lint run ./..."},
           "Exit code 1\nx.go:9:1: File is not properly formatted (gofmt)", error=True)
    s.call("f1", "Bash", {"command": "gofmt -w x.go && git diff --stat"}, " x.go | 1 -")
    s.call("l2", "Bash", {"command": "golangci-lint run ./..."}, "0 issues.")
    assert errors_of(s).strip() == (
        "- Lint error (`golangci-lint run ./...`): x.go:9:1: File is not properly formatted (gofmt) "
        "Fixed: `gofmt -w x.go`. Then it passed.")


def test_a_stated_finding_is_fixed_by_the_change_after_it() -> None:
    s = Session()
    s.user("Tidy explain.go")
    s.assistant(text_block("Let me make all the fixes."))  # words before the finding
    s.assistant({"type": "thinking", "thinking": "There's unreachable code at line 298."})
    s.assistant(text_block("There's unreachable code at line 298 now."))  # said again: no reason
    s.call("e1", "Edit", {"file_path": "/work/app/explain.go", "old_string": "\treturn \"\", false\n",
                          "new_string": ""}, "updated")
    s.call("e2", "Edit", {"file_path": "/work/app/explain_test.go", "old_string": "a",
                          "new_string": "b"}, "updated", text="Now the tests.")  # another change
    s.call("b1", "Bash", {"command": "go build ./..."}, "")
    # the edit only took a line out: what it removed is the fix
    assert errors_of(s).strip() == ('- Error: "unreachable code at line 298". Fixed: explain.go; '
                                    'removed `return "", false`. Then `go build` passed.')


def test_a_linter_check_is_also_named_in_plain_words() -> None:
    assert check_words("a.go:3:1: Error return value of `f` is not checked (errcheck)") == \
        "unchecked error"
    assert check_words("a.go:9:2: cyclomatic complexity 31 of func `run` is high (> 30) "
                       "(gocyclo)") == "cyclomatic complexity"
    # a check named in the message's words only, or a name in brackets that is no check
    assert check_words("a.go:3:1: undefined: logging (typecheck)") == ""
    assert check_words("FAIL TestRun (errcheck_test.go)") == ""


def test_a_fix_names_what_it_defined_and_a_long_passing_run_by_its_program() -> None:
    s = Session()
    s.user("Make credo pass")
    credo = ("\u2503 [F] \u2192 Function is too complex (cyclomatic complexity is 13, max is 9).\n"
             "\u2503       lib/app/hooks.ex:144:7 #(App.Hooks.tool_call)\n")
    s.call("c1", "Bash", {"command": "mix credo --strict"}, "Exit code 1\n" + credo, error=True)
    s.call("e0", "Edit", {"file_path": "/work/app/lib/app/util.ex", "old_string": "x",
                          "new_string": "Map.get(b)\nis_map(c) || String.slice(d)\nKernel.inspect(e)"},
           "updated")
    s.call("e1", "Edit", {"file_path": "/work/app/lib/app/hooks.ex", "old_string": "case x",
                          "new_string": "create_tool_call(a)"}, "updated")
    s.call("e2", "Edit", {"file_path": "/work/app/lib/app/tools.ex", "old_string": "end",
                          "new_string": "  defp create_tool_call(a), do: a\nend"}, "updated")
    s.call("c2", "Bash", {"command": "mix credo --strict lib/app/hooks.ex lib/app/other_module.ex"},
           "found no issues.")
    line = errors_of(s).strip()
    assert line.startswith("- Lint error (`mix credo`): hooks.ex:144:7: Function is too complex "
                           "(cyclomatic complexity is 13, max is 9) in `tool_call`. Fixed: ")
    assert "; added create_tool_call. Then" in line  # the definition, not the names it used
    # the passing run is the program that failed (its longer command named by it): "it"
    assert line.endswith("Then it passed.")


def test_a_fix_shown_is_to_the_file_the_diagnostic_shown_names() -> None:
    s = Session()
    s.user("Commit it")
    hook = ("Pre-commit validation failed:\n"
            "lib/app/hooks.ex:144:7: Function is too complex (cyclomatic complexity is 13, max is "
            "9), extract some of its branches into private functions or split it at its cases\n"
            "lib/app/trace.ex:57:13: pattern_match The pattern can never match the type.")
    s.call("c1", "Bash", {"command": "git commit -m 'feat: hooks'"}, hook, error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/lib/app/trace.ex", "old_string": "{:ok, x}",
                          "new_string": "{:ok, x} when is_map(x)"}, "updated",
           text="Let me make the pattern safer.")
    s.call("e2", "Edit", {"file_path": "/work/app/lib/app/hooks.ex", "old_string": "case a do",
                          "new_string": "create_call(a)"}, "updated",
           text="Let me extract the call creation.")
    s.call("m1", "Bash", {"command": "mix compile"}, "Compiling 2 files (.ex)")
    line = errors_of(s).strip()
    # the gist shows the first diagnostic only: the change for the second is not its fix
    assert "trace.ex:57" not in line and "trace.ex" not in line.split("Fixed: ")[1]
    assert "Fixed: hooks.ex: Extract the call creation; added " in line


def test_a_stack_frame_is_no_diagnostic_and_a_clause_error_is_named() -> None:
    # mix test | tail: the FunctionClauseError's header is cut, its body and the frames are left
    tail = ("     The following arguments were given to App.Trace.with_span/3:\n\n"
            "         # 1\n         \"hook.commit\"\n     stacktrace:\n"
            "       (app 0.1.0) lib/app/trace.ex:18: App.Trace.with_span/3\n"
            "       (phoenix 1.8.3) lib/phoenix/test/conn_test.ex:225: Phoenix.ConnTest.dispatch/5\n"
            "       test/app/hooks_test.exs:104: App.HooksTest.post_commit/1\n"
            "       test/app/hooks_test.exs:202: (test)\n\n"
            "Finished in 1.9 seconds\n297 tests, 11 failures")
    assert failure_gist(tail) == "no function clause matching in App.Trace.with_span/3"
    go = "panic: boom\n\ngoroutine 1 [running]:\nmain.run()\n\t/src/main.go:12 +0x1d\n"
    assert failure_gist(go) == "panic: boom"


def test_a_test_run_is_named_by_its_assertion_not_a_helper_s_log() -> None:
    out = ("--- FAIL: TestResume (0.46s)\n    hooks.go:155: Hook stop output: 2026/01/14 INFO stop "
           "component=hooks\n        Copied transcript to: .x/full.jsonl\n"
           "    resume_test.go:265: output should contain 'Session:', got: Switched to branch\nFAIL")
    assert failure_gist(out) == ("resume_test.go:265: output should contain 'Session:', got: "
                                 "Switched to branch")
    # outside a test file the first diagnostic is the cause, as before
    build = "# app\n./a.go:3:5: undefined: logging\n./b.go:9:2: declared and not used: x"
    assert failure_gist(build) == "a.go:3:5: undefined: logging; b.go:9:2: declared and not used: x"


def test_a_failure_diagnosed_and_fixed_is_told_before_hook_rejections() -> None:
    s = Session()
    s.user("Add tracing and commit")
    s.call("t1", "Bash", {"command": "mix test 2>&1 | tail -3"},
           "** (BadMapError) expected a map, got: [exporter: :stdout]\n297 tests, 1 failure")
    s.assistant(text_block("I see the issue - the exporter config format is wrong."))
    s.call("e1", "Edit", {"file_path": "/work/app/config/dev.exs", "old_string": "processors: []",
                          "new_string": "traces_exporter: :stdout"}, "updated")
    s.call("t2", "Bash", {"command": "mix test 2>&1 | tail -3"}, "297 tests, 0 failures")
    for n, check in enumerate(("Code is not formatted", "Nested modules could be aliased",
                               "The pattern can never match the type", "Missing HTTPS config",
                               "Module lacks a moduledoc")):
        s.call(f"c{n}", "Bash", {"command": "git commit -m 'feat: tracing'"},
               f"Pre-commit validation failed:\nlib/f{n}.ex:3:1: {check}", error=True)
        s.call(f"f{n}", "Edit", {"file_path": f"/work/app/lib/f{n}.ex", "old_string": "a",
                                 "new_string": "b"}, "updated")
        s.call(f"m{n}", "Bash", {"command": "mix compile"}, "Compiling 1 file (.ex)")
    lines = least_detail(s, errors_and_fixes)
    # room for four: the latest, the diagnosed fix, then the newest of the others
    assert len(lines) == 5 and lines[0] == "- 2 other failures not listed: git commit x2."
    assert lines[1].startswith("- Test failure (`mix test`): BadMapError: expected a map")
    assert [line.split(": ")[2] for line in lines[2:]] == [
        "The pattern can never match the type. Fixed", "Missing HTTPS config. Fixed",
        "Module lacks a moduledoc. Fixed"]


def test_with_no_words_after_a_failure_the_diagnosis_before_its_fix_is_its_reason() -> None:
    assert diagnosis("The credo warning is about nested modules. Fix it by adding an alias") == (
        "The credo warning is about nested modules.", "Fix it by adding an alias")
    assert diagnosis("Rewrite it as a macro") == ("", "Rewrite it as a macro")
    s = Session()
    s.user("Commit it")
    s.call("c1", "Bash", {"command": "git commit -m 'feat: a'"},
           "Pre-commit validation failed:\nlib/app.ex:9:5: Nested modules could be aliased", error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/lib/app.ex", "old_string": "App.Otel.setup()",
                          "new_string": "Otel.setup()"}, "updated",
           text="The credo warning is about the nested module call. Let me fix it by adding an alias:")
    s.call("c2", "Bash", {"command": "git commit -m 'feat: a'"}, "[main 1a2b3c4] feat: a")
    assert errors_of(s).strip() == (
        "- Commit failed (`git commit`): app.ex:9:5: Nested modules could be aliased. The credo "
        "warning is about the nested module call. Fixed: app.ex: Fix it by adding an alias; "
        "`Otel.setup()`. Then `git commit -m 'feat: a'` succeeded.")


def test_a_fix_tells_the_import_it_added_by_its_statement() -> None:
    s = Session()
    s.user("Make credo pass")
    s.call("c1", "Bash", {"command": "mix credo"}, "Exit code 1\nlib/app.ex:9:5: Nested modules "
                                                    "could be aliased at the top", error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/lib/app.ex",
                          "old_string": "  use Application\n\n  def start do\n    App.Otel.setup()",
                          "new_string": "  use Application\n  alias App.Otel\n\n  def start do\n"
                                        "    start_otel()\n  end\n\n  defp start_otel do\n"
                                        "    Otel.setup()"}, "updated")
    s.call("c2", "Bash", {"command": "mix credo"}, "found no issues.")
    line = errors_of(s).strip()
    # the import as written, not its bare name
    # (the file the diagnostic names is not named again)
    assert line.endswith("Fixed: `defp start_otel do`; added alias App.Otel, Otel.setup. "
                         "Then it passed.")


def test_a_test_failure_says_how_many_tests_failed() -> None:
    assert failed_count("....F.\nFinished in 1.9 seconds\n14 doctests, 297 tests, 11 failures") \
        == "11 of 297 tests failed"
    assert failed_count("FAILED a.py::test_x\n===== 2 failed, 10 passed in 0.3s =====") == \
        "2 tests failed"
    assert failed_count("297 tests, 0 failures") == ""
    s = Session()
    s.user("Make the tests pass")
    s.call("t1", "Bash", {"command": "mix test 2>&1 | tail -4"},
           "  1) test post (App.HooksTest)\n     ** (FunctionClauseError) no function clause "
           "matching in App.Trace.with_span/3\n\n40 tests, 3 failures")
    s.assistant(text_block("I see the issue. The do block is passed as an argument, not a "
                           "function."))
    errors = errors_of(s).strip()
    # "I see the issue." says nothing: the reason is the sentence after it
    assert errors.startswith("- Test failure (`mix test`): FunctionClauseError: no function clause "
                             "matching in App.Trace.with_span/3 (3 of 40 tests failed) The do block "
                             "is passed as an argument, not a function.")


def test_a_multiedit_of_no_edits_after_a_failure_is_no_change() -> None:
    s = Session()
    s.user("Fix the build")
    s.call("t1", "Bash", {"command": "go build ./..."}, "Exit code 1\nx.go:3:5: undefined: y",
           error=True)
    s.call("t2", "MultiEdit", {"file_path": "/w/x.go", "edits": []}, "Applied 0 edits")
    errors = errors_of(s)  # once a KeyError: the file had no step
    assert "undefined: y" in errors and "Fixed" not in errors and "Tried" not in errors


def test_a_small_edit_is_told_by_what_it_moved_or_took_out() -> None:
    # a line moved: where it went, by the line now after it (or before it, at the end)
    assert change_told([("class Row:\n    label: str\n    Base\n    size: int",
                         "class Row:\n    Base\n    label: str\n    size: int")]) == \
        "moved `Base` before `label: str`"
    assert change_told([("close(db)\nrows = load()\nlog(rows)", "rows = load()\nlog(rows)\n"
                         "close(db)")]) == "moved `close(db)` after `log(rows)`"
    # lines only taken out, a brace left out; a long line cut at a space
    assert change_told([("    return out\n\n    return None, False\n}", "    return out\n}")]) == \
        "removed `return None, False`"
    assert change_told([("x = 1\nraise ValueError(f'cannot parse the header of {path}')\n", "x = 1")]) \
        == "removed `raise ValueError(f'cannot parse the...`"
    # a line rewritten or only added is told by what it became (its new line), not here
    assert change_told([("return err", "return wrap(err)")]) == ""
    assert change_told([("a = 1", "a = 1\nb = 2")]) == ""
    # many lines changed: a rewrite, told by its new lines
    many = "\n".join(f"line_{n} = {n}" for n in range(8))
    assert change_told([(many, "")]) == ""


def test_one_value_changed_on_each_line_an_edit_rewrote_is_told_old_to_new() -> None:
    old = "    # retries: 3 attempts, then give up\n    if tries > 3:\n        raise Busy(3)"
    new = "    # retries: 5 attempts with backoff, then give up\n    if tries > 5:\n        raise Busy(5)"
    assert change_told([(old, new)]) == "3 -> 5 in a comment, `if tries > 5:`, `raise Busy(5)`"
    # not the same change on every line, or one line only: its new lines tell it
    assert change_told([("a = 3\nb = 3", "a = 5\nb = 4")]) == ""
    assert change_told([("if tries > 3:", "if tries > 5:")]) == ""


def test_a_fix_that_changed_one_value_shows_its_lines_once() -> None:
    s = Session()
    s.user("Fix the retry test")
    s.call("t1", "Bash", {"command": "pytest tests/test_retry.py"},
           "FAILED tests/test_retry.py::test_gives_up - assert 5 == 3\n1 failed", error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/tests/test_retry.py",
                          "old_string": "    # gives up after 3 tries\n    assert tries == 3",
                          "new_string": "    # gives up after 5 tries\n    assert tries == 5"},
           "The file has been updated.", text="The test still expects the old limit. Let me update it:")
    s.call("t2", "Bash", {"command": "pytest tests/test_retry.py"}, "1 passed")
    errors = errors_of(s)
    assert "3 -> 5 in a comment, `assert tries == 5`" in errors
    assert errors.count("assert tries == 5") == 1


def test_a_lint_fix_says_every_check_in_plain_words_and_what_the_edit_did() -> None:
    s = Session()
    s.user("Make lint pass")
    lint = ("Exit code 1\n[lint:go] app/row.go:12:2: embedded fields should be listed before "
            "regular fields (embeddedstructfieldcheck)\n[lint:go] app/row.go:30:9: error returned "
            "from external package is unwrapped (wrapcheck)\n[lint:go] ERROR task failed")
    s.call("l1", "Bash", {"command": "make lint"}, lint, error=True)
    s.assistant(text_block("Two lint issues: embedded field order and unwrapped error."))
    s.call("e1", "Edit", {"file_path": "/w/app/row.go",
                          "old_string": "type Row struct {\n\tName string\n\t*Base\n}\n\treturn err",
                          "new_string": "type Row struct {\n\t*Base\n\tName string\n}\n\treturn "
                                        "fmt.Errorf(\"read row: %w\", err)"}, "updated")
    s.call("l2", "Bash", {"command": "make lint"}, "0 issues.")
    # both checks named; the words that only say the checks again left out; the file the
    # diagnostic names not named again; the run that failed, passing after it: "it"
    line = errors_of(s).strip()
    assert line.startswith("- Lint error: embedded field order, unwrapped error (`make lint`): "
                           "row.go:12:2: embedded fields should be listed before regular fields")
    assert "Two lint issues" not in line
    assert line.endswith("Fixed: moved `*Base` before `Name string`; `return fmt.Errorf(\"read row: "
                         "%w\", err)`. Then it passed.")


def test_a_test_run_s_log_is_no_diagnostic_and_its_passed_tests_are_not_named_failing() -> None:
    # go test -v | tail: a helper's log line names a file and line but no fault; the assertion
    # was cut off: the package's FAIL line says what failed
    out = ("=== NAME  TestSync_Twice\n    store.go:88: saved blob component=store size=12\n"
           "--- PASS: TestSync_Once (0.10s)\n--- FAIL: TestSync_Twice (0.20s)\n"
           "--- PASS: TestSync_Empty (0.01s)\nFAIL\nFAIL\tgithub.com/acme/sync\t1.2s\nFAIL")
    assert failure_gist(out) == "FAIL github.com/acme/sync 1.2s"
    assert failed_tests(out) == ["TestSync_Twice"]
    # a located line that does name a fault is the diagnostic still
    assert failure_gist("    store.go:88: the blob was not found\n--- FAIL: TestSync_Twice (0.2s)\n"
                        "FAIL") == "store.go:88: the blob was not found"
    # "Progress!" exclaimed alone says nothing of the failure
    assert reason_of("Progress! Most tests pass but `TestSync_Twice` still fails.") == \
        "Most tests pass but `TestSync_Twice` still fails."


def test_one_fix_in_several_files_is_told_once_and_a_hook_s_escaped_output_read_as_lines() -> None:
    s = Session()
    s.user("Make the app start")
    s.call("t1", "Bash", {"command": "npm test 2>&1 | tail -3"},
           "TypeError: Cannot read properties of undefined (reading 'port')\n1 failed")
    s.assistant(text_block("The server settings have no port."))
    for n, name in enumerate(("dev.json", "test.json")):
        s.call(f"e{n}", "Edit", {"file_path": f"/w/app/config/{name}", "old_string": '"server": {}',
                                 "new_string": '"server": {"port": 8080}'}, "updated",
               text="Give each config a server port:")
    s.call("t2", "Bash", {"command": "npm test 2>&1 | tail -3"}, "Tests: 12 passed")
    line = errors_of(s)
    assert "(1 test failed)" in line
    assert ('Fixed: dev.json, test.json: Give each config a server port; `"server": {"port": '
            '8080}`. Then it passed') in line
    # a pre-commit hook's message as a JSON string: its header, then the line it heads
    hook = ("Exit code 1\nPre-commit checks failed:\\n\\n[STYLE] Code is not formatted.\\n"
            "Run the formatter to fix.\\n")
    assert failure_gist(hook) == "Pre-commit checks failed: Code is not formatted."


def test_a_finding_named_by_its_kind_only_is_told_by_the_words_that_say_what_it_is() -> None:
    s = Session()
    s.user("Move the parser into its own module")
    # a hook's compiler output is not kept: "the compile error" is all the finding's own words say
    s.assistant(text_block("The `Lexer` import went away with the old import block. I need to add "
                           "it back since `parse/1` still calls it. Let me fix the compile error "
                           "first."))
    s.call("e1", "Edit", {"file_path": "/w/lib/parser.ex", "old_string": "alias App.{Ast}",
                          "new_string": "alias App.{Ast, Lexer}"}, "updated")
    s.call("b1", "Bash", {"command": "mix compile"}, "Compiling 1 file (.ex)")
    assert errors_of(s).strip().startswith(
        '- Build error: "compile error: The `Lexer` import went away with the old import block". '
        "Fixed: parser.ex")
    # the sentence of the fix's words that names the finding says more of it, and once
    s = Session()
    s.user("Tidy the parser")
    s.call("e1", "Edit", {"file_path": "/w/lib/parser.ex", "old_string": "def a, do: 1",
                          "new_string": "def a, do: 2"}, "updated")
    s.assistant(text_block("`Lexer` is unused since the tokenizer does it now. Remove it and call "
                           "the tokenizer:"))
    s.call("e2", "Edit", {"file_path": "/w/lib/parser.ex", "old_string": "alias App.{Ast, Lexer}",
                          "new_string": "alias App.{Ast}"}, "updated")
    line = errors_of(s).strip()
    assert line.startswith('- Warning: "`Lexer` is unused since the tokenizer does it now". Tried: '
                           "parser.ex: Remove it and call the tokenizer;")
