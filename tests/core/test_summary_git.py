"""The offline summary tells what a session did through git and GitHub's CLI in one line each:
a merge, pull or rebase with its outcome, and a round of replies to review comments."""

from __future__ import annotations

import textwrap
import json
from typing import Any

from ctxtool.core.summarizing.git_work import (POINTS_SHOWN, Comment, ReviewRound, comment_authors,
                                               integration, replies_in, review_comments)
from ctxtool.core.summarizing.offline import offline_summary
from ctxtool.core.summarizing.prompt import split_sections
from ctxtool.core.summarizing.request import build_request
from ctxtool.core.summarizing.work import WorkLog
from ctxtool.types import CLAUDE_CODE
from tests.summarize_builder import Session, text_block


def work_done(entries: list[dict[str, Any]], fmt: str = CLAUDE_CODE) -> list[str]:
    """The Problem Solving section's lines, without their indent."""
    found = split_sections(offline_summary(build_request(entries, fmt)))
    assert found is not None
    return textwrap.dedent("   " + found["Problem Solving"]).splitlines()


MERGED = ("Merge made by the 'ort' strategy.\n README.md     |  4 +-\n src/app.py    | 12 ++++++\n"
          " 2 files changed, 14 insertions(+), 2 deletions(-)")
CONFLICTED = ("Exit code 1\nAuto-merging src/app.py\nCONFLICT (content): Merge conflict in src/app.py\n"
              "CONFLICT (modify/delete): docs/old.md deleted in origin/main and modified in HEAD.\n"
              "Automatic merge failed; fix conflicts and then commit the result.")


def test_a_merge_says_what_went_into_which_branch_and_that_nothing_conflicted() -> None:
    s = Session()
    s.user("Update from main")
    s.call("b1", "Bash", {"command": "git status"}, "On branch feat/pager\nnothing to commit")
    s.call("b2", "Bash", {"command": "git fetch origin main && git merge origin/main --no-edit"},
           "From github.com:x/y\n * branch main -> FETCH_HEAD\n" + MERGED)
    assert "- Merged origin/main into branch feat/pager: 2 files changed, no conflicts" \
        in work_done(s.entries)


def test_conflicts_name_their_files_and_the_edits_and_commit_that_resolved_them() -> None:
    s = Session()
    s.user("Merge main in")
    s.call("b1", "Bash", {"command": "git merge origin/main"}, CONFLICTED, error=True)
    s.call("e1", "Edit", {"file_path": "/work/app/src/app.py", "old_string": "<<<<<<< HEAD\nx = 1",
                          "new_string": "x = 2"}, "The file has been updated.")
    s.call("c1", "Bash", {"command": "git add -A && git commit --no-edit"},
           "[feat/pager 1a2b3c4] Merge remote-tracking branch 'origin/main' into feat/pager")
    lines = work_done(s.entries)
    assert "- Merged origin/main into the current branch: conflicts in src/app.py, docs/old.md, " \
           "resolved by editing app.py, committed in 1a2b3c4" in lines


def test_a_rebase_stopped_at_conflicts_says_whether_it_went_on_or_was_given_up() -> None:
    work = WorkLog()
    work.git("git rebase origin/main", CONFLICTED.replace("merge", "rebase"), 1, failed=True)
    assert work.lines[-1].text == ("Rebased the current branch onto origin/main: conflicts in "
                                   "src/app.py, docs/old.md, not yet resolved")
    work.git("git rebase --abort", "", 2, failed=False)
    assert work.lines[-1].text.endswith("conflicts in src/app.py, docs/old.md, rebase aborted")
    work.git("git pull --rebase origin main",
             "Successfully rebased and updated refs/heads/feat/pager.", 3, failed=False)
    assert work.lines[-1].text == "Pulled origin/main into branch feat/pager: no conflicts"
    work.git("git pull", "Already up to date.", 4, failed=False)
    assert work.lines[-1].text == "Pulled the upstream into branch feat/pager: already up to date"
    work.git("git rebase --continue", "", 5, failed=False)  # nothing open: nothing changes
    assert len(work.lines) == 3


