"""`ctxtool summarize --llm anthropic` through the real SDK against the fake Messages API
(tests/fake_anthropic.py) on 127.0.0.1, including every fault the backend must survive."""

from __future__ import annotations

import json
from collections.abc import Iterator

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.core.summarizing.model import call_max_tokens
from ctxtool.core.summarizing.prompt import HEADINGS, continuation_text
from ctxtool.errors import ExitCode, LLMError
from ctxtool.llm.anthropic import count_tokens
from tests.conftest import run_ctxtool
from tests.fake_anthropic import FakeAnthropic, Reply, error, overloaded, summary
from tests.summarize_builder import Session, coding_session, text_block

KEY = "sk-ant-test-0123456789-SECRET"


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def env_for(api: FakeAnthropic, **extra: str) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url, **extra}


def invoke(runner, api: FakeAnthropic, *args: str, data: bytes | None = None, **env: str):
    return runner.invoke(cli, ["summarize", "--llm", "anthropic", *args],
                         input=data if data is not None else coding_session().jsonl(),
                         env=env_for(api, **env))


def summary_of(stdout: bytes) -> str:
    return orjson.loads(stdout.splitlines()[-1])["message"]["content"]


def test_prompt_model_and_max_tokens(runner, api: FakeAnthropic) -> None:
    result = invoke(runner, api, "--model", "claude-test-1", "--max-summary-tokens", "5000",
                    "--instructions", "focus on the pager tests")
    assert result.exit_code == 0, result.stderr
    [request] = api.messages()
    body = request.body
    assert body["model"] == "claude-test-1" and body["max_tokens"] == call_max_tokens(5000)
    assert "hand-over notes" in body["system"]
    prompt = request.prompt
    assert all(f"{n}. {title}:" in prompt for n, title in enumerate(HEADINGS, start=1))
    assert "<instructions>\nfocus on the pager tests\n</instructions>" in prompt
    assert "Fix the off-by-one in app/pager.py" in prompt and "[Bash error]" in prompt
    assert KEY in (request.headers.get("x-api-key") or request.headers.get("authorization") or "")
    text = summary_of(result.stdout_bytes)
    assert "fake summary for pending tasks" in text and "scratchpad" not in text
    assert "tokens by anthropic (claude-test-1), 1 call, 1 part" in result.stderr
    assert KEY not in result.stderr and KEY not in result.stdout


def test_auto_picks_anthropic_when_a_key_is_set(runner, api: FakeAnthropic) -> None:
    result = runner.invoke(cli, ["summarize"], input=coding_session().jsonl(), env=env_for(api))
    assert result.exit_code == 0 and len(api.messages()) == 1
    assert "tokens by anthropic (claude-haiku-4-5)" in result.stderr


def test_rate_limit_then_success_is_retried_by_the_sdk(runner, api: FakeAnthropic) -> None:
    api.push(error(429, "rate_limit_error", "Number of requests has exceeded your rate limit"))
    result = invoke(runner, api)
    assert result.exit_code == 0, result.stderr
    assert len(api.messages()) == 2
    assert api.messages()[1].headers.get("x-stainless-retry-count") == "1"


def test_overloaded_three_times_opens_the_breaker(api: FakeAnthropic) -> None:
    api.push(overloaded(), overloaded(), overloaded(), summary())
    proc = run_ctxtool("summarize", "--llm", "anthropic", input=coding_session().jsonl(),
                       env=env_for(api))
    assert proc.returncode == ExitCode.LLM and proc.stdout == b""
    lines = proc.stderr.decode().strip().splitlines()
    assert lines == ["ctxtool: error: gave up after 3 attempts in a row: Anthropic API error 529: "
                     "Overloaded — try again later; --passthrough-on-error keeps pipelines going"]
    assert len(api.messages()) == 3  # the fourth reply was never asked for


def test_passthrough_on_error_writes_the_input_unchanged(runner, api: FakeAnthropic) -> None:
    api.push(overloaded(), overloaded(), overloaded())
    data = coding_session().jsonl()
    result = invoke(runner, api, "--passthrough-on-error", data=data)
    assert result.exit_code == 0 and result.stdout_bytes == data
    assert "input passed through unchanged (--passthrough-on-error)" in result.stderr


