"""``ctxtool vacuum``: reclaim the bytes sessions hold twice or never read again.

Two shapes, as the other commands: a transform (FILE or stdin -> stdout, -o, --in-place) and a
sweep over every agent's sessions (--all: a plan, --apply to act). What goes is each agent's
adapter's answer (:mod:`ctxtool.formats.vacuum`); the work on one file is in
:mod:`ctxtool.io.vacuum_files`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import orjson

from ctxtool.cli.persist import on_its_own, units
from ctxtool.core.vacuuming.lines import VacuumReport
from ctxtool.errors import UsageError
from ctxtool.formats.registry import adapter_for, format_names
from ctxtool.formats.vacuum import SessionSize
from ctxtool.io import batch, database, live, messages
from ctxtool.io.options import (ReportOptions, in_place_options, io_options, report_options,
                                 store_options)
from ctxtool.io.streams import IOOptions, binary_stdout, check_stdin
from ctxtool.io.terminal import size
from ctxtool.io.vacuum_files import FileRun, database_keeper, plan_file, vacuum_file

AGENTS_HELP = "Only these agents' sessions (repeat or comma-separate)"


@click.command("vacuum")
@io_options
@in_place_options()
@click.option("--all", "sweep", is_flag=True,
              help="Every agent's sessions on this machine (Claude Code's projects folder, "
                   "Codex's sessions, OpenCode's database, Gemini CLI's chats): a plan, unless "
                   "--apply.")
@click.option("--apply", is_flag=True, help="With --all: vacuum, not only plan.")
@click.option("--agent", "agents", multiple=True, metavar="NAME[,...]",
              help=f"{AGENTS_HELP}: claude-code, codex, opencode, gemini.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON record per session, then a total, on stdout "
                   "(schemas/vacuum-record.schema.json; with --all or --in-place: stdout "
                   "carries no transcript then).")
@store_options
@report_options
def vacuum_cmd(io: IOOptions, sweep: bool, apply: bool, agents: tuple[str, ...], as_json: bool,
               store_dir: str | None, report: ReportOptions) -> None:
    """Take out what a session holds twice or the agent never reads again - losslessly.

    Only what the agent provably does not need goes, each agent by its own rules
    (docs/vacuum.md): Claude Code's entries written twice (the same uuid, the same bytes, as
    its repeated /compact writes them) are kept once; Codex's compactions that a later one of
    the same turn replaces lose their history lists; OpenCode's database loses the event rows
    OpenCode never reads back, then shrinks (SQLite VACUUM, only while OpenCode does not hold
    it); Gemini CLI's records before its last checkpoint and writes a later one of the same id
    replaces go (the metadata line and the first prompt stay). Everything taken out goes to ctxtool's store first (DIR/<session>/ctxtool-vacuum/,
    each payload once under its SHA-256, with the recipe), and `ctxtool restore` gives back
    the original byte for byte (the database: row for row). The agent resumes the vacuumed
    session exactly as before.

    A FILE (or stdin) is written vacuumed to stdout, -o FILE or back in place (--in-place:
    sessions modified within --live-window are skipped unless --force; lines appended while
    it runs are kept). --all plans over every agent's sessions: per session the bytes now,
    after, and what would go; --apply does it (live sessions skipped). Bytes before and after
    go to stderr, per session and in all, and with --json to stdout.

    \b
        ctxtool vacuum session.jsonl > smaller.jsonl
        ctxtool vacuum --in-place ~/.claude/projects/*/*.jsonl
        ctxtool vacuum --all                      # the plan: what would go, per session
        ctxtool vacuum --all --apply --agent claude-code
        ctxtool vacuum --all --json | jq 'select(.bytes_saved > 1e6) | .path'
        ctxtool restore smaller.jsonl -o session-again.jsonl
    """
    chosen = _agents(agents)
    if sweep:
        if io.inputs or io.output or io.in_place:
            raise UsageError("--all sweeps every agent's sessions: give no FILE, -o or "
                             "--in-place with it")
        totals = _sweep(chosen, apply=apply, as_json=as_json, store_dir=store_dir,
                        live_options=io.live)
    else:
        if apply or agents:
            raise UsageError(f"{'--apply' if apply else '--agent'} goes with --all",
                             hint="a FILE is vacuumed to stdout, -o FILE or --in-place")
        totals = _transform(io, as_json=as_json, store_dir=store_dir)
    report.emit(totals.as_dict())


def _agents(agents: tuple[str, ...]) -> list[str]:
    names = [name.strip() for each in agents for name in each.split(",") if name.strip()]
    known = [name for name in format_names() if _sweeps(name)]
    for name in names:
        if name not in known:
            raise UsageError(f"--agent {name}: not an agent whose sessions vacuum finds",
                             hint=f"use one of {', '.join(known)}")
    return names or known


def _sweeps(name: str) -> bool:
    adapter = adapter_for(name)
    return bool(adapter.session_roots({}) or adapter.vacuum_database() is not None)


# --- the transform -----------------------------------------------------------------------------

@dataclass
class Totals:
    report: VacuumReport = field(default_factory=VacuumReport)
    sessions: int = 0
    vacuumed: int = 0
    skipped: int = 0

    def add(self, report: VacuumReport, *, done: bool) -> None:
        self.report.add(report)
        self.sessions += 1
        self.vacuumed += int(done and report.saved > 0)

    def as_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "vacuumed": self.vacuumed, "skipped": self.skipped,
                **self.report.as_dict()}


def _transform(io: IOOptions, *, as_json: bool, store_dir: str | None) -> Totals:
    if as_json and not io.in_place:
        raise UsageError("--json goes with --in-place or --all (stdout carries the transcript)",
                         hint="use --stats for the report on stderr")
    if io.on_invalid == "skip":
        raise UsageError("--on-invalid skip: vacuum never drops a line it was not asked to",
                         hint="--on-invalid keep passes such lines through unchanged")
    if not io.in_place:
        check_stdin(io)
        if len(io.paths) > 1:
            raise UsageError("vacuum writes one session to stdout or -o: give one FILE",
                             hint="or --in-place for several")
    totals = Totals()
    for unit, target in units(io):
        with on_its_own(io, target):
            if database.is_database(unit.paths[0]):
                _vacuum_database(unit.paths[0], target, totals, as_json=as_json,
                                 store_dir=store_dir)
                continue
            run = vacuum_file(unit.paths[0], target, forced=io.format, store_dir=store_dir,
                              on_invalid=io.on_invalid)
            totals.add(run.report, done=True)
            _tell_file(run, done=True, as_json=as_json)
    _tell_total(totals, done=True, as_json=as_json)
    return totals


def _vacuum_database(path: str, target: str | None, totals: Totals, *, as_json: bool,
                     store_dir: str | None) -> None:
    """An agent's database given as FILE: vacuumed in place by its adapter's database hook
    (all its sessions), as --all would."""
    if target != path:
        raise UsageError(f"{path}: a database is vacuumed in place", hint="add --in-place")
    from ctxtool.formats.registry import adapters
    from ctxtool.storage.opencode_db_file import find_database

    db = find_database(path) or Path(path)
    hooks = [(a.name, hook) for a in adapters() if (hook := a.vacuum_database()) is not None]
    if not hooks:
        messages.info(f"vacuum: {path}: nothing to take out (no agent vacuums its database)")
    for name, hook in hooks:
        for row in hook.apply(db, database_keeper(name, db, store_dir)):
            _tell_database_row(row, name, totals, done=True, as_json=as_json)


# --- the sweep ---------------------------------------------------------------------------------

def _sweep(agents: list[str], *, apply: bool, as_json: bool, store_dir: str | None,
           live_options: live.LiveOptions) -> Totals:
    totals = Totals()
    files = list(_session_files(agents))
    plans = PlanCache()
    for fmt, path in files:
        with batch.each(str(path), of=len(files)):
            run = _sweep_file(str(path), fmt, apply=apply, store_dir=store_dir,
                              live_options=live_options, plans=plans)
            if run is None:
                totals.skipped += 1
                continue
            totals.add(run.report, done=apply)
            if run.report.saved:
                _tell_file(run, done=apply, as_json=as_json)
    for name in agents:
        for size_row in _database_sessions(name, apply=apply, store_dir=store_dir):
            _tell_database_row(size_row, name, totals, done=apply, as_json=as_json)
    plans.save()
    _tell_total(totals, done=apply, as_json=as_json)
    return totals


class PlanCache:
    """The plans of session files that did not change since (same device, inode, size and
    modification time): a sweep reads again only what changed. In ctxtool's cache folder, as
    ``sessions``' (storage/scan_cache.py; ``CTXTOOL_CACHE_DIR=off`` turns both off)."""

    def __init__(self) -> None:
        from ctxtool import __version__
        from ctxtool.storage.scan_cache import ScanCache, cache_path

        where = cache_path(os.environ)
        self.cache = ScanCache(where.with_name("vacuum.json") if where else None,
                               version=f"{__version__}/vacuum-1")

    def plan(self, path: str, fmt: str) -> FileRun:
        try:
            st = os.stat(path)
        except OSError:
            return plan_file(path, fmt)  # which says why it cannot be read
        stamp = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, fmt]
        row = self.cache.kept_row(path, stamp)
        if row is not None:
            report = VacuumReport(row["bytes_before"], row["bytes_after"], row["lines"])
            report.removed.update(row["removed"])
            return FileRun(path, fmt, report)
        run = plan_file(path, fmt)
        self.cache.keep_row(path, stamp, run.report.as_dict())
        return run

    def save(self) -> None:
        self.cache.save()


def _session_files(agents: list[str]) -> Iterator[tuple[str, Path]]:
    for name in agents:
        for session in sorted(adapter_for(name).session_files(os.environ)):
            yield name, session.path


def _sweep_file(path: str, fmt: str, *, apply: bool, store_dir: str | None,
                live_options: live.LiveOptions, plans: PlanCache) -> FileRun | None:
    """Plan one session file, or vacuum it in place (None: skipped, it may be live). Only a
    file with something to take out is pinned: the others are neither live nor skipped."""
    planned = plans.plan(path, fmt)
    if not apply or not planned.report.saved:
        return planned
    with live.pin(path, live_options) as pinned:
        if pinned is None:
            return None
        return vacuum_file(path, path, forced=fmt, store_dir=store_dir)


def _database_sessions(name: str, *, apply: bool,
                       store_dir: str | None) -> Iterator[SessionSize]:
    hook = adapter_for(name).vacuum_database()
    if hook is None:
        return
    for path in hook.databases(os.environ):
        with batch.each(str(path), of=2):  # a database that fails is reported; the run goes on
            if not apply:
                yield from hook.plan(path)
                continue
            yield from hook.apply(path, database_keeper(name, path, store_dir))


# --- telling -----------------------------------------------------------------------------------

def _tell_database_row(row: SessionSize, fmt: str, totals: Totals, *, done: bool,
                       as_json: bool) -> None:
    report = VacuumReport(row.bytes_now, row.bytes_after)
    report.removed.update(row.removed)
    totals.add(report, done=done)
    if report.saved:
        _tell_file(FileRun(row.session, fmt, report), done=done, as_json=as_json)


def _tell_file(run: FileRun, *, done: bool, as_json: bool) -> None:
    """One session: its line on stderr (bytes now -> after, what goes), and its JSON record
    on stdout with --json."""
    if as_json:
        record = {"record": "session", "action": "vacuumed" if done else "plan",
                  **run.as_dict()}
        binary_stdout().write(orjson.dumps(record) + b"\n")
    report = run.report
    what = ", ".join(f"{reason}: {n:,}" for reason, n in sorted(report.removed.items()))
    verb = "took out" if done else "would take out"
    messages.info(f"vacuum: {run.path}: {size(report.bytes_before)} -> "
                  f"{size(report.bytes_after)} ({verb} {what})"
                  if report.saved else f"vacuum: {run.path}: {size(report.bytes_before)}, "
                                       "nothing to take out")


def _tell_total(totals: Totals, *, done: bool, as_json: bool) -> None:
    report = totals.report
    if as_json:
        out = binary_stdout()
        out.write(orjson.dumps({"record": "total", "action": "vacuumed" if done else "plan",
                                **totals.as_dict()}) + b"\n")
        out.flush()
    skipped = f"; {totals.skipped} skipped (live)" if totals.skipped else ""
    saved = (f"{size(report.saved)} {'reclaimed' if done else 'to reclaim'}"
             if report.saved else "nothing to reclaim")
    messages.summary("vacuum", f"{messages.count(totals.sessions, 'session')}, "
                               f"{size(report.bytes_before)} -> {size(report.bytes_after)}: "
                               f"{saved}{skipped}")
