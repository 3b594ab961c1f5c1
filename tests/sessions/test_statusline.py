"""`ctxtool statusline` with Claude Code's statusline JSON on stdin."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from tests.conftest import run_ctxtool
from tests.estimate_builders import assistant, tool_result, tool_use, usage, user
from tests.sessions.helpers import APP, full_estimate, generated, write_session


def claude_json(transcript: Path | str, *, window: int = 200_000,
                current: dict | None = None) -> bytes:
    """What Claude Code 2.1.330 sends a statusline command (fields as its bundle builds them)."""
    prompt = sum((current or {}).get(k, 0) for k in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    return orjson.dumps({
        "session_id": "3f2a0001-aaaa", "transcript_path": str(transcript), "cwd": APP,
        "model": {"id": "claude-opus-4-1", "display_name": "Opus 4.1"},
        "workspace": {"current_dir": APP, "project_dir": APP, "added_dirs": []},
        "version": "2.1.330", "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 0.01, "total_duration_ms": 1000, "total_api_duration_ms": 500,
                 "total_lines_added": 0, "total_lines_removed": 0},
        "context_window": {"total_input_tokens": prompt, "total_output_tokens": 0,
                           "context_window_size": window, "current_usage": current,
                           "used_percentage": round(100 * prompt / window) if current else None,
                           "remaining_percentage": None},
        "exceeds_200k_tokens": prompt > 200_000, "fast_mode": False,
        "thinking": {"enabled": True}})


def line(runner, data: bytes, *args: str, env: dict | None = None) -> str:
    result = runner.invoke(cli, ["statusline", *args], input=data, env=env)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1
    return result.stdout[:-1]


def session_at(tmp_path: Path, prompt: int, after: str = "x") -> Path:
    return write_session(tmp_path, APP, "s1", [
        user("hi"), assistant([tool_use("t1", "Bash", command="ls")], msg_id="m1",
                              usage=usage(10, 500, prompt, 50)),
        tool_result("t1", after)])


def test_same_figure_as_estimate(runner, tmp_path: Path) -> None:
    path = generated(tmp_path, APP, "g1", size=2_000_000, seed=5)
    report = full_estimate(path)
    shown = line(runner, claude_json(path), "--format", "{context_tokens} {window_tokens} "
                 "{to_compact_tokens} {status}")
    assert shown == (f"{report.context_tokens} {report.limits.window} "
                     f"{report.limits.auto_compact - report.context_tokens} {report.status}")


def test_default_line(runner, tmp_path: Path) -> None:
    path = session_at(tmp_path, 100_000, after="y" * 4000)
    shown = line(runner, claude_json(path, current={"input_tokens": 10,
                                                    "cache_creation_input_tokens": 500,
                                                    "cache_read_input_tokens": 100_000,
                                                    "output_tokens": 50}))
    used = full_estimate(path).context_tokens
    assert used > 100_510  # the tool result after the last call counts too
    assert shown.startswith("Opus 4.1 ")
    assert f"{used / 1000:.1f}K/200.0K ({100 * used / 200_000:.0f}%)" in shown
    assert f"{(167_000 - used) / 1000:.1f}K to compact" in shown and "⚠" not in shown
    assert "\x1b[" not in shown  # not a terminal


@pytest.mark.parametrize(("prompt", "status"), [(150_000, "warning"), (170_000, "auto_compact"),
                                                (199_000, "blocking")])
def test_marker_past_the_warning_threshold(runner, tmp_path: Path, prompt: int,
                                           status: str) -> None:
    shown = line(runner, claude_json(session_at(tmp_path, prompt)), "--format",
                 "{status}{marker}")
    assert shown == f"{status} ⚠"


def test_window_from_claude_code(runner, tmp_path: Path) -> None:
    path = session_at(tmp_path, 300_000)
    shown = line(runner, claude_json(path, window=1_000_000), "--format", "{window} {percent}")
    assert shown.startswith("1.00M 30")


def test_colour_always_never_and_no_color(runner, tmp_path: Path) -> None:
    data = claude_json(session_at(tmp_path, 150_000))
    coloured = line(runner, data, "--color", "always")
    assert "\x1b[33m" in coloured and coloured.count("\x1b[0m") >= 3  # yellow: warning
    assert "\x1b[" not in line(runner, data, "--color", "always", env={"NO_COLOR": "1"})
    assert "\x1b[" not in line(runner, data, "--color", "never")


def test_a_session_not_written_yet(runner, tmp_path: Path) -> None:
    missing = tmp_path / "not-yet.jsonl"
    shown = line(runner, claude_json(missing), "--format", "{context_tokens} {method}")
    assert shown == "24000 heuristic"  # the assumed system prompt, as estimate assumes
    reported = line(runner, claude_json(missing, current={"input_tokens": 5,
                                                          "cache_read_input_tokens": 30_000}),
                    "--format", "{context_tokens} {method}")
    assert reported == "30005 claude-code"


def test_reads_only_the_end_of_the_transcript(runner, tmp_path: Path) -> None:
    """Broken lines early in the file stop estimate (exit 3) but are never read here."""
    path = session_at(tmp_path, 50_000)
    good = path.read_bytes()
    path.write_bytes(good.splitlines(keepends=True)[0] + b"{broken\n" * 1000 + good)
    assert run_ctxtool("estimate", str(path)).returncode == ExitCode.INVALID_INPUT
    shown = line(runner, claude_json(path), "--format", "{context_tokens}")
    assert int(shown) > 50_000


def test_bad_input(runner, tmp_path: Path) -> None:
    bad = runner.invoke(cli, ["statusline"], input=b"{nope")
    assert bad.exit_code == ExitCode.INVALID_INPUT and "statusline JSON" in bad.stderr
    field = runner.invoke(cli, ["statusline", "--format", "{nope}"],
                          input=claude_json(tmp_path / "x.jsonl"))
    assert field.exit_code == ExitCode.USAGE and "fields:" in field.stderr
    attribute = runner.invoke(cli, ["statusline", "--format", "{model.nope}"],
                              input=claude_json(tmp_path / "x.jsonl"))
    assert attribute.exit_code == ExitCode.USAGE and "Traceback" not in attribute.stderr
    assert "Traceback" not in bad.stderr + field.stderr


def test_a_file_argument_and_the_real_entry_point(tmp_path: Path) -> None:
    path = session_at(tmp_path, 80_000)
    direct = run_ctxtool("statusline", str(path), "--format", "{context_tokens}")
    piped = run_ctxtool("statusline", "--format", "{context_tokens}", input=claude_json(path))
    assert direct.returncode == piped.returncode == 0, direct.stderr + piped.stderr
    assert direct.stdout == piped.stdout == f"{full_estimate(path).context_tokens}\n".encode()
    estimate = run_ctxtool("estimate", "--json", input=claude_json(path))  # the same JSON
    assert json.loads(estimate.stdout)["context_tokens"] == int(direct.stdout)


# --- the fast start: the real entry point runs it without click or orjson -----------------------

LOADED_AT_EXIT = """
import atexit, os, sys
atexit.register(lambda: open(os.environ["CTXTOOL_TEST_MODULES"], "w").write(
    "\\n".join(sorted(sys.modules))))
