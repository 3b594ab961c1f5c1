"""``snip`` on a rollout the real Codex CLI 0.171.0 wrote (tests/fixtures/codex-0.171.0/snip.jsonl,
made by scripts/make_codex_fixture.py): Codex reads and changes files through ``exec_command``,
which its adapter shows snip as Claude Code's Read/Write/Grep (``snip_view``)."""

from __future__ import annotations

import orjson
import pytest

from ctxtool.formats.codex import shell_tool, snip_view
from tests.conftest import FIXTURES, run_ctxtool

SNIP = FIXTURES / "codex-0.171.0" / "snip.jsonl"


def calls(data: bytes) -> dict[str, str]:
    """call_id -> the command of each exec_command call."""
    return {e["payload"]["call_id"]: orjson.loads(e["payload"]["arguments"])["cmd"]
            for e in map(orjson.loads, data.splitlines())
            if e["type"] == "response_item" and e["payload"]["type"] == "function_call"}


def outputs(data: bytes) -> dict[str, str]:
    return {e["payload"]["call_id"]: e["payload"]["output"]
            for e in map(orjson.loads, data.splitlines())
            if e["type"] == "response_item" and e["payload"]["type"] == "function_call_output"}


def test_snip_clears_the_superseded_results_of_a_real_rollout(tmp_path) -> None:
    store, report = tmp_path / "store", tmp_path / "report.json"
    proc = run_ctxtool("snip", "--store", str(store), "--report", str(report), str(SNIP))
    assert proc.returncode == 0, proc.stderr
    commands = calls(SNIP.read_bytes())
    before, after = outputs(SNIP.read_bytes()), outputs(proc.stdout)
    snipped = [commands[i] for i in after if after[i] != before[i]]
    # the two reads before `sed -i` changed the file, and the oldest of four greps; the newest
    # three results (the change, the second cat, wc) are kept
    assert snipped == ["cat notes.txt", "sed -n '1,30p' notes.txt", "grep -n alpha notes.txt"]
    assert all(after[i].startswith("[Content snipped - re-read if needed]\n")
               for i in after if after[i] != before[i])
    figures = orjson.loads(report.read_bytes())
    assert figures["reasons"] == {"file changed after the read": 2, "older search": 1}
    # every other line leaves byte for byte
    kept = [a for a, b in zip(proc.stdout.splitlines(), SNIP.read_bytes().splitlines()) if a == b]
    assert len(kept) == len(SNIP.read_bytes().splitlines()) - 3

    restored = run_ctxtool("restore", "--store", str(store), input=proc.stdout)
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout == SNIP.read_bytes()
    again = run_ctxtool("snip", "--store", str(store), input=proc.stdout)
    assert again.returncode == 0 and again.stdout == proc.stdout  # nothing more to snip


@pytest.mark.parametrize("command, seen", [
    ("cat notes.txt", ("Read", {"file_path": "notes.txt"})),
    ("nl -ba src/app.py", ("Read", {"file_path": "src/app.py"})),
    ("sed -n '10,20p' ./a.py", ("Read", {"file_path": "a.py", "offset": 10, "limit": 11})),
    ("head -n 5 a.py", ("Read", {"file_path": "a.py", "limit": 5})),
    ("bash -lc 'cat notes.txt'", ("Read", {"file_path": "notes.txt"})),
    ("sed -i 's/a/b/' notes.txt", ("Write", {"file_path": "notes.txt"})),
    ("printf 'x\\n' > out.txt", ("Write", {"file_path": "out.txt"})),
    ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\nEOF",
     ("Edit", {"file_path": "a.py"})),
    ("rg -n TODO", ("Grep", {})), ("grep -c beta notes.txt", ("Grep", {})),
    ("ls -la", ("LS", {})), ("find . -name '*.py'", ("Glob", {})),
    # what does not plainly say what it reads or changes is left alone
    ("cat a.py | head", None), ("cat a.py b.py", None), ("python run.py", None),
    ("make && cat log", None), ("cat 'unterminated", None),
    ("apply_patch <<'EOF'\n*** Update File: a.py\n*** Update File: b.py\nEOF", None),
])
def test_shell_commands_as_snip_reads_them(command: str, seen: object) -> None:
    assert shell_tool(command) == seen


def test_snip_view_keeps_the_call_and_reads_workdir() -> None:
    block = {"type": "tool_use", "id": "call_1", "name": "exec_command",
             "input": {"cmd": "cat notes.txt", "workdir": "/home/user/proj"}}
    assert snip_view(block) == {"type": "tool_use", "id": "call_1", "name": "Read",
                                "input": {"file_path": "/home/user/proj/notes.txt"}}
    other = {"type": "tool_use", "id": "call_2", "name": "exec_command", "input": {"cmd": "make"}}
    assert snip_view(other) is other
    assert snip_view({"type": "text", "text": "cat notes.txt"}) == {"type": "text",
                                                                   "text": "cat notes.txt"}
