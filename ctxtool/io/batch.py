"""Runs over several files that treat each file on its own (estimate's reports, validate,
every --in-place rewrite): a file that cannot be read or worked on is reported in one line and
the run goes on with the rest; the command then exits 1, "partly failed" (checked once, after
the command, in :class:`ctxtool.cli.CtxtoolGroup`).

Commands that join their inputs into one output (a transform to stdout or -o, estimate
--per-entry, filter-compacted) do not go on: a transcript with one input left out of its middle
would be a wrong transcript, so they stop at the first input they cannot read, as for one input.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ctxtool.errors import InputError, OperationError, StoreError
from ctxtool.io.messages import error

SHOWN = 3  # failed files named in the closing line; each had its own line already
_failed: list[str] = []
_run = {"files": 0}


def reset() -> None:
    _failed.clear()
    _run["files"] = 0


@contextlib.contextmanager
def each(name: str, *, of: int) -> Iterator[None]:
    """Work on file ``name`` of a run over ``of`` files: an input or store error about it (or
    any file: it has a name) is reported and the run goes on; one about no file (stdout closed)
    stops it, and so does any error of a run over one file (exit code of its own)."""
    _run["files"] = of
    try:
        yield
    except (InputError, StoreError) as exc:
        if exc.source is None or of < 2:
            raise
        error(exc.format())
        if name not in _failed:
            _failed.append(name)


def failed() -> list[str]:
    """The files of this run that failed so far."""
    return list(_failed)


def check() -> None:
    """OperationError (exit 1) when some file of the run failed."""
    if not _failed:
        return
    named = ", ".join(_failed[:SHOWN]) + (f" and {len(_failed) - SHOWN} more"
                                          if len(_failed) > SHOWN else "")
    rest = _run["files"] - len(_failed)
    raise OperationError(f"{len(_failed)} of {_run['files']} files failed ({named})"
                         + ("; the others were done or skipped" if rest > 0 else ""))
