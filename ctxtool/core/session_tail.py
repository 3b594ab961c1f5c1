"""The context of a transcript from its last lines only: the figure ``estimate`` gives, at a cost
that does not grow with the file.

``estimate`` sizes the context as the last API call's usage plus an estimate of everything after
it (:class:`ctxtool.core.meter.ContextMeter`). Nothing before that call changes the result,
except through the meter's state, which that call resets. So the entries are walked backwards
from the end until the first line of the last call (a call is streamed as several lines sharing
``message.id``: the walk goes on until a line of another call) or a compact boundary (which
resets the meter too), and only that tail is run forwards through the same :class:`Estimator`.

What the tail cannot see, passed in by the caller: the side-chain flag of the first entry (read
from the head of the file) and the number of compact boundaries (counted by a byte search). One
difference remains: a session whose earlier calls went past 200K tokens while the last one did
not gets the 1M window from ``estimate`` (which sees the earlier peak) but not from the tail;
pass ``context_window`` when it is known (the statusline JSON gives it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ctxtool.core.blocks import role_and_blocks
from ctxtool.core.chain import is_compact_boundary
from ctxtool.core.estimate import EstimateReport, Estimator
from ctxtool.core.meter import DEFAULT_SYSTEM_TOKENS, usage_of
from ctxtool.types import CLAUDE_CODE


def in_chain(entry: Mapping[str, Any], chain: bool | None) -> bool:
    """The meter's side-chain rule with the first entry's flag known in advance."""
    flag = entry.get("isSidechain")
    return chain is None or not isinstance(flag, bool) or flag == chain


def split_tail(reversed_entries: Iterator[dict[str, Any]], *, chain: bool | None,
               fmt: str = CLAUDE_CODE) -> list[dict[str, Any]]:
    """The entries from the last call's first line (or the last compact boundary) to the end,
    in file order, pulled from ``reversed_entries`` (last entry first). Stops pulling at the
    first line of an earlier call, which is consumed and dropped."""
    tail: list[dict[str, Any]] = []
    anchor: tuple[str, str] | None = None
    for entry in reversed_entries:
        if getattr(entry, "invalid", False) or not in_chain(entry, chain):
            tail.append(entry)  # the Estimator skips it as estimate does
            continue
        if is_compact_boundary(entry):
            tail.append(entry)
            break
        usage = usage_of(entry, fmt)
        if usage is not None:
            if anchor is None:
                anchor = usage.key
            elif usage.key != anchor:
                break
        tail.append(entry)
    tail.reverse()
    return tail


def _named_model(entry: dict[str, Any], fmt: str) -> bool:
    """Would :meth:`Estimator.note_model` look at this entry (an assistant message with
    content)?"""
    role, blocks = role_and_blocks(entry, fmt)
    return role == "assistant" and bool(blocks)


def estimate_tail(reversed_entries: Iterable[dict[str, Any]], *, chain: bool | None,
                  compactions: int, fmt: str = CLAUDE_CODE, source: str | None = None,
                  model: str | None = None, context_window: int | None = None,
                  system_tokens: int = DEFAULT_SYSTEM_TOKENS,
                  env: Mapping[str, str] | None = None) -> EstimateReport:
    """:func:`ctxtool.core.estimate.estimate` of a whole transcript, from its entries read
    backwards (see the module docstring). ``compactions`` is the number of compact boundaries
    in the file. The breakdown covers the tail only; the context total is the full figure."""
    entries = iter(reversed_entries)
    state = Estimator(fmt, system_tokens=system_tokens, top=0)
    state.meter.follow_chain(chain)
    for entry in split_tail(entries, chain=chain, fmt=fmt):
        state.add(entry)
    if state.model is None:  # no assistant after the boundary: the model named before it
        for entry in entries:
            if not getattr(entry, "invalid", False) and in_chain(entry, chain) \
                    and _named_model(entry, fmt):
                state.note_model(entry)
                if state.model is not None:
                    break
    state.boundaries = compactions
    return state.report(source=source, model=model, context_window=context_window, env=env)


def last_timestamp(reversed_entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The ``timestamp`` of the last entry that has one (entries read backwards)."""
    for entry in reversed_entries:
        stamp = entry.get("timestamp")
        if isinstance(stamp, str) and stamp:
            return stamp
    return None


__all__ = ["estimate_tail", "in_chain", "last_timestamp", "split_tail"]
