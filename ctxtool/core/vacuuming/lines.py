"""Vacuum one session file: ask its adapter which lines go (:meth:`plan_lines`, one pass, which
is all a plan needs), then write the file without them (:meth:`FileVacuum.write`, a second
pass), keeping every line taken out in the store first and recording the recipe that rebuilds
the original (:mod:`.recipe`).
"""

from __future__ import annotations

import hashlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ctxtool.core.vacuuming.recipe import RecipeBuilder, pieces_of
from ctxtool.errors import OperationError
from ctxtool.formats.registry import adapter_for
from ctxtool.formats.vacuum import LineEdit

Keep = Callable[[bytes], str]  # store bytes under their SHA-256; returns the digest


@dataclass
class VacuumReport:
    """One session (or a run's total): its bytes before and after, what went, by reason."""

    bytes_before: int = 0
    bytes_after: int = 0
    lines: int = 0
    removed: Counter[str] = field(default_factory=Counter)  # reason -> lines changed

    @property
    def saved(self) -> int:
        return self.bytes_before - self.bytes_after

    def add(self, other: VacuumReport) -> None:
        self.bytes_before += other.bytes_before
        self.bytes_after += other.bytes_after
        self.lines += other.lines
        self.removed.update(other.removed)

    def as_dict(self) -> dict[str, Any]:
        return {"bytes_before": self.bytes_before, "bytes_after": self.bytes_after,
                "bytes_saved": self.saved, "lines": self.lines,
                "removed": dict(sorted(self.removed.items()))}


@dataclass
class LinePlan:
    """What the adapter said about one file: its edits by line, and the figures."""

    fmt: str
    edits: dict[int, LineEdit]
    report: VacuumReport


def plan_lines(lines: Iterable[bytes], fmt: str, *, source: str) -> LinePlan:
    """Read ``lines`` once and ask the adapter of ``fmt`` what may go. Raises OperationError
    when an edit breaks the rules of :mod:`ctxtool.formats.vacuum` (a bug in the adapter, or
    a file that is not what it seemed)."""
    lengths = array("q")

    def counted() -> Iterator[bytes]:
        for line in lines:
            lengths.append(len(line))
            yield line
        ended.append(not lengths or line.endswith(b"\n"))

    ended: list[bool] = []
    stream = counted()
    edits = list(adapter_for(fmt).vacuum_lines(stream))
    for _ in stream:  # the adapter may stop early; the figures count every line
        pass
    checked = _checked(edits, len(lengths), last_complete=bool(ended and ended[0]),
                       source=source)
    report = VacuumReport(bytes_before=sum(lengths), lines=len(lengths))
    report.bytes_after = report.bytes_before - sum(
        lengths[e.index] - len(e.new or b"") for e in checked.values())
    report.removed.update(e.reason for e in checked.values())
    return LinePlan(fmt, checked, report)


def _checked(edits: list[LineEdit], count: int, *, last_complete: bool,
             source: str) -> dict[int, LineEdit]:
    by_line: dict[int, LineEdit] = {}
    previous = -1
    for edit in edits:
        problem = _problem(edit, previous, count, last_complete, by_line)
        if problem:
            raise OperationError(f"vacuum: line {edit.index + 1}: {problem} (an adapter bug); "
                                 "nothing changed", source=source)
        by_line[edit.index] = edit
        previous = edit.index
    return by_line


def _problem(edit: LineEdit, previous: int, count: int, last_complete: bool,
             done: dict[int, LineEdit]) -> str | None:
    if not previous < edit.index < count:
        return "edits out of order or past the end"
    if edit.index == count - 1 and not last_complete:
        return "the last line has no newline yet (it may be being written)"
    if edit.copy_of is not None:
        if not 0 <= edit.copy_of < edit.index or edit.copy_of in done:
            return f"a copy of line {edit.copy_of + 1}, which is not an earlier kept line"
        if edit.new is not None:
            return "a copy cannot have a new line"
    elif edit.new is not None and not edit.new.endswith(b"\n"):
        return "a new line must end with a newline"
    return None


class FileVacuum:
    """The second pass: the vacuumed file's lines, with the recipe built along."""

    def __init__(self, plan: LinePlan, keep: Keep, *, source: str) -> None:
        self.plan = plan
        self.keep = keep
        self.source = source
        self.recipe = RecipeBuilder(plan.fmt)
        # lines others are copies of: their place in the output and a digest to check
        self._targets = {e.copy_of: (-1, b"") for e in plan.edits.values()
                         if e.copy_of is not None}

    def write(self, lines: Iterable[bytes]) -> Iterator[bytes]:
        edits = self.plan.edits
        for index, line in enumerate(lines):
            edit = edits.get(index)
            if edit is None:
                at = self.recipe.kept(line)
                if index in self._targets:
                    self._targets[index] = (at, hashlib.sha256(line).digest())
                yield line
            elif edit.copy_of is not None:
                at, digest = self._targets[edit.copy_of]
                if hashlib.sha256(line).digest() != digest:
                    raise OperationError(f"vacuum: line {index + 1} is not a copy of line "
                                         f"{edit.copy_of + 1}; nothing changed",
                                         source=self.source)
                self.recipe.copied(line, at)
            else:
                self.recipe.replaced(line, pieces_of(line, edit.payloads, self.keep,
                                                     inline=edit.inline), edit.new)
                if edit.new is not None:
                    yield edit.new

    def result(self) -> dict[str, Any]:
        """The recipe (once :meth:`write` was read to the end)."""
        recipe = self.recipe.recipe()
        if recipe["original"]["bytes"] != self.plan.report.bytes_before:
            raise OperationError("vacuum: the file changed between its two readings; nothing "
                                 "changed", source=self.source)
        return recipe
