"""Codex rollouts that record no usage (token_count lines left out) are sized with what Codex
sends in front of the items: the base instructions session_meta records plus its tool
definitions (measured from the first request of the real rollouts), not Claude Code's 24,000."""

from __future__ import annotations

from pathlib import Path

import orjson

from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS
from ctxtool.core.sizing.tokens import estimate_entry_tokens
from ctxtool.formats import codex
from tests.conftest import FIXTURES

FOLDER = FIXTURES / "codex-0.171.0"


def read(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def without_usage(entries: list[dict]) -> list[dict]:
    return [e for e in entries if codex.token_info(e) is None]


def last_total(entries: list[dict]) -> int:
    """Codex's own size of the context: the last call's input + output."""
    info = [codex.token_info(e) for e in entries if codex.token_info(e)][-1]
    return info["last_token_usage"]["total_tokens"]


def first_call_system(entries: list[dict]) -> int:
    """The first request's prompt minus the estimate of the items it was sent (every line
    before the first item the model wrote)."""
    first_written = next(i for i, e in enumerate(entries)
                         if codex.role_and_blocks(e)[0] == "assistant")
    sent = sum(estimate_entry_tokens(e, codex.NAME) for e in entries[:first_written])
    counts = next(c for e in entries if (c := codex.usage_counts(e)) is not None)
    return counts[1] + counts[2] - sent


def test_without_usage_the_context_is_within_ten_percent_of_codexs_own() -> None:
    entries = read(FOLDER / "compacted.jsonl")
    report = estimate(without_usage(entries), fmt=codex.NAME)
    assert report.method == "heuristic" and report.system_tokens != DEFAULT_SYSTEM_TOKENS
    assert abs(report.context_tokens - last_total(entries)) <= 0.10 * last_total(entries)


def test_without_usage_the_system_figure_is_what_the_first_request_shows() -> None:
    # tools.jsonl's context without usage is not within 10%: its `seq 1 3000` output counts
    # ~9,200 tokens by ctxtool's estimate, ~3,200 by the fake server's characters / 4; the
    # system figure itself is checked against the first request
    entries = read(FOLDER / "tools.jsonl")
    report = estimate(without_usage(entries), fmt=codex.NAME)
    measured = first_call_system(entries)
    assert abs(report.system_tokens - measured) <= 0.10 * measured


def test_usage_when_recorded_still_decides() -> None:
    entries = read(FOLDER / "tools.jsonl")
    assert estimate(entries, fmt=codex.NAME).context_tokens == last_total(entries)


def test_a_rollout_without_base_instructions_keeps_the_default() -> None:
    entries = [e for e in without_usage(read(FOLDER / "tools.jsonl"))
               if e["type"] != "session_meta"]
    assert estimate(entries, fmt=codex.NAME).system_tokens == DEFAULT_SYSTEM_TOKENS


def test_after_a_compacted_record_the_breakdown_is_what_is_in_view() -> None:
    # the context restarts at each compacted record: what came before counts as compacted away
    entries = read(FOLDER / "compacted.jsonl")
    report = estimate(entries, fmt=codex.NAME)
    assert report.compact_boundaries == 4
    assert sum(report.breakdown.values()) == report.context_tokens == last_total(entries)
    assert report.breakdown["tool_results"] < 1_000  # the large outputs were summarized
    assert report.total_tokens > report.context_tokens + 5_000
