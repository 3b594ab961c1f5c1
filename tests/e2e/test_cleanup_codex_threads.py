"""The real Codex CLI (0.171.0) against cleanup: removing an old session removes what
``codex delete`` removes of a thread (compared table by table on the databases Codex wrote),
archived sessions included; the kept session still resumes (``codex exec resume --last``); the
archive's restore command brings a session back where Codex resumes it by id."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import orjson
import pytest

from tests.conftest import run_ctxtool
from tests.e2e.codex_cli import CodexCli
from tests.e2e.fake_responses import FakeResponses, say

pytestmark = pytest.mark.e2e
AGE = timedelta(days=60)


def rows_naming(codex_home: Path, thread: str) -> dict[str, int]:
    """"<database>:<table>" -> rows with a value equal to ``thread``, in every database."""
    found = {}
    for database in sorted(codex_home.glob("*.sqlite")):
        con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        tables = [row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            rows = con.execute(f'SELECT * FROM "{table}"').fetchall()
            found[f"{database.name}:{table}"] = sum(thread in row for row in rows)
        con.close()
    return found


def age(path: Path, by: timedelta) -> None:
    """Move every timestamp of a rollout (and its file time) ``by`` into the past."""
    lines = []
    for line in path.read_bytes().splitlines():
        entry = orjson.loads(line)
        stamp = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")) - by
        entry["timestamp"] = stamp.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
        lines.append(orjson.dumps(entry))
    path.write_bytes(b"\n".join(lines) + b"\n")
    when = (datetime.now(timezone.utc) - by).timestamp()
    os.utime(path, (when, when))


def codex(cx: CodexCli, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cx.binary, *args], env=cx.env(), cwd=cx.cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def test_cleanup_removes_what_codex_delete_removes_and_restores(codex_bin: str,
                                                                 tmp_path: Path) -> None:
    with FakeResponses() as api:
        cx = CodexCli(codex_bin, tmp_path, api)
        ids = {}
        for name in ("old", "archived", "kept", "twin"):
            api.push(say(f"answer {name}"))
            run = cx.ask(f"question {name}")
            assert run.returncode == 0, run.stderr
            ids[name] = run.thread_id
        assert codex(cx, "archive", ids["archived"]).returncode == 0
        for name in ("old", "archived"):
            age(next(cx.codex_home.rglob(f"rollout-*{ids[name]}.jsonl")), AGE)
        before = {name: rows_naming(cx.codex_home, thread) for name, thread in ids.items()}
        assert before["old"]["state_5.sqlite:threads"] == 1
        assert before["old"]["thread_history_1.sqlite:thread_items"] >= 2

        # the twin goes the way Codex deletes a thread: the reference
        assert codex(cx, "delete", "--force", ids["twin"]).returncode == 0
        by_codex = rows_naming(cx.codex_home, ids["twin"])

        archive = tmp_path / "archive"
        proc = run_ctxtool("cleanup", "--agent", "codex", "--older-than", "30d", "--apply",
                           "--archive", str(archive), "--json",
                           env={"HOME": str(cx.home), "CODEX_HOME": str(cx.codex_home)})
        assert proc.returncode == 0, proc.stderr
        records = [orjson.loads(line) for line in proc.stdout.splitlines()]
        gone = {r["session"] for r in records if r.get("action") == "archive"}
        assert gone == {ids["old"], ids["archived"]}

        for name in ("old", "archived"):
            assert not list(cx.codex_home.rglob(f"rollout-*{ids[name]}.jsonl"))
            after = rows_naming(cx.codex_home, ids[name])
            for table, count in before[name].items():  # gone exactly where codex delete's went
                if before["twin"].get(table):
                    assert (after[table] == 0) == (by_codex[table] == 0), (name, table)
            assert after["state_5.sqlite:threads"] == 0
        assert rows_naming(cx.codex_home, ids["kept"]) == before["kept"]
        for database in cx.codex_home.glob("*.sqlite"):
            con = sqlite3.connect(database)
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",), database
            con.close()

        # the kept session is still Codex's last one, and resumes
        api.push(say("resumed the kept one"))
        last = cx.run("resume", "--last", *cx.FLAGS, "-", prompt="go on")
        assert last.returncode == 0, last.stderr
        assert "question kept" in orjson.dumps(last.first).decode()

        # the archive's own restore command brings the old one back where Codex resumes it
        record = next(r for r in records if r["session"] == ids["old"] and "restore" in r)
        assert subprocess.run(record["restore"], shell=True, check=False).returncode == 0
        api.push(say("resumed the restored one"))
        back = cx.resume(ids["old"], "are you back?")
        assert back.returncode == 0, back.stderr
        assert "question old" in orjson.dumps(back.first).decode()
        assert rows_naming(cx.codex_home, ids["old"])["state_5.sqlite:threads"] == 1


@pytest.mark.parametrize("crash", ["codex-commit-state_5.sqlite", "codex-index"])
def test_killed_mid_removal_codex_still_resumes_the_session(codex_bin: str, tmp_path: Path,
                                                            crash: str) -> None:
    """Killed with the thread's history rows gone but its index row kept, or with every row
    gone but the rollout: Codex resumes the session (it rebuilds what it lacks from the
    rollout), and the next cleanup removes it whole."""
    from ctxtool.storage.durable import CRASH_ENV

    with FakeResponses() as api:
        cx = CodexCli(codex_bin, tmp_path, api)
        api.push(say("answer old"))
        old = cx.ask("question old").thread_id
        age(next(cx.codex_home.rglob(f"rollout-*{old}.jsonl")), AGE)
        env = {"HOME": str(cx.home), "CODEX_HOME": str(cx.codex_home)}
        args = ("cleanup", "--agent", "codex", "--older-than", "30d", "--apply")
        proc = run_ctxtool(*args, env={**env, CRASH_ENV: crash})
        assert proc.returncode == -9
        api.push(say("still here"))
        back = cx.resume(old, "still there?")
        assert back.returncode == 0, back.stderr
        assert "question old" in orjson.dumps(back.first).decode()
        age(next(cx.codex_home.rglob(f"rollout-*{old}.jsonl")), AGE)  # the resume made it new
        assert run_ctxtool(*args, env=env).returncode == 0
        assert not list(cx.codex_home.rglob(f"rollout-*{old}.jsonl"))
        assert rows_naming(cx.codex_home, old)["state_5.sqlite:threads"] == 0
