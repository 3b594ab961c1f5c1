"""Issue 30's acceptance: one HOME where the real Claude Code (2.1.332), Codex CLI (0.171.0) and
OpenCode (1.18.33) each wrote an old session (made 60 days old) and a kept one, against fake APIs.

* the dry run changes no byte and no database row, and plans exactly the three old sessions;
* ``--apply --archive DIR --keep-usage DIR2`` removes exactly those (Claude Code's files, Codex's
  rollout and its thread's rows, OpenCode's rows) and keeps everything of the others;
* every database passes ``PRAGMA integrity_check``; ccusage reports the same totals over
  ``~/.claude`` plus DIR2 as over ``~/.claude`` before;
* the kept sessions go on: ``claude --resume``, ``codex exec resume --last``, ``opencode export``
  and ``opencode run --session``; the archives bring the old ones back where each agent finds
  them (``tar`` for Claude Code and Codex, ``opencode import``).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.claude_code import ClaudeCode
from tests.e2e.codex_cli import CodexCli
from tests.e2e.conftest import client_binary
from tests.e2e.fake_messages import FakeMessages
from tests.e2e.fake_messages import say as claude_says
from tests.e2e.fake_responses import FakeResponses
from tests.e2e.fake_responses import say as codex_says
from tests.e2e.opencode_cli import OpenCode, opencode_in
from tests.e2e.test_cleanup_codex_threads import age as age_rollout
from tests.e2e.test_cleanup_codex_threads import rows_naming
from tests.opencode_db_builder import keyed_rows

pytestmark = pytest.mark.e2e
AGE = timedelta(days=60)
AGE_MS = int(AGE.total_seconds() * 1000)


@dataclass
class Home:
    cc: ClaudeCode
    cx: CodexCli
    oc: OpenCode
    old: dict[str, str]  # agent -> its old session
    kept: dict[str, str]

    def env(self) -> dict[str, str]:
        """What a user's cron has: HOME, and OpenCode's XDG_DATA_HOME as OpenCode had it."""
        return {"HOME": str(self.cc.home), "XDG_DATA_HOME": self.oc.env["XDG_DATA_HOME"],
                "CODEX_HOME": "", "CLAUDE_CONFIG_DIR": ""}


def age_claude(claude: Path, session: str) -> None:
    """Every timestamp of the session's transcript 60 days back, and every file of it (its
    transcript, its folders in ~/.claude's categories) as old."""
    transcript = next(claude.glob(f"projects/*/{session}.jsonl"))
    lines = []
    for line in transcript.read_bytes().splitlines():
        entry = json.loads(line)
        if isinstance(entry.get("timestamp"), str):
            stamp = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")) - AGE
            # milliseconds, as Claude Code writes them: ccusage skips a line with microseconds
            entry["timestamp"] = stamp.astimezone(timezone.utc).isoformat(
                timespec="milliseconds").replace("+00:00", "Z")
        lines.append(json.dumps(entry, separators=(",", ":")).encode())
    transcript.write_bytes(b"\n".join(lines) + b"\n")
    when = (datetime.now(timezone.utc) - AGE).timestamp()
    for path in claude.rglob(f"*{session}*"):
        for inner in [path, *(path.rglob("*") if path.is_dir() else [])]:
            os.utime(inner, (when, when), follow_symlinks=False)


def snapshot(home: Path) -> dict[str, bytes]:
    """Every file's bytes but a WAL database's ``-shm``: SQLite's shared-memory index, whose read
    marks any reader of the database updates (read-only or not); its data is in the database
    and its ``-wal``, compared byte for byte."""
    return {str(path.relative_to(home)): path.read_bytes() for path in sorted(home.rglob("*"))
            if path.is_file() and not path.is_symlink() and "log" not in path.parts
            and not path.name.endswith("-shm")}


def databases(home: Path) -> list[Path]:
    return sorted(path for path in home.rglob("*.sqlite") if path.is_file()) + \
        sorted(path for path in home.rglob("opencode.db") if path.is_file())


def all_rows(home: Path, scratch: Path) -> dict[str, list[str]]:
    """Every row of every database, read from copies (reading one in place, even read-only,
    writes its -shm file)."""
    found = {}
    for database in databases(home):
        copy = scratch / database.name
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        for suffix in ("", "-wal"):
            if Path(f"{database}{suffix}").exists():
                shutil.copyfile(f"{database}{suffix}", f"{copy}{suffix}")
        con = sqlite3.connect(copy)
        for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            found[f"{database.name}:{table}"] = sorted(
                map(repr, con.execute(f'SELECT * FROM "{table}"').fetchall()))
        con.close()
    return found


