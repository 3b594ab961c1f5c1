"""A project's own ``general.sessionRetention``, judged by the real Gemini CLI 0.61.0: the client
cleans, when it starts, the sessions of the project it starts in by that project's merged
settings (its ``.gemini/settings.json`` over the user's). ``ctxtool cleanup`` plans, for each
project, what the client run there then removes. Two client runs (one per project) against the
fake Gemini API in a fresh HOME.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, say
from tests.e2e.gemini_cli import DAY, GeminiCli, backdated
from tests.gemini_builders import FIXTURES

pytestmark = pytest.mark.e2e

FIXTURE_ID = b"5e551011-0000-4000-8000-000000000001"
# project -> (session id, days since its last activity)
SESSIONS = {"proj": [("1a1a1a1a-1111-4222-8333-944455556666", 10),
                     ("2b2b2b2b-1111-4222-8333-944455556666", 40),
                     ("3c3c3c3c-1111-4222-8333-944455556666", 2)],
            "other": [("4d4d4d4d-1111-4222-8333-944455556666", 10),
                      ("5e5e5e5e-1111-4222-8333-944455556666", 40)]}


def place(gemini: Path, project: str, folder: Path, session: str, days: int) -> Path:
    """The real client's new.jsonl as ``session`` of ``project``, ``days`` old inside and out."""
    then = time.time() - days * DAY
    data = backdated((FIXTURES / "new.jsonl").read_bytes().replace(FIXTURE_ID, session.encode()),
                     then)
    minute = time.strftime("%Y-%m-%dT%H-%M", time.gmtime(then))
    path = gemini / "tmp" / project / "chats" / f"session-{minute}-{session[:8]}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    (gemini / "tmp" / project / ".project_root").write_text(str(folder))
    path.write_bytes(data)
    os.utime(path, (then, then))
    return path


def test_cleanup_plans_what_the_client_removes_by_each_projects_own_retention(
        gemini_bin: str, tmp_path: Path) -> None:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path, api)  # the user's retention: the default, 30d
        gemini = gm.home / ".gemini"
        folders = {"proj": gm.cwd, "other": gm.cwd.parent / "other"}
        folders["other"].mkdir()
        own = {"general": {"sessionRetention": {"maxAge": "7d"}}}
        (gm.cwd / ".gemini").mkdir()
        (gm.cwd / ".gemini" / "settings.json").write_text(json.dumps(own))
        paths = {session: place(gemini, project, folders[project], session, days)
                 for project, sessions in SESSIONS.items() for session, days in sessions}
        env = {"HOME": str(gm.home), "CTXTOOL_CACHE_DIR": "off",
               "GEMINI_CLI_TRUST_WORKSPACE": "true",
               "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(tmp_path / "no-system.json")}
        plan = run_ctxtool("cleanup", "--agent", "gemini", "--json", env=env)
        assert plan.returncode == 0, plan.stderr
        records = [json.loads(line) for line in plan.stdout.splitlines()]
        planned = {r["session"] for r in records if r.get("action") == "delete"}
        assert b"(gemini: 30d+; tmp/proj: 7d+)" in plan.stderr
        for n, folder in enumerate(folders.values()):  # the client cleans where it starts
            api.push(say("Hello."))
            gm.cwd = folder
            run = gm.ask("Say hello", session_id=f"9f9f9f9f-1111-4222-8333-94445555000{n}")
            assert run.returncode == 0, run.stderr[-800:]
        removed = {session for session, path in paths.items() if not path.exists()}
    assert removed == planned == {"1a1a1a1a-1111-4222-8333-944455556666",
                                  "2b2b2b2b-1111-4222-8333-944455556666",
                                  "5e5e5e5e-1111-4222-8333-944455556666"}