def test_a_report_line_restating_a_git_action_of_its_turn_is_told_on_that_action_s_line() -> None:
    s = Session()
    s.user("Update from main, then fix the lint")
    s.call("b1", "Bash", {"command": "git status"}, "On branch feat/pager\nnothing to commit")
    s.call("b2", "Bash", {"command": "git merge origin/main --no-edit"}, MERGED)
    s.call("e1", "Edit", {"file_path": "/work/app/src/app.py", "old_string": "import os\n",
                          "new_string": ""}, "The file has been updated.")
    s.call("c1", "Bash", {"command": "git commit -am 'style: drop an unused import'"},
           "[feat/pager 1a2b3c4] style: drop an unused import")
    s.call("b3", "Bash", {"command": "npm test"}, "12 passing")
    s.assistant(text_block("Done:\n- Merged from main - picked up the new pager code\n"
                           "- Fixed the lint warning in app.py (commit `1a2b3c4`)\n"
                           "- Updated nothing else in the pager module"))
    s.user("Now merge the two render helpers")
    s.assistant(text_block("Merged render_head and render_body into one render helper."))
    lines = work_done(s.entries)
    # the record's facts with the assistant's words, at the report's place, in its order
    assert lines[-4:] == [
        "- Merged origin/main into branch feat/pager: 2 files changed, no conflicts - reported: "
        "Merged from main - picked up the new pager code",
        '- Committed 1a2b3c4 "style: drop an unused import" (app.py) - reported: Fixed the lint '
        "warning in app.py (commit `1a2b3c4`)",
        "- Updated nothing else in the pager module",
        # a later turn's merge of another kind is not the git merge
        "- Merged render_head and render_body into one render helper."]
    assert not any(line.startswith("- Merged from main") for line in lines)


def test_a_report_naming_a_review_comment_s_id_is_told_on_its_round_s_line() -> None:
    work = WorkLog()
    for at, (ident, body) in enumerate([("2734651385", "Fixed in 1a2b3c4 - closed the iterator"),
                                        ("2734651397", "Already fixed in 1a2b3c4 - it is closed")]):
        work.posted(f"gh api repos/o/r/pulls/7/comments/{ident}/replies -f body=\"{body}\"", at)
    work.report("Done replying to both comments:\n- 2734651385 - iterator close (fixed in 1a2b3c4)\n"
                "- Updated the changelog for the release", 5)
    texts = [line.text for line in work.lines]
    # the round keeps its place (its comments are under it); the unrelated line stays its own
    assert texts[0] == ("Replied to 2 review comments on PR #7: 1 fixed in 1a2b3c4, 1 already "
                        "fixed - reported: Done replying to both comments; 2734651385 - iterator "
                        "close (fixed in 1a2b3c4)")
    assert [line.detail for line in work.lines] == [False, True, True, False]
    assert texts[-1] == "Updated the changelog for the release"


def test_a_push_right_after_a_commit_is_told_on_the_commit_s_line() -> None:
    work = WorkLog()
    work.commit("git commit -m 'fix: close the iterator'", "[main 1a2b3c4] fix: close the iterator", 1)
    work.push("git push origin main", "", 2)
    assert [line.text for line in work.lines] == [
        'Committed 1a2b3c4 "fix: close the iterator", then pushed to origin main']
    work.commit("git commit -m 'docs: changelog'", "[main 5e6f7a8] docs: changelog", 3)
    work.git("git pull --rebase", "Successfully rebased and updated refs/heads/main.", 4, failed=False)
    work.push("git push", "", 5)  # something came between: its own line
    assert [line.text for line in work.lines][-2:] == [
        "Pulled the upstream into branch main: no conflicts", "Pushed"]


def test_what_is_merged_leaves_out_options_and_their_values() -> None:
    found = integration('git merge --no-ff -m "round 1: docs" alice/plan bob/notes', MERGED, "main")
    assert found is not None and (found.source, found.branch) == ("alice/plan, bob/notes", "main")
    assert integration("git merge-base HEAD origin/main", "1a2b3c4", "main") is None
    assert integration("git merge --continue", "", "main") is None
    # a failed merge that did not conflict (no repository, say) is not work
    work = WorkLog()
    work.git("git merge origin/main", "fatal: not a git repository", 1, failed=True)
    assert not work.lines