def test_server_error_then_success(runner, api: FakeAnthropic) -> None:
    api.push(error(500, "api_error", "Internal server error"))
    result = invoke(runner, api)
    assert result.exit_code == 0 and len(api.messages()) == 2


def test_server_errors_every_time_fail_with_exit_5(runner, api: FakeAnthropic) -> None:
    api.push(*[error(500, "api_error", "Internal server error")] * 3)
    result = invoke(runner, api)
    assert result.exit_code == ExitCode.LLM and result.stdout == ""
    assert "gave up after 3 attempts in a row: Anthropic API error 500" in result.stderr


def test_a_slow_reply_past_the_deadline_ends_the_call(runner, api: FakeAnthropic) -> None:
    """--timeout is the whole call's: a reply that uses it up is not tried again."""
    api.push(summary(delay=3.0))
    result = invoke(runner, api, "--timeout", "0.5")
    assert result.exit_code == ExitCode.LLM
    assert len(api.messages()) == 1


def test_timeouts_every_time_fail_with_exit_5(runner, api: FakeAnthropic) -> None:
    api.push(*[summary(delay=2.0)] * 3)
    result = invoke(runner, api, CTXTOOL_LLM_TIMEOUT="0.3")
    assert result.exit_code == ExitCode.LLM
    assert ("the Anthropic API timed out: no complete reply within the 0.3 s deadline "
            "(--timeout), 1 attempt(s)") in result.stderr


def test_prompt_too_long_splits_the_conversation_into_parts(runner, api: FakeAnthropic) -> None:
    s = Session()
    for n in range(30):
        s.user(f"prompt {n}: " + "please look at this " * 100)
        s.assistant(text_block(f"answer {n}: " + "looked at it " * 100))

    def judge(body: dict) -> Reply:
        size = len(json.dumps(body))
        if size > 40_000:
            return error(400, "invalid_request_error",
                         f"prompt is too long: {size // 4} tokens > 10000 maximum")
        return summary()
    api.responder = judge
    result = invoke(runner, api, "--stats", data=s.jsonl())
    assert result.exit_code == 0, result.stderr
    sizes = [len(json.dumps(r.body)) for r in api.messages()]
    assert sizes[0] > 40_000 and all(size <= 40_000 for size in sizes[1:])
    report = json.loads(result.stderr[result.stderr.index("{"):])
    assert report["chunks"] >= 2 and report["calls"] == len(sizes) and report["dropped"] == 0
    assert "prompt 0:" in api.messages()[1].prompt
    assert "prompt 29:" in api.messages()[-1].prompt and "<previous_summary>" in api.messages()[-1].prompt


def test_input_plus_max_tokens_over_the_limit_lowers_max_tokens(runner, api: FakeAnthropic) -> None:
    api.push(error(400, "invalid_request_error",
                   "input length and `max_tokens` exceed context limit: 188000 + 16000 > 200000, "
                   "decrease input length or `max_tokens` and try again"))
    result = invoke(runner, api)
    assert result.exit_code == 0, result.stderr
    assert [r.body["max_tokens"] for r in api.messages()] == [16_000, 11_000]
    assert "max_tokens lowered to 11,000" in result.stderr


def test_bad_key_is_one_clear_line_and_never_printed(runner, api: FakeAnthropic) -> None:
    api.push(error(401, "authentication_error", f"invalid x-api-key {KEY}"))
    result = invoke(runner, api)
    assert result.exit_code == ExitCode.LLM and result.stdout == ""
    assert result.stderr.strip() == ("ctxtool: error: Anthropic API rejected the API key "
                                     "(401): invalid x-api-key [redacted] — check "
                                     "ANTHROPIC_API_KEY")
    assert len(api.messages()) == 1  # 401 is not retried


def test_forbidden_is_exit_5(runner, api: FakeAnthropic) -> None:
    api.push(error(403, "permission_error", "Your API key does not have permission"))
    result = invoke(runner, api)
    assert result.exit_code == ExitCode.LLM and "refused access (403)" in result.stderr


