"""The Anthropic backend: the Messages API through the official SDK, imported only when used.

* Credentials and endpoint are the SDK's own variables: ``ANTHROPIC_API_KEY`` (or
  ``ANTHROPIC_AUTH_TOKEN``) and ``ANTHROPIC_BASE_URL``. The key is never printed: API messages
  are scrubbed of it, and of anything key-shaped, before they reach an error (``llm/reply.py``).
* ``timeout`` is a deadline for each call in all (``llm/deadline.py``): its attempts, the waits
  between them and the reading of every reply. A server that trickles its reply a byte at a
  time times out like a silent one, and a ``retry-after`` past the deadline ends the call at once.
* Replies are read raw and checked by ``llm/reply.py``: an HTML page, an empty body, a reply
  without ``content`` or with ``"text": null`` is one line and exit 5, not a traceback.
* Rate limits (429), 408, 409, server errors (5xx), overload (529), timeouts and dropped
  connections are retried as the SDK would (``llm/retry.py``; the SDK's own retries are off, they
  cannot keep to a deadline): three failed attempts in a row stop the run (the circuit breaker;
  see ``core/summarizing/model.py`` for the failures the SDK does not see).
* Context overflows become :class:`ctxtool.llm.base.PromptTooLong`, which the core recovers from.
* 401/403 and anything else become one-line :class:`ctxtool.errors.LLMError` (exit 5).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, TypeVar

from ctxtool.errors import LLMError
from ctxtool.llm.base import Completion, PromptTooLong
from ctxtool.llm.deadline import CallDeadline
from ctxtool.llm.reply import KEY_ENVS, completion, input_tokens, one_line
from ctxtool.llm.retry import GaveUp, Retry, retry_within

T = TypeVar("T")

DEFAULT_MODEL = "claude-haiku-4-5"  # small, fast and cheap; summaries do not need more
MODEL_ENV = "CTXTOOL_MODEL"
TIMEOUT_ENV = "CTXTOOL_LLM_TIMEOUT"
DEFAULT_TIMEOUT = 600.0  # seconds per call, retries included; a long summary can take minutes
COUNT_TIMEOUT = 60.0  # estimate --exact's count_tokens call, retries included
TIMEOUT_HINT = f"raise --timeout (${TIMEOUT_ENV}) or try again later"
NO_KEY_HINT = "set ANTHROPIC_API_KEY, or use --llm offline"

_OVERFLOW = re.compile(r"input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)")
_TOO_LONG = re.compile(r"prompt is too long(?::\s*(\d+)\s*tokens?\s*>\s*(\d+))?", re.IGNORECASE)


def has_key(env: Mapping[str, str]) -> bool:
    return any(env.get(name, "").strip() for name in KEY_ENVS)


def make_client(*, env: Mapping[str, str] | None = None, deadline: CallDeadline) -> Any:
    """An ``anthropic.Anthropic`` client configured from ``env`` (default: os.environ), whose
    requests end when ``deadline`` does, and which does not retry (:func:`call` does)."""
    env = os.environ if env is None else env
    if not has_key(env):
        raise LLMError("no Anthropic API key is configured", hint=NO_KEY_HINT)
    import anthropic  # lazy: only the Anthropic backend pays for the SDK

    from ctxtool.llm.deadline import deadline_transport

    # None is the SDK's default for each: the same as leaving the argument out
    api_key = env.get("ANTHROPIC_API_KEY", "").strip() or None
    auth_token = None if api_key else env["ANTHROPIC_AUTH_TOKEN"].strip()
    base_url = _base_url(env)
    http_client = anthropic.DefaultHttpxClient(
        transport=deadline_transport(_httpx_of(anthropic), deadline))
    return anthropic.Anthropic(api_key=api_key, auth_token=auth_token, base_url=base_url,
                               timeout=deadline.seconds, max_retries=0, http_client=http_client)


def _base_url(env: Mapping[str, str]) -> str | None:
    """``ANTHROPIC_BASE_URL``, or None; LLMError (exit 5) unless it is an http(s) URL with a
    host: the SDK would stop with a traceback on what it cannot parse, or retry what it can."""
    value = env.get("ANTHROPIC_BASE_URL", "").strip()
    if not value:
        return None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and (
            parts.port is None or parts.port > 0)
    except ValueError:  # a port that is no number, a bad IPv6 address
        valid = False
    if not valid:
        raise LLMError(f"ANTHROPIC_BASE_URL is not an http(s) URL: {one_line(value, env)!r}",
                       hint="set it to the API's address (like https://api.anthropic.com) "
                            "or unset it")
    return value


def _httpx_of(anthropic: ModuleType) -> ModuleType:
    """The HTTP library the SDK is built on: httpx, or httpx2 in newer SDKs."""
    for cls in anthropic.DefaultHttpxClient.__mro__:
        if cls.__name__ == "Client":
            return importlib.import_module(cls.__module__.partition(".")[0])
    return importlib.import_module("httpx")


def _api_message(exc: Any) -> str:
    """The ``error.message`` of an API error body, else the exception text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    return str(getattr(exc, "message", None) or exc)


