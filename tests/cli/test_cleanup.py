"""`ctxtool cleanup` through the real entry point: plan by default, --apply, --archive, refused
roots, the default age, the lock held by another process, records valid against the schema."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from ctxtool.formats.schemas import load_schema
from tests.cleanup_trees import (NOW, NOW_ARG, PROJECT, add_session, claude_root, listing, touch,
                                 write, write_index)
from tests.conftest import ROOT, run_ctxtool

DAYS = timedelta(days=1)
VALIDATOR = jsonschema.Draft202012Validator(load_schema("cleanup-record"),
                                            format_checker=jsonschema.FormatChecker())


def records_of(stdout: bytes) -> list[dict[str, Any]]:
    """Every stdout line is one schema-valid JSON record, and nothing else is on stdout; the
    last one is the run's summary (returned without it)."""
    lines = stdout.decode().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        VALIDATOR.validate(record)
    assert records and set(records[-1]) == {"time", "summary"}
    assert all("summary" not in record for record in records[:-1])
    assert len({record["time"] for record in records}) == 1  # the run's time, in each
    return records[:-1]


def actions(records: list[dict[str, Any]]) -> dict[str, str]:
    return {record["path"]: record["action"] for record in records}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = claude_root(tmp_path)
    old = add_session(root, "old", NOW - 40 * DAYS, slug="slow-snail")
    add_session(root, "new", NOW - 3 * DAYS)
    write(root / "shell-snapshots" / "snapshot-bash-1-x.sh", "x", NOW - 45 * DAYS)
    write_index(root, [old])
    return root


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(load_schema("cleanup-record"))


def test_default_is_a_dry_run_plan(root: Path) -> None:
    before = listing(root)
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG)
    assert result.returncode == 0, result.stderr
    records = records_of(result.stdout)
    assert actions(records)[f"projects/{PROJECT}/old.jsonl"] == "delete"
    assert actions(records)[f"projects/{PROJECT}/new.jsonl"] == "keep"
    assert all(record["dry_run"] for record in records)
    assert listing(root) == before
    stderr = result.stderr.decode()
    assert stderr.startswith("ctxtool: cleanup (dry run): would remove 1 session and 1 other item")
    assert "pass --apply" in stderr and "Traceback" not in stderr


def test_apply_removes_and_records_it(root: Path) -> None:
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply")
    assert result.returncode == 0, result.stderr
    records = records_of(result.stdout)
    assert not (root / "projects" / PROJECT / "old.jsonl").exists()
    assert not (root / "plans" / "slow-snail.md").exists()
    assert (root / "projects" / PROJECT / "new.jsonl").exists()
    # a run that acts logs what changed; the sessions that merely stay are in the plan only
    assert {r["action"] for r in records} == {"delete", "update"}
    assert result.stderr.decode().startswith("ctxtool: cleanup: removed 1 session and 1 other item")


def test_archive_then_restore_with_the_documented_command(root: Path, tmp_path: Path) -> None:
    before = listing(root)
    archive = tmp_path / "archive"
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply",
                         "--archive", str(archive))
    assert result.returncode == 0, result.stderr
    records = records_of(result.stdout)
    archived = [r for r in records if r["action"] == "archive"]
    assert archived and all(r["restore"].startswith("tar -xzf ") for r in archived)
    assert not (root / "projects" / PROJECT / "old.jsonl").exists()
    if not shutil.which("tar"):  # pragma: no cover
        pytest.skip("no tar to run the documented restore command")
    for command in sorted({r["restore"] for r in archived}):
        subprocess.run(command, shell=True, check=True)
    after = listing(root)
    for rel, (content, mtime) in before.items():
        if not rel.endswith("sessions-index.json"):
            assert after[rel][0] == content, rel
    transcript = f"projects/{PROJECT}/old.jsonl"
    assert after[transcript][1] // 10**9 == before[transcript][1] // 10**9  # tar keeps mtimes


@pytest.mark.parametrize("args", [["--root", "/"], ["--root", "/", "--force"]])
def test_root_of_the_filesystem_is_refused(args: list[str]) -> None:
    result = run_ctxtool("cleanup", *args, "--apply")
    assert result.returncode == ExitCode.USAGE
    expected = "ctxtool: error: --root: refusing to clean the filesystem root /"
    assert result.stderr.decode().strip() == expected
    assert result.stdout == b""


