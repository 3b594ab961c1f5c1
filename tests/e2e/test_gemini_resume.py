"""The real Gemini CLI 0.61.0 resumes a session against the fake Gemini API, and what it then
sends is checked: the base the Gemini adapter's tests will build on (issue 32).

One session is written by the client (a ``read_file`` call and an answer), then resumed twice.
What is held here is what ctxtool must count and change once it reads these sessions: a resume
sends the whole stored history, and the one tool result goes to the model twice on the first
resume and three times on the next (it is stored in the call's ``toolCalls[].result``, as the
user record that answered it, and after a resume as an ``<id>_response`` record too). ctxtool
reads the session (formats/gemini/). Module-scoped: three client runs in all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, request_chars, say
from tests.e2e.gemini_cli import NOTES, GeminiCli, Run, function_responses, tool_session

SESSION = "6e3a1c50-1111-4222-8333-944455556666"


@dataclass
class Story:
    first: Run  # the first run: two requests (the call, then its result)
    resumes: list[Run]  # each resume: one request
    records: list[dict[str, Any]]  # the session file's lines after all runs
    path: Path


@pytest.fixture(scope="module")
def story(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Story:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path_factory.mktemp("gemini"), api)
        first = tool_session(api, gm, SESSION)
        path = gm.age(SESSION)
        resumes = []
        for prompt in ("Which word comes second?", "And third?"):
            api.push(say(f"Answered: {prompt}"))
            run = gm.resume(SESSION, prompt)
            assert run.returncode == 0, run.stderr[-800:]
            resumes.append(run)
        records = [json.loads(line) for line in path.read_bytes().splitlines()]
    return Story(first, resumes, records, path)


def texts(content: dict[str, Any]) -> list[str]:
    return [part["text"] for part in content["parts"] if "text" in part]


def test_a_resume_sends_the_whole_history_with_the_result_twice(story: Story) -> None:
    body = story.resumes[0].first
    roles = [content["role"] for content in body["contents"]]
    assert roles == ["user", "model", "user", "model", "user"]
    opening, call, results, answer, prompt = body["contents"]
    assert texts(opening)[-1] == "What is in notes.txt?"  # after Gemini's <session_context>
    assert texts(opening)[0].startswith("<session_context>")
    assert [p["functionCall"]["name"] for p in call["parts"] if "functionCall" in p] == ["read_file"]
    # the doubled result: both parts in one user content, the same call id and output
    assert len(results["parts"]) == 2
    responses = function_responses({"contents": [results]})
    assert [r["response"]["output"] for r in responses] == [NOTES, NOTES]
    assert len({r["id"] for r in responses}) == 1
    assert texts(answer) == ["notes.txt has 10 lines, each with alpha, beta and gamma."]
    assert texts(prompt) == ["Which word comes second?"]


def test_the_next_resume_sends_it_three_times(story: Story) -> None:
    body = story.resumes[1].first
    assert [r["response"]["output"] for r in function_responses(body)] == [NOTES] * 3
    assert texts(body["contents"][-1]) == ["And third?"]
    assert texts(body["contents"][-2]) == ["Answered: Which word comes second?"]


def test_the_first_run_sent_the_result_once(story: Story) -> None:
    assert len(story.first.turns) == 2
    assert [r["response"]["output"] for r in function_responses(story.first.turns[1])] == [NOTES]


def test_the_file_stores_the_result_twice_and_resumes_as_set_messages(story: Story) -> None:
    calls = [r for r in story.records if r.get("type") == "gemini" and r.get("toolCalls")]
    answers = [r for r in story.records if r.get("type") == "user"
               and any("functionResponse" in p for p in r.get("content") or [])]
    assert len(calls) == 1 and len(answers) == 1  # the first run's records
    assert calls[0]["toolCalls"][0]["result"] == answers[0]["content"]
    # the call's record was written twice under one id: without, then with toolCalls
    assert [r.get("id") for r in story.records].count(calls[0]["id"]) == 2
    checkpoints = [r["$set"]["messages"] for r in story.records
                   if isinstance(r.get("$set"), dict) and "messages" in r["$set"]]
    assert len(checkpoints) == 3  # at the start, then at each resume
    ids = [m["id"] for m in checkpoints[1]]
    assert f"{calls[0]['id']}_response" in ids and answers[0]["id"] in ids


def test_tokens_input_is_the_whole_prompt(story: Story) -> None:
    """The recorded ``tokens.input`` is the prompt size the API reported for that request (the
    fake reports the request's characters / 4): the usage anchor of a Gemini session."""
    replies = [r for r in story.records if r.get("type") == "gemini" and r.get("tokens")]
    last = replies[-1]["tokens"]["input"]
    assert last == request_chars(story.resumes[1].first) // 4


def test_ctxtool_reads_the_session(story: Story) -> None:
    """Detected as Gemini's, anchored on the last ``tokens.input`` (test_gemini_estimate.py
    holds the estimate against the next request)."""
    proc = run_ctxtool("estimate", "--json", str(story.path))
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["format"] == "gemini" and report["method"] == "usage"
    assert report["anchor"]["prompt_tokens"] == request_chars(story.resumes[1].first) // 4
