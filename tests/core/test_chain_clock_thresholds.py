"""Chain relinking, time parsing and the Claude Code thresholds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ctxtool.clock import parse_duration, parse_now, parse_timestamp
from ctxtool.core.sizing.tokens import context_window, thresholds
from ctxtool.errors import UsageError
from ctxtool.formats.claude_code.chain import is_compact_boundary, last_uuid, relink


def test_relink_follows_chains_of_dropped_entries() -> None:
    entries = [{"uuid": "a", "parentUuid": None}, {"uuid": "d", "parentUuid": "c"},
               {"uuid": "e", "parentUuid": "a"}]
    out = list(relink(entries, {"c": "b", "b": "a"}))
    assert out[1]["parentUuid"] == "a"
    assert out[0] is entries[0] and out[2] is entries[2]  # untouched entries are not copied
    assert entries[1]["parentUuid"] == "c"


def test_relink_survives_cycles() -> None:
    out = list(relink([{"uuid": "x", "parentUuid": "p"}], {"p": "q", "q": "p"}))
    assert out[0]["parentUuid"] in ("p", "q")


def test_boundary_and_last_uuid() -> None:
    assert is_compact_boundary({"type": "system", "subtype": "compact_boundary"})
    assert not is_compact_boundary({"type": "summary"})
    assert last_uuid([{"uuid": "a"}, {"type": "summary"}, {"uuid": "b"}, {}]) == "b"


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("5m", 300), ("5min", 300),
                                               ("12h", 43200), ("30d", 2592000), ("2w", 1209600),
                                               ("7", 604800)])
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


def test_bad_duration_and_now() -> None:
    with pytest.raises(UsageError):
        parse_duration("soon")
    with pytest.raises(UsageError):
        parse_now("yesterday")


def test_timestamps() -> None:
    expected = datetime(2026, 1, 10, 2, 8, 26, 108000, tzinfo=timezone.utc)
    assert parse_timestamp("2026-01-10T02:08:26.108Z") == expected
    assert parse_timestamp(expected.timestamp() * 1000) == expected
    assert parse_timestamp("nope") is None and parse_timestamp(None) is None


def test_default_thresholds_match_claude_code() -> None:
    t = thresholds()
    assert (t.window, t.effective, t.auto_compact, t.warning, t.blocking) == (
        200_000, 180_000, 167_000, 147_000, 197_000)


def test_one_million_window_and_env_overrides() -> None:
    assert context_window("claude-sonnet-4-5[1m]") == 1_000_000
    assert context_window("claude-sonnet-4-5") == 200_000
    t = thresholds(env={"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000",
                        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50",
                        "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "150000",
                        "DISABLE_AUTO_COMPACT": "1"})
    assert t.effective == 192_000 and t.auto_compact == 96_000
    assert t.blocking == 150_000 and not t.auto_compact_enabled