LISTING = ("[2734651353] cmd/explain.go:515 by @Copilot\nThe tree lookup runs in the loop. Hoist "
           "it out.\n---\n"
           "[2734651359] cmd/explain.go:320 by @cursor[bot]\n### The doc comment is stale\n\n"
           "**Low Severity**\n---\n"
           "[2734651360] cmd/explain.go:410 by @Copilot\nO(N*M) scan.\n---\n")


def review_session() -> Session:
    s = Session()
    s.user("Address the review comments on the PR, commit, and reply with the fix shas")
    s.call("b1", "Bash", {"command": "gh api repos/o/r/pulls/112/comments --jq '.[] | "
                                     "\"[\\(.id)] \\(.path):\\(.line) by @\\(.user.login)\"'"},
           LISTING)
    s.call("c1", "Bash", {"command": "git commit -am 'fix: review feedback'"},
           "[feat 1a2b3c4] fix: review feedback\n 1 file changed")
    s.call("r1", "Bash", {"command": "gh api repos/o/r/pulls/112/comments/2734651353/replies "
                                     "-f body=\"Fixed in 1a2b3c4 - hoisted the lookup.\""}, "{}")
    s.call("r2", "Bash", {"command": "# the stale doc comment\ngh api repos/o/r/pulls/112/comments/"
                                     "2734651359/replies -f body='Fixed in 1a2b3c4 - doc updated.'"},
           "{}")
    s.call("r3", "Bash", {"command": "gh api repos/o/r/pulls/112/comments/2734651360/replies -f "
                                     "body=\"Won't fix - the O(N*M) scan is fine for 100 items. "
                                     "Will revisit.\""}, "{}")
    return s


def test_a_round_of_replies_is_one_line_with_each_comment_s_point_and_verdict_under_it() -> None:
    lines = work_done(review_session().entries)
    at = lines.index("- Replied to 3 review comments on PR #112 from Copilot (2), cursor[bot] "
                     "(1): 2 fixed in 1a2b3c4, 1 won't fix")
    # the comment's first sentence (markup off), its file and line, the reply's verdict and words
    assert lines[at + 1:at + 4] == [
        '  - explain.go:515 "The tree lookup runs in the loop": fixed in 1a2b3c4 - hoisted the lookup',
        '  - explain.go:320 "The doc comment is stale": fixed in 1a2b3c4 - doc updated',
        "  - explain.go:410 \"O(N*M) scan\": won't fix - the O(N*M) scan is fine for 100 items"]
    assert not any(line.startswith("- Fixed in 1a2b3c4") for line in lines)  # not again


def test_a_reply_is_not_told_again_by_the_step_it_names() -> None:
    s = review_session()
    s.call("e1", "Edit", {"file_path": "/w/cmd/explain.py", "old_string": "def scan():\n    pass",
                          "new_string": "def lookup_tree():\n    return TREE\n\n\ndef scan():\n"
                                        "    tree = lookup_tree()"}, "updated",
           text="Hoist the lookup out of scan")
    s.call("r4", "Bash", {"command": "gh api repos/o/r/pulls/112/comments/2734651353/replies -f "
                                     "body='Fixed in 1a2b3c4 - lookup_tree in scan is hoisted.'"}, "{}")
    found = split_sections(offline_summary(build_request(s.entries, CLAUDE_CODE)))
    assert found is not None and "lookup_tree" in found["Files and Code Sections"]
    assert "hoisted" not in found["Files and Code Sections"]
    assert "lookup_tree in scan is hoisted" in found["Problem Solving"]


def test_a_big_round_tells_the_declined_and_most_telling_comments_in_order() -> None:
    round_ = ReviewRound("9")
    words = ["renamed", "helper", "module", "parser"]
    for n in range(12):  # comments 2, 5, 8 and 11 have the most to say
        round_.add(f"Fixed in 1a2b3c4 - {' '.join(words[:n % 3 + 2])} {n}.", {"1a2b3c4"},
                   Comment("Copilot", f"a.py:{n}", f"Point {n} of the review"))
    round_.add("Won't fix - out of scope.", set(), Comment("Copilot", "b.py:1", "Split the module"))
    round_.add("Fixed in 1a2b3c4 - renamed helper 0.", {"1a2b3c4"},
               Comment("Copilot", "a.py:40", "Same point again"))  # said as before: merged
    points = round_.points()
    assert len(points) == POINTS_SHOWN
    assert points[-1] == "b.py:1 \"Split the module\": won't fix - out of scope"  # declined: shown
    assert points[:-1] == [f'a.py:{n} "Point {n} of the review": fixed in 1a2b3c4 - renamed '
                           f'helper module parser {n}' for n in (2, 5, 8)][:POINTS_SHOWN - 1]
    assert round_.text() == ("Replied to 14 review comments on PR #9 from Copilot: 13 fixed in "
                             "1a2b3c4, 1 won't fix")
    assert round_.told[0].text().endswith("renamed helper 0 (and 1 more like it)")