def test_home_folder_itself_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / "projects").mkdir()
    result = run_ctxtool("cleanup", "--root", str(home), "--force", "--apply", env={"HOME": str(home)})
    assert result.returncode == ExitCode.USAGE
    assert "refusing to clean the home folder itself" in result.stderr.decode()


def test_a_folder_that_is_not_claude_needs_force(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    write(folder / "cat.jpg", b"\xff\xd8", NOW - 400 * DAYS)
    refused = run_ctxtool("cleanup", "--root", str(folder), "--now", NOW_ARG, "--apply")
    assert refused.returncode == ExitCode.USAGE
    assert "does not look like a Claude Code config folder — pass --force" in refused.stderr.decode()
    forced = run_ctxtool("cleanup", "--root", str(folder), "--now", NOW_ARG, "--apply", "--force")
    assert forced.returncode == 0 and records_of(forced.stdout) == []  # the summary only
    assert (folder / "cat.jpg").exists()  # only Claude Code's own folders are ever looked at


def test_default_age_comes_from_settings(root: Path) -> None:
    (root / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 2}))
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG)
    assert actions(records_of(result.stdout))[f"projects/{PROJECT}/new.jsonl"] == "delete"
    assert "inactive for 2d+" in result.stderr.decode()
    (root / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 0}))  # at least 1 day
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG)
    assert "inactive for 1d+" in result.stderr.decode()
    (root / "settings.json").write_text(json.dumps({"cleanupPeriodDays": "soon"}))
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG)
    assert "cleanupPeriodDays is not a number" in result.stderr.decode()
    assert actions(records_of(result.stdout))[f"projects/{PROJECT}/new.jsonl"] == "keep"  # 30 days
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--older-than", "2w")
    assert "inactive for 14d+" in result.stderr.decode()


def test_config_dir_and_store_from_the_environment(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "ctxtool-store"
    write(store / "old" / "tool-results" / "toolu_1.txt", "saved", NOW - 40 * DAYS)
    (store / ".ctxtool-store").write_text("")  # the mark of a store ctxtool made
    os.utime(store / "old" / "tool-results", (0, 0))
    os.utime(store / "old", (0, 0))
    env = {"CLAUDE_CONFIG_DIR": str(root), "CTXTOOL_STORE": str(store)}
    result = run_ctxtool("cleanup", "--now", NOW_ARG, "--apply", env=env)
    assert result.returncode == 0, result.stderr
    assert actions(records_of(result.stdout))["old"] == "delete"
    assert not (store / "old").exists() and not (root / "projects" / PROJECT / "old.jsonl").exists()


def test_no_claude_folder_at_all_is_nothing_to_do(tmp_path: Path) -> None:
    result = run_ctxtool("cleanup", "--apply", env={"HOME": str(tmp_path),
                                                    "CODEX_HOME": str(tmp_path / "no-codex")})
    assert result.returncode == 0 and records_of(result.stdout) == []
    assert f"no Claude Code folder at {tmp_path}/.claude" in result.stderr.decode()
    assert f"no Codex CLI folder at {tmp_path}/no-codex" in result.stderr.decode()


@pytest.mark.parametrize("args, message", [
    (["--include", "projects,bogus"], "--include: unknown category 'bogus'"),
    (["--exclude", "tmp"], "--exclude: unknown category 'tmp'"),
    (["--older-than", "soon"], "--older-than: not a duration: 'soon'"),
    (["--now", "yesterday"], "--now: not a time"),
])
def test_bad_options_exit_2(root: Path, args: list[str], message: str) -> None:
    result = run_ctxtool("cleanup", "--root", str(root), *args)
    assert result.returncode == ExitCode.USAGE
    assert message in result.stderr.decode() and result.stdout == b""


def test_include_and_exclude(root: Path) -> None:
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply",
                         "--include", "projects,debug", "--exclude", "projects")
    records = records_of(result.stdout)
    assert {r["category"] for r in records} == {"debug"}
    assert not (root / "debug" / "old.txt").exists()
    assert (root / "projects" / PROJECT / "old.jsonl").exists()


