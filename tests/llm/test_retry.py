"""llm/retry.py: the attempts, the waits and the deadline of one model call (the HTTP side is
tested through the real SDK in tests/robustness/test_hostile_server.py)."""

from __future__ import annotations

import email.utils
import time

import pytest

from ctxtool.llm.deadline import CallDeadline
from ctxtool.llm.retry import GaveUp, Retry, asked_wait, retry_within


class Failing(Exception):
    pass


def test_asked_wait_reads_every_form_the_sdk_reads() -> None:
    assert asked_wait({"retry-after-ms": "1500"}) == 1.5
    assert asked_wait({"retry-after": "999999"}) == 999999.0
    assert asked_wait({"retry-after-ms": "250", "retry-after": "9"}) == 0.25  # ms wins
    date = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 110 < (asked_wait({"retry-after": date}) or 0) <= 121
    assert asked_wait({"retry-after": "soon"}) is None
    assert asked_wait({}) is None and asked_wait(None) is None


def run(failures: list[Exception | None], *, seconds: float, retry: Retry,
        limit: int = 3) -> tuple[str | GaveUp, list[float], list[int]]:
    """retry_within over scripted attempts; returns the outcome, the waits and the retry counts."""
    waits: list[float] = []
    seen: list[int] = []

    def attempt(retries: int) -> str:
        seen.append(retries)
        failure = failures.pop(0)
        if failure is not None:
            raise failure
        return "ok"

    try:
        outcome: str | GaveUp = retry_within(attempt, deadline=CallDeadline(seconds),
                                             classify=lambda exc: retry, limit=limit,
                                             sleep=waits.append)
    except GaveUp as gave_up:
        outcome = gave_up
    return outcome, waits, seen


def test_retries_with_the_asked_wait_then_succeeds() -> None:
    outcome, waits, seen = run([Failing(), None], seconds=10,
                               retry=Retry(True, {"retry-after": "2"}))
    assert outcome == "ok" and waits == [2.0] and seen == [0, 1]


def test_a_wait_past_the_deadline_is_never_started() -> None:
    outcome, waits, _ = run([Failing(), None], seconds=10,
                            retry=Retry(True, {"retry-after": "999999"}))
    assert isinstance(outcome, GaveUp) and waits == []
    assert outcome.asked == 999999.0 and outcome.attempts == 1 and not outcome.expired


def test_the_limit_counts_attempts_and_backoff_grows() -> None:
    outcome, waits, seen = run([Failing()] * 3, seconds=100, retry=Retry(True))
    assert isinstance(outcome, GaveUp) and outcome.attempts == 3 and seen == [0, 1, 2]
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0


def test_not_retryable_fails_at_once_and_unknown_errors_propagate() -> None:
    outcome, waits, _ = run([Failing(), None], seconds=10, retry=Retry(False))
    assert isinstance(outcome, GaveUp) and outcome.attempts == 1 and waits == []
    with pytest.raises(KeyError):
        retry_within(lambda retries: {}["x"], deadline=CallDeadline(10), classify=lambda e: None)


def test_an_attempt_that_used_up_the_deadline_is_not_retried() -> None:
    def slow(retries: int) -> str:
        time.sleep(0.2)
        raise Failing()

    with pytest.raises(GaveUp) as caught:
        retry_within(slow, deadline=CallDeadline(0.1), classify=lambda e: Retry(True))
    assert caught.value.expired and caught.value.attempts == 1
