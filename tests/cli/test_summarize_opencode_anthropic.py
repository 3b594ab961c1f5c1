"""`ctxtool summarize --llm anthropic` on OpenCode 1.18 sessions: the request OpenCode 1.18 itself
sends (its own system prompt, the serialized conversation, no tools, one call), through the real
SDK against the fake Messages API; a reply without the template's sections is refused."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest

from ctxtool.core.summarizing.model import call_max_tokens
from ctxtool.formats.opencode.prompt import SYSTEM
from ctxtool.errors import ExitCode
from tests.conftest import run_ctxtool
from tests.e2e.fake_messages import TEMPLATE_SUMMARY
from tests.fake_anthropic import FakeAnthropic, Reply, error, summary
from tests.opencode_builders import assistant, text, tool, user
from tests.opencode_sessions import HEADER


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def session(version: str) -> bytes:
    entries = [{"session": {**HEADER["session"], "version": version}},
               user(1, text("Fix the parser")), assistant(2, 1, tool("c1", "bash", "x\n" * 5000)),
               user(3, text("and the docs")), assistant(4, 3, text("Done."))]
    return b"".join(orjson.dumps(e) + b"\n" for e in entries)


def summarize(api: FakeAnthropic, version: str = "1.18.33"):
    return run_ctxtool("summarize", "--llm", "anthropic", "--max-summary-tokens", "3000",
                       input=session(version),
                       env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": api.url})


def template(note: str) -> Reply:
    body = summary().body
    return Reply(200, {**body, "content": [{"type": "text",
                                            "text": TEMPLATE_SUMMARY.format(note=note)}]})


def test_one_call_with_opencode_s_own_request(api: FakeAnthropic) -> None:
    api.push(template("from the model"))
    proc = summarize(api)
    assert proc.returncode == 0, proc.stderr.decode()
    [request] = api.messages()
    body = request.body
    assert body["system"] == SYSTEM and not body.get("tools")
    assert body["max_tokens"] == call_max_tokens(3000)
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert request.prompt.startswith("The conversation so far:\n\n<conversation>\n"
                                     "[User]: Fix the parser\n\n[Assistant tool call]: bash(")
    written = orjson.loads(proc.stdout.splitlines()[-1])
    assert written["info"]["summary"] is True
    assert written["parts"][0]["text"] == TEMPLATE_SUMMARY.format(note="from the model")


def test_a_reply_without_the_template_is_refused(api: FakeAnthropic) -> None:
    api.push(summary())  # the nine sections, not 1.18's
    proc = summarize(api)
    assert proc.returncode == ExitCode.LLM and proc.stdout == b""
    assert b"lacks the section(s) ## Objective" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 2


def test_older_sessions_keep_ctxtool_s_request(api: FakeAnthropic) -> None:
    proc = summarize(api, "1.17.0")
    assert proc.returncode == 0, proc.stderr.decode()
    assert "hand-over notes" in api.messages()[0].body["system"]


def test_a_conversation_too_long_for_one_call_says_what_to_do(api: FakeAnthropic) -> None:
    api.push(error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"))
    proc = summarize(api)
    assert proc.returncode == ExitCode.LLM and proc.stdout == b""
    assert b"does not fit one summarizer call" in proc.stderr and b"--keep-tokens" in proc.stderr
    assert len(api.messages()) == 1  # one call, as OpenCode makes