def test_a_failure_exits_1_and_says_why(root: Path) -> None:
    (root / "projects" / PROJECT / "sessions-index.json").write_text("{broken")
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply", "--stats")
    assert result.returncode == ExitCode.FAILED
    stderr = result.stderr.decode()
    assert f"ctxtool: warning: projects/{PROJECT}/sessions-index.json: cannot read" in stderr
    assert "1 errors" in stderr
    report = json.loads(stderr[stderr.index("{"):])
    assert report["errors"] == 1 and report["removed_sessions"] == 1
    assert not (root / "projects" / PROJECT / "old.jsonl").exists()  # the sweep went on


HOLD_LOCK = """
import sys
from ctxtool.storage.lock import folder_lock
with folder_lock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_second_cleanup_waits_for_nobody_and_changes_nothing(root: Path) -> None:
    """Another process (a real one) holds the root's lock: --apply refuses, a dry run still plans."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(root)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        before = listing(root)
        blocked = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply")
        assert blocked.returncode == ExitCode.FAILED
        assert f"another cleanup is running (pid {holder.pid})" in blocked.stderr.decode()
        assert blocked.stdout == b"" and listing(root) == before
        plan = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG)
        assert plan.returncode == 0 and records_of(plan.stdout)
    finally:
        holder.communicate(b"", timeout=30)
    done = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply")
    assert done.returncode == 0 and not (root / "projects" / PROJECT / "old.jsonl").exists()


def test_two_real_cleanups_at_once_never_both_act(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    for n in range(300):
        add_session(root, f"s{n:04d}", NOW - 40 * DAYS, side=False)
    args = [str(Path(sys.executable).with_name("ctxtool")), "cleanup", "--root", str(root),
            "--now", NOW_ARG, "--apply"]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    second = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    outs = [first.communicate(timeout=120), second.communicate(timeout=120)]
    codes = sorted([first.returncode, second.returncode])
    removed = sum(sum(1 for r in records_of(out) if r["action"] == "delete" and r["kind"] == "transcript")
                  for out, _ in outs if out)  # a run refused by the lock writes nothing
    assert removed == 300  # each session removed exactly once, by one of them
    assert not list((root / "projects" / PROJECT).glob("*.jsonl"))
    if codes == [0, 1]:  # they overlapped: the second one saw the lock
        assert any(b"another cleanup is running" in err for _, err in outs)
    else:  # the first finished before the second started: nothing left for it
        assert codes == [0, 0]


def test_clirunner_keeps_stdout_for_records_only(runner, root: Path) -> None:
    result = runner.invoke(cli, ["cleanup", "--root", str(root), "--now", NOW_ARG, "-q"])
    assert result.exit_code == 0 and result.stderr == ""
    records_of(result.stdout_bytes)


def _fake_home(tmp_path: Path) -> Path:
    """A home folder whose ~/.local/bin/ctxtool is this checkout's entry point."""
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "ctxtool").symlink_to(Path(sys.executable).with_name("ctxtool"))
    claude = home / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text("{}")
    clock = datetime.now(timezone.utc)  # these runs use the real clock: no --now in the units
    usage = {"type": "assistant", "timestamp": "2025-01-01T00:00:00Z", "requestId": "req_1",
             "message": {"id": "msg_1", "usage": {"input_tokens": 1, "output_tokens": 2}}}
    add_session(claude, "ancient", clock - 400 * DAYS, extra=[usage])
    add_session(claude, "fresh", clock - 2 * DAYS)
    return home