def test_a_single_reply_is_told_on_the_round_s_own_line() -> None:
    s = Session()
    s.user("Reply to the comment about the lookup")
    s.call("b1", "Bash", {"command": "gh api repos/o/r/pulls/112/comments/2734651353 --jq "
                                     "'{id: .id, path: .path, line: .line, body: .body}'"},
           '{"body": "The tree lookup runs in the loop.", "id": 2734651353, "line": 515, '
           '"path": "cmd/explain.go"}')
    s.call("r1", "Bash", {"command": "gh api repos/o/r/pulls/112/comments/2734651353/replies -f "
                                     "body='Reconsidered - fixed in 1a2b3c4. The lookup is hoisted.'"},
           "{}")
    assert '- Replied to a review comment on PR #112: explain.go:515 "The tree lookup runs in the ' \
           'loop": fixed in 1a2b3c4 - The lookup is hoisted' in work_done(s.entries)


def test_listings_give_each_comment_s_file_line_and_point_in_every_shape() -> None:
    as_lines = ('{"body":"Use `c.Committer.When` here. It sorts.","id":2738999764,"line":534,'
                '"path":"cmd/explain.go","user":{"login":"Copilot"}}\n'
                '{"body":"Stray `//` line","id":2738999802,"line":null,"path":"common.go"}\n')
    assert review_comments("gh api x --jq '.[]'", as_lines) == {
        "2738999764": Comment("Copilot", "explain.go:534", "Use `c.Committer.When` here"),
        "2738999802": Comment("", "common.go", "Stray `//` line")}
    fields = ("ID: 2738999764 | Line: 534 | Path: cmd/explain.go | Body: Use Committer.When here. "
              "It sorts.\nID: 2738999785\nLine: 655\nBody: `run` swallows errors from `load`.\n---\n")
    assert review_comments("gh api x --jq ...", fields) == {
        "2738999764": Comment("", "explain.go:534", "Use Committer.When here"),
        "2738999785": Comment("", "line 655", "`run` swallows errors from `load`")}
    piped = "2734651353|Copilot|543|The metadata tree is fetched in the loop\n2734651359|x|N/A|ok\n"
    assert review_comments("gh api x --jq ...", piped)["2734651353"].point == \
        "The metadata tree is fetched in the loop"
    assert review_comments("gh api x", "Exit code 1\ngh: Not Found (HTTP 404)") == {}
    # a listing of headers only: no point, the header's fields are not one
    assert review_comments("gh api x", "[2734651353] cmd/explain.go:515 by @Copilot\n") == {
        "2734651353": Comment("Copilot", "explain.go:515", "")}


def test_the_users_next_message_starts_a_new_round() -> None:
    s = review_session()
    s.user("Also reply to the last one")
    s.call("r4", "Bash", {"command": "gh api repos/o/r/pulls/112/comments/2734651360/replies -f "
                                     "body='Already fixed in 1a2b3c4.'"}, "{}")
    s.assistant(text_block("Replied."))
    lines = work_done(s.entries)
    assert "- Replied to a review comment on PR #112 from Copilot: explain.go:410 \"O(N*M) scan\": " \
        "already fixed in 1a2b3c4" in lines
    assert sum(line.startswith("- Replied to") for line in lines) == 2


def test_comment_authors_come_from_json_jq_listings_or_the_listings_filter() -> None:
    as_json = ('[{"id": 11, "user": {"login": "Copilot"}, "body": "x"},'
               ' {"id": 12, "user": {"login": "alice"}, "in_reply_to_id": 11}]')
    assert comment_authors("gh api repos/o/r/pulls/1/comments", as_json) == {"11": "Copilot",
                                                                              "12": "alice"}
    assert comment_authors("gh api x --jq ...", LISTING) == {
        "2734651353": "Copilot", "2734651359": "cursor[bot]", "2734651360": "Copilot"}
    filtered = "ID: 2738999764\nLine: 534\nBody: use Committer.When by setting it\n---\n"
    assert comment_authors('gh api x --jq \'.[] | select(.user.login == "Copilot")\'',
                           filtered) == {"2738999764": "Copilot"}


