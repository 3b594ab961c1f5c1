"""Robustness: `summarize --llm anthropic` against hostile or broken servers, through the real
SDK and a fake Messages API on 127.0.0.1: malformed replies are one line and exit 5 (or the
input passed through with --passthrough-on-error), a server trickling its reply cannot outlast
the total deadline, and nothing key-shaped a server sends back is printed."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from ctxtool.llm.reply import redact
from tests.conftest import run_ctxtool
from tests.fake_anthropic import FakeAnthropic, Reply, error, raw_reply
from tests.summarize_builder import coding_session

KEY = "sk-ant-api03-Zx8Qw2Lm4Np6Rt0Vb1Cd3Ef5Gh7Jk9-SECRETKEY"
SESSION = coding_session().jsonl()


def message(**fields: object) -> Reply:
    return Reply(200, {"id": "msg_x", "type": "message", "role": "assistant", "model": "m",
                       "usage": {"input_tokens": 1, "output_tokens": 1}, **fields})


MALFORMED = {
    "invalid JSON": raw_reply(b'{"content": [{"type": "text", "text": "unterminated'),
    "HTML page": raw_reply(b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>",
                           content_type="text/html"),
    "empty body": raw_reply(b""),
    "whitespace body": raw_reply(b"  \r\n"),
    "JSON array": raw_reply(b"[1, 2, 3]"),
    "JSON null": raw_reply(b"null"),
    "no content": message(),
    "content null": message(content=None),
    "content a string": message(content="the summary"),
    "text null": message(content=[{"type": "text", "text": None}]),
    "text a number": message(content=[{"type": "text", "text": 42}]),
    "block not an object": message(content=["text"]),
    "error object with 200": Reply(200, {"type": "error", "error": {"type": "api_error",
                                                                   "message": "upstream died"}}),
    "binary garbage": raw_reply(bytes(range(256)), content_type="application/octet-stream"),
}


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def env_for(api: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_reply_is_one_line_and_exit_5(runner, api: FakeAnthropic, case: str) -> None:
    api.push(MALFORMED[case])
    result = runner.invoke(cli, ["summarize", "--llm", "anthropic"], input=SESSION,
                           env=env_for(api))
    assert result.exit_code == ExitCode.LLM, (result.stderr, result.exception)
    assert result.stdout_bytes == b""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ctxtool: error: "), result.stderr
    assert "Anthropic API" in lines[0]
    # --passthrough-on-error: the input unchanged, exit 0, one warning
    api.push(MALFORMED[case])
    passed = runner.invoke(cli, ["summarize", "--llm", "anthropic", "--passthrough-on-error"],
                           input=SESSION, env=env_for(api))
    assert passed.exit_code == 0, passed.stderr
    assert passed.stdout_bytes == SESSION
    assert "passed through unchanged" in passed.stderr and "Traceback" not in passed.stderr


@pytest.mark.parametrize("case", ["invalid JSON", "no content"])
def test_count_tokens_maps_malformed_replies_too(runner, api: FakeAnthropic, case: str) -> None:
    api.push(MALFORMED[case])
    result = runner.invoke(cli, ["estimate", "--exact"], input=SESSION, env=env_for(api))
    assert result.exit_code == ExitCode.LLM, (result.stderr, result.exception)
    assert result.stderr.startswith("ctxtool: error: ") and result.stderr.count("\n") == 1


DEADLINE = 3.0  # --timeout in the deadline tests
SLACK = 5.0  # from the first request to the end of the process, past the deadline (at load 10
# on two cores a 401 alone takes up to 3 s from its request to the exit)


def _ends_by_the_deadline(api: FakeAnthropic, words: bytes, *args: str,
                          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ctxtool; it must exit 5 with one line holding ``words``, nothing on stdout, within
    DEADLINE (+ SLACK) of its first request (start-up, the SDK's import, is not the call's)."""
    proc = run_ctxtool(*args, input=SESSION, env=env or env_for(api), timeout=120)
    ended = time.monotonic()
    assert proc.returncode == ExitCode.LLM, proc.stderr
    assert proc.stdout == b"" and b"Traceback" not in proc.stderr
    assert words in proc.stderr and proc.stderr.count(b"\n") == 1, proc.stderr
    assert ended - api.requests[0].received < DEADLINE + SLACK
    return proc


