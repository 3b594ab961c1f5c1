"""The pure side of cleanup: last activity, saved-file references, the age decision."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ctxtool.formats.jsonl import iter_entries
from ctxtool.storage.retention import (LIVE_WINDOW, Activity, combine, decide, format_age,
                                    line_facts, period_from_settings, reference_keys,
                                    session_activity)

NOW = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)


def entries_of(*lines: dict[str, object] | bytes) -> list[object]:
    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n"
                    for line in lines)
    return list(iter_entries(data.splitlines(keepends=True), "t.jsonl", on_invalid="keep"))


def test_reference_keys_from_persisted_output_paths() -> None:
    text = ('<persisted-output>\\nOutput too large (134.7KB). Full output saved to: '
            '/Users/me/.claude/projects/-Users-me-app/69d5-a2/tool-results/toolu_011FB.txt\\n\\n'
            'Preview (first 2KB):\\n1: x</persisted-output>')
    assert reference_keys(json.dumps({"content": text}).encode()) == {
        "tool-results/69d5-a2/toolu_011FB.txt"}


@pytest.mark.parametrize("raw, key", [
    (rb'"C:\\Users\\me\\.claude\\projects\\p\\s1\\tool-results\\toolu_9.json"',
     "tool-results/s1/toolu_9.json"),
    (rb'"\/home\/me\/store\/s2\/tool-results\/call_7.txt"', "tool-results/s2/call_7.txt"),
    (rb'"see /tmp/s3/tool-results/toolu_1.txt."', "tool-results/s3/toolu_1.txt"),
    (rb'"[Image: source: ~/.claude/image-cache/s4/1.png]"', "image-cache/s4/1.png"),
    (rb'"paste at ~/.claude/paste-cache/3d4b07345212e93b.txt"', "paste-cache/3d4b07345212e93b"),
    (rb'{"pastedContents":{"1":{"contentHash":"3d4b07345212e93b"}}}', "paste-cache/3d4b07345212e93b"),
])
def test_reference_keys_in_every_spelling(raw: bytes, key: str) -> None:
    assert key in reference_keys(raw)


def test_reference_keys_ignore_plain_text_and_dot_names() -> None:
    assert reference_keys(b'{"content": "no saved files here"}') == set()
    assert reference_keys(b'"../tool-results/.."') == set()


def test_session_activity_newest_timestamp_slug_and_session() -> None:
    found = session_activity(entries_of(
        {"type": "user", "sessionId": "s1", "timestamp": "2026-01-02T00:00:00Z", "slug": "brave-owl"},
        {"type": "assistant", "sessionId": "s1", "timestamp": "2026-01-05T00:00:00.500Z"},
        {"type": "user", "sessionId": "s1", "timestamp": "2026-01-03T00:00:00Z"},  # out of order
        {"type": "file-history-snapshot", "snapshot": {"timestamp": "2026-01-06T00:00:00Z"}},
    ))
    assert found.newest == datetime(2026, 1, 6, tzinfo=timezone.utc)
    assert found.slugs == frozenset({"brave-owl"})
    assert found.session_id == "s1"


def test_session_activity_same_shape_times_compare_as_strings_others_are_parsed() -> None:
    found = session_activity(entries_of(
        {"timestamp": "2026-01-05T10:00:00.000Z"},
        {"timestamp": "2026-01-05T09:00:00.000Z"},   # same shape, older: skipped unparsed
        {"timestamp": "2026-01-05T12:30:00+02:00"},  # another shape: 10:30 UTC, newer
        {"timestamp": "2026-01-05T10:15:00Z"},       # shorter shape: parsed, 10:15 < 10:30
        {"timestamp": "2026-13-45T99:00:00.000Z"},   # the right shape but not a time
    ))
    assert found.newest == datetime(2026, 1, 5, 10, 30, tzinfo=timezone.utc)


def test_session_activity_skips_bad_lines_but_reads_their_references() -> None:
    found = session_activity(entries_of(
        {"type": "user", "timestamp": "2026-01-02T00:00:00Z"},
        b'{"timestamp": "2099-01-01T00:00:00Z", "x": "/a/s9/tool-results/toolu_2.txt" oops\n',
        {"type": "user", "timestamp": "not a time"},
    ))
    assert found.newest == datetime(2026, 1, 2, tzinfo=timezone.utc)  # the bad line's time is not trusted
    assert found.references == frozenset({"tool-results/s9/toolu_2.txt"})


def test_session_activity_on_plain_dicts_and_empty_input() -> None:
    assert session_activity([]) == Activity()
    found = session_activity([{"timestamp": 1767225600, "content": "s/tool-results/t.txt"}])
    assert found.newest == datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert found.references == frozenset({"tool-results/s/t.txt"})


def test_line_facts_reads_references_slugs_and_session_without_parsing() -> None:
    lines = [b'{"type":"user","sessionId":"s7","slug":"calm-fox","timestamp":"2026-01-01T00:00:00Z"}\n',
             b'not json at all, but it names /x/s1/tool-results/toolu_5.txt\n',
             b'{"sessionId":"other","slug":"calm-fox","content":"paste-cache/abc.txt"}\n']
    found = line_facts(lines)
    assert found.newest is None  # times are not read on this path
    assert found.references == {"tool-results/s1/toolu_5.txt", "paste-cache/abc"}
    assert found.slugs == {"calm-fox"} and found.session_id == "s7"
    parsed = session_activity(entries_of(*[json.loads(lines[0]), json.loads(lines[2])]))
    assert parsed.slugs == found.slugs and parsed.session_id == found.session_id


def test_combine_takes_the_newest_and_unions() -> None:
    a = Activity(NOW - timedelta(days=3), frozenset({"x"}), frozenset({"p"}), "s1")
    b = Activity(NOW - timedelta(days=1), frozenset({"y"}), frozenset(), None)
    both = combine([a, b, Activity()])
    assert both.newest == NOW - timedelta(days=1)
    assert both.references == {"x", "y"} and both.slugs == {"p"} and both.session_id == "s1"


def test_decide_live_window_beats_any_age_limit() -> None:
    assert decide(NOW - timedelta(minutes=59), now=NOW, older_than=timedelta(0)).status == "active"
    assert decide(NOW + timedelta(days=2), now=NOW, older_than=timedelta(days=1)).status == "active"
    old = decide(NOW - timedelta(days=31), now=NOW, older_than=timedelta(days=30))
    assert old.remove and old.status == "old" and "31d" in old.reason and "30d" in old.reason
    recent = decide(NOW - timedelta(days=29), now=NOW, older_than=timedelta(days=30))
    assert not recent.remove and recent.status == "recent"
    edge = decide(NOW - LIVE_WINDOW, now=NOW, older_than=timedelta(minutes=30))
    assert edge.remove  # exactly an hour old is no longer "within the last hour"


@pytest.mark.parametrize("settings, days, warns", [
    (None, 30, False), ({}, 30, False), ({"cleanupPeriodDays": 7}, 7, False),
    ({"cleanupPeriodDays": 0}, 1, False), ({"cleanupPeriodDays": -5}, 1, False),
    ({"cleanupPeriodDays": 0.5}, 1, False), ({"cleanupPeriodDays": 2.5}, 2.5, False),
    ({"cleanupPeriodDays": "90"}, 30, True), ({"cleanupPeriodDays": True}, 30, True),
    ({"cleanupPeriodDays": None}, 30, True), ([1, 2], 30, False),
])
def test_period_from_settings(settings: object, days: float, warns: bool) -> None:
    age, problem = period_from_settings(settings)
    assert age == timedelta(days=days)
    assert (problem is not None) == warns


def test_period_from_settings_huge_means_forever() -> None:
    age, _ = period_from_settings({"cleanupPeriodDays": 1e300})
    assert age == timedelta.max
    assert not decide(datetime(1970, 1, 1, tzinfo=timezone.utc), now=NOW, older_than=age).remove


@pytest.mark.parametrize("age, text", [
    (timedelta(days=31, hours=4), "31d 4h"), (timedelta(days=2), "2d"), (timedelta(hours=12), "12h"),
    (timedelta(hours=1, minutes=5), "1h 5m"), (timedelta(minutes=45), "45m"), (timedelta(seconds=9), "9s"),
    (timedelta(seconds=-5), "0s"),
])
def test_format_age(age: timedelta, text: str) -> None:
    assert format_age(age) == text
