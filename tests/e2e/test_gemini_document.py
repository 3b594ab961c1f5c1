"""An older Gemini CLI session - one indented JSON document, ``session-*.json`` - read and
rewritten by ctxtool, judged by the real Gemini CLI 0.61.0 resuming it.

The client writes a session (two 55 KB reads of a file); its conversation is then written as the
document older clients wrote, indented, in place of the JSONL file. ``persist --in-place``
rewrites that document on one line, both results masked as Gemini masks them; the client
resumes it and sends the masks, where a resume of the indented original sends each result
whole. Two client runs after the first.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from ctxtool.formats.gemini.records import replay
from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, say
from tests.e2e.gemini_cli import GeminiCli, OLD_MINUTE, function_responses, read_in_parts

pytestmark = pytest.mark.e2e

SESSION = "7a7a7a7a-1111-4222-8333-944455556666"
MASK = "<tool_output_masked>"
ROW = "consectetur adipiscing elit sed do eiusmod "  # 55 KB per part of 1,000 rows


def test_the_client_resumes_the_document_persist_rewrote(gemini_bin: str, tmp_path) -> None:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path, api)
        read_in_parts(api, gm, SESSION, parts=2, rows=1000, row=ROW)
        jsonl = gm.session_path(SESSION)
        conversation = replay(json.loads(line) for line in jsonl.open("rb"))
        document = json.dumps({**conversation.metadata, "messages": conversation.records()},
                              indent=2).encode()
        for path in gm.chats.glob(f"session-*-{SESSION[:8]}.jsonl"):
            path.unlink()
        legacy = gm.chats / f"session-{OLD_MINUTE}-{SESSION[:8]}.json"

        def resume(data: bytes) -> list[str]:
            for path in gm.chats.glob(f"session-*-{SESSION[:8]}.json*"):
                path.unlink()  # the client converted the last one to .jsonl
            legacy.write_bytes(data)
            os.utime(legacy, (time.time() - 7200, time.time() - 7200))
            api.push(say("Resumed."))
            run = gm.resume(SESSION, "What was in the first part?")
            assert run.returncode == 0, run.stderr[-800:]
            return [r["response"]["output"] for r in function_responses(run.first)]

        whole = resume(document)
        legacy.write_bytes(document)
        os.utime(legacy, (time.time() - 7200, time.time() - 7200))
        persisted = run_ctxtool("persist", "--in-place", str(legacy),
                                env={**os.environ, "HOME": str(gm.home)})
        assert persisted.returncode == 0, persisted.stderr
        rewritten = legacy.read_bytes()
        masked = resume(rewritten)
    assert rewritten.count(b"\n") == 1 and len(rewritten) < len(document) // 10
    assert len(whole) == len(masked) >= 2
    assert all(MASK not in out and len(out) > 50_000 for out in whole)
    assert all(out.startswith(MASK) and len(out) < 5_000 for out in masked)
