"""What `cleanup` needs to know from a transcript, and how it decides by age. Pure: entries and
bytes in, facts out; the filesystem walk lives in ``ctxtool.storage.cleanup_tree``.

A session's last activity is the newest ``timestamp`` written inside its transcripts; the storage
layer combines it with file modification times. References are the saved files a transcript still
points at (``<session>/tool-results/<id>.txt``, ``image-cache/<session>/<n>.png``,
``paste-cache/<hash>.txt``), reduced to keys that do not depend on where ``~/.claude`` lives, so a
transcript written on another machine or under another root still protects the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

# LIVE_WINDOW and format_age live in clock, which --in-place (io/live.py) imports without this
from ctxtool.clock import LIVE_WINDOW, format_age, parse_timestamp
DEFAULT_PERIOD_DAYS = 30  # Claude Code's own default for cleanupPeriodDays
MIN_PERIOD_DAYS = 1

# Path separators inside raw JSON bytes: "/", an escaped "\/", or a Windows "\\".
_UTC_SHAPE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_SEP = rb"[/\\]+"
_NAME = rb"([\w.\-]+)"
_PATTERNS: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("tool-results", re.compile(_NAME + _SEP + rb"tool-results" + _SEP + _NAME)),
    ("image-cache", re.compile(rb"image-cache" + _SEP + _NAME + _SEP + _NAME)),
    ("paste-cache", re.compile(rb"paste-cache" + _SEP + _NAME)),
    ("paste-cache", re.compile(rb'"contentHash"\s*:\s*"([\w.\-]+)"')),
)


@dataclass(frozen=True)
class Activity:
    """Facts read from one or more transcripts of a session."""

    newest: datetime | None = None
    references: frozenset[str] = frozenset()
    slugs: frozenset[str] = frozenset()
    session_id: str | None = None  # the first ``sessionId`` seen (links legacy agent-*.jsonl)


@dataclass
class _Collector:
    newest: datetime | None = None
    newest_text: str = ""  # the string ``newest`` was read from
    references: set[str] = field(default_factory=set)
    slugs: set[str] = field(default_factory=set)
    session_id: str | None = None

    def see_time(self, entry: Mapping[str, Any]) -> None:
        text = entry.get("timestamp")
        text = text if isinstance(text, str) else ""
        shaped = _UTC_SHAPE.fullmatch(text) is not None
        if shaped and len(text) == len(self.newest_text) and text <= self.newest_text:
            # the same fixed UTC shape as the newest so far ("2026-01-24T06:33:36.804Z") sorts
            # like the time it names: this one is not newer, no need to parse it
            return
        stamp = _entry_time(entry)
        if stamp is not None and (self.newest is None or stamp > self.newest):
            self.newest = stamp
            self.newest_text = text if shaped else ""

    def finish(self) -> Activity:
        return Activity(self.newest, frozenset(self.references), frozenset(self.slugs),
                        self.session_id)


def reference_key(kind: str, *names: str) -> str:
    """The key under which a saved file is protected: ``tool-results/<dir>/<file>``,
    ``image-cache/<session>/<file>`` or ``paste-cache/<stem>``."""
    cleaned = [name.rstrip(".") for name in names]
    if kind == "paste-cache":
        cleaned = [cleaned[-1].split(".", 1)[0]]
    return "/".join([kind, *cleaned])


def reference_keys(data: bytes) -> set[str]:
    """Every saved-file reference in a chunk of raw transcript bytes (one line or a whole file)."""
    if not (b"tool-results" in data or b"-cache" in data or b"contentHash" in data):
        return set()  # most lines: three fast substring scans and done
    keys: set[str] = set()
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(data):
            names = [group.decode("ascii", "replace") for group in match.groups()]
            if all(name.strip(".") for name in names):
                keys.add(reference_key(kind, *names))
    return keys


def _entry_time(entry: Mapping[str, Any]) -> datetime | None:
    stamp = parse_timestamp(entry.get("timestamp"))
    if stamp is None and isinstance(entry.get("snapshot"), Mapping):
        # file-history-snapshot lines carry their time one level down
        stamp = parse_timestamp(entry["snapshot"].get("timestamp"))
    return stamp


def _raw_bytes(entry: Mapping[str, Any]) -> bytes:
    raw = getattr(entry, "raw", None)
    if isinstance(raw, bytes):
        return raw
    import orjson  # entries built by hand (tests, the Python API) have no raw bytes

    return orjson.dumps(entry, default=str)


def session_activity(entries: Iterable[Mapping[str, Any]]) -> Activity:
    """Newest timestamp, saved-file references, plan slugs and session id of a transcript.

    Streams: one entry at a time, keeping only the running facts. Invalid passthrough lines
    (``entry.invalid``) still count for references, since their bytes may name a file.
    """
    found = _Collector()
    for entry in entries:
        found.references |= reference_keys(_raw_bytes(entry))
        if getattr(entry, "invalid", False):
            continue
        found.see_time(entry)
        slug = entry.get("slug")
        if isinstance(slug, str) and slug:
            found.slugs.add(slug)
        if found.session_id is None and isinstance(entry.get("sessionId"), str):
            found.session_id = entry["sessionId"]
    return found.finish()


_SLUG = re.compile(rb'"slug"\s*:\s*"([^"\\]+)"')
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]+)"')


def line_facts(lines: Iterable[bytes]) -> Activity:
    """References, plan slugs and session id read straight from raw lines, without parsing JSON
    or times: for a transcript whose file times alone already keep it (newest is None).

    Streams. It may see a ``"slug"`` nested deeper than the top level; that can only link a plan
    to a session that is being kept, so it errs on the side of keeping.
    """
    found = _Collector()
    for line in lines:
        found.references |= reference_keys(line)
        if b'"slug"' in line:
            found.slugs.update(slug.decode("utf-8", "replace") for slug in _SLUG.findall(line))
        if found.session_id is None and b'"sessionId"' in line:
            match = _SESSION_ID.search(line)
            found.session_id = match.group(1).decode("utf-8", "replace") if match else None
    return found.finish()


def combine(activities: Iterable[Activity]) -> Activity:
    """One session's activity across its transcript and its subagents' transcripts."""
    newest: datetime | None = None
    references: set[str] = set()
    slugs: set[str] = set()
    session_id: str | None = None
    for item in activities:
        if item.newest is not None and (newest is None or item.newest > newest):
            newest = item.newest
        references |= item.references
        slugs |= item.slugs
        session_id = session_id or item.session_id
    return Activity(newest, frozenset(references), frozenset(slugs), session_id)


class Retention(NamedTuple):
    """An agent's own retention rule (Gemini CLI's ``general.sessionRetention``): cleanup's
    default for that agent's sessions when ``--older-than`` is not given. Sessions older than
    ``older_than`` go (None: none by age), and in each project all but the newest
    ``keep_newest`` (None: no count)."""

    older_than: timedelta | None
    keep_newest: int | None
    origin: str  # where it comes from, for the plan's reasons
    problem: str | None = None  # why the agent applies none (a warning), if so


class Verdict(NamedTuple):
    remove: bool
    status: str  # "old" (remove), "active" (within the live window) or "recent"
    reason: str


def decide(last_activity: datetime, *, now: datetime, older_than: timedelta,
           live_window: timedelta = LIVE_WINDOW) -> Verdict:
    """Whether something last active at ``last_activity`` goes, and why.

    The live window wins over any ``older_than``: a session written to within the last hour (or
    stamped in the future by a skewed clock) may be open right now.
    """
    age = now - last_activity
    if age < live_window:
        window = format_age(live_window)
        return Verdict(False, "active", f"active: modified within the last {window}")
    limit = format_age(older_than)
    if age >= older_than:
        return Verdict(True, "old", f"inactive for {format_age(age)} (limit {limit})")
    return Verdict(False, "recent", f"recent: inactive for {format_age(age)} (limit {limit})")


def period_from_settings(settings: object) -> tuple[timedelta, str | None]:
    """The default age from a parsed settings.json: ``cleanupPeriodDays`` (at least 1), else 30
    days. Returns the age and a warning when the setting is present but unusable."""
    if not isinstance(settings, Mapping) or "cleanupPeriodDays" not in settings:
        return timedelta(days=DEFAULT_PERIOD_DAYS), None
    value = settings["cleanupPeriodDays"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return (timedelta(days=DEFAULT_PERIOD_DAYS),
                f"cleanupPeriodDays is not a number ({value!r}); using {DEFAULT_PERIOD_DAYS} days")
    try:
        return timedelta(days=max(MIN_PERIOD_DAYS, value)), None
    except OverflowError:  # 1e300 days: keep everything, which is what the user meant
        return timedelta.max, None
