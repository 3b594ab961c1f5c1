"""A truncated last line (a session being written, or killed mid-write) stays the last line:
what persist, snip, microcompact and summarize append (a microcompact_boundary, a summary) goes
before it, so the output has no invalid line in the middle, and a writer still adding to that
line completes it in place. restore gives the input back byte for byte."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.robustness.test_input_kinds import NOW, transcript
from tests.conftest import run_ctxtool

PARTIAL = b'{"parentUuid":"r3","isSidechain":false,"type":"user","message":{"role":"user","con'
COMMANDS = {
    "persist": ["persist", "--max-chars", "500"],
    "snip": ["snip", "--min-usage", "0", "--keep", "0"],
    "microcompact": ["microcompact", "--force", "--keep", "0", "--target", "0"],
    "summarize": ["summarize", "--llm", "offline"],
}


@pytest.mark.parametrize("via", ["file", "stdin"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_appended_entries_go_before_a_truncated_last_line(command: str, via: str,
                                                          tmp_path: Path) -> None:
    data = transcript() + PARTIAL
    source = tmp_path / "live.jsonl"
    source.write_bytes(data)
    argv = [*COMMANDS[command], "--store", str(tmp_path / "store"), "--now", NOW]
    proc = run_ctxtool(*argv, *([str(source)] if via == "file" else []),
                       input=data if via == "stdin" else None, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert b"truncated last line" in proc.stderr and b"at the end of the output" in proc.stderr
    out = proc.stdout
    assert out.endswith(b"\n" + PARTIAL)
    body = out[:-len(PARTIAL)].splitlines()
    assert len(body) > data.count(b"\n")  # something was appended ...
    for line in body:  # ... and every line before the partial one is whole
        assert isinstance(orjson.loads(line), dict)
    if command != "summarize":
        restored = run_ctxtool("restore", input=out, cwd=tmp_path)
        assert restored.returncode == 0 and restored.stdout == data
