"""`ctxtool cleanup` for the person at the terminal and the one reading cron's mail: a table on
a terminal, JSONL with --json or into a pipe, quiet cron runs when nothing happens, empty project
folders and the lock file gone afterwards."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from tests.cleanup_trees import NOW, NOW_ARG, PROJECT, add_session, claude_root, write_index
from tests.cli.test_cleanup import DAYS, _fake_home, records_of
from tests.conftest import ROOT, ctxtool_executable, read_terminal

ANSI = re.compile(r"\x1b\[[0-9;]*m")
OTHER = "-home-me-old-project"


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """Run the entry point with stdout on a pseudo-terminal; stderr through a pipe."""
    main, child = pty.openpty()
    full_env = {key: value for key, value in os.environ.items()
                if key not in ("NO_COLOR", "FORCE_COLOR")}  # colour as a terminal gets it
    full_env.update({"COLUMNS": "100", **(env or {})})
    proc = subprocess.Popen([*ctxtool_executable(), *args], stdout=child, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=full_env)
    os.close(child)
    written = read_terminal(main)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, written.decode().replace("\r\n", "\n"), err


def tree(tmp_path: Path) -> Path:
    root = claude_root(tmp_path)
    old = add_session(root, "0ld5e55-1", NOW - 40 * DAYS)
    add_session(root, "n3w5e55-2", NOW - 3 * DAYS)
    add_session(root, "g0ne-3", NOW - 50 * DAYS, project=OTHER)
    write_index(root, [old])
    return root


def test_a_terminal_gets_a_table_with_what_goes_what_stays_and_why(tmp_path: Path) -> None:
    root = tree(tmp_path)
    code, out, err = on_a_terminal("cleanup", "--root", str(root), "--now", NOW_ARG)
    assert code == 0 and err == b""  # the summary is the table's last line
    lines = ANSI.sub("", out).splitlines()
    assert lines[0].split() == ["ACTION", "AGE", "SIZE", "AGENT", "SESSION", "OR", "PATH", "WHY"]
    at = lines[0].index("SESSION OR PATH")
    footer = next(n for n, line in enumerate(lines) if line.startswith("cleanup"))
    rows = {line[at:].split()[0]: line.split() for line in lines[1:footer]}
    assert rows[f"{OTHER}/g0ne-3"][:2] == ["delete", "50d"]
    assert rows[f"{OTHER}/g0ne-3"][4] == "claude"  # its agent, in the table's short name
    assert rows[f"{PROJECT}/0ld5e55-1"][:2] == ["delete", "40d"]
    assert rows[f"{PROJECT}/n3w5e55-2"][:2] == ["keep", "3d"]
    assert "recent (limit 30d)" in " ".join(rows[f"{PROJECT}/n3w5e55-2"])
    assert rows[f"projects/{OTHER}"][0] == "delete"  # its folder, empty once the session goes
    assert lines[footer].startswith("cleanup (dry run): would remove 2 sessions")
    assert "pass --apply to act" in " ".join(lines[footer:])  # wrapped to the width
    assert all(len(line) <= 100 for line in lines)
    assert "\x1b[31m" in out  # removals in red
    assert not any(line.lstrip().startswith("{") for line in lines)


def test_no_color_and_json_on_a_terminal(tmp_path: Path) -> None:
    root = tree(tmp_path)
    _, plain, _ = on_a_terminal("cleanup", "--root", str(root), "--now", NOW_ARG,
                                env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain and plain.startswith("ACTION")
    code, out, err = on_a_terminal("cleanup", "--json", "--root", str(root), "--now", NOW_ARG)
    assert code == 0
    records = records_of(out.encode())
    assert {r["action"] for r in records} == {"delete", "keep", "update"}
    assert err.decode().startswith("ctxtool: cleanup (dry run): would remove 2 sessions")


def test_a_pipe_gets_jsonl_and_the_summary_record_last(tmp_path: Path) -> None:
    root = tree(tmp_path)
    proc = subprocess.run([*ctxtool_executable(), "cleanup", "--root", str(root), "--now", NOW_ARG],
                          capture_output=True, timeout=120, check=True)
    summary = json.loads(proc.stdout.splitlines()[-1])
    assert summary["time"] == "2026-03-01T12:00:00Z"
    assert summary["summary"] == {**summary["summary"], "dry_run": True, "removed_sessions": 2,
                                  "empty_folders": 1, "older_than": 30 * 86400}
    records_of(proc.stdout)


def test_apply_removes_empty_project_folders_and_leaves_no_lock(tmp_path: Path) -> None:
    root = tree(tmp_path)
    proc = subprocess.run([*ctxtool_executable(), "cleanup", "--root", str(root), "--now", NOW_ARG,
                           "--apply"], capture_output=True, timeout=120, check=True)
    records = records_of(proc.stdout)
    assert not (root / "projects" / OTHER).exists()
    assert (root / "projects" / PROJECT).is_dir()  # a session stays there
    folder = next(r for r in records if r["kind"] == "project-folder")
    assert folder == {**folder, "path": f"projects/{OTHER}", "action": "delete", "dry_run": False}
    assert not (root / ".ctxtool-cleanup.lock").exists()
    assert "1 empty project folder(s) removed" in proc.stderr.decode()


def test_a_folder_keeping_a_referenced_file_is_not_removed(tmp_path: Path) -> None:
    """A project folder with anything left in it (here a file Claude Code did not make) stays."""
    root = claude_root(tmp_path)
    add_session(root, "g0ne-3", NOW - 50 * DAYS, project=OTHER)
    (root / "projects" / OTHER / "notes.txt").write_text("mine")
    subprocess.run([*ctxtool_executable(), "cleanup", "--root", str(root), "--now", NOW_ARG,
                    "--apply"], capture_output=True, timeout=120, check=True)
    assert sorted(p.name for p in (root / "projects" / OTHER).iterdir()) == ["notes.txt"]


def cron_command() -> str:
    lines = [line for line in (ROOT / "scripts" / "cleanup-cron.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    return lines[0].split(None, 5)[5]


def test_two_cron_runs_on_an_unchanged_tree_log_one_summary_each_and_say_nothing(
        tmp_path: Path) -> None:
    home = _fake_home(tmp_path)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"}  # cron's environment
    first = subprocess.run(["sh", "-c", cron_command()], env=env, capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stderr.decode().startswith("ctxtool: cleanup: removed 1 session ")  # mailed
    log = home / ".local" / "state" / "ctxtool" / "cleanup.jsonl"
    size = len(log.read_bytes().splitlines())
    for _ in range(2):
        again = subprocess.run(["sh", "-c", cron_command()], env=env, capture_output=True,
                               timeout=120)
        assert (again.returncode, again.stderr, again.stdout) == (0, b"", b"")  # no mail
    lines = log.read_bytes().splitlines()
    assert len(lines) == size + 2
    runs = [json.loads(line) for line in lines[size:]]
    assert [set(run) for run in runs] == [{"time", "summary"}] * 2
    assert all(run["summary"]["removed_sessions"] == 0 for run in runs)
    for line in lines[size:]:
        records_of(line + b"\n")
    now = datetime.now(timezone.utc)
    stamps = [datetime.fromisoformat(run["time"].replace("Z", "+00:00")) for run in runs]
    assert all(abs((now - stamp).total_seconds()) < 600 for stamp in stamps)  # the run's time
    assert not list((home / ".claude").glob(".ctxtool-cleanup.lock"))


def test_the_systemd_service_leaves_no_lock_and_logs_a_summary(tmp_path: Path) -> None:
    service = (ROOT / "scripts" / "ctxtool-cleanup.service").read_text()
    exec_start = next(line.split("=", 1)[1] for line in service.splitlines()
                      if line.startswith("ExecStart="))
    home = _fake_home(tmp_path)
    args = exec_start.replace("%h", str(home)).split()
    assert args[0] == f"{home}/.local/bin/ctxtool"  # where pipx and uv tool install it
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    for _ in range(2):
        result = subprocess.run(args, env=env, capture_output=True, timeout=120)
        assert result.returncode == 0, result.stderr
    assert result.stderr == b"" and set(json.loads(result.stdout)) == {"time", "summary"}
    assert not (home / ".claude" / ".ctxtool-cleanup.lock").exists()
    assert sys.executable  # the entry point ran from this checkout's environment


def test_the_lock_file_goes_with_the_lock_and_a_replaced_file_is_not_trusted(tmp_path: Path) -> None:
    from ctxtool.errors import OperationError
    from ctxtool.storage.lock import LOCK_NAME, _same_file, folder_lock

    with folder_lock(str(tmp_path)) as path:
        try:
            with folder_lock(str(tmp_path)):
                raise AssertionError("a second holder got the lock")
        except OperationError as exc:
            assert "another cleanup is running" in str(exc)
        fd = os.open(path, os.O_RDONLY)  # a run that opened the file just before it goes
    assert not (tmp_path / LOCK_NAME).exists()
    (tmp_path / LOCK_NAME).write_text("")  # the next run's new file
    assert not _same_file(fd, path)  # so that run starts over on the new file
    os.close(fd)
