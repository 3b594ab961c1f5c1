"""How the summarizer sees other agents' tool calls (their adapters' ``claude_code_tool``):
Codex's plan as a todo list, its shell as Bash, a patch of one file as an edit, a command that
exited non-zero as failed; OpenCode's ``apply_patch`` as an edit."""

from __future__ import annotations

from ctxtool.formats.codex import patch_as_edit, summary_view
from ctxtool.formats.opencode.tools import as_claude_code_tool


def test_codex_plan_is_a_todo_list() -> None:
    plan = summary_view({"type": "tool_use", "id": "1", "name": "update_plan", "input": {
        "explanation": "x", "plan": [{"step": "Add retries", "status": "in_progress"}, "junk"]}})
    assert plan["name"] == "TodoWrite"
    assert plan["input"] == {"todos": [{"content": "Add retries", "status": "in_progress"}]}


def test_codex_and_opencode_tool_views() -> None:
    assert patch_as_edit("*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch", "/w") == \
        ("Write", {"file_path": "/w/a.py", "content": "x = 1"})
    two = "*** Update File: a.py\n-x\n+y\n*** Update File: b.py\n-x\n+y\n"
    assert patch_as_edit(two, None) is None  # more than one file: not one edit
    shell = summary_view({"type": "tool_use", "id": "1", "name": "shell",
                          "input": {"command": ["bash", "-lc", "git push"]}})
    assert shell["name"] == "Bash" and shell["input"] == {"command": "git push"}
    failed = summary_view({"type": "tool_result", "tool_use_id": "1",
                           "content": "Process exited with code 2\nOutput:\nboom"})
    assert failed["is_error"] is True
    passed = {"type": "tool_result", "tool_use_id": "1", "content": "Process exited with code 0"}
    assert summary_view(passed) is passed
    patched = as_claude_code_tool({"type": "tool_use", "id": "2", "name": "apply_patch", "input": {
        "patchText": "*** Begin Patch\n*** Update File: /w/b.py\n-a = 1\n+a = 2\n*** End Patch"}})
    assert patched["name"] == "Edit" and patched["input"]["new_string"] == "a = 2"
