"""``cleanup --keep-usage`` on a session the real Gemini CLI 0.61.0 wrote: what is kept of each
model call is what the API reported for it (the fake Gemini API's ``usageMetadata``), one line
per call, and no text. One client run (a tool call, then the answer: two calls).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, request_chars
from tests.e2e.gemini_cli import NOTES, GeminiCli, age_files, tool_session

pytestmark = pytest.mark.e2e

SESSION = "6f6f6f6f-1111-4222-8333-944455556666"


def test_keep_usage_keeps_what_the_api_reported_for_each_call(gemini_bin: str,
                                                              tmp_path: Path) -> None:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path, api)
        tool_session(api, gm, SESSION)
        reported = [request_chars(body) // 4 for body in api.turns()]
    assert len(reported) == 2
    age_files(gm, SESSION, 60)
    usage = tmp_path / "usage"
    env = {"HOME": str(gm.home), "CTXTOOL_CACHE_DIR": "off",
           "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(tmp_path / "no-system.json")}
    result = run_ctxtool("cleanup", "--agent", "gemini", "--apply", "--keep-usage", str(usage),
                         env=env)
    assert result.returncode == 0, result.stderr
    assert not list(gm.chats.glob(f"session-*-{SESSION[:8]}.jsonl"))
    kept = (usage / "gemini" / f"{SESSION}.jsonl").read_bytes()
    lines = [json.loads(line) for line in kept.splitlines()]
    assert [line["tokens"]["input"] for line in lines] == reported
    assert {(line["sessionId"], line["directory"], line["type"]) for line in lines} == {
        (SESSION, str(gm.cwd), "gemini")}
    assert NOTES.splitlines()[0].encode() not in kept and b"notes.txt" not in kept
