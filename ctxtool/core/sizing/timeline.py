"""Context size over a session: one point per API call, compactions marked.

Each point is the prompt an API call sent (its usage: input + cache creation + cache read),
the streamed lines of one call merged as ``estimate`` merges them. Formats without recorded
usage get a point per assistant message: the context ``ContextMeter`` measured just before it.
Compact boundaries (with their trigger and ``preTokens``) and microcompact boundaries (with
``tokensSaved``) are marks between points. The last point, ``now``, is what ``estimate`` calls
the context now. Streams: one small record per call is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ctxtool.core.messages.blocks import role_of
from ctxtool.core.sizing.meter import ContextMeter, usage_of
from ctxtool.core.sizing.tokens import Thresholds
from ctxtool.formats.adapter import COMPACT_MARK
from ctxtool.formats.registry import adapter_for

E = TypeVar("E", bound=dict[str, Any])


@dataclass
class Point:
    """One API call: its prompt size (``tokens``) and when it happened."""

    tokens: int
    timestamp: str | None = None
    measured: bool = True  # False: estimated (no usage recorded)


@dataclass(frozen=True)
class Mark:
    """A compaction (``compact``) or a microcompaction between calls ``before`` and
    ``before + 1`` (0-based index of the last point before it; -1: before any call)."""

    kind: str
    before: int
    trigger: str | None = None
    pre_tokens: int | None = None
    saved: int | None = None
    timestamp: str | None = None


@dataclass
class Timeline:
    points: list[Point] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    now: int = 0  # the context now, as estimate reports it
    limits: Thresholds | None = None
    model: str | None = None
    source: str | None = None

    @property
    def peak(self) -> int:
        return max([p.tokens for p in self.points] + [self.now, 0])

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "model": self.model, "now": self.now,
                "points": [vars(p) for p in self.points],
                "marks": [vars(m) for m in self.marks],
                "thresholds": self.limits.as_dict() if self.limits else None}


class TimelineBuilder:
    """Feed every entry in file order with :meth:`add`; read :attr:`timeline`."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.meter = ContextMeter(fmt)
        self.timeline = Timeline()
        self._key: tuple[str, str] | None = None  # the call of the last point
        self._usage_seen = False  # then assistant messages without usage are no calls
        self._context_mark = adapter_for(fmt).context_mark

    def add(self, entry: dict[str, Any]) -> None:
        if getattr(entry, "invalid", False) or not self.meter.in_context(entry) \
                or self.meter.repeated(entry):
            return
        mark = self._context_mark(entry)
        if mark is not None:  # a compaction or a clearing: marked (and measured by the meter)
            self._mark(Mark("compact" if mark.kind == COMPACT_MARK else "microcompact",
                            len(self.timeline.points) - 1, trigger=mark.trigger,
                            pre_tokens=mark.pre_tokens, saved=mark.saved or None,
                            timestamp=_stamp(entry)))
            self.meter.account(entry)
            return
        before = self.meter.context_tokens
        self.meter.account(entry)
        usage = usage_of(entry, self.fmt)
        points = self.timeline.points
        stamp = _stamp(entry)
        if usage is not None:
            self._usage_seen = True
            if usage.key == self._key and points:
                points[-1].tokens = max(points[-1].tokens, usage.prompt_tokens)
            else:
                self._key = usage.key
                points.append(Point(usage.prompt_tokens, stamp))
        elif not self._usage_seen and role_of(entry, self.fmt) == "assistant":
            points.append(Point(before, stamp, measured=False))

    def _mark(self, mark: Mark) -> None:
        self.timeline.marks.append(mark)


def _stamp(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("timestamp")
    return value if isinstance(value, str) else None


def observe(entries: Iterable[E], builder: TimelineBuilder) -> Iterator[E]:
    """``entries`` unchanged, each one shown to ``builder`` on the way (to draw the timeline
    in the same pass as another consumer, such as :func:`ctxtool.core.sizing.estimate.estimate`)."""
    for entry in entries:
        builder.add(entry)
        yield entry


__all__ = ["Mark", "Point", "Timeline", "TimelineBuilder", "observe"]