def test_a_reply_names_a_commit_by_a_hash_of_digits_only_when_the_session_made_it() -> None:
    round_ = ReviewRound("7")
    round_.add("Fixed in 3696270 - help text updated.", {"3696270"})
    round_.add("Done, see 2738999818 above.", set())  # a comment's id, not a commit
    assert round_.text() == "Replied to 2 review comments on PR #7: 2 fixed (1 in 3696270)"
    # the verdict a reply opens with decides, whatever words come after it
    round_.add("Fixed in 3696270 - skipped the nil case, it cannot happen.", {"3696270"})
    round_.add("Won't fix: the wrapper is intentional, it is fixed by design.", set())
    assert round_.text() == "Replied to 4 review comments on PR #7: 3 fixed (2 in 3696270), " \
        "1 won't fix"
    assert round_.points()[-1] == "Won't fix - the wrapper is intentional, it is fixed by design"
    assert replies_in("gh api repos/o/r/pulls/7/comments -F in_reply_to=99 -f body='ok'") == [
        ("7", "99", "ok")]


def current_work(entries: list[dict[str, Any]]) -> list[str]:
    found = split_sections(offline_summary(build_request(entries, CLAUDE_CODE)))
    assert found is not None
    return textwrap.dedent("   " + found["Current Work"]).splitlines()


ISSUE = ("\u25cb app-7.2 \u00b7 Add the export command   [\u25cf P1 \u00b7 OPEN]\nOwner: M\n\n"
         "## Output Files\n- `src/app/cli.py`\n- `src/app/export.py` (new)\n- `docs/export.md`\n\n"
         "## Specs\n- Register the command in `src/app/cli.py` next to `import`.\n"
         "- Describe the CSV columns in `docs/export.md` with an example.\n"
         "- Keep rows streaming: do not use pandas.js for it.\n")


def test_the_task_in_progress_says_what_it_is_and_which_files_of_its_plan_are_untouched() -> None:
    s = Session()
    s.user("Work on app-7.2")
    s.call("e0", "Edit", {"file_path": "/work/app/src/app/cli.py", "old_string": "a = 1",
                          "new_string": "a = 2"}, "updated")  # before the task started
    s.call("b0", "Bash", {"command": "bd show app-7.2"}, ISSUE)
    s.call("b1", "Bash", {"command": "bd update app-7.2 --status in_progress"}, "Updated")
    s.call("r1", "Read", {"file_path": "/work/app/docs/export.md"}, "     1\t# Export\n")
    s.call("w1", "Write", {"file_path": "/work/app/src/app/export.py",
                           "content": "def export(rows):\n    yield from rows\n"}, "File created")
    lines = current_work(s.entries)
    start = lines.index("Task in progress: app-7.2 - Add the export command")
    assert lines[start + 1:start + 4] == [
        # never changed and read first; changed only before the task started last
        "- Files of its plan not changed since it started: docs/export.md (read), "
        "src/app/cli.py (changed before it started)",
        "- Still to do by its plan: Register the command in `src/app/cli.py` next to `import`.",
        "- Still to do by its plan: Describe the CSV columns in `docs/export.md` with an example."]
    # once the task is closed nothing of it is told as in progress
    s.call("b2", "Bash", {"command": "bd close app-7.2 --reason 'Export added'"}, "Closed")
    assert not any(line.startswith(("Task in progress", "- Files of its plan"))
                   for line in current_work(s.entries))


def test_a_task_the_agent_described_takes_its_plan_from_the_description() -> None:
    s = Session()
    s.user("Go")
    s.call("t1", "TaskCreate", {"subject": "Add the start hook", "description":
                                "Wire the hook in src/hooks/start.py and list it in "
                                "config/hooks.yaml."}, "Task #1 created successfully")
    s.call("t2", "TaskUpdate", {"taskId": "1", "status": "in_progress"}, "Updated task #1 status")
    s.call("w1", "Write", {"file_path": "/work/app/src/hooks/start.py", "content": "x = 1\n"},
           "File created")
    lines = current_work(s.entries)
    assert "Task in progress: Add the start hook - Wire the hook in src/hooks/start.py and list " \
           "it in config/hooks.yaml." in lines
    assert "- Files of its plan not changed since it started: config/hooks.yaml" in lines