def map_error(exc: Exception, *, env: Mapping[str, str], attempts: int) -> LLMError:
    """An SDK exception as ctxtool's error: PromptTooLong for overflows, else one clear line."""
    import anthropic

    status = getattr(exc, "status_code", None)
    message = one_line(_api_message(exc), env)
    if isinstance(exc, anthropic.APIStatusError) and status in (400, 413):
        found = _OVERFLOW.search(message)
        if found:
            a, b, c = (int(x) for x in found.groups())
            return PromptTooLong(message, input_tokens=a, max_tokens=b, limit=c)
        found = _TOO_LONG.search(message)
        if found or status == 413:
            numbers = [int(x) for x in found.groups()] if found and found.group(1) else [None, None]
            return PromptTooLong(message, input_tokens=numbers[0], limit=numbers[1])
    if status in (401, 403):
        what = "rejected the API key" if status == 401 else "refused access"
        return LLMError(f"Anthropic API {what} ({status}): {message}",
                        hint="check ANTHROPIC_API_KEY" if status == 401 else "check the key's permissions")
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMError(f"gave up after {attempts} attempts in a row: the Anthropic API timed out",
                        hint=TIMEOUT_HINT)
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMError(f"gave up after {attempts} attempts in a row: cannot reach the Anthropic "
                        f"API ({message})", hint="check ANTHROPIC_BASE_URL and the network")
    if status == 429 or (isinstance(status, int) and status >= 500):
        return LLMError(f"gave up after {attempts} attempts in a row: Anthropic API error "
                        f"{status}: {message}", hint="try again later; --passthrough-on-error "
                        "keeps pipelines going")
    if status == 404:
        return LLMError(f"Anthropic API: not found (404): {message}", hint="check --model")
    if status is not None:
        return LLMError(f"Anthropic API error {status}: {message}")
    return LLMError(f"Anthropic SDK error: {message}")


def _retry(exc: Exception) -> Retry | None:
    """Whether a failed attempt may be tried again, the SDK's rules (None: not an API error)."""
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        response = exc.response
        forced = response.headers.get("x-should-retry")
        status = response.status_code
        retryable = (forced == "true" if forced in ("true", "false")
                     else status in (408, 409, 429) or status >= 500)
        return Retry(retryable, response.headers)
    if isinstance(exc, anthropic.APIConnectionError):  # timeouts included
        return Retry(True)
    return None


def call(send: Callable[[dict[str, str]], T], *, deadline: CallDeadline,
         env: Mapping[str, str]) -> T:
    """``send(extra_headers)`` (one API request) retried within ``deadline``; every failure as
    LLMError. The headers tell the server which retry it is, as the SDK's own retries do."""
    import anthropic

    try:
        return retry_within(lambda retries: send({"x-stainless-retry-count": str(retries)}),
                            deadline=deadline, classify=_retry)
    except GaveUp as gave_up:
        raise _gave_up(gave_up, deadline=deadline, env=env) from None
    except anthropic.AnthropicError as exc:
        raise LLMError(f"Anthropic SDK error: {one_line(str(exc), env)}") from None


def _gave_up(gave_up: GaveUp, *, deadline: CallDeadline, env: Mapping[str, str]) -> LLMError:
    seconds, tries = f"{deadline.seconds:g}", f"{gave_up.attempts} attempt(s)"
    if gave_up.asked is not None:
        status = getattr(gave_up.error, "status_code", "?")
        return LLMError(f"Anthropic API error {status}: {one_line(_api_message(gave_up.error), env)}"
                        f"; it asked to wait {gave_up.asked:,.0f} s, past the {seconds} s deadline "
                        f"(--timeout), {tries}", hint=TIMEOUT_HINT)
    if gave_up.expired:
        return LLMError(f"the Anthropic API timed out: no complete reply within the {seconds} s "
                        f"deadline (--timeout), {tries}", hint=TIMEOUT_HINT)
    return map_error(gave_up.error, env=env, attempts=gave_up.attempts)


class AnthropicModel:
    """One Claude model's calls (:meth:`complete`); ``core/summarizing/model.py`` chunks a
    summary over them and recovers from overflows."""

    name = "anthropic"

    def __init__(self, *, model: str = DEFAULT_MODEL, env: Mapping[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.env = os.environ if env is None else env
        self.model = model
        self.deadline = CallDeadline(timeout)
        self.client = make_client(env=self.env, deadline=self.deadline)

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> Completion:
        # the raw reply, checked by llm/reply.py: the SDK's own parsing trusts the server
        raw = call(lambda headers: self.client.messages.with_raw_response.create(
            model=self.model, max_tokens=max_tokens, system=system,
            messages=[{"role": "user", "content": prompt}], extra_headers=headers),
                   deadline=self.deadline, env=self.env)
        return completion(raw.http_response.content, self.env)


def count_tokens(messages: list[dict[str, Any]], *, system: str | None, model: str,
                 env: Mapping[str, str] | None = None, timeout: float | None = None) -> int:
    """Exact input tokens of ``messages`` (+ ``system``) for ``model``, from the API's
    ``messages.count_tokens``, within ``timeout`` seconds in all. Raises LLMError (one line,
    exit 5) when it cannot."""
    env = os.environ if env is None else env
    seconds = timeout if timeout is not None else float(env.get(TIMEOUT_ENV) or COUNT_TIMEOUT)
    deadline = CallDeadline(seconds)
    client = make_client(env=env, deadline=deadline)
    extra: dict[str, Any] = {"system": system} if system else {}
    try:
        raw = call(lambda headers: client.messages.with_raw_response.count_tokens(
            model=model, messages=messages, extra_headers=headers, **extra),
                   deadline=deadline, env=env)
        return input_tokens(raw.http_response.content, env)
    except LLMError as error:
        raise LLMError(f"count_tokens failed: {error.message}", hint=error.hint) from None
