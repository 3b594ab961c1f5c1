"""Summarizing with a model without ever getting stuck on a long session.

The conversation is rendered turn by turn (:func:`ctxtool.core.summarizing.prompt.render_turn`) and
sent in as few calls as fit the model's window, oldest part first; each call gets the summary so
far to fold in (the earlier compaction's summary for the first call). Recoveries, in order:

* ``input length and max_tokens exceed context limit: A + B > C`` - lower ``max_tokens`` to
  ``C - A - 1000`` when that still leaves at least 3000 tokens (Claude Code's rule), else send
  less input;
* ``prompt is too long`` (our estimate was low) - send less per call: the part is capped to what
  the API's numbers say fits (or halved without numbers) and the rest goes into the next part; a
  single turn larger than a part is cut in the middle; refused a second time at the same place,
  the oldest turn of the part is left out (noted in the result) and the run goes on;
* a reply that misses one of the nine headings is asked for once more, then the run fails.

Rate limits, 5xx, 529 and timeouts never reach this module: the backend retries them with backoff
within its deadline (``llm/retry.py``).
Every failed call counts towards a circuit breaker; three in a row stop the run with LLMError.
This module is pure: the model call is injected as a :class:`ctxtool.llm.base.Complete`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from ctxtool.core.clearing.persist import truncate_text
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.core.summarizing.prompt import (SYSTEM_PROMPT, build_prompt, extract_summary,
                                         missing_headings, render_turns, summary_body)
from ctxtool.errors import LLMError
from ctxtool.llm.base import (BREAKER_LIMIT, AgentPrompt, BadReply, Complete, Completion, Progress,
                              PromptTooLong, SummaryRequest, SummaryResult, no_progress)

MIN_MAX_TOKENS = 3000  # never ask for fewer output tokens than this (Claude Code's floor)
OVERFLOW_RESERVE = 1000  # kept free when max_tokens is lowered after an overflow
MIN_CHUNK_TOKENS = 500  # below this, a part cannot carry anything useful: drop the oldest turn
SAFETY = 0.9  # our estimate may run low: plan to fill 90% of what the window leaves


def call_max_tokens(max_summary_tokens: int) -> int:
    """Output tokens per call: room for the analysis scratchpad as well as the summary."""
    return max(MIN_MAX_TOKENS + 1000, min(32_000, 2 * max_summary_tokens))


class CircuitBreaker:
    """Counts consecutive failures; the ``limit``-th in a row raises LLMError."""

    def __init__(self, limit: int = BREAKER_LIMIT) -> None:
        self.limit = limit
        self.failures = 0

    def success(self) -> None:
        self.failures = 0

    def failure(self, exc: LLMError) -> None:
        self.failures += 1
        if self.failures >= self.limit:
            raise LLMError(f"giving up after {self.failures} failed summary calls in a row: "
                           f"{exc.message}", hint=exc.hint) from exc


class ModelRun:
    """One summary made with a model; :meth:`run` drives it (see the module docstring)."""

    def __init__(self, request: SummaryRequest, complete: Complete, *, backend: str,
                 model: str | None, window: int, max_tokens: int) -> None:
        self.request = request
        self.complete = complete
        self.window = window
        # a small window still needs room for input: the answer gets a quarter at most
        self.max_tokens = max(MIN_MAX_TOKENS, min(max_tokens, window // 4))
        self.items = render_turns(request.recent_turns)
        self.tokens = [estimate_text_tokens(text) for text in self.items]
        priors = request.prior_summaries
        self.summary = summary_body(priors[-1]) if priors else None
        self.result = SummaryResult(text="", backend=backend, model=model, chunks=0)
        self.breaker = CircuitBreaker()
        self.cap: int | None = None  # conversation tokens per call, learned from overflow errors
        self.sent = (0, 0)  # estimated (fixed, conversation) tokens of the last call
        self.refused_at: int | None = None  # position of the last part refused as too long
        self.pos = 0

    # --- budgets -------------------------------------------------------------------------------

    def fixed_tokens(self) -> int:
        """Estimated tokens of everything in a call but the conversation."""
        return estimate_text_tokens(SYSTEM_PROMPT) + estimate_text_tokens(self.prompt(""))

    def budget(self) -> int:
        """Tokens of conversation the next call can carry."""
        room = int((self.window - self.max_tokens - OVERFLOW_RESERVE - self.fixed_tokens()) * SAFETY)
        return room if self.cap is None else min(room, self.cap)

    def estimated_parts(self) -> int:
        budget = max(self.budget(), MIN_CHUNK_TOKENS)
        return max(1, -(-sum(self.tokens[self.pos:]) // budget))

    def take(self, budget: int) -> list[str]:
        """The longest run of turns from ``pos`` that fits ``budget`` (at least one, cut to fit)."""
        chunk: list[str] = []
        used = 0
        for text, tokens in zip(self.items[self.pos:], self.tokens[self.pos:]):
            if chunk and used + tokens > budget:
                break
            if tokens > budget:  # a single turn larger than a whole call
                text = truncate_text(text, max(200, len(text) * budget // tokens))
            chunk.append(text)
            used += min(tokens, budget)
        return chunk

    # --- the loop ------------------------------------------------------------------------------

    def run(self, progress: Progress = no_progress) -> SummaryResult:
        if not self.items:
            self.result.text = self.summary or ""
            return self.result
        for _ in progress(self.steps(), self.estimated_parts()):
            pass
        return self.result

    def steps(self) -> Iterator[int]:
        """Summarize part after part; yields the number of parts done after each one."""
        retried = False
        while self.pos < len(self.items):
            budget = self.budget()
            if budget < MIN_CHUNK_TOKENS:
                if self.cap is None:
                    raise LLMError(f"a {self.window}-token context window leaves no room for the "
                                   "conversation next to the prompt and the answer",
                                   hint="raise --context-window")
                self.drop_oldest()
                continue
            chunk = self.take(budget)
            last = self.pos + len(chunk) >= len(self.items)
            part = self.result.chunks + 1
            parts = part if last else max(part + 1, part - 1 + self.estimated_parts())
            try:
                text = self.call(chunk, part=part, parts=parts)
            except PromptTooLong as exc:
                self.breaker.failure(exc)
                self.recover(exc)
                continue
            missing = missing_headings(text)
            if missing:
                bad = BadReply(f"the model's summary has no {missing[0]!r} section"
                               + (" (asked twice)" if retried else ""),
                               hint="try another --model, or --llm offline")
                if retried:
                    raise bad
                self.breaker.failure(bad)
                retried = True
                continue
            self.breaker.success()
            retried = False
            self.summary = text
            self.pos += len(chunk)
            self.result.chunks += 1
            yield self.result.chunks
        if self.summary is None:
            raise LLMError("nothing could be summarized: the model refused every part as too long")
        self.result.text = self.summary

    def prompt(self, conversation: str, *, part: int = 1, parts: int = 1) -> str:
        return build_prompt(conversation, previous=self.summary, part=part, parts=parts,
                            instructions=self.request.instructions,
                            target_tokens=self.request.max_summary_tokens)

    def call(self, chunk: Sequence[str], *, part: int, parts: int) -> str:
        self.sent = (self.fixed_tokens(), sum(estimate_text_tokens(text) for text in chunk))
        prompt = self.prompt("\n\n".join(chunk), part=part, parts=parts)
        self.result.calls += 1
        completion = self.complete(system=SYSTEM_PROMPT, prompt=prompt, max_tokens=self.max_tokens)
        self.result.input_tokens += completion.input_tokens
        self.result.output_tokens += completion.output_tokens
        return extract_summary(completion.text)

    def recover(self, exc: PromptTooLong) -> None:
        """Make the next call fit after the API said this one did not.

        With the API's numbers, our estimate of the last call is scaled to its real size and the
        conversation part is capped so the next call lands at 90% of what fits; without them,
        the next part is half the last one.
        """
        fixed, chunk = self.sent
        used, limit = exc.input_tokens, exc.limit
        if self.refused_at == self.pos and not self._lowers_max_tokens(exc):
            self.drop_oldest()  # refused twice here: give up on the oldest turn, not the run
            return
        self.refused_at = self.pos
        if not used or not limit:
            self.cap = max(1, chunk // 2)
            self.result.notes.append(f"prompt too long: parts capped at {self.cap:,} tokens")
            return
        if exc.max_tokens is not None:
            available = limit - used - OVERFLOW_RESERVE
            if available >= MIN_MAX_TOKENS:
                self.max_tokens = min(available, self.max_tokens)
                self.result.notes.append(f"max_tokens lowered to {self.max_tokens:,} "
                                         f"(input {used:,} + output > {limit:,})")
                return
            # the input leaves no room for a useful answer: send less of it as well
            self.max_tokens = max(MIN_MAX_TOKENS, min(self.max_tokens, limit // 4))
        target = limit - OVERFLOW_RESERVE - (self.max_tokens if exc.max_tokens is not None else 0)
        real_per_estimated = used / max(1, fixed + chunk)
        self.cap = max(1, int(target * SAFETY / real_per_estimated) - fixed)
        self.result.notes.append(f"prompt too long ({used:,} > {limit:,} tokens): parts capped at "
                                 f"{self.cap:,} estimated tokens")

    @staticmethod
    def _lowers_max_tokens(exc: PromptTooLong) -> bool:
        return bool(exc.max_tokens is not None and exc.input_tokens and exc.limit
                    and exc.limit - exc.input_tokens - OVERFLOW_RESERVE >= MIN_MAX_TOKENS)

    def drop_oldest(self) -> None:
        self.pos += 1
        self.result.dropped += 1
        self.result.notes.append("a turn too large for any call was left out")


def summarize_with_model(request: SummaryRequest, complete: Complete, *, backend: str,
                         model: str | None, window: int, max_tokens: int,
                         progress: Progress = no_progress) -> SummaryResult:
    """The nine-section summary of ``request`` made through ``complete`` (see module docstring)."""
    return ModelRun(request, complete, backend=backend, model=model, window=window,
                    max_tokens=max_tokens).run(progress)


class Model(Protocol):
    """A model's calls: its backend ``name``, the ``model`` it runs (None: the agent's own
    default) and :meth:`complete` (see :class:`ctxtool.llm.anthropic.AnthropicModel` and
    :class:`ctxtool.llm.agent_cli.AgentCli`)."""

    name: str
    model: str | None

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> Completion: ...


class ModelSummarizer:
    """A :class:`ctxtool.llm.base.Summarizer` over a :class:`Model`: summaries chunked to fit
    ``window`` and recovered from overflows by :func:`summarize_with_model`."""

    def __init__(self, model: Model, *, window: int, max_tokens: int = 16_000) -> None:
        self.backend = model
        self.name = model.name
        self.model: str | None = model.model
        self.window = window
        self.max_tokens = max_tokens

    def summarize(self, request: SummaryRequest, *, progress: Progress = no_progress) -> SummaryResult:
        if request.agent_prompt is not None:
            return self._as_the_agent(request.agent_prompt)
        return summarize_with_model(request, self.backend.complete, backend=self.name,
                                    model=self.model, window=self.window,
                                    max_tokens=self.max_tokens, progress=progress)

    def _as_the_agent(self, prompt: AgentPrompt) -> SummaryResult:
        """The agent's own request, sent as it is (one call, no chunking: the agent makes one);
        the reply is the summary once it holds every heading of the agent's template."""
        try:
            reply = self.backend.complete(system=prompt.system, prompt=prompt.prompt,
                                          max_tokens=self.max_tokens)
        except PromptTooLong as exc:
            raise LLMError(f"the conversation does not fit one summarizer call: {exc.message}",
                           hint="keep the newest messages verbatim (--keep-tokens N), or use "
                           "--llm offline") from None
        missing = prompt.missing(reply.text)
        if missing:
            raise BadReply(f"the model's summary lacks the section(s) {', '.join(missing)}",
                           hint="try again, or use --llm offline")
        return SummaryResult(text=reply.text.strip(), backend=self.name, model=self.model,
                             calls=1, input_tokens=reply.input_tokens,
                             output_tokens=reply.output_tokens)