def test_the_crontab_line_runs_as_documented(tmp_path: Path) -> None:
    lines = [line for line in (ROOT / "scripts" / "cleanup-cron.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(lines) == 1
    fields = lines[0].split(None, 5)
    assert fields[:5] == ["17", "4", "*", "*", "*"]
    home = _fake_home(tmp_path)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}  # cron's short PATH
    subprocess.run(["sh", "-c", fields[5]], env=env, check=True, timeout=120)
    assert not (home / ".claude" / "projects" / PROJECT / "ancient.jsonl").exists()
    assert (home / "claude-archive" / "ancient.tar.gz").exists()
    assert (home / ".claude" / "projects" / PROJECT / "fresh.jsonl").exists()
    usage = home / ".local" / "share" / "ctxtool" / "usage" / "projects" / PROJECT
    assert b'"req_1"' in (usage / "ancient.jsonl").read_bytes()
    log = home / ".local" / "state" / "ctxtool" / "cleanup.jsonl"
    assert any(r["action"] == "archive" for r in records_of(log.read_bytes()))


def test_the_systemd_units_run_as_documented(tmp_path: Path) -> None:
    service = (ROOT / "scripts" / "ctxtool-cleanup.service").read_text()
    timer = (ROOT / "scripts" / "ctxtool-cleanup.timer").read_text()
    assert "OnCalendar=daily" in timer and "Persistent=true" in timer and "WantedBy=timers.target" in timer
    exec_start = next(line.split("=", 1)[1] for line in service.splitlines()
                      if line.startswith("ExecStart="))
    home = _fake_home(tmp_path)
    args = exec_start.replace("%h", str(home)).split()
    result = subprocess.run(args, env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
                            capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert (home / "claude-archive" / "ancient.tar.gz").exists()
    assert (home / ".claude" / "projects" / PROJECT / "fresh.jsonl").exists()


def test_store_problems_are_usage_errors(root: Path, tmp_path: Path) -> None:
    inside = root / "projects" / "ctxtool-store"
    inside.mkdir()
    (inside / ".ctxtool-store").write_text("")
    result = run_ctxtool("cleanup", "--root", str(root), "--store", str(inside))
    assert result.returncode == ExitCode.USAGE and "inside a Claude Code folder" in result.stderr.decode()
    missing = run_ctxtool("cleanup", "--root", str(root), "--store", str(tmp_path / "nope"))
    assert missing.returncode == ExitCode.USAGE and "--store: not a folder" in missing.stderr.decode()
    from_env = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG,
                           env={"CTXTOOL_STORE": str(tmp_path / "nope")})
    assert from_env.returncode == 0 and "$CTXTOOL_STORE" in from_env.stderr.decode()
    archive = run_ctxtool("cleanup", "--root", str(root), "--apply", "--archive", str(root / "debug" / "a"))
    assert archive.returncode == ExitCode.USAGE and "--archive:" in archive.stderr.decode()
    assert (root / "projects" / PROJECT / "old.jsonl").exists()


def test_debug_latest_link_is_left_alone(root: Path) -> None:
    (root / "debug" / "latest").symlink_to(root / "debug" / "old.txt")
    result = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply")
    assert all(r["path"] != "debug/latest" for r in records_of(result.stdout))  # kept: not logged
    assert (root / "debug" / "latest").is_symlink() and not (root / "debug" / "old.txt").exists()
    plan = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG)  # the plan says why
    record = next(r for r in records_of(plan.stdout) if r["path"] == "debug/latest")
    assert record == {**record, "kind": "symlink", "action": "keep", "session": None}


def test_cleanup_store_on_a_folder_ctxtool_did_not_create_deletes_nothing(root: Path,
                                                                          tmp_path: Path) -> None:
    """Issue 13: `--store ctxtool-src` (a copy of the package) lost cli/, core/, __init__.py;
    $CTXTOOL_STORE=~/my-ctxtool-notes planned the same. Without ctxtool's mark: nothing goes."""
    src = tmp_path / "ctxtool-src"
    for rel in ("cli/main.py", "core/x.py", "__init__.py"):
        write(src / rel, "code", NOW - 400 * DAYS)
    before = sorted(str(p.relative_to(src)) for p in src.rglob("*"))
    for force in ([], ["--force"]):
        result = run_ctxtool("cleanup", "--root", str(root), "--store", str(src), "--now",
                             NOW_ARG, "--apply", "--older-than", "1d", *force)
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert "not a store ctxtool made" in result.stderr.decode()
    from_env = run_ctxtool("cleanup", "--root", str(root), "--now", NOW_ARG, "--apply",
                           "--older-than", "1d", env={"CTXTOOL_STORE": str(src)})
    assert from_env.returncode == 0, from_env.stderr
    assert "not a store ctxtool made" in from_env.stderr.decode()
    assert not any(str(src) in line for line in from_env.stdout.decode().splitlines())
    assert sorted(str(p.relative_to(src)) for p in src.rglob("*")) == before


