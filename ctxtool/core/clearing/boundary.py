"""Savings made before the last usage anchor, for the clearing record an agent appends
(:meth:`ctxtool.formats.adapter.FormatAdapter.clearing_record`; Claude Code's
``microcompact_boundary``): ``snip`` and ``persist`` track them while streaming."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.formats.registry import adapter_for


@dataclass
class AnchorSavings:
    """Savings a streaming transform made before the last API call with recorded usage.

    ``estimate`` takes that call's usage as exact, and it still counts the content as it was:
    only savings before it need a boundary (later entries are estimated as they are now).
    Feed every output entry in order with :meth:`note`, passing the savings made so far; a
    compaction starts over (what preceded it is not in the anchor's context). Only the chain
    ``estimate`` measures counts (the first entry's ``isSidechain``): savings in a side chain
    and a side chain's calls are not the main context's."""

    fmt: str
    before_anchor: int = 0  # savings the last anchor still counts
    last: dict[str, Any] | None = None  # the last entry seen
    last_with_uuid: dict[str, Any] | None = None  # the last line an appended one chains on
    _base: int = 0  # main-chain savings made before the last compaction
    _main: int = 0  # savings made in main-chain entries so far
    _total: int = 0  # savings made so far (the caller's running figure)
    _chain: ContextMeter | None = None  # follows the chain measured (its in_context)

    def __post_init__(self) -> None:
        # bound once: note() runs for every line persist writes
        adapter = adapter_for(self.fmt)
        self._is_compaction, self._usage_of = adapter.is_compaction_record, adapter.usage_of
        self._in_context: Callable[[dict[str, Any]], bool] | None = None

    def note(self, entry: dict[str, Any], saved: int) -> None:
        self.last = entry
        if getattr(entry, "invalid", False):
            self._total = saved
            return
        made, self._total = saved - self._total, saved
        if self._in_context is None:
            self._chain = ContextMeter(self.fmt)
            self._in_context = self._chain.in_context
        if not self._in_context(entry):
            return
        self._main += made
        if isinstance(entry.get("uuid"), str):
            self.last_with_uuid = entry
        if self._is_compaction(entry):
            self._base, self.before_anchor = self._main, 0
        # an anchor would set before_anchor to what it is already when nothing was saved since
        # the last one: the usage (a tuple built for every assistant line) is read only when
        # that figure moved, which in persist is after the few lines it changes
        elif self._main - self._base != self.before_anchor and self._usage_of(entry) is not None:
            self.before_anchor = self._main - self._base


__all__ = ["AnchorSavings"]