sys.argv = ["ctxtool", *sys.argv[1:]]
from ctxtool.__main__ import main
main()
"""


def entry_point_run(tmp_path: Path, *args: str, stdin: bytes = b"") -> tuple[set[str], bytes,
                                                                              bytes, int]:
    """Modules loaded, stdout, stderr and exit status of ``ctxtool ARGS`` through the console
    script's own function, in a fresh interpreter."""
    import os
    import subprocess
    import sys

    listing = tmp_path / "modules.txt"
    proc = subprocess.run([sys.executable, "-c", LOADED_AT_EXIT, *args], input=stdin,
                          capture_output=True, timeout=120, check=False,
                          env={**os.environ, "CTXTOOL_TEST_MODULES": str(listing)})
    return set(listing.read_text().split()), proc.stdout, proc.stderr, proc.returncode


@pytest.mark.parametrize("args", [(), ("--color", "never"), ("--color=always",),
                                  ("--format", "{context_tokens} {status}"), ("FILE",),
                                  ("--", "FILE")])
def test_the_entry_point_prints_the_line_without_click_or_orjson(tmp_path: Path,
                                                                 args: tuple[str, ...]) -> None:
    path = session_at(tmp_path, 80_000, after="y" * 5000)
    args = tuple(str(path) if a == "FILE" else a for a in args)
    loaded, out, err, code = entry_point_run(tmp_path, "statusline", *args,
                                             stdin=claude_json(path))
    assert (code, err) == (0, b"")
    assert not {"click", "orjson"} & {name.split(".")[0] for name in loaded}
    # dataclasses imports inspect, and each frozen class execs its methods: NamedTuples instead
    assert "dataclasses" not in loaded
    assert "ctxtool.formats.claude_code.adapter" in loaded  # the control: the probe sees imports
    # the same line as the click command, which the test runner goes through
    assert out.decode() == line(CliRunner(), claude_json(path), *args) + "\n"


