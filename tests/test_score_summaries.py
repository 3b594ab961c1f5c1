"""scripts/score_summaries.py's work figure (issue 28): which lines of Claude's summary are work
items, their key words, and when a line of ctxtool's recalls one."""

from __future__ import annotations

import sys

from ctxtool.core.summarizing.prompt import split_sections
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import score_summaries as score  # noqa: E402

CLAUDE = """1. Primary Request and Intent:
   - Added `parse_config()` to settings/loader.py for the YAML keys
2. Key Technical Concepts:
   - Fixed it
3. Files and Code Sections:
   - Created cli/main.py with the export command and its --format option
4. Errors and fixes:
   - None
5. Problem Solving:
   - The tests are passing now for TranscriptRenderer golden files
6. All user messages:
   - "Added parse_config and the loader, committed it"
7. Pending Tasks:
   - Updated README with the export command example
8. Current Work:
   - ✅ migration script rewritten for SQLite storage backend
9. Optional Next Step:
   - Removed the obsolete ExportLegacy class from the exporter
"""


def test_work_items_are_lines_with_a_verb_and_three_key_words_outside_three_sections():
    items = score.work_items(split_sections(CLAUDE))
    lines = [line for line, _ in items]
    assert lines == [
        "- Added `parse_config()` to settings/loader.py for the YAML keys",
        "- Created cli/main.py with the export command and its --format option",
        "- The tests are passing now for TranscriptRenderer golden files",
        "- ✅ migration script rewritten for SQLite storage backend",
    ]  # "Fixed it" has no key word; user messages, pending tasks and the next step never count


def test_key_words_keep_names_of_any_length_and_long_words_not_common_nor_verbs():
    keys = score.key_words("Added `parse_config()` to settings/loader.py, and the io_x of the "
                           "YAML keys, passing with a test")
    assert keys == {"parse_config", "settings", "loader.py", "io_x", "yaml", "keys", "test"}


def test_recalled_needs_three_and_sixty_percent_of_the_key_words_on_one_short_line():
    claude = split_sections(CLAUDE)
    case = score.Case("f", 1, True)
    # loader.py, parse_config, yaml, keys of 5 key words (settings missing): 80% on one line
    score.score_work(case, claude, "- loader.py gained parse_config for YAML keys", [])
    assert case.work_items == [1, 4]
    case = score.Case("f", 1, True)
    # the same words over two lines do not count, nor on one line longer than 400 characters
    score.score_work(case, claude, "- loader.py: parse_config\n- YAML keys\n"
                                   "- loader.py parse_config YAML keys " + "x" * 400, [])
    assert case.work_items == [0, 4]
    assert case.missing_work[0].startswith("- Added `parse_config()`")


def test_the_ceiling_is_what_the_best_single_line_or_sentence_of_the_history_recalls():
    history = [
        {"type": "user", "message": {"role": "user", "content": "add parse_config to the loader"}},
        _call("t1", "Edit", {"file_path": "settings/loader.py",
                             "new_string": "def parse_config(yaml_keys):\n    return {}"}),
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Done. loader.py now has parse_config for the YAML keys. "
                                     "Next the CLI."}]}},
        _result("t2", "export command ready\nsee cli/main.py for --format option " + "y" * 400),
    ]
    lines = score.history_line_keys(history)
    assert any({"loader.py", "parse_config", "yaml", "keys"} <= keys for keys in lines)
    case = score.Case("f", 1, True)
    score.score_work(case, split_sections(CLAUDE), "", lines)
    # the sentence about loader.py recalls the first item; the result line holding cli/main.py
    # is longer than 400 characters but its first 400 count, like a copied line cut short
    assert case.work_ceiling == [2, 4]
    assert case.work_items == [0, 4]


def _call(uid: str, name: str, data: dict) -> dict:
    return {"type": "assistant", "uuid": uid, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": uid, "name": name, "input": data}]}}


def _result(uid: str, text: str) -> dict:
    return {"type": "user", "uuid": uid + "r", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": uid, "content": text}]}}


def test_pending_items_the_history_settled_come_from_its_task_records():
    history = [
        _call("a", "TodoWrite", {"todos": [
            {"content": "Write the loader tests", "status": "in_progress"},
            {"content": "Document the export option", "status": "pending"}]}),
        _result("a", "ok"),
        _call("c", "TodoWrite", {"todos": [
            {"content": "Write the loader tests", "status": "completed"},
            {"content": "Document the export option", "status": "pending"}]}),
        _result("c", "ok"),
        _call("b", "TaskCreate", {"subject": "Migrate storage to SQLite"}),
        _result("b", "Task #7 created successfully"),
        _call("d", "TaskUpdate", {"taskId": "7", "status": "completed"}),
        _result("d", "Updated task #7 status"),
    ]
    states = score.history_task_states(history)
    assert states["Write the loader tests"] == "completed"
    assert states["Migrate storage to SQLite"] == "completed"
    assert states["Document the export option"] == "pending"
    ours = split_sections(CLAUDE.replace(
        "   - Updated README with the export command example",
        "   - [in_progress] Write the loader tests\n   - [pending] Document the export option\n"
        "   - [pending] Migrate storage to SQLite"))
    case = score.Case("f", 1, True)
    score.score_settled(case, ours, states)
    assert case.settled_pending == ["- [in_progress] Write the loader tests",
                                    "- [pending] Migrate storage to SQLite"]
