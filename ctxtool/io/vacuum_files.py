"""Vacuum one session file, and undo it: shared by ``vacuum`` (a FILE, --in-place, the sweep)
and ``restore``.

A file is read twice (:func:`ctxtool.io.spool.spool`): once for the plan (the adapter's
answer, :func:`ctxtool.core.vacuuming.lines.plan_lines`), once to write it. What goes is kept
in the store with the recipe before the output is replaced (the store's files are made durable
first, storage/durable.py), so a kill at any point leaves the file as it was or vacuumed, and
either way restorable.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ctxtool.core.vacuuming.lines import FileVacuum, VacuumReport, plan_lines
from ctxtool.core.vacuuming.recipe import is_recipe, matches, rebuild
from ctxtool.errors import StoreError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import OnInvalid, bounded_lines, checked_lines, iter_entries
from ctxtool.formats.registry import adapter_for
from ctxtool.io import messages
from ctxtool.io.spool import Spooled, spool
from ctxtool.io.live import READ_BUFFER
from ctxtool.io.streams import open_output
from ctxtool.storage import durable
from ctxtool.storage.store import DEFAULT_ROOT, STORE_ENV, ToolResultStore, resolve_store
from ctxtool.storage.vacuum_store import VacuumStore

PEEK = 1000  # lines looked at for the format, the session id and the working folder
COPY_CHUNK = 1 << 20


@dataclass(frozen=True)
class SessionHead:
    """What the first lines of a session file say about it."""

    fmt: str
    session_id: str | None
    cwd: str | None


def read_head(source: Spooled, forced: str | None) -> SessionHead:
    with source.open() as stream:
        entries = iter_entries(itertools.islice(bounded_lines(stream, source.name), PEEK),
                               source.name, on_invalid="keep", exact_ints=False, final=False)
        fmt, entries = detect_format(entries, forced)
        adapter = adapter_for(fmt)
        session_id = cwd = None
        for entry in entries:
            if getattr(entry, "invalid", False):
                continue
            found, where = adapter.session_and_cwd(entry)
            session_id = session_id or found or adapter.session_id_of(entry)
            cwd = cwd or where
            if session_id and cwd:
                break
    return SessionHead(fmt, session_id, cwd)


def store_of(head: SessionHead, store_dir: str | None, source: str) -> VacuumStore:
    """The session's vacuum folder in the store ``persist`` would use for ``source``."""
    store = resolve_store(store_dir, env=os.environ, fmt=head.fmt, session_id=head.session_id,
                          cwd=head.cwd, source=source, notice=messages.warn)
    return VacuumStore(store, head.session_id)


@dataclass
class FileRun:
    """One file vacuumed (or planned): its figures and where its recipe went."""

    path: str
    fmt: str
    report: VacuumReport
    recipe: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.fmt, **self.report.as_dict(),
                "recipe": self.recipe}


def plan_file(path: str, fmt: str) -> FileRun:
    """What vacuum would take out of the session file ``path`` of format ``fmt`` (read once;
    lines that are not JSON pass, as they would through vacuum). Opened as it is: the sweep's
    plan reads thousands of files, and a session file is a regular file."""
    try:
        stream = open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed below
    except OSError as exc:
        raise StoreError(f"cannot read: {exc.strerror or exc}", source=path) from exc
    with stream:
        lines = bounded_lines(stream, path)
        return FileRun(path, fmt, plan_lines(lines, fmt, source=path).report)


def vacuum_file(path: str, target: str | None, *, forced: str | None, store_dir: str | None,
                on_invalid: OnInvalid = "keep") -> FileRun:
    """Vacuum ``path`` into ``target`` (None or "-": stdout; the path itself: in place, pinned
    by the caller). An --in-place file with nothing to take out is left alone. A line that is
    not a JSON object stops it (``on_invalid`` "error") or passes (a warning, "keep")."""
    with spool(path) as source:
        head = read_head(source, forced)
        with source.open() as stream:
            lines = bounded_lines(stream, source.name)
            if on_invalid != "keep":
                lines = checked_lines(lines, source.name, on_invalid=on_invalid,
                                      warn=messages.warn)
            plan = plan_lines(lines, head.fmt, source=source.name)
        run = FileRun(source.name, head.fmt, plan.report)
        if not plan.edits:
            if target != path:
                _copy_through(source, open_output(target))
            return run
        before = os.stat(path) if target == path else None
        vacuum = store_of(head, store_dir, source.name if path != "-" else "<stdin>")
        vacuum.store.durable = target not in (None, "-")
        work = FileVacuum(plan, vacuum.keep, source=source.name)
        with source.open() as stream, open_output(target) as out:
            for count, line in enumerate(work.write(stream)):
                out.write(line)
                if count == 1:
                    durable.crash_point("vacuum-mid-file")  # tests: killed while writing
            run.recipe = vacuum.save_recipe(work.result())
            durable.crash_point("vacuum-after-recipe")  # tests: all stored, nothing replaced
        if before is not None:
            _keep_time(path, before, plan.report.bytes_after)
        return run


