"""``cleanup --apply --keep-usage DIR``: each removed session's usage lines, and nothing else of
it, land in DIR where usage tools read them (Claude Code's layout, Codex's dated folders), 0600,
appended and never rewritten; a session whose usage cannot be written stays whole."""

from __future__ import annotations

import os
import signal
import shutil
import stat
from datetime import timedelta
from pathlib import Path

import orjson

from ctxtool.storage.durable import CRASH_ENV
from tests.cleanup_trees import NOW, NOW_ARG, PROJECT, add_session, iso, listing
from tests.conftest import run_ctxtool
from tests.storage.test_cleanup_codex import OLD_ID, codex_home

DAYS = timedelta(days=1)
OLD, NEW = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
USAGE = {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900,
         "output_tokens": 42, "service_tier": "standard"}


def call(sid: str, n: int, *, text: str = "secret answer") -> dict[str, object]:
    """One streamed assistant line of an API call that used tools."""
    return {"type": "assistant", "uuid": f"a{n}", "parentUuid": None, "sessionId": sid,
            "timestamp": iso(NOW - 40 * DAYS), "cwd": "/home/me/app", "version": "2.1.330",
            "gitBranch": "main", "slug": "happy-cat", "requestId": f"req_{n}",
            "message": {"id": f"msg_{n}", "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn", "usage": USAGE}}


def claude_root(tmp_path: Path) -> Path:
    root = tmp_path / "home" / ".claude"
    add_session(root, OLD, NOW - 40 * DAYS, extra=[call(OLD, 1), call(OLD, 1), call(OLD, 2)])
    add_session(root, NEW, NOW - 2 * DAYS, extra=[call(NEW, 3)])
    return root


def cleanup(tmp_path: Path, *args: str) -> tuple[int, bytes, bytes]:
    proc = run_ctxtool("cleanup", "--older-than", "30d", "--now", NOW_ARG, "--json", *args,
                       env={"HOME": str(tmp_path / "home")})
    return proc.returncode, proc.stdout, proc.stderr


