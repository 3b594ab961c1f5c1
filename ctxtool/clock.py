"""Time shared by the commands that look at ages and idle gaps: parsing (``--now``, ``12h``),
printing an age (``31d 4h``), and the window within which a session may be in use."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from ctxtool.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)?\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}

# A session touched this recently may be open in Claude Code right now: never remove it.
LIVE_WINDOW = timedelta(hours=1)


def parse_timestamp(value: object) -> datetime | None:
    """An ISO-8601 string (``Z`` allowed) or epoch seconds/milliseconds as an aware datetime;
    None when it is not a time."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return datetime.fromtimestamp(seconds, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return parse_timestamp(float(text))
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def parse_now(value: str | None) -> datetime:
    """``--now`` as a datetime; the clock when not given."""
    if value is None:
        return datetime.now(timezone.utc)
    parsed = parse_timestamp(value)
    if parsed is None:
        raise UsageError(f"--now: not a time: {value!r}", hint="use ISO-8601 like 2026-01-31T12:00:00Z or epoch seconds")
    return parsed


def parse_duration(value: str, *, option: str = "duration") -> timedelta:
    """``90s``, ``5m``/``5min``, ``12h``, ``30d``, ``2w``; a bare number means days."""
    match = _DURATION.match(value)
    if not match:
        raise UsageError(f"{option}: not a duration: {value!r}", hint="use e.g. 90s, 5m, 12h, 30d or 2w")
    unit = (match.group(2) or "d").lower()
    return timedelta(seconds=float(match.group(1)) * _UNITS[unit])


def format_age(age: timedelta) -> str:
    """``31d 4h``, ``12h``, ``45m``: short and exact enough for a log line."""
    seconds = max(0, int(age.total_seconds()))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    return f"{minutes}m" if minutes else f"{seconds}s"