@pytest.mark.parametrize(("args", "code", "text"), [
    (("--help",), 0, b"Print one line for Claude Code's status line"),
    (("--color", "blue"), ExitCode.USAGE, b"'blue' is not one of"),
    (("--colour", "never"), ExitCode.USAGE, b"No such option"),
    (("--format",), ExitCode.USAGE, b"requires an argument"),
    (("a", "b"), ExitCode.USAGE, b"unexpected extra argument"),
])
def test_what_the_fast_parser_leaves_goes_to_click(tmp_path: Path, args: tuple[str, ...],
                                                   code: int, text: bytes) -> None:
    loaded, out, err, status = entry_point_run(tmp_path, "statusline", *args)
    assert status == code and text in (out + err).replace(b"\n", b" ")
    assert "click" in loaded


def test_the_fast_path_reports_errors_in_one_line(tmp_path: Path) -> None:
    loaded, out, err, code = entry_point_run(tmp_path, "statusline", stdin=b"{nope")
    assert code == ExitCode.INVALID_INPUT and out == b""
    assert err.startswith(b"ctxtool: error: <stdin>: not Claude Code's statusline JSON")
    assert err.count(b"\n") == 1 and "click" not in loaded
    _, _, err, code = entry_point_run(tmp_path, "statusline", "--format", "{nope}",
                                      stdin=claude_json(tmp_path / "none.jsonl"))
    assert code == ExitCode.USAGE and b"fields:" in err and err.count(b"\n") == 1


def versioned_at(tmp_path: Path, prompt: int, version: str) -> Path:
    """A session written by ``version``: its last reply at 12:00, a tool result 30 s later."""
    return write_session(tmp_path, APP, "s1", [
        user("hi", version=version, timestamp="2026-11-27T11:59:00.000Z"),
        assistant([tool_use("t1", "Bash", command="ls")], msg_id="m1",
                  usage=usage(10, 500, prompt, 50), version=version,
                  timestamp="2026-11-27T12:00:00.000Z"),
        tool_result("t1", "x", version=version, timestamp="2026-11-27T12:00:30.000Z")])


@pytest.mark.parametrize(("version", "point"), [("2.1.332", 117_000), ("2.1.20", 155_000)])
def test_settings_move_the_compaction_point(runner, tmp_path: Path, version: str,
                                            point: int) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"autoCompactWindow": 150_000}))
    path = versioned_at(tmp_path, 100_000, version)
    env = {"CLAUDE_CONFIG_DIR": str(config), "CTXTOOL_CLAUDE_SETTINGS": "1"}
    template = ("--format", "{compact_at_tokens} {to_compact_tokens} {context_tokens}")
    shown = line(runner, claude_json(path), *template, env=env)
    used = full_estimate(path).context_tokens
    # 2.1.332 reads autoCompactWindow: 150,000 - 20,000 output - 13,000; 2.1.20 does not
    assert shown == f"{point} {point - used} {used}"
    fast = run_ctxtool("statusline", *template, input=claude_json(path), env=env)
    assert fast.stdout.decode() == shown + "\n"
    # without the settings the current rule's point is the model's
    assert line(runner, claude_json(path), *template).split()[0] == \
        ("167000" if version == "2.1.332" else "155000")


def test_idle_compaction_time(runner, tmp_path: Path) -> None:
    path = versioned_at(tmp_path, 120_000, "2.1.332")
    env = {"CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "100000"}
    args = ("--format", "{idle_at}|{idle_in}", "--now", "2026-11-27T12:10:00Z")
    fires = datetime(2026, 11, 27, 12, 54, tzinfo=timezone.utc)  # 0.9 of the one-hour cache
    assert line(runner, claude_json(path), *args, env=env) == \
        f"{fires.astimezone():%H:%M}|44m"
    fast = run_ctxtool("statusline", *args, input=claude_json(path), env={**env, "TZ": "UTC"})
    assert fast.stdout == b"12:54|44m\n"
    late = run_ctxtool("statusline", "--format", "{idle_in}", "--now", "2026-11-27T13:30:00Z",
                       input=claude_json(path), env=env)
    assert late.stdout == b"0m\n"
    # under the minimum (200,000 by default) or turned off: it will not fire, the fields are empty
    assert line(runner, claude_json(path), *args) == "|"
    assert line(runner, claude_json(path), *args, env={**env, "DISABLE_AUTO_COMPACT": "1"}) == "|"
    bad = run_ctxtool("statusline", "--now", "soon", input=claude_json(path))
    assert bad.returncode == ExitCode.USAGE and b"--now: not a time" in bad.stderr
