"""``ctxtool restore``: put tool results saved by persist (or Claude Code) back in place."""

from __future__ import annotations

import os

import click

from ctxtool.cli.persist import on_its_own, output_for, units
from ctxtool.core.clearing.restore import RestoreReport, restore
from ctxtool.errors import StoreError
from ctxtool.formats.jsonl import write_entries
from ctxtool.io import messages
from ctxtool.io.options import (ReportOptions, in_place_options, io_options, report_options,
                                 store_options)
from ctxtool.io.streams import IOOptions, is_rereadable, read_transcript
from ctxtool.storage.store import DEFAULT_ROOT, STORE_ENV, ToolResultStore, store_for_entries


@click.command("restore")
@io_options
@in_place_options()
@click.option("--strict", is_flag=True,
              help="A placeholder whose file is missing or unreadable, or a text that looks like "
                   "a placeholder in no form restore knows, is an error (exit 4) and nothing is "
                   "written; by default it stays in place with a warning.")
@store_options
@report_options
def restore_cmd(io: IOOptions, strict: bool, store_dir: str | None, report: ReportOptions) -> None:
    """Put tool results that were saved to files back into the transcript.

    Every <persisted-output> block (ctxtool's or Claude Code's own) and every snip or
    microcompact placeholder naming a saved file gets its original content back, string or
    block list, exactly as it was: `ctxtool persist | ctxtool restore` gives back the input byte
    for byte. Files are read from the absolute paths in the placeholders, only inside a store
    (one ctxtool made, --store DIR, $CTXTOOL_STORE, ./ctxtool-store, Claude Code's projects
    folder) or FILE's own folder (FILE.jsonl -> FILE/): a placeholder naming anything else is
    refused with a warning (exit 4 with --strict). With --store DIR (or $CTXTOOL_STORE) a
    missing file is also looked for in DIR/<session>/tool-results/.
    A FILE `ctxtool vacuum` wrote gets back the original it was made from, byte for byte (with
    what the agent appended since), and nothing else that run: a second restore brings back
    tool results persisted before. Its recipe is looked for in the store vacuum used for it,
    --store DIR / $CTXTOOL_STORE and ./ctxtool-store. --in-place on an OpenCode database puts
    back the rows a vacuum removed from it.
    Gemini CLI sessions get the response behind each <tool_output_masked> preview that names a
    ctxtool store file back, wherever the record is (Gemini's own masked outputs stay); the
    session's tool-outputs/session-<id>/ folder beside Gemini's chats/ is read without --store.
    OpenCode sessions get each tool part's output back, and parts marked compacted (by
    microcompact or OpenCode's own prune, which keep the output) lose the mark, so OpenCode
    sends their output again.
    A FILE that is the backup an --in-place write into opencode.db left beside it
    (opencode.db.ctxtool-backup-<time>.jsonl) puts the rows that write replaced back into that
    database, every column as it was, and removes the rows it added (nothing on stdout).

    \b
        ctxtool restore smaller.jsonl > full.jsonl
        ctxtool persist session.jsonl | ctxtool restore | cmp - session.jsonl
        ctxtool restore --strict --store ./moved-store smaller.jsonl -o full.jsonl
        ctxtool restore opencode.db.ctxtool-backup-20261127T164000.123Z.jsonl
    """
    root = store_dir or os.environ.get(STORE_ENV)
    totals = RestoreReport()
    undone = 0
    for unit, target in units(io):
        if put_rows_back(unit, report):
            continue
        with on_its_own(io, target):
            if undid_vacuum(unit, target, store_dir):
                undone += 1
                continue
        run = RestoreReport()
        store = ToolResultStore(root or DEFAULT_ROOT, notice=messages.warn, relocate=bool(root),
                                sessions=own_folders(unit.paths))
        with on_its_own(io, target):
            fmt, entries = read_transcript(unit)
            if not root:  # where persist saved by itself for this transcript (Gemini's folder)
                chosen, entries = store_for_entries(None, entries, fmt=fmt, env=os.environ)
                store.also_read(chosen.root)
            with output_for(target, hold=strict, inputs=unit.paths) as out:
                write_entries(restore(entries, fmt=fmt, store=store, report=run,
                                      warn=messages.warn), out)
                if strict and run.not_restored:
                    raise StoreError(f"{run.not_restored} placeholder(s) could not be restored; "
                                     "no output written", hint="restore the files, point "
                                     "--store at them, or drop --strict")
            for name in ("entries", "entries_changed", "placeholders", "restored", "missing",
                         "failed", "unrecognized", "exact_lines"):
                setattr(totals, name, getattr(totals, name) + getattr(run, name))
    left = f"; {totals.not_restored} left in place" if totals.not_restored else ""
    if undone and not totals.entries:
        report.emit({**totals.as_dict(), "vacuums_undone": undone})
        return
    messages.summary("restore", f"restored {totals.restored} of {totals.placeholders} saved "
                                f"tool result(s){left}" if totals.placeholders
                     else "nothing to restore (no placeholder found)")
    report.emit({**totals.as_dict(), "vacuums_undone": undone})