def lines(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_claude_code_usage_lines_only_no_text(tmp_path: Path) -> None:
    root, usage = claude_root(tmp_path), tmp_path / "usage"
    code, _, err = cleanup(tmp_path, "--apply", "--keep-usage", str(usage))
    assert code == 0, err
    assert not (root / "projects" / PROJECT / f"{OLD}.jsonl").exists()
    kept = usage / "projects" / PROJECT / f"{OLD}.jsonl"
    files = [str(path.relative_to(usage)) for path in usage.rglob("*") if path.is_file()]
    assert files == [f"projects/{PROJECT}/{OLD}.jsonl"]  # its subagent recorded no usage
    assert [line["requestId"] for line in lines(kept)] == ["req_1", "req_1", "req_2"]
    assert lines(kept)[0] == {
        "type": "assistant", "uuid": "a1", "timestamp": iso(NOW - 40 * DAYS), "sessionId": OLD,
        "cwd": "/home/me/app", "version": "2.1.330", "requestId": "req_1",
        "message": {"id": "msg_1", "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-5", "usage": USAGE}}
    assert b"secret" not in kept.read_bytes() and b"line 0" not in kept.read_bytes()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE((usage / "projects" / PROJECT).stat().st_mode) == 0o700
    assert f"usage of 1 sessions kept in {usage}" in err.decode()


def test_a_subagent_transcript_is_kept_beside_its_session(tmp_path: Path) -> None:
    root, usage = claude_root(tmp_path), tmp_path / "usage"
    agent = root / "projects" / PROJECT / OLD / "subagents" / "agent-a1.jsonl"
    agent.write_bytes(agent.read_bytes() + orjson.dumps(call(OLD, 9)) + b"\n")
    os.utime(agent, ((NOW - 40 * DAYS).timestamp(),) * 2)
    code, _, err = cleanup(tmp_path, "--apply", "--keep-usage", str(usage))
    assert code == 0, err
    kept = usage / "projects" / PROJECT / OLD / "subagents" / "agent-a1.jsonl"
    assert [line["requestId"] for line in lines(kept)] == ["req_9"]


def test_codex_rollout_keeps_meta_context_and_token_counts(tmp_path: Path) -> None:
    codex, usage = codex_home(tmp_path), tmp_path / "usage"
    source, = (path for path in codex.rglob("rollout-*.jsonl") if OLD_ID in path.name)
    rel = source.relative_to(codex)
    original = lines(source)
    code, _, err = cleanup(tmp_path, "--codex-home", str(codex), "--apply",
                           "--keep-usage", str(usage))
    assert code == 0, err
    assert not source.exists()
    kept = lines(usage / rel)
    assert str(rel).startswith("sessions/20")  # sessions/YYYY/MM/DD, where Codex tools look
    counts = [line for line in original if line["type"] == "event_msg"
              and line["payload"]["type"] == "token_count"]
    assert [line for line in kept if line["type"] == "event_msg"] == counts
    assert {line["type"] for line in kept} == {"session_meta", "turn_context", "event_msg"}
    meta, = (line for line in kept if line["type"] == "session_meta")
    assert "base_instructions" not in meta["payload"] and meta["payload"]["id"] == OLD_ID
    assert all(line["payload"].get("model") for line in kept if line["type"] == "turn_context")


def test_a_second_cleanup_appends_only_new_lines(tmp_path: Path) -> None:
    root, usage = claude_root(tmp_path), tmp_path / "usage"
    saved = tmp_path / "saved.jsonl"
    shutil.copy(root / "projects" / PROJECT / f"{OLD}.jsonl", saved)
    assert cleanup(tmp_path, "--apply", "--keep-usage", str(usage))[0] == 0
    kept = usage / "projects" / PROJECT / f"{OLD}.jsonl"
    first = kept.read_bytes()
    kept.write_bytes(first + first.splitlines(keepends=True)[0][:30])  # a killed run's half line
    # the session comes back (restored from an archive), is used once more, and goes again
    back = add_session(root, OLD, NOW - 40 * DAYS, side=False,
                       extra=[call(OLD, 1), call(OLD, 1), call(OLD, 2), call(OLD, 4)])
    assert back.transcript.exists()
    code, _, err = cleanup(tmp_path, "--apply", "--keep-usage", str(usage))
    assert code == 0, err
    again = kept.read_bytes()
    assert again.startswith(first)  # appended to, never rewritten
    assert [orjson.loads(line)["requestId"] for line in first.splitlines()] == [
        "req_1", "req_1", "req_2"]
    tail = again[len(first):].split(b"\n", 1)[1]  # after the half line, ended by the new run
    assert [orjson.loads(line)["requestId"] for line in tail.splitlines()] == ["req_4"]


def test_usage_that_cannot_be_written_keeps_the_session(tmp_path: Path) -> None:
    root, usage = claude_root(tmp_path), tmp_path / "usage"
    (usage / "projects").mkdir(parents=True)
    (usage / "projects" / PROJECT).write_text("a file where a folder must go\n")
    before = listing(root)
    code, out, err = cleanup(tmp_path, "--apply", "--keep-usage", str(usage))
    assert code == 1
    assert listing(root) == before  # nothing of the session removed
    message, = [line for line in err.decode().splitlines() if "usage" in line and "error" in line
                or "cannot keep usage" in line]
    assert "cannot keep usage" in message and "Traceback" not in err.decode()
    failed = [r for r in map(orjson.loads, out.splitlines()) if r.get("session") == OLD]
    assert failed and all(r["action"] == "keep" and "usage" in r["reason"] for r in failed)


def test_a_dry_run_writes_no_usage(tmp_path: Path) -> None:
    claude_root(tmp_path)
    usage = tmp_path / "usage"
    assert cleanup(tmp_path, "--keep-usage", str(usage))[0] == 0
    assert not usage.exists()


def test_keep_usage_inside_the_cleaned_folder_is_refused(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    for folder in (root, root / "projects" / "usage"):
        code, _, err = cleanup(tmp_path, "--apply", "--keep-usage", str(folder))
        assert code == 2 and b"--keep-usage" in err, err
    assert cleanup(tmp_path, "--apply", "--keep-usage", "")[0] == 2


def test_killed_after_keeping_usage_the_session_is_whole_and_the_next_run_adds_nothing(
        tmp_path: Path) -> None:
    root, usage = claude_root(tmp_path), tmp_path / "usage"
    before = listing(root)
    proc = run_ctxtool("cleanup", "--older-than", "30d", "--now", NOW_ARG, "--apply",
                       "--keep-usage", str(usage),
                       env={"HOME": str(tmp_path / "home"), CRASH_ENV: "after-usage"})
    assert proc.returncode == -signal.SIGKILL
    after = {path: what for path, what in listing(root).items() if path != ".ctxtool-cleanup.lock"}
    assert after == before  # the usage is on disk, nothing of the session removed
    kept = usage / "projects" / PROJECT / f"{OLD}.jsonl"
    first = kept.read_bytes()
    assert len(first.splitlines()) == 3
    code, _, err = cleanup(tmp_path, "--apply", "--keep-usage", str(usage))
    assert code == 0, err
    assert not (root / "projects" / PROJECT / f"{OLD}.jsonl").exists()
    assert kept.read_bytes() == first  # its lines were there already: none counted twice
