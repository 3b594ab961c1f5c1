"""Where ``ctxtool estimate`` says Gemini CLI compresses, against where the real Gemini CLI 0.61.0
compresses (issue 32).

``~/.gemini/settings.json`` sets ``model.compressionThreshold`` to 0.005: Gemini compresses before
a request once the last prompt reaches 5,242 tokens (0.005 of 1,048,576). Its system prompt and
tools alone are about 11,600 tokens, so every reply's prompt is past it - but a chat just resumed
has no reply yet, and checks its first request against Gemini's own estimate of the history
instead. ctxtool reports both: ``compresses_next`` (the last prompt) and
``compresses_on_resume`` (Gemini's estimate of the history). A small session (one read of a
10-line file) resumes without compressing, then compresses before its second request; a large
one (a 1,500-line read) compresses before the first. Module-scoped: four client runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, call, is_turn, say
from tests.e2e.gemini_cli import GeminiCli, tool_session

pytestmark = pytest.mark.e2e

SMALL = "8b1c0000-1111-4222-8333-944455556666"
LARGE = "8b1c0001-1111-4222-8333-944455556666"
BIG = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(1, 1501))
THRESHOLD = {"model": {"compressionThreshold": 0.005}}


@dataclass
class Resumed:
    report: dict[str, Any]  # ctxtool estimate --json before the resume: its "gemini" part
    compressed_before: list[bool]  # for each of the resume's turns: compressed just before it


def compressions(api: FakeGemini, before: int) -> list[bool]:
    """For each agent turn since request ``before``: whether a compression request (the one
    asking for a ``<state_snapshot>``) came between it and the turn before."""
    seen, flags = False, []
    for request in api.requests[before:]:
        if is_turn(request.path, request.body):
            flags.append(seen)
            seen = False
        elif "<state_snapshot>" in json.dumps(request.body):
            seen = True
    return flags


def estimate(gm: GeminiCli, session: str) -> dict[str, Any]:
    proc = run_ctxtool("estimate", "--json", str(gm.age(session)),
                       env={"HOME": str(gm.home)}, cwd=gm.home)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)["gemini"]


@pytest.fixture(scope="module")
def resumed(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Resumed]:
    out = {}
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path_factory.mktemp("gemini-compress"), api,
                       settings_extra=THRESHOLD)
        tool_session(api, gm, SMALL)
        report = estimate(gm, SMALL)
        before = len(api.requests)
        api.push(call("read_file", {"file_path": "notes.txt", "start_line": 2, "end_line": 2}),
                 say("Line 2 says alpha beta gamma."))
        run = gm.resume(SMALL, "What does line 2 say?")
        assert run.returncode == 0, run.stderr[-800:]
        out["small"] = Resumed(report, compressions(api, before))

        (gm.cwd / "big.txt").write_text(BIG)
        api.push(call("read_file", {"file_path": "big.txt"}), say("A fox, 1,500 times."))
        first = gm.ask("What is in big.txt?", session_id=LARGE)
        assert first.returncode == 0, first.stderr[-800:]
        report = estimate(gm, LARGE)
        before = len(api.requests)
        api.push(say("The dog is lazy."))
        run = gm.resume(LARGE, "Which animal is lazy?")
        assert run.returncode == 0, run.stderr[-800:]
        out["large"] = Resumed(report, compressions(api, before))
    return out


def test_the_threshold_is_read_from_gemini_s_user_settings(resumed: dict[str, Resumed]) -> None:
    report = resumed["small"].report
    assert report["compression_threshold"] == 0.005
    assert report["threshold_source"].endswith("/.gemini/settings.json")
    assert report["compresses_at"] == 5_242


def test_a_small_session_resumes_uncompressed_then_compresses(resumed: dict[str, Resumed]) -> None:
    small = resumed["small"]
    assert small.report["resumed_prompt"] < 5_242 <= small.report["last_prompt"]
    assert not small.report["compresses_on_resume"] and small.report["compresses_next"]
    assert small.compressed_before == [False, True]


def test_a_large_session_compresses_before_the_first_request(resumed: dict[str, Resumed]) -> None:
    large = resumed["large"]
    assert large.report["compresses_on_resume"]
    assert large.compressed_before[0] is True
