"""Several inputs, one output (issue 27, item 12): a truncated last line of an input others
follow never lands in the middle of the output, glued to the next input's first line. Only the
last input's can end the output (as for one input); another's is left out with a warning naming
FILE:LINE (its file keeps it), or stays where it is with --on-invalid keep; a last line without
newline gets one before the next input's. Real entry point, real files, a pipe too."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.cli.test_partial_line import PARTIAL
from tests.robustness.test_input_kinds import transcript
from tests.conftest import run_ctxtool

# commands that give their input back unchanged here, byte for byte
IDENTITY = [["persist"], ["snip"], ["microcompact"], ["filter-compacted"], ["restore"]]


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    killed = tmp_path / "killed.jsonl"
    killed.write_bytes(transcript() + PARTIAL)
    no_newline = tmp_path / "no-newline.jsonl"
    no_newline.write_bytes(transcript().rstrip(b"\n"))
    live = tmp_path / "live.jsonl"
    live.write_bytes(transcript() + PARTIAL)
    return killed, no_newline, live


def lines_in_the_middle_parse(out: bytes) -> None:
    *body, last = out.split(b"\n")
    for number, line in enumerate(body, 1):
        assert isinstance(orjson.loads(line), dict), (number, line[:80])
    assert last == PARTIAL  # the last input's truncated line ends the output


@pytest.mark.parametrize("command", IDENTITY, ids=lambda c: c[0])
def test_only_the_last_inputs_truncated_line_ends_the_output(
        command: list[str], inputs: tuple[Path, Path, Path]) -> None:
    killed, no_newline, live = inputs
    proc = run_ctxtool(*command, str(killed), str(no_newline), str(live))
    assert proc.returncode == 0, proc.stderr
    expected = (transcript() + no_newline.read_bytes() + b"\n" + live.read_bytes())
    assert proc.stdout == expected
    lines_in_the_middle_parse(proc.stdout)
    stderr = proc.stderr.decode()
    at = len(transcript().splitlines()) + 1
    assert f"ctxtool: warning: {killed}:{at}: truncated last line" in stderr
    assert "left out of the output, where another input follows" in stderr
    assert f"ctxtool: warning: {live}:{at}: truncated last line" in stderr
    assert "at the end of the output" in stderr
    # kept, it stays where it was, on a line of its own
    kept = run_ctxtool(*command, "--on-invalid", "keep", str(killed), str(no_newline), str(live))
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout == (killed.read_bytes() + b"\n" + no_newline.read_bytes() + b"\n"
                           + live.read_bytes())


@pytest.mark.parametrize("command", [["estimate", "--per-entry"], ["summarize"],
                                     ["persist", "--budget", "auto"]], ids=" ".join)
def test_transforms_that_change_lines_keep_the_middle_whole(
        command: list[str], inputs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    killed, no_newline, live = inputs
    proc = run_ctxtool(*command, str(killed), str(no_newline), "-", input=live.read_bytes(),
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines_in_the_middle_parse(proc.stdout)
    assert b"left out of the output" in proc.stderr
