"""Text read from a transcript never steers the terminal: every table and message shows its control
characters escaped (ESC as ``\\x1b``), on a real terminal (``script``) and in a pipe alike, while
JSON output keeps the exact strings."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ctxtool_executable, run_ctxtool

SESSION = "11111111-2222-4333-8444-555555555555"
TITLE = "\x1b]0;pwned\x07"  # retitles the window
CLEAR = "\x1b[2J"  # clears the screen
CWD = f"/home/dev/{TITLE}proj{CLEAR}"
PROMPT = f"hello \x1b[31mred\x1b[0m {TITLE} \u202eevil\u202c please"
FILE_PATH = f"/src/{CLEAR}evil{TITLE}.py"
# what no output for people may hold: C0 controls but newline (and tab), DEL, C1, bidi overrides
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def lines() -> list[dict]:
    base = {"sessionId": SESSION, "cwd": CWD}
    return [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "timestamp": "2026-11-20T10:00:00Z", "message": {"role": "user", "content": PROMPT}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "timestamp": "2026-11-20T10:00:05Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": "t1", "name": "Read",
                                  "input": {"file_path": FILE_PATH}}],
                     "usage": {"input_tokens": 100, "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 0, "output_tokens": 10}}},
        {**base, "type": "user", "uuid": "u2", "parentUuid": "a1",
         "timestamp": "2026-11-20T10:00:06Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "x" * 40_000}]}},
    ]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    project = tmp_path / "claude" / "projects" / f"-home-dev-proj{CLEAR}"
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines()))
    return tmp_path / "claude"


def transcript(config: Path) -> Path:
    return config / "projects" / f"-home-dev-proj{CLEAR}" / f"{SESSION}.jsonl"


def on_script(args: list[str], env: dict[str, str]) -> bytes:
    """What the terminal receives: the command run by ``script`` on a pseudo-terminal."""
    command = " ".join(shlex.quote(a) for a in [*ctxtool_executable(), *args])
    proc = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is not installed")
@pytest.mark.parametrize("args", [["sessions"], ["estimate", "--latest"],
                                  ["estimate", "--latest", "--grid"],
                                  ["estimate", "--latest", "--timeline"], ["cleanup"]])
def test_a_terminal_gets_no_control_character_from_a_transcript(config: Path,
                                                                args: list[str]) -> None:
    shown = on_script(args, {"CLAUDE_CONFIG_DIR": str(config), "NO_COLOR": "1",
                             "COLUMNS": "200"}).decode()
    text = shown.replace("\r\n", "\n")
    assert not RAW.search(text), repr(RAW.search(text))
    if args == ["sessions"]:
        assert "\\x1b]0;pwned\\x07" in text and "\\u202eevil" in text  # escaped, still there


@pytest.mark.parametrize("args", [["sessions"], ["estimate", "--latest"]])
def test_tables_in_a_pipe_are_escaped_too(config: Path, args: list[str]) -> None:
    proc = run_ctxtool(*args, env={"CLAUDE_CONFIG_DIR": str(config), "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert not RAW.search(text) and "\\x1b[2J" in text


def test_estimate_names_a_hostile_file_path_escaped(config: Path) -> None:
    proc = run_ctxtool("estimate", "--latest", env={"CLAUDE_CONFIG_DIR": str(config),
                                                    "COLUMNS": "200"})
    assert f"/src/\\x1b[2Jevil\\x1b]0;pwned\\x07.py" in proc.stdout.decode()


def test_messages_name_a_hostile_file_escaped(tmp_path: Path) -> None:
    bad = tmp_path / f"x{CLEAR}.jsonl"
    bad.write_text("not json\n")
    proc = run_ctxtool("estimate", str(bad))
    assert proc.returncode == 3
    err = proc.stderr.decode()
    assert not RAW.search(err) and "x\\x1b[2J.jsonl" in err


def test_json_output_keeps_the_exact_strings(config: Path) -> None:
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    row = json.loads(run_ctxtool("sessions", "--json", env=env).stdout)
    assert (row["project"], row["first_prompt"]) == (CWD, " ".join(PROMPT.split()))
    report = json.loads(run_ctxtool("estimate", "--json", str(transcript(config)), env=env).stdout)
    assert [o["target"] for o in report["top"]] == [FILE_PATH]
