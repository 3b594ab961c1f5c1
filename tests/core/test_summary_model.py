"""Summarizing with a model, never stuck: chunking, overflow recovery, section checks, breaker.
The model is a scripted function here; tests/cli/test_summarize_anthropic.py runs the real SDK."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ctxtool.core.summarizing.model import (BREAKER_LIMIT, MIN_MAX_TOKENS, call_max_tokens,
                                        summarize_with_model)
from ctxtool.core.summarizing.prompt import HEADINGS, continuation_text, extract_summary
from ctxtool.core.summarizing.request import build_request
from ctxtool.errors import LLMError
from ctxtool.llm.base import BadReply, Completion, PromptTooLong, SummaryRequest
from ctxtool.types import CLAUDE_CODE
from tests.fake_anthropic import summary_text
from tests.summarize_builder import Session, coding_session, text_block


class Model:
    """Answers each call with the next scripted item: a reply text, or an exception to raise."""

    def __init__(self, *script: str | Exception | Callable[[str, int], str | Exception]) -> None:
        self.script = list(script)
        self.calls: list[tuple[str, int]] = []

    def __call__(self, *, system: str, prompt: str, max_tokens: int) -> Completion:
        self.calls.append((prompt, max_tokens))
        item = self.script.pop(0) if self.script else summary_text(note=f"call {len(self.calls)}")
        if callable(item) and not isinstance(item, Exception):
            item = item(prompt, max_tokens)
        if isinstance(item, Exception):
            raise item
        return Completion(item, input_tokens=10, output_tokens=5)


def run(request: SummaryRequest, model: Model, *, window: int = 200_000, max_tokens: int = 16_000,
        steps: list[int] | None = None):
    def progress(it, total):
        for step in it:
            if steps is not None:
                steps.append(step)
            yield step
    return summarize_with_model(request, model, backend="test", model="m", window=window,
                                max_tokens=max_tokens, progress=progress)


def big_session(turns: int = 40, words: int = 300) -> SummaryRequest:
    s = Session()
    for n in range(turns):
        s.user(f"prompt {n} " + "word " * words)
        s.assistant(text_block(f"answer {n} " + "word " * words))
    return build_request(s.entries, CLAUDE_CODE)


def test_one_call_when_it_fits_and_the_scratchpad_is_stripped() -> None:
    model = Model()
    result = run(build_request(coding_session().entries, CLAUDE_CODE, instructions="focus on tests"), model)
    assert (result.calls, result.chunks, result.text.startswith("1. Primary Request")) == (1, 1, True)
    assert "scratchpad" not in result.text and "<analysis>" not in result.text
    prompt, max_tokens = model.calls[0]
    assert max_tokens == 16_000
    assert all(f"{n}. {title}:" in prompt for n, title in enumerate(HEADINGS, start=1))
    assert "<instructions>\nfocus on tests\n</instructions>" in prompt
    assert "Fix the off-by-one in app/pager.py" in prompt and "[Bash error]" in prompt


def test_long_sessions_go_in_parts_oldest_first_each_folding_the_last() -> None:
    model = Model()
    steps: list[int] = []
    result = run(big_session(), model, window=12_000, max_tokens=3000, steps=steps)
    assert result.chunks == len(model.calls) >= 3 and steps == list(range(1, result.chunks + 1))
    first, second = model.calls[0][0], model.calls[1][0]
    assert "prompt 0 " in first and "<previous_summary>" not in first
    assert "<previous_summary>\n1. Primary Request and Intent:\n   call 1" in second
    assert "part 1 of" in first and "it is the last part" in model.calls[-1][0]
    assert "prompt 39 " in model.calls[-1][0]
    assert result.text.startswith("1. Primary Request and Intent:\n   call %d" % result.chunks)


def test_prior_summary_is_the_first_previous_summary() -> None:
    s = coding_session()
    s.boundary(continuation_text("1. Primary Request and Intent:\n   EARLIER WORK"))
    s.user("continue please")
    model = Model()
    run(build_request(s.entries, CLAUDE_CODE), model)
    prompt = model.calls[0][0]
    assert "<previous_summary>\n1. Primary Request and Intent:\n   EARLIER WORK" in prompt
    assert "continue please" in prompt and "Fix the off-by-one" not in prompt


def test_input_plus_max_tokens_overflow_lowers_max_tokens() -> None:
    overflow = PromptTooLong("input length and `max_tokens` exceed context limit: 190000 + 16000 > 200000",
                             input_tokens=190_000, max_tokens=16_000, limit=200_000)
    model = Model(overflow)
    result = run(build_request(coding_session().entries, CLAUDE_CODE), model)
    assert [m for _, m in model.calls] == [16_000, 9_000]
    assert result.calls == 2 and any("max_tokens lowered to 9,000" in n for n in result.notes)


def test_overflow_without_room_for_an_answer_sends_less_input() -> None:
    overflow = PromptTooLong("x", input_tokens=199_000, max_tokens=16_000, limit=200_000)
    model = Model(overflow)
    result = run(big_session(turns=10), model, window=200_000)
    assert model.calls[1][1] >= MIN_MAX_TOKENS
    assert result.chunks >= 1 and len(model.calls[1][0]) <= len(model.calls[0][0])


def test_prompt_too_long_shrinks_the_parts_by_the_reported_ratio() -> None:
    def judge(prompt: str, max_tokens: int) -> str | Exception:
        tokens = len(prompt) // 5  # this "model" counts 5 characters per token
        if tokens > 6000:
            return PromptTooLong(f"prompt is too long: {tokens} tokens > 6000 maximum",
                                 input_tokens=tokens, limit=6000)
        return summary_text()
    model = Model(*([judge] * 50))
    result = run(big_session(turns=60), model, window=50_000, max_tokens=4000)
    accepted = [p for p, _ in model.calls if len(p) // 5 <= 6000]
    assert len(accepted) == result.chunks >= 2 and len(model.calls) > len(accepted)
    assert "prompt 59 " in accepted[-1] and result.dropped == 0


def test_a_reply_missing_a_section_is_asked_for_once_more() -> None:
    model = Model(summary_text(missing=("Pending Tasks",)))
    result = run(build_request(coding_session().entries, CLAUDE_CODE), model)
    assert result.calls == 2 and "7. Pending Tasks" in result.text


def test_a_reply_missing_a_section_twice_fails() -> None:
    bad = summary_text(missing=("Current Work",))
    with pytest.raises(BadReply, match="no 'Current Work' section \\(asked twice\\)"):
        run(build_request(coding_session().entries, CLAUDE_CODE), Model(bad, bad))


def test_three_failures_in_a_row_open_the_circuit_breaker() -> None:
    too_long = PromptTooLong("prompt is too long")
    model = Model(*([too_long] * 10))
    with pytest.raises(LLMError, match=f"giving up after {BREAKER_LIMIT} failed summary calls in a row"):
        run(big_session(turns=5), model)
    assert len(model.calls) == BREAKER_LIMIT


def test_other_errors_are_not_retried_here() -> None:
    model = Model(LLMError("Anthropic API rejected the API key (401)"))
    with pytest.raises(LLMError, match="401"):
        run(build_request(coding_session().entries, CLAUDE_CODE), model)
    assert len(model.calls) == 1


def test_a_turn_too_big_for_any_call_is_cut_and_then_dropped() -> None:
    s = Session()
    s.user("huge " * 50_000)
    s.user("small follow-up")
    model = Model()
    result = run(build_request(s.entries, CLAUDE_CODE), model, window=12_000, max_tokens=3000)
    assert "chars truncated ...]" in model.calls[0][0] and result.dropped == 0
    with pytest.raises(LLMError, match="leaves no room for the conversation"):
        run(build_request(s.entries, CLAUDE_CODE), Model(), window=4_000, max_tokens=3000)


def test_a_turn_the_api_keeps_refusing_is_dropped_and_the_rest_summarized() -> None:
    s = Session()
    s.user("huge " * 20_000)
    s.user("small follow-up")

    def judge(prompt: str, max_tokens: int) -> str | Exception:
        if "huge huge" in prompt:
            return PromptTooLong("prompt is too long")  # no numbers: halve, then give up on it
        return summary_text()
    model = Model(*([judge] * 10))
    result = run(build_request(s.entries, CLAUDE_CODE), model, window=200_000)
    assert result.dropped == 1 and result.chunks == 1
    assert "small follow-up" in model.calls[-1][0] and "huge huge" not in model.calls[-1][0]


def test_extract_summary_and_call_max_tokens() -> None:
    assert extract_summary("<analysis>x</analysis>\n<summary>\nS\n</summary>") == "S"
    assert extract_summary("<analysis>x</analysis>\n1. Primary") == "1. Primary"
    assert extract_summary("<summary>unclosed") == "unclosed"
    assert call_max_tokens(8000) == 16_000 and call_max_tokens(100) == MIN_MAX_TOKENS + 1000
    assert call_max_tokens(50_000) == 32_000