@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers-too"])
def test_a_trickling_server_cannot_outlast_the_deadline(api: FakeAnthropic, headers: bool) -> None:
    """Headers (or not even those) then one byte a second: the whole call, its retries
    included, ends --timeout seconds after it started (a read timeout alone would wait the
    ~450 s the body needs; a deadline per attempt, 3 attempts)."""
    body = b'{"content": [{"type": "text", "text": "' + b"x" * 400 + b'"}]}'
    api.push(error(500, "api_error", "try again"), raw_reply(body, drip=1.0, drip_headers=headers),
             raw_reply(body, drip=1.0, drip_headers=headers))
    _ends_by_the_deadline(api, b"3 s deadline (--timeout)", "summarize", "--llm", "anthropic",
                          "--timeout", str(DEADLINE))
    assert len(api.messages()) == 2  # the 500 was retried; the trickle used up the time


@pytest.mark.parametrize("asked", [{"retry-after": "999999"}, {"retry-after-ms": "999999000"},
                                   {"retry-after": "Fri, 31 Dec 2100 23:59:59 GMT"}],
                         ids=["seconds", "ms", "date"])
def test_a_retry_after_past_the_deadline_ends_the_call_at_once(api: FakeAnthropic,
                                                              asked: dict[str, str]) -> None:
    """The SDK would sleep as long as a 429 asks (eleven days here): the wait is not started."""
    api.push(Reply(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                    "message": "slow down"}}, asked))
    proc = _ends_by_the_deadline(api, b"error 429: slow down; it asked to wait", "summarize",
                                 "--llm", "anthropic", "--timeout", "10")
    assert b"past the 10 s deadline (--timeout)" in proc.stderr
    assert len(api.messages()) == 1


def test_a_retry_after_within_the_deadline_is_honoured(api: FakeAnthropic) -> None:
    api.push(Reply(429, {"type": "error", "error": {"type": "rate_limit_error",
                                                    "message": "slow down"}},
                   {"retry-after": "1"}))
    start = time.monotonic()
    proc = run_ctxtool("summarize", "--llm", "anthropic", "--timeout", "10", "--text",
                       input=SESSION, env=env_for(api), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"Primary Request and Intent" in proc.stdout
    assert len(api.messages()) == 2 and time.monotonic() - start >= 1.0


def test_the_default_timeout_of_estimate_exact_is_one_deadline(api: FakeAnthropic) -> None:
    """count_tokens keeps to $CTXTOOL_LLM_TIMEOUT in all, however the server trickles."""
    api.push(*[raw_reply(b'{"input_tokens": 12345' + b" " * 400 + b"}", drip=1.0)] * 3)
    _ends_by_the_deadline(api, b"count_tokens failed: the Anthropic API timed out", "estimate",
                          "--exact", env={**env_for(api), "CTXTOOL_LLM_TIMEOUT": str(DEADLINE)})
    assert len(api.requests) == 1


ALTERED = [KEY, KEY[:-1] + "X", "X" + KEY[1:], KEY[7:], KEY.upper(), KEY[:30],
           f"Bearer {KEY[3:]}", "sk-ant-api03-" + "A" * 40, "x-api-key: " + KEY[::-1]]


@pytest.mark.parametrize("status", [401, 400, 500])
def test_nothing_key_shaped_a_server_echoes_is_printed(runner, api: FakeAnthropic,
                                                       status: int) -> None:
    echoed = "invalid key: " + " / ".join(ALTERED)
    api.push(*[error(status, "authentication_error", echoed)] * 3)
    result = runner.invoke(cli, ["summarize", "--llm", "anthropic"], input=SESSION,
                           env=env_for(api))
    assert result.exit_code == ExitCode.LLM, result.stderr
    assert "[redacted]" in result.stderr
    for secret in ALTERED:
        assert secret.split()[-1][:16] not in result.stderr, secret


def test_redact_keeps_ordinary_text() -> None:
    env = {"ANTHROPIC_API_KEY": KEY}
    text = "model claude-haiku-4-5 not found (request req_011CSHoEeqs5C35K2U)"
    assert redact(text, env) == text
    assert redact(f"echo {KEY[5:-5]} end", env) == "echo [redacted] end"
    assert redact("token: " + "a1b2" * 12, {}) == "token: [redacted]"