def test_the_last_commit_is_told_by_its_hash_and_subject_and_how_it_ended() -> None:
    s = Session()
    s.user("Commit and push")
    s.call("c1", "Bash", {"command": "git commit -am 'fix: pager rounding'"},
           "[main 1a2b3c4] fix: pager rounding\n 1 file changed")
    s.call("p1", "Bash", {"command": "git push"}, "To github.com:x/y.git")
    assert "- Last commit: 1a2b3c4 \"fix: pager rounding\" done, then pushed." \
        in current_work(s.entries)
    s.call("c0", "Bash", {"command": "git commit -am 'docs: pager'"}, "[main 5e6f7a8] docs: pager")
    work = current_work(s.entries)  # a push before it is not its push
    assert "- Last commit: 5e6f7a8 \"docs: pager\" done, not pushed (the last `git push` came " \
        "before it)." in work
    assert "Last push" not in work
    s.call("c2", "Bash", {"command": "git commit -am 'feat: page size'"},
           "Exit code 1\nlib/pager.ex:3:5: undefined function size/0", error=True)
    assert "- Last commit: \"feat: page size\" failed: pager.ex:3:5: undefined function size/0." \
        in current_work(s.entries)
    s.call("c3", "Bash", {"command": "git commit -am 'feat: page size'"},
           "The user doesn't want to proceed with this tool use. The tool use was rejected.",
           error=True)
    assert "- Last commit: \"feat: page size\" not made: the user stopped it." \
        in current_work(s.entries)


def test_a_codex_session_s_merge_is_read_through_its_adapter() -> None:
    def line(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-11-24T01:25:30.000Z", "type": "response_item", "payload": payload}
    entries = [
        line({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Merge main in"}]}),
        line({"type": "function_call", "name": "exec_command", "call_id": "c1",
              "arguments": json.dumps({"cmd": "git merge origin/main", "workdir": "/w"})}),
        line({"type": "function_call_output", "call_id": "c1",
              "output": "Process exited with code 1\nOutput:\n" + CONFLICTED}),
    ]
    assert "- Merged origin/main into the current branch: conflicts in src/app.py, docs/old.md, " \
           "not yet resolved" in work_done(entries, "codex")


def test_a_codex_session_s_review_replies_are_read_through_its_adapter() -> None:
    def line(payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "2026-11-24T01:25:30.000Z", "type": "response_item", "payload": payload}

    def shell(call_id: str, cmd: str, output: str) -> list[dict[str, Any]]:
        return [line({"type": "function_call", "name": "exec_command", "call_id": call_id,
                      "arguments": json.dumps({"cmd": cmd, "workdir": "/w"})}),
                line({"type": "function_call_output", "call_id": call_id,
                      "output": "Process exited with code 0\nOutput:\n" + output})]
    entries = [
        line({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Answer the review comments"}]}),
        *shell("c1", "gh api repos/o/r/pulls/112/comments --jq '.[] | \"[\\(.id)] "
               "\\(.path):\\(.line) by @\\(.user.login)\\n\\(.body)\\n---\"'", LISTING),
        *shell("c2", "git commit -am 'fix: review feedback'", "[feat 1a2b3c4] fix: review feedback"),
        *shell("c3", "gh api repos/o/r/pulls/112/comments/2734651353/replies -f "
               "body='Fixed in 1a2b3c4 - hoisted the lookup.'", "{}"),
        *shell("c4", "gh api repos/o/r/pulls/112/comments/2734651360/replies -f "
               "body=\"Won't fix - fine for 100 items.\"", "{}"),
    ]
    lines = work_done(entries, "codex")
    at = lines.index("- Replied to 2 review comments on PR #112 from Copilot: 1 fixed in 1a2b3c4, "
                     "1 won't fix")
    assert lines[at + 1:at + 3] == [
        '  - explain.go:515 "The tree lookup runs in the loop": fixed in 1a2b3c4 - hoisted the lookup',
        "  - explain.go:410 \"O(N*M) scan\": won't fix - fine for 100 items"]