def _keep_time(path: str, before: os.stat_result, size: int) -> None:
    """Give a file vacuumed in place its modification time back, unless the agent wrote to it
    meanwhile: the content is what it was to the agent, and agents list sessions by that time
    (Claude Code's --resume picker; cleanup's age, the live window)."""
    with contextlib.suppress(OSError):
        if os.stat(path).st_size == size:
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def _copy_through(source: Spooled, output: contextlib.AbstractContextManager[BinaryIO]) -> None:
    with source.open() as stream, output as out:
        for block in iter(lambda: stream.read(COPY_CHUNK), b""):
            out.write(block)


def database_keeper(fmt: str, db: Path, store_dir: str | None) -> VacuumStore:
    """Where a database-level vacuum of agent ``fmt`` keeps what it removes from ``db`` (and
    restore finds it): ``<store>/<fmt>-database/ctxtool-vacuum/``, the store chosen as for a
    file beside the database (or --store / $CTXTOOL_STORE)."""
    store = resolve_store(store_dir, env=os.environ, fmt=fmt, session_id=None, cwd=None,
                          source=str(db), notice=messages.warn)
    return VacuumStore(store, f"{fmt}-database")


# --- undoing (restore) -------------------------------------------------------------------------

def recipe_for(source: Spooled, head: SessionHead, store_dir: str | None
               ) -> tuple[dict[str, Any], VacuumStore] | None:
    """The recipe the last vacuum left for this file (matched by the bytes it wrote), and its
    store: looked for in the store vacuum would use for it or for it on stdin,
    --store/$CTXTOOL_STORE and ./ctxtool-store. A file vacuumed twice starts with what both
    wrote; the longer match is the later vacuum (what follows the earlier one's bytes is not an
    append but what the later one wrote)."""
    found: tuple[dict[str, Any], VacuumStore] | None = None
    for vacuum in _stores(head, store_dir, source.name):
        for recipe in vacuum.recipes():
            if not is_recipe(recipe) or (
                    found and recipe["vacuumed"]["bytes"] <= found[0]["vacuumed"]["bytes"]):
                continue
            with source.open() as stream:
                head_bytes = stream.read(recipe["vacuumed"]["bytes"])
            if matches(recipe, head_bytes):
                found = recipe, vacuum
    return found


def _stores(head: SessionHead, store_dir: str | None, name: str) -> Iterator[VacuumStore]:
    yield store_of(head, store_dir, name)
    yield store_of(head, store_dir, "<stdin>")  # what a vacuum of stdin used (Claude Code's)
    root = store_dir or os.environ.get(STORE_ENV)
    for other in ([root] if root else []) + [DEFAULT_ROOT]:
        yield VacuumStore(ToolResultStore(other), head.session_id)


def undo_vacuum(source: Spooled, recipe: dict[str, Any], vacuum: VacuumStore,
                out: BinaryIO) -> int:
    """Write the original of a vacuumed file (and what was appended to it since); its size."""
    size = recipe["vacuumed"]["bytes"]
    written = 0
    with source.open() as stream:
        prefix = _Prefix(stream, size)
        for line in rebuild(recipe, prefix.lines(), vacuum.load, source.name):
            out.write(line)
            written += len(line)
        for block in iter(lambda: stream.read(COPY_CHUNK), b""):
            out.write(block)
            written += len(block)
    return written


@dataclass
class _Prefix:
    """The lines of a stream's first ``size`` bytes (the stream is left right after them)."""

    stream: BinaryIO
    size: int

    def lines(self) -> Iterator[bytes]:
        left = self.size
        while left > 0:
            line = self.stream.readline(left)
            if not line:
                return
            left -= len(line)
            yield line
