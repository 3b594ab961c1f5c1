"""Progress bars on stderr (tqdm), off when stderr is not a terminal or with --quiet.

tqdm is imported only when a bar will actually be drawn, so pipelines pay nothing for it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from ctxtool.io import messages

T = TypeVar("T")


def bars_enabled() -> bool:
    return not messages._state["quiet"] and sys.stderr is not None and sys.stderr.isatty()


def progress(iterable: Iterable[T], *, total: float | None = None, desc: str = "",
             unit: str = "it", weight: Any = None) -> Iterator[T]:
    """Yield from ``iterable`` while drawing a bar; ``weight(item)`` advances it (default 1)."""
    if not bars_enabled():
        yield from iterable
        return
    from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no type hints

    bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=None, leave=False,
               unit_scale=unit == "B", dynamic_ncols=True)
    messages.set_bar_active(True)
    try:
        for item in iterable:
            bar.update(weight(item) if weight else 1)
            yield item
    finally:
        messages.set_bar_active(False)
        with contextlib.suppress(Exception):
            bar.close()


def byte_progress(path: str, lines: Iterable[bytes]) -> Iterable[bytes]:
    """``lines`` of the file at ``path``, drawing a bar that each line advances by its bytes;
    ``lines`` as they are when no bar is drawn or the size is unknown (stdin: ``-``)."""
    if path == "-" or not bars_enabled():
        return lines
    try:
        total = os.path.getsize(path)
    except OSError:
        return lines
    return progress(lines, total=total, desc=os.path.basename(path), unit="B", weight=len)