def ccusage_daily(home: Path, config_dirs: str) -> dict[str, Any]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "TZ": "UTC", "NO_COLOR": "1",
           "CLAUDE_CONFIG_DIR": config_dirs}
    proc = subprocess.run([client_binary("ccusage"), "daily", "--json", "--offline"],
                          capture_output=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return dict(json.loads(proc.stdout))


def cleanup(home: Home, *args: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    proc = run_ctxtool("cleanup", "--older-than", "30d", "--json", *args, env=home.env())
    assert proc.returncode == 0, proc.stderr.decode()
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return lines[:-1], lines[-1]["summary"]


@pytest.fixture
def home(claude_bin: str, codex_bin: str, opencode_bin: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "machine"  # one HOME for the three clients: root/home
    with FakeMessages() as claude_api, FakeResponses() as codex_api:
        cc = ClaudeCode(claude_bin, root, claude_api)
        cx = CodexCli(codex_bin, root, codex_api)
        oc = opencode_in(opencode_bin, root, claude_api)
        old, kept = {}, {}
        for which, target in (("old", old), ("kept", kept)):
            claude_api.push(claude_says(f"claude {which} answer", usage=(1200, 80)))
            run = cc.ask(f"claude {which} question")
            assert run.returncode == 0, run.stderr
            target["claude-code"] = str(run.result["session_id"])
            codex_api.push(codex_says(f"codex {which} answer"))
            ran = cx.ask(f"codex {which} question")
            assert ran.returncode == 0, ran.stderr
            target["codex"] = ran.thread_id
            claude_api.push(claude_says(f"opencode {which} answer"))
            oc.prompt(f"opencode {which} question")
            target["opencode"] = oc.newest_session()
        age_claude(cc.home / ".claude", old["claude-code"])
        age_rollout(next(cx.codex_home.rglob(f"rollout-*{old['codex']}.jsonl")), AGE)
        oc.age([old["opencode"]], AGE_MS)
        yield Home(cc, cx, oc, old, kept)


def test_one_cleanup_for_every_agent(home: Home, tmp_path: Path) -> None:
    machine = home.cc.home
    exports = {which: home.oc.export(ident) for which, ident in
               (("old", home.old["opencode"]), ("kept", home.kept["opencode"]))}

    # the plan: exactly the three old sessions, and not a byte or a row changed
    files, rows = snapshot(machine), all_rows(machine, tmp_path / "rows")
    records, summary = cleanup(home)
    assert snapshot(machine) == files and all_rows(machine, tmp_path / "rows") == rows
    planned = {(r["agent"], r["session"]) for r in records
               if r["action"] == "delete" and r["session"]}
    assert planned == {(agent, session) for agent, session in home.old.items()}
    assert {agent: counts["sessions"] for agent, counts in summary["agents"].items()} == \
        {"claude-code": 1, "codex": 1, "opencode": 1}

    claude = machine / ".claude"
    before_usage = ccusage_daily(machine, str(claude))
    assert before_usage["totals"]["totalTokens"] > 0
    kept_rows = {"codex": rows_naming(home.cx.codex_home, home.kept["codex"]),
                 "opencode": keyed_rows(home.oc.db, home.kept["opencode"])}

    archive, usage = tmp_path / "archive", tmp_path / "usage"
    records, summary = cleanup(home, "--apply", "--archive", str(archive),
                               "--keep-usage", str(usage))
    gone = {(r["agent"], r["session"]) for r in records
            if r["action"] == "archive" and r["session"]}
    assert gone == {(agent, session) for agent, session in home.old.items()}
    assert summary["errors"] == 0

    # exactly those went, all of each
    assert not list(claude.glob(f"projects/*/{home.old['claude-code']}.jsonl"))
    assert list(claude.glob(f"projects/*/{home.kept['claude-code']}.jsonl"))
    assert not list(home.cx.codex_home.rglob(f"rollout-*{home.old['codex']}.jsonl"))
    assert not any(rows_naming(home.cx.codex_home, home.old["codex"]).values())
    assert rows_naming(home.cx.codex_home, home.kept["codex"]) == kept_rows["codex"]
    assert not any(keyed_rows(home.oc.db, home.old["opencode"]).values())
    assert keyed_rows(home.oc.db, home.kept["opencode"]) == kept_rows["opencode"]
    for database in databases(machine):
        con = sqlite3.connect(database)
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",), database
        con.close()

    # the usage totals survive
    assert ccusage_daily(machine, f"{claude},{usage}") == before_usage
    assert ccusage_daily(machine, str(claude))["totals"]["totalTokens"] < \
        before_usage["totals"]["totalTokens"]

    # the kept sessions go on
    home.cc.api.push(claude_says("claude goes on"))
    run = home.cc.resume(home.kept["claude-code"], "go on")
    assert run.returncode == 0 and "claude kept question" in json.dumps(run.first)
    home.cx.api.push(codex_says("codex goes on"))
    last = home.cx.run("resume", "--last", *home.cx.FLAGS, "-", prompt="go on")
    assert last.returncode == 0 and "codex kept question" in json.dumps(last.first)
    assert home.oc.export(home.kept["opencode"]) == exports["kept"]
    home.oc.api.push(claude_says("opencode goes on"))
    sent = home.oc.prompt("go on", home.kept["opencode"])
    assert any("opencode kept question" in json.dumps(body["messages"]) for body in sent)

    # the archives bring the old ones back where each agent finds them
    for agent in ("claude-code", "codex"):
        record = next(r for r in records if r["session"] == home.old[agent] and "restore" in r)
        assert subprocess.run(record["restore"], shell=True, check=False).returncode == 0
    home.cc.api.push(claude_says("claude is back"))
    run = home.cc.resume(home.old["claude-code"], "back?")
    assert run.returncode == 0 and "claude old question" in json.dumps(run.first)
    home.cx.api.push(codex_says("codex is back"))
    back = home.cx.resume(home.old["codex"], "back?")
    assert back.returncode == 0 and "codex old question" in json.dumps(back.first)
    imported = home.oc.import_file(archive / f"{home.old['opencode']}.json")
    assert home.old["opencode"] in imported
    assert json.loads(home.oc.export(home.old["opencode"])) == json.loads(exports["old"])
