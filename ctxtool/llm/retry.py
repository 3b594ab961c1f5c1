"""Retrying one model call within its deadline (``--timeout``): the attempts, the waits between
them and each attempt's reading all end when the call's time is up.

The SDK's own retries cannot keep to a deadline: it sleeps as long as a ``retry-after`` header
asks (``Retry-After: 999999`` is eleven days) and gives each attempt the whole timeout again.
So the Anthropic backend turns them off and retries here, the SDK's way (``retry-after-ms``,
``retry-after`` in seconds or as a date, else 0.5 s doubling up to 8 s with jitter), except that
a wait that would end past the deadline is not started: the call gives up at once and says how
long the server asked for. Standard library only; what is retryable is the backend's to say.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from ctxtool.llm.base import BREAKER_LIMIT
from ctxtool.llm.deadline import CallDeadline

T = TypeVar("T")
INITIAL_DELAY = 0.5  # the SDK's backoff: 0.5 s, doubling, at most 8 s, minus up to a quarter
MAX_DELAY = 8.0


@dataclass(frozen=True)
class Retry:
    """What a failed attempt allows: another one (``retryable``), after what the server asked."""

    retryable: bool
    headers: Mapping[str, str] | None = None


class GaveUp(Exception):
    """The call failed for good: ``error`` is the last attempt's failure, ``attempts`` how many
    were made; ``expired`` when the deadline ended it, ``asked`` the wait a server asked for
    that would have ended past it."""

    def __init__(self, error: Exception, *, attempts: int, expired: bool = False,
                 asked: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts
        self.expired = expired
        self.asked = asked


def asked_wait(headers: Mapping[str, str] | None) -> float | None:
    """Seconds a reply's ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date) asks."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            import email.utils  # it imports socket: only for a date, never offline

            parsed = email.utils.parsedate_tz(value) if scale == 1.0 else None
            if parsed is not None:
                return float(email.utils.mktime_tz(parsed) - time.time())
    return None


def backoff(retries_done: int) -> float:
    return min(INITIAL_DELAY * 2.0 ** min(retries_done, 32), MAX_DELAY) * (1 - 0.25 * random.random())


def retry_within(attempt: Callable[[int], T], *, deadline: CallDeadline,
                 classify: Callable[[Exception], Retry | None], limit: int = BREAKER_LIMIT,
                 sleep: Callable[[float], None] = time.sleep) -> T:
    """``attempt(retries_done)`` until it succeeds, at most ``limit`` times, all within
    ``deadline`` (started here). ``classify`` says whether a raised exception may be retried (None: not ours, it
    propagates as it is). Raises :class:`GaveUp`."""
    deadline.start()
    attempts = 0
    while True:
        attempts += 1
        try:
            return attempt(attempts - 1)
        except Exception as exc:  # noqa: BLE001 - classify decides what is ours
            verdict = classify(exc)
            if verdict is None:
                raise
            if deadline.expired:
                raise GaveUp(exc, attempts=attempts, expired=True) from exc
            if not verdict.retryable or attempts >= limit:
                raise GaveUp(exc, attempts=attempts) from exc
            asked = asked_wait(verdict.headers)
            wait = asked if asked is not None and asked > 0 else backoff(attempts - 1)
            if wait >= deadline.remaining():
                raise GaveUp(exc, attempts=attempts, asked=wait if asked else None,
                             expired=not asked) from exc
            sleep(wait)


__all__ = ["GaveUp", "Retry", "asked_wait", "backoff", "retry_within"]