def test_a_store_ctxtool_creates_is_marked_and_cleaned(root: Path, tmp_path: Path) -> None:
    """persist creates the store and marks it; an existing folder with other things is not."""
    session = tmp_path / "s.jsonl"
    big = "x" * 600
    session.write_text(json.dumps({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": big}]}) + "\n")
    store = tmp_path / "fresh-store"
    result = run_ctxtool("persist", "--max-chars", "100", "--store", str(store), str(session))
    assert result.returncode == 0, result.stderr
    assert (store / ".ctxtool-store").is_file()
    busy = tmp_path / "notes"
    write(busy / "todo.txt", "mine", NOW)
    result = run_ctxtool("persist", "--max-chars", "100", "--store", str(busy), str(session))
    assert result.returncode == 0, result.stderr
    assert not (busy / ".ctxtool-store").exists()
    planned = run_ctxtool("cleanup", "--root", str(root), "--store", str(store), "--now",
                          NOW_ARG)
    assert planned.returncode == 0, planned.stderr


@pytest.mark.parametrize("option", ["--root", "--store", "--archive"])
def test_an_empty_path_is_a_usage_error(option: str, root: Path, tmp_path: Path) -> None:
    """`cleanup --root "$UNSET"` silently meant ~/.claude; now it is exit 2."""
    args = ["cleanup", "--now", NOW_ARG, "--apply", option, ""]
    if option != "--root":
        args += ["--root", str(root)]
    result = run_ctxtool(*args, env={"HOME": str(tmp_path)})
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert f"ctxtool: error: {option}: empty path".encode() in result.stderr
    assert result.stdout == b""


def test_the_live_window_is_configurable(root: Path) -> None:
    """One rule for cleanup and --in-place: sessions active within --live-window (1h, or
    $CTXTOOL_LIVE_WINDOW) are kept whatever --older-than says."""
    add_session(root, "recent", NOW - timedelta(minutes=30), side=False)
    args = ["cleanup", "--root", str(root), "--now", NOW_ARG, "--older-than", "10m"]
    kept = run_ctxtool(*args)
    assert kept.returncode == 0 and b"active within the last 1h" in kept.stderr
    assert actions(records_of(kept.stdout))[f"projects/{PROJECT}/recent.jsonl"] == "keep"
    for extra, env in [(["--live-window", "20m"], {}), ([], {"CTXTOOL_LIVE_WINDOW": "20m"})]:
        gone = run_ctxtool(*args, *extra, env=env)
        assert gone.returncode == 0, gone.stderr
        assert actions(records_of(gone.stdout))[f"projects/{PROJECT}/recent.jsonl"] == "delete"


def test_a_store_sweep_removes_only_what_ctxtool_wrote(root: Path, tmp_path: Path) -> None:
    """Issue 27 item 5: persist --store adopts an empty folder (and marks it); what someone puts
    there later - photos/a.jpg, loose.txt, a file of theirs in a session folder - survives
    `cleanup --store DIR --apply`; ctxtool's own old session folders go."""
    session = tmp_path / "s.jsonl"
    session.write_text(json.dumps({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 600}]}) + "\n")
    store = tmp_path / "adopted"
    store.mkdir()
    result = run_ctxtool("persist", "--max-chars", "100", "--store", str(store), str(session))
    assert result.returncode == 0 and (store / ".ctxtool-store").is_file(), result.stderr
    (ours,) = [p for p in store.iterdir() if p.is_dir()]  # ctxtool's session folder
    write(store / "photos" / "a.jpg", "jpeg", NOW - 400 * DAYS)
    write(store / "loose.txt", "mine", NOW - 400 * DAYS)
    write(store / "mixed" / "tool-results" / "toolu_2.txt", "saved", NOW - 400 * DAYS)
    write(store / "mixed" / "notes.md", "mine", NOW - 400 * DAYS)
    for folder in (ours, store / "photos", store / "mixed"):
        touch(folder, NOW - 400 * DAYS)
    swept = run_ctxtool("cleanup", "--root", str(root), "--store", str(store), "--now", NOW_ARG,
                        "--apply", "--older-than", "30d", "--json")
    assert swept.returncode == 0, swept.stderr
    assert not ours.exists()  # ctxtool's own: gone
    assert (store / "photos" / "a.jpg").read_text() == "jpeg"
    assert (store / "loose.txt").read_text() == "mine"
    assert (store / "mixed" / "notes.md").exists()
    assert (store / "mixed" / "tool-results" / "toolu_2.txt").exists()
    assert (store / ".ctxtool-store").is_file()