def test_a_reply_missing_a_section_is_retried_once_then_fails(runner, api: FakeAnthropic) -> None:
    api.push(summary(missing=("Errors and fixes",)))
    ok = invoke(runner, api)
    assert ok.exit_code == 0 and len(api.messages()) == 2
    assert "4. Errors and fixes" in summary_of(ok.stdout_bytes)
    api.requests.clear()
    api.push(summary(missing=("Errors and fixes",)), summary(missing=("Errors and fixes",)))
    bad = invoke(runner, api)
    assert bad.exit_code == ExitCode.LLM and bad.stdout == ""
    assert "has no 'Errors and fixes' section (asked twice)" in bad.stderr


def test_prior_summary_and_cut_tool_output_reach_the_model(runner, api: FakeAnthropic) -> None:
    s = coding_session()
    s.boundary(continuation_text("1. Primary Request and Intent:\n   THE EARLIER PLAN"))
    s.call("toolu_big", "Bash", {"command": "cat big.log"}, "start " + "y" * 50_000 + " LAST LINE")
    s.user([text_block("what is in this screenshot?"), {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 100}}])
    result = invoke(runner, api, data=s.jsonl())
    assert result.exit_code == 0, result.stderr
    prompt = api.messages()[0].prompt
    assert "<previous_summary>\n1. Primary Request and Intent:\n   THE EARLIER PLAN" in prompt
    assert "chars truncated ...]" in prompt and "LAST LINE" in prompt and "y" * 5000 not in prompt
    assert "what is in this screenshot?\n[image]" in prompt and "iVBORw0KGgo" not in prompt
    assert "Fix the off-by-one" not in prompt  # already covered by the earlier summary


def test_count_tokens_against_the_fake(api: FakeAnthropic) -> None:
    api.count_tokens_value = 1337
    messages = [{"role": "user", "content": "hello"}]
    assert count_tokens(messages, system="be brief", model="claude-haiku-4-5", env=env_for(api)) == 1337
    [request] = api.requests
    assert request.path == "/v1/messages/count_tokens"
    assert request.body == {"model": "claude-haiku-4-5", "messages": messages, "system": "be brief"}
    api.push(error(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(LLMError, match=r"count_tokens failed: Anthropic API rejected the API key \(401\)"):
        count_tokens(messages, system=None, model="claude-haiku-4-5", env=env_for(api))
    with pytest.raises(LLMError) as no_key:
        count_tokens(messages, system=None, model="claude-haiku-4-5", env={})
    assert "ANTHROPIC_API_KEY" in str(no_key.value)


def test_estimate_exact_counts_through_the_fake(runner, api: FakeAnthropic) -> None:
    """`ctxtool estimate --exact` (wired by the estimate command) uses count_tokens above."""
    api.count_tokens_value = 777
    data = coding_session().jsonl()
    result = runner.invoke(cli, ["estimate", "--exact", "--json", "--system-tokens", "1000"],
                           input=data, env=env_for(api))
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["method"] == "exact" and report["context_tokens"] == 777 + 1000
    [request] = api.requests
    assert request.path == "/v1/messages/count_tokens"
    assert request.body["model"] == "claude-sonnet-4-5"  # the transcript's model
    assert request.body["messages"][0] == {"role": "user", "content": "Fix the off-by-one in app/pager.py and add a test"}
    api.push(error(401, "authentication_error", "invalid x-api-key"))
    bad = runner.invoke(cli, ["estimate", "--exact"], input=data, env=env_for(api))
    assert bad.exit_code == ExitCode.LLM and "rejected the API key (401)" in bad.stderr
    nokey = runner.invoke(cli, ["estimate", "--exact"], input=data)
    assert nokey.exit_code == ExitCode.LLM and "ANTHROPIC_API_KEY" in nokey.stderr


def test_unreachable_endpoint_is_exit_5(runner) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = runner.invoke(cli, ["summarize", "--llm", "anthropic"], input=coding_session().jsonl(),
                           env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}"})
    assert result.exit_code == ExitCode.LLM and result.stdout == ""
    assert "gave up after 3 attempts in a row: cannot reach the Anthropic API" in result.stderr
    assert "check ANTHROPIC_BASE_URL" in result.stderr and KEY not in result.stderr
