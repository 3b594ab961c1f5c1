"""The context of a transcript from its last lines only: the figure ``estimate`` gives, at a cost
that does not grow with the file.

``estimate`` sizes the context as the last API call's usage plus an estimate of everything after
it (:class:`ctxtool.core.sizing.meter.ContextMeter`). Nothing before that call changes the result,
except through the meter's state, which that call resets. So the entries are walked backwards
from the end until the first line of the last call (a call is streamed as several lines sharing
``message.id``: the walk goes on until a line of another call) or a compaction record (the
adapter's ``is_compaction_record``: Claude Code's compact boundary, Codex CLI's ``compacted``;
it resets the meter too), and only that tail is run forwards through the same
:class:`Estimator`. Nothing here knows an agent: the adapter of ``fmt`` says what a usage anchor
and a compaction record are.

What the tail cannot see, passed in by the caller: the side-chain flag of the first entry (read
from the head of the file) and the number of compact boundaries (counted by a byte search). One
difference remains: a session whose earlier calls went past 200K tokens while the last one did
not gets the 1M window from ``estimate`` (which sees the earlier peak) but not from the tail;
pass ``context_window`` when it is known (the statusline JSON gives it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

from ctxtool.core.messages.blocks import role_and_blocks
from ctxtool.core.sizing.estimate import EstimateReport, Estimator, estimate
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS, usage_of
from ctxtool.formats.limits import AgentSettings
from ctxtool.formats.adapter import SessionMarks
from ctxtool.formats.registry import adapter_for

T = TypeVar("T")
HEAD_BYTES = 64 << 10  # the head read for the first entry's side-chain flag (and a listing's row)


def in_chain(entry: Mapping[str, Any], chain: bool | None) -> bool:
    """The meter's side-chain rule with the first entry's flag known in advance."""
    flag = entry.get("isSidechain")
    return chain is None or not isinstance(flag, bool) or flag == chain


def _always(_: Any) -> bool:
    return True


def first_chain(entries: Iterable[Mapping[str, Any]]) -> bool | None:
    """The ``isSidechain`` flag of the first entry that has one: the chain ``estimate``
    measures (pulls entries only until it is found)."""
    for entry in entries:
        flag = entry.get("isSidechain")
        if isinstance(flag, bool):
            return flag
    return None


def split_tail(reversed_items: Iterable[T], *, parse: Callable[[T], dict[str, Any] | None],
               chain: bool | None, fmt: str,
               may_stop: Callable[[T], bool] = _always) -> list[dict[str, Any]]:
    """The entries from the last call's first line (or the last compact boundary) to the end,
    in file order, from ``reversed_items`` (last first, pulled only as far as needed; the
    first line of an earlier call is pulled and dropped). ``parse`` makes an item an entry
    (None: not one, passed over). ``may_stop`` says cheaply whether an item could be a call
    or a boundary; items it rules out are parsed only if they end up in the tail."""
    is_compaction = adapter_for(fmt).is_compaction_record
    kept: list[Any] = []  # last first: entries, or items not parsed yet
    first_of_call = None  # index in kept of the earliest line of the last call seen so far
    anchor: tuple[str, str] | None = None
    for item in reversed_items:
        if not may_stop(item):
            kept.append(item)
            continue
        entry = parse(item)
        if entry is None or getattr(entry, "invalid", False) or not in_chain(entry, chain):
            continue  # the Estimator would skip it as estimate does
        if is_compaction(entry):
            kept.append(entry)
            first_of_call = None
            break
        usage = usage_of(entry, fmt)
        if usage is not None:
            if anchor is None:
                anchor = usage.key
            elif usage.key != anchor:
                break
            first_of_call = len(kept)
        kept.append(entry)
    if first_of_call is not None:  # what precedes the call's first line changes nothing
        del kept[first_of_call + 1:]
    tail = [e if isinstance(e, dict) else parse(e) for e in reversed(kept)]
    return [e for e in tail if e is not None]


def _named_model(entry: dict[str, Any], fmt: str) -> bool:
    """Would :meth:`Estimator.note_model` look at this entry (an assistant message with
    content, or a line that is no message, such as Codex CLI's turn_context)?"""
    role, blocks = role_and_blocks(entry, fmt)
    return (role == "assistant" and bool(blocks)) or role is None


def estimate_tail(tail: list[dict[str, Any]], *, before: Iterable[T],
                  parse: Callable[[T], dict[str, Any] | None], chain: bool | None,
                  compactions: int, fmt: str, source: str | None = None,
                  model: str | None = None, context_window: int | None = None,
                  system_tokens: int = DEFAULT_SYSTEM_TOKENS,
                  env: Mapping[str, str] | None = None,
                  settings: AgentSettings = None,
                  named: Callable[[T], bool] = _always) -> EstimateReport:
    """:func:`ctxtool.core.sizing.estimate.estimate` of a whole transcript from its ``tail`` (see
    :func:`split_tail`). ``before``: the items before the tail, last first, searched for the
    model only when no assistant message in the tail names one (``named``: a cheap test that
    an item could). ``compactions``: the number of compact boundaries in the file. The
    breakdown covers the tail only; the context total is the full figure."""
    state = Estimator(fmt, system_tokens=system_tokens, top=0)
    state.meter.follow_chain(chain)
    state.view = tail  # what the agent's own limits are read from (Codex: its last window)
    for entry in tail:
        state.add(entry)
    if state.model is None:  # no assistant after the boundary: the model named before it
        for item in before:
            earlier = parse(item) if named(item) else None
            if earlier is not None and not getattr(earlier, "invalid", False) \
                    and in_chain(earlier, chain) and _named_model(earlier, fmt):
                state.note_model(earlier)
                if state.model is not None:
                    break
    state.boundaries = compactions
    return state.report(source=source, model=model, context_window=context_window, env=env,
                        settings=settings)


def last_timestamp(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The ``timestamp`` of the last entry that has one."""
    for entry in reversed(list(entries)):
        stamp = entry.get("timestamp")
        if isinstance(stamp, str) and stamp:
            return stamp
    return None


class TailOptions(NamedTuple):
    """What the tail estimate needs beyond the file (the statusline knows the window)."""

    model: str | None = None
    context_window: int | None = None
    env: Mapping[str, str] | None = None
    settings: AgentSettings = None  # the agent's settings files (Claude Code's settings.json)


def marks_of(fmt: str) -> SessionMarks:
    marks = adapter_for(fmt).session_marks
    if marks is None:
        raise ValueError(f"{fmt} sessions are not read from their ends")
    return marks


def since_view_start(lines: Iterable[bytes], *, parse: Callable[[bytes], dict[str, Any] | None],
                     fmt: str) -> list[dict[str, Any]] | None:
    """The entries from the last line the agent rebuilds its view from (the adapter's
    ``is_view_start``: Gemini CLI's checkpoint) to the end, in file order, from ``lines``, last
    first (pulled only as far as that line); None when none of them is one (an agent that reads
    its session whole then needs all of it). Only lines holding the adapter's mark are parsed
    on the way."""
    adapter = adapter_for(fmt)
    mark = adapter.session_marks.view_start if adapter.session_marks is not None else None
    if mark is None:
        return None
    is_view_start = adapter.is_view_start
    kept: list[bytes] = []
    for line in lines:
        kept.append(line)
        if mark in line and (entry := parse(line)) is not None and is_view_start(entry):
            return [e for e in map(parse, reversed(kept)) if e is not None]
    return None


def view_report(first: dict[str, Any], lines: Iterable[bytes], *,
                parse: Callable[[bytes], dict[str, Any] | None], fmt: str,
                **options: Any) -> EstimateReport | None:
    """``estimate``'s report (``options`` are its own) of a session its agent reads whole,
    from the session's ``first`` entry and its lines since the last view start
    (:func:`since_view_start`; ``lines`` last first). None when there is no view start or no
    call since it anchors the figure: the figure then rests on the whole session."""
    since = since_view_start(lines, parse=parse, fmt=fmt)
    if since is None:
        return None
    report = estimate([first, *since], fmt=fmt, **options)
    return report if report.anchor is not None else None


def report_of_tail(lines: Iterator[bytes], *, parse: Callable[[bytes], dict[str, Any] | None],
                   chain: bool | None, fmt: str, source: str | None = None,
                   options: TailOptions = TailOptions(), compactions: int = 0,
                   ) -> tuple[EstimateReport, str | None]:
    """``estimate``'s report (context now, window; ``compactions`` as given) and the last
    entry's timestamp, from a transcript's lines, last first (pulled only as far as needed).
    Only the lines the adapter's marks say could be a call or a compaction are parsed on the
    way (``parse``: a line's object, or None)."""
    marks = marks_of(fmt)

    def may_stop(line: bytes) -> bool:
        return marks.usage in line or marks.compaction in line

    def may_name_model(line: bytes) -> bool:
        return marks.model is not None and marks.model in line

    tail = split_tail(lines, parse=parse, may_stop=may_stop, chain=chain, fmt=fmt)
    report = estimate_tail(tail, before=lines if marks.model else (), parse=parse,
                           named=may_name_model, chain=chain, compactions=compactions, fmt=fmt,
                           source=source, model=options.model,
                           context_window=options.context_window, env=options.env,
                           settings=options.settings)
    return report, last_timestamp(tail)


__all__ = ["HEAD_BYTES", "TailOptions", "estimate_tail", "first_chain", "in_chain", "last_timestamp",
           "marks_of", "report_of_tail", "since_view_start", "split_tail", "view_report"]
