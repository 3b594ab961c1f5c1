"""``ctxtool estimate`` on sessions the real Gemini CLI 0.61.0 wrote, against the size of the
request Gemini then sends when it resumes them (issue 32).

One session reads a file of 1,500 lines (about 11K tokens of tool output, as big as Gemini's own
system prompt and tools), then is resumed twice. Before each resume ctxtool estimates the file,
and the estimate is held against the first request the resume sends, measured as the other
Gemini e2e tests measure a request: its system instruction, tools and contents as JSON,
characters / 4 (:func:`tests.e2e.fake_gemini.request_chars`; the fake reports the same figure
as ``promptTokenCount``). The first resume sends the result twice though the last call saw it
once (an estimate of the anchor alone falls 11K short); the second sends it three times.

The project's ``.gemini/settings.json`` sets ``model.compressionThreshold``, which the report
must show as Gemini reads it (the folder is trusted by ``GEMINI_CLI_TRUST_WORKSPACE``, and found
from the session's ``projectHash`` through ``~/.gemini/projects.json``). Module-scoped: three
client runs in all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, call, request_chars, say
from tests.e2e.gemini_cli import GeminiCli

pytestmark = pytest.mark.e2e

SESSION = "7f4b2d61-2222-4333-8444-a55566667777"
BIG = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(1, 1501))
TOLERANCE = 0.15


@dataclass
class Story:
    estimates: list[dict[str, Any]]  # ctxtool estimate --json before each resume
    requests: list[int]  # the first request of each resume, characters / 4
    anchors: list[int]  # the last tokens.input recorded before each resume
    gm: GeminiCli
    path: Path


def ctxtool_env(gm: GeminiCli) -> dict[str, str]:
    return {"HOME": str(gm.home), "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def last_input(path: Path) -> int:
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    return [r["tokens"]["input"] for r in records if r.get("type") == "gemini" and r.get("tokens")][-1]


@pytest.fixture(scope="module")
def story(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Story:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path_factory.mktemp("gemini"), api)
        (gm.cwd / ".gemini").mkdir()
        (gm.cwd / ".gemini" / "settings.json").write_text(
            '{\n  // the project compresses sooner\n  "model": {"compressionThreshold": 0.9}\n}\n')
        (gm.cwd / "big.txt").write_text(BIG)
        api.push(call("read_file", {"file_path": "big.txt"}, text="Let me read it."),
                 say("big.txt has 1,500 lines about a fox."))
        first = gm.ask("What is in big.txt?", session_id=SESSION)
        assert first.returncode == 0, first.stderr[-800:]
        path = gm.age(SESSION)
        estimates, requests, anchors = [], [], []
        for prompt in ("Which animal is lazy?", "And which one is quick?"):
            proc = run_ctxtool("estimate", "--json", str(path), env=ctxtool_env(gm),
                               cwd=gm.home)  # not the project: found by its hash
            assert proc.returncode == 0, proc.stderr.decode()
            estimates.append(json.loads(proc.stdout))
            anchors.append(last_input(path))
            api.push(say(f"Answered: {prompt}"))
            run = gm.resume(SESSION, prompt)
            assert run.returncode == 0, run.stderr[-800:]
            requests.append(request_chars(run.first) // 4)
    return Story(estimates, requests, anchors, gm, path)


@pytest.mark.parametrize("resume", [0, 1], ids=["first-resume", "second-resume"])
def test_the_estimate_is_within_15_percent_of_the_next_request(story: Story,
                                                               resume: int) -> None:
    estimated = story.estimates[resume]["context_tokens"]
    sent = story.requests[resume]
    assert abs(estimated - sent) <= TOLERANCE * sent, (estimated, sent)


def test_the_anchor_alone_would_miss_the_doubled_result(story: Story) -> None:
    """The first resume sends the result once more than the last call saw: the estimate counts
    that copy after the anchor (an estimate of the anchor alone is more than 15% short)."""
    report = story.estimates[0]
    assert report["method"] == "usage"
    assert report["anchor"]["prompt_tokens"] == story.anchors[0]
    assert story.requests[0] - story.anchors[0] > TOLERANCE * story.requests[0]
    assert report["anchor"]["estimated_after"] > len(BIG) // 4 * 0.9


def test_the_report_has_gemini_s_window_and_the_project_s_threshold(story: Story) -> None:
    report = story.estimates[1]
    assert report["format"] == "gemini"
    assert report["thresholds"]["window"] == 1_048_576
    gemini = report["gemini"]
    assert gemini["compression_threshold"] == 0.9
    assert gemini["threshold_source"] == str(story.gm.cwd / ".gemini" / "settings.json")
    assert gemini["compresses_at"] == int(0.9 * 1_048_576)
    assert gemini["last_prompt"] == story.anchors[1]
    assert not gemini["compresses_next"] and not gemini["compresses_on_resume"]


def test_an_untrusted_project_s_settings_are_not_read(story: Story) -> None:
    env = {**ctxtool_env(story.gm), "GEMINI_CLI_TRUST_WORKSPACE": "false"}
    proc = run_ctxtool("estimate", "--json", str(story.path), env=env, cwd=story.gm.home)
    gemini = json.loads(proc.stdout)["gemini"]
    assert (gemini["compression_threshold"], gemini["threshold_source"]) == (0.5, "default")
