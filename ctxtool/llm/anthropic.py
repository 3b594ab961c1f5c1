"""The Anthropic backend: the Messages API through the official SDK, imported only when used.

* Credentials and endpoint are the SDK's own variables: ``ANTHROPIC_API_KEY`` (or
  ``ANTHROPIC_AUTH_TOKEN``) and ``ANTHROPIC_BASE_URL``. The key is never printed: API messages
  are scrubbed of it, and of anything key-shaped, before they reach an error (``llm/reply.py``).
* Each request has a total deadline of ``timeout`` seconds (``llm/deadline.py``), not only a
  read timeout: a server that trickles its reply a byte at a time times out like a silent one.
* Replies are read raw and checked by ``llm/reply.py``: an HTML page, an empty body, a reply
  without ``content`` or with ``"text": null`` is one line and exit 5, not a traceback.
* Rate limits (429), server errors (5xx), overload (529), timeouts and dropped connections are
  retried by the SDK itself, with its exponential backoff and ``retry-after`` handling; ctxtool
  only sets ``max_retries`` so that three failed attempts in a row stop the run (the circuit
  breaker; see ``core/summarizing/model.py`` for the failures the SDK does not see).
* Context overflows become :class:`ctxtool.llm.base.PromptTooLong`, which the core recovers from.
* 401/403 and anything else become one-line :class:`ctxtool.errors.LLMError` (exit 5).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ctxtool.errors import LLMError
from ctxtool.llm.base import BREAKER_LIMIT, Completion, PromptTooLong
from ctxtool.llm.reply import KEY_ENVS, completion, input_tokens, one_line

DEFAULT_MODEL = "claude-haiku-4-5"  # small, fast and cheap; summaries do not need more
MODEL_ENV = "CTXTOOL_MODEL"
TIMEOUT_ENV = "CTXTOOL_LLM_TIMEOUT"
DEFAULT_TIMEOUT = 600.0  # seconds per attempt, in all; a long summary can take minutes
MAX_RETRIES = BREAKER_LIMIT - 1  # the SDK's retries: BREAKER_LIMIT attempts in a row at most
NO_KEY_HINT = "set ANTHROPIC_API_KEY, or use --llm offline"

_OVERFLOW = re.compile(r"input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)")
_TOO_LONG = re.compile(r"prompt is too long(?::\s*(\d+)\s*tokens?\s*>\s*(\d+))?", re.IGNORECASE)


def has_key(env: Mapping[str, str]) -> bool:
    return any(env.get(name, "").strip() for name in KEY_ENVS)


def make_client(*, env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT,
                max_retries: int = MAX_RETRIES) -> Any:
    """An ``anthropic.Anthropic`` client configured from ``env`` (default: os.environ)."""
    env = os.environ if env is None else env
    if not has_key(env):
        raise LLMError("no Anthropic API key is configured", hint=NO_KEY_HINT)
    import anthropic  # lazy: only the Anthropic backend pays for the SDK

    # and for socket (deadline.py): summarize imports this module for its option defaults
    from ctxtool.llm.deadline import deadline_transport

    # None is the SDK's default for each: the same as leaving the argument out
    api_key = env.get("ANTHROPIC_API_KEY", "").strip() or None
    auth_token = None if api_key else env["ANTHROPIC_AUTH_TOKEN"].strip()
    base_url = env.get("ANTHROPIC_BASE_URL", "").strip() or None
    http_client = anthropic.DefaultHttpxClient(
        transport=deadline_transport(_httpx_of(anthropic), timeout))
    return anthropic.Anthropic(api_key=api_key, auth_token=auth_token, base_url=base_url,
                               timeout=timeout, max_retries=max_retries, http_client=http_client)


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
                        hint=f"raise --timeout (${TIMEOUT_ENV}) or try again later")
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


class AnthropicModel:
    """One Claude model's calls (:meth:`complete`); ``core/summarizing/model.py`` chunks a
    summary over them and recovers from overflows."""

    name = "anthropic"

    def __init__(self, *, model: str = DEFAULT_MODEL, env: Mapping[str, str] | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self.env = os.environ if env is None else env
        self.model = model
        self.client = make_client(env=self.env, timeout=timeout)

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> Completion:
        import anthropic

        try:
            # the raw reply, checked by llm/reply.py: the SDK's own parsing trusts the server
            raw = self.client.messages.with_raw_response.create(
                model=self.model, max_tokens=max_tokens, system=system,
                messages=[{"role": "user", "content": prompt}])
        except anthropic.APIError as exc:
            raise map_error(exc, env=self.env, attempts=MAX_RETRIES + 1) from None
        except anthropic.AnthropicError as exc:
            raise LLMError(f"Anthropic SDK error: {one_line(str(exc), self.env)}") from None
        return completion(raw.http_response.content, self.env)


def count_tokens(messages: list[dict[str, Any]], *, system: str | None, model: str,
                 env: Mapping[str, str] | None = None, timeout: float | None = None) -> int:
    """Exact input tokens of ``messages`` (+ ``system``) for ``model``, from the API's
    ``messages.count_tokens``. Raises LLMError (one line, exit 5) when it cannot."""
    import anthropic

    env = os.environ if env is None else env
    seconds = timeout if timeout is not None else float(env.get(TIMEOUT_ENV) or 60)
    client = make_client(env=env, timeout=seconds)
    extra: dict[str, Any] = {"system": system} if system else {}
    try:
        raw = client.messages.with_raw_response.count_tokens(model=model, messages=messages,
                                                             **extra)
        return input_tokens(raw.http_response.content, env)
    except anthropic.APIError as exc:
        error = map_error(exc, env=env, attempts=MAX_RETRIES + 1)
    except anthropic.AnthropicError as exc:
        error = LLMError(f"Anthropic SDK error: {one_line(str(exc), env)}")
    except LLMError as exc:
        error = exc
    raise LLMError(f"count_tokens failed: {error.message}", hint=error.hint)