def undid_vacuum(unit: IOOptions, target: str | None, store_dir: str | None) -> bool:
    """Whether ``unit`` is one file ``vacuum`` wrote, now written back as its original."""
    path = unit.paths[0]
    # a pipe (<(cmd), a FIFO) is read once, by the restore of placeholders
    if len(unit.paths) != 1 or path == "-" or not is_rereadable(path):
        return False
    from ctxtool.io import database

    if database.is_database(path):
        return target == path and _undid_database_vacuum(path, store_dir)
    from ctxtool.io.spool import spool
    from ctxtool.io.vacuum_files import read_head, recipe_for, undo_vacuum

    with spool(path) as source:
        found = recipe_for(source, read_head(source, unit.format), store_dir)
        if found is None:
            return False
        recipe, vacuum = found
        with output_for(target, hold=True, inputs=unit.paths) as out:
            written = undo_vacuum(source, recipe, vacuum, out)
    messages.summary("restore", f"{path}: the original before vacuum, {written:,} bytes")
    return True


def _undid_database_vacuum(path: str, store_dir: str | None) -> bool:
    """``restore --in-place DB``: the rows a database-level vacuum removed put back (by the
    agent's hook, :class:`ctxtool.formats.vacuum.DatabaseVacuum`)."""
    from pathlib import Path

    from ctxtool.io.vacuum_files import database_keeper
    from ctxtool.formats.registry import adapters
    from ctxtool.storage.opencode_db_file import find_database

    db = find_database(path) or Path(path)
    for adapter in adapters():
        hook = adapter.vacuum_database()
        rows = hook.restore(db, database_keeper(adapter.name, db, store_dir)) if hook else 0
        if rows:
            messages.summary("restore", f"{path}: {rows:,} row(s) vacuum removed put back")
            return True
    return False


def put_rows_back(unit: IOOptions, report: ReportOptions) -> bool:
    """Whether ``unit`` is a backup of OpenCode rows, now put back into its database."""
    from ctxtool.storage import opencode_backup

    if len(unit.paths) != 1 or not opencode_backup.is_backup(unit.paths[0]):
        return False
    from ctxtool.storage.opencode_db import restore_backup  # sqlite3: only now

    done = restore_backup(unit.paths[0])
    messages.summary("restore", f"{done.database}: session {done.session}: {done.rows_put_back} "
                                f"row(s) put back, {done.rows_removed} removed")
    report.emit(done.as_dict())
    return True


def own_folders(paths: tuple[str, ...]) -> list[str]:
    """Each transcript file's own folder (``DIR/ID.jsonl`` -> ``DIR/ID``), where Claude Code
    keeps its saved results: restore reads there besides the stores."""
    return [os.path.splitext(path)[0] for path in paths if path != "-" and path.endswith(".jsonl")]
