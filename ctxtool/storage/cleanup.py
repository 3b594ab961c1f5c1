"""Running a cleanup plan: one record per action, and (with ``apply``) the actions themselves.

For each removable unit, in order: check that nothing changed since the scan; with an archive
folder, have its agent's source write and verify the unit's archive; with a keep-usage folder,
append the usage of its transcripts there (fsynced; if that fails, the unit stays whole); have
the source forget the session (the agent's own records of it: if it cannot, the unit stays
whole); remove its transcripts first and its side files only if the transcripts went; leave
referenced files in place. Then each source finishes (Claude Code: project indexes, empty
project folders). Every record names its agent and carries the run's time. An error on one
path is recorded and the sweep goes on; :attr:`CleanupRun.summary` counts what happened, in all
and per agent.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections import Counter, defaultdict
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ctxtool.errors import InputError, StoreError
from ctxtool.storage import durable
from ctxtool.storage.archive import Archive
from ctxtool.storage.atomic import sweep_beside
from ctxtool.storage.cleanup_plan import CleanupOptions, CleanupPlan, UnitPlan, plan_cleanup
from ctxtool.storage.cleanup_source import STORE_AGENT, Record
from ctxtool.storage.cleanup_tree import STORE, Part, measure
from ctxtool.storage.safe_fs import describe
from ctxtool.storage.usage_keep import UsageKeeper

__all__ = ["CleanupOptions", "CleanupPlan", "CleanupRun", "Summary", "plan_cleanup"]
BUSY = "busy: "  # the reason of a session kept because its agent is writing its records


@dataclass
class AgentCounts:
    """What went (or would go) of one agent's sessions."""

    sessions: int = 0
    items: int = 0  # units of no session
    bytes: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"sessions": self.sessions, "items": self.items, "bytes": self.bytes}


@dataclass
class Summary:
    dry_run: bool
    removed_sessions: int = 0
    removed_items: int = 0  # units that belong to no session (snapshots, pastes...)
    bytes: int = 0
    kept: Counter[str] = field(default_factory=Counter)  # unit status -> count
    referenced_files: int = 0
    indexes: int = 0
    empty_folders: int = 0
    archives: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    usage_kept: int = 0  # sessions whose usage went to --keep-usage first
    agents: dict[str, AgentCounts] = field(default_factory=dict)  # agent -> what went of it

    def agent(self, name: str) -> AgentCounts:
        return self.agents.setdefault(name, AgentCounts())

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "removed_sessions": self.removed_sessions,
                "removed_items": self.removed_items, "bytes": self.bytes,
                "kept": dict(sorted(self.kept.items())), "referenced_files": self.referenced_files,
                "indexes_updated": self.indexes, "empty_folders": self.empty_folders,
                "archives": self.archives,
                "errors": len(self.errors),
                "agents": {name: counts.as_dict() for name, counts in self.agents.items()}}


class CleanupRun:
    """Iterate :meth:`records` to carry out (or, without ``apply``, describe) a plan."""

    def __init__(self, plan: CleanupPlan) -> None:
        self.plan = plan
        self.options = plan.options
        self.summary = Summary(dry_run=not plan.options.apply)
        self.summary.errors.extend(f"{rel}: {msg}" for rel, msg in plan.errors)
        self.removed_parts: list[tuple[UnitPlan, Part]] = []  # gone (or would be, dry run)
        self.gone: set[str] = set()  # rels removed (or that would be), folders keeping none
        for source in plan.sources:  # every agent cleaned is named, even with nothing to go
            self.summary.agent(source.agent)
        self._stamp = self.options.now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.time = iso_time(self.options.now)
        self._keeper = UsageKeeper(self.options.keep_usage) if self.options.keep_usage else None

    def records(self) -> Iterator[Record]:
        for part, agent in self.plan.tree.skipped:
            if part.category in self.options.include:
                yield self.record(None, part, "keep", "symlink, not followed", agent=agent)
        for _, group in itertools.groupby(self.plan.units, key=_batch_key):
            batch = list(group)
            for plan in batch:
                if not plan.remove:
                    yield from self._keep(plan)
            removable = [plan for plan in batch if plan.remove and self._acted(plan)]
            if removable and self.options.apply:
                yield from self._apply_batch(removable)
            elif removable:
                for plan in removable:
                    yield from self._describe(plan)
        for source in self.plan.sources:
            yield from source.finish(self)

    # --- building records -------------------------------------------------------------------

    def _acted(self, plan: UnitPlan) -> list[Part]:
        return plan.acted_parts(self.options.include)

    def record(self, plan: UnitPlan | None, part: Part, action: str, reason: str, *,
               size: int | None = None, agent: str | None = None, **extra: Any) -> Record:
        """One record of ``part`` (of the unit ``plan``, or of none: then ``agent`` names whose
        folder it is in)."""
        last = plan.last_activity if plan else None
        record: Record = {
            "agent": agent or (plan.unit.agent if plan else STORE_AGENT),
            "path": part.rel, "root": part.base, "kind": part.kind, "category": part.category,
            "session": plan.unit.session if plan else None,
            "bytes": part.bytes if size is None else size,
            "last_activity": iso_time(last) if last else None,
            "age_seconds": int((self.options.now - last).total_seconds()) if last else None,
            "action": action, "reason": reason, "dry_run": not self.options.apply,
            "time": self.time,
        }
        record.update({key: value for key, value in extra.items() if value is not None})
        return record

    def _keep(self, plan: UnitPlan, *, status: str | None = None,
              reason: str | None = None) -> Iterator[Record]:
        unreadable = [part for part in plan.unit.transcripts  # subagent files in a session folder
                      if part.error and part not in plan.unit.parts]
        parts = [part for part in [*self._acted(plan), *plan.unit.symlinks, *unreadable]
                 if part.category in self.options.include]
        if parts:  # a unit with nothing in the included categories is not counted either
            self.summary.kept[status or plan.status] += 1
        for part in parts:
            who = [name for item in plan.protected.get(part.rel, []) if item.rel == part.rel
                   for name in item.referenced_by]
            self.summary.referenced_files += bool(who)
            yield self.record(plan, part, "keep", reason or plan.reason, error=part.error,
                               referenced_by=who or None)

    def _protected_records(self, plan: UnitPlan, part: Part) -> Iterator[Record]:
        for item in plan.protected.get(part.rel, []):
            self.summary.referenced_files += 1
            yield self.record(plan, part, "keep", f"referenced by {', '.join(item.referenced_by)}",
                               size=item.bytes, path=item.rel,
                               referenced_by=list(item.referenced_by))

    def _action(self) -> str:
        return "archive" if self.options.archive_dir else "delete"

    def _count_removed(self, plan: UnitPlan) -> None:
        counts = self.summary.agent(plan.unit.agent)
        if plan.unit.session is not None:
            self.summary.removed_sessions += 1
            counts.sessions += 1
        else:
            self.summary.removed_items += 1
            counts.items += 1

    def _count_bytes(self, plan: UnitPlan, size: int) -> None:
        self.summary.bytes += size
        self.summary.agent(plan.unit.agent).bytes += size

    def _describe(self, plan: UnitPlan) -> Iterator[Record]:
        """The dry run: what --apply would do."""
        busy = self._busy(plan)
        if busy:
            yield from self._keep(plan, status="busy", reason=f"{BUSY}{busy}")
            return
        self._count_removed(plan)
        for part in self._acted(plan):
            protected = plan.protected.get(part.rel, [])
            if _wholly_protected(part, protected):
                yield from self._protected_records(plan, part)
                continue
            size = part.bytes - sum(item.bytes for item in protected)
            self._count_bytes(plan, size)
            yield self.record(plan, part, self._action(), plan.reason, size=size)
            yield from self._protected_records(plan, part)
            self._note_removed(plan, part)

    def _note_removed(self, plan: UnitPlan, part: Part) -> None:
        if not plan.protected.get(part.rel):  # a folder keeping referenced files stays
            self.gone.add(part.rel)
        self.removed_parts.append((plan, part))

    # --- applying ---------------------------------------------------------------------------

    def _apply_batch(self, plans: list[UnitPlan]) -> Iterator[Record]:
        fresh = []
        for plan in plans:
            changed = _changed(plan)
            busy = None if changed else self._busy(plan)  # before anything is archived
            if changed:
                yield from self._keep(plan, status="changed",
                                      reason=f"changed since the scan: {changed}")
            elif busy:
                yield from self._keep(plan, status="busy", reason=f"{BUSY}{busy}")
            else:
                fresh.append(plan)
        if not fresh:
            return
        archives: dict[str, Archive] = {}
        if self.options.archive_dir:
            try:
                archives = self._archive(fresh)
            except StoreError as exc:
                self.summary.errors.append(exc.format())
                for plan in fresh:
                    yield from self._fail(plan, exc.format())
                return
        for plan in fresh:
            if self._keeper is not None and not (yield from self._keep_usage(plan, self._keeper)):
                continue
            if (yield from self._forget(plan)):
                yield from self._remove_unit(plan, archives)

    def _busy(self, plan: UnitPlan) -> str | None:
        """Why the agent cannot forget the session now (its database is being written), or
        None: asked before anything of it is archived or kept."""
        source = self.plan.agent_source(plan.unit.agent)
        return source.forget(plan, apply=False) if source else None

    def _forget(self, plan: UnitPlan) -> Generator[Record, None, bool]:
        """Have the agent remove its own records of the session (database rows) before the
        session's files go; whether it did. A session it cannot forget stays whole: kept when
        the agent is busy with it (a database another process is writing), failed on an error."""
        source = self.plan.agent_source(plan.unit.agent)
        try:
            busy = source.forget(plan, apply=True) if source else None
        except StoreError as exc:
            self.summary.errors.append(exc.format())
            yield from self._fail(plan, exc.format(), "not removed: its records could not be")
            return False
        if busy:
            yield from self._keep(plan, status="busy", reason=f"{BUSY}{busy}")
            return False
        return True

    def _archive(self, plans: list[UnitPlan]) -> dict[str, Archive]:
        """One archive per source folder (an agent's, the store) for this batch of units."""
        assert self.options.archive_dir is not None
        by_base: dict[str, list[Part]] = defaultdict(list)
        skip: set[str] = set()
        for plan in plans:
            for part in self._acted(plan):
                by_base[part.base].append(part)
                skip.update(item.rel for item in plan.protected.get(part.rel, []))
        archives = {}
        for base, parts in by_base.items():
            source = self.plan.source_of(parts[0])
            stem = self._archive_stem(plans[0], source.agent == STORE_AGENT)
            archive = source.archive(self.options.archive_dir, stem, parts, frozenset(skip))
            archives[base] = archive
            self.summary.archives.append(archive.path)
        return archives

    def _archive_stem(self, plan: UnitPlan, in_store: bool) -> str:
        if plan.unit.session is not None:
            return f"{plan.unit.session}.store" if in_store else plan.unit.session
        category = self._acted(plan)[0].category
        return f"{category}-{self._stamp}" if category != STORE else f"store-{self._stamp}"

    def _keep_usage(self, plan: UnitPlan, keeper: UsageKeeper) -> Generator[Record, None, bool]:
        """Write the usage of the transcripts about to go, right before they go; whether it
        was (a session whose usage cannot be kept stays whole)."""
        acted = [part.rel for part in self._acted(plan)]
        transcripts = [part for part in plan.unit.transcripts
                       if any(part.rel == rel or part.rel.startswith(f"{rel}/") for rel in acted)]
        try:
            if keeper.keep(self._usage(transcripts)):
                self.summary.usage_kept += 1
        except StoreError as exc:
            self.summary.errors.append(exc.format())
            yield from self._fail(plan, exc.format(), "not removed: its usage could not be kept")
            return False
        durable.crash_point("after-usage")  # tests: killed between the usage and the removal
        return True

    def _usage(self, transcripts: list[Part]) -> Iterator[tuple[str, list[bytes]]]:
        for part in transcripts:
            try:
                found = self.plan.source_of(part).usage(part)
            except (OSError, ValueError, InputError) as exc:
                message = describe(exc) if isinstance(exc, OSError) else str(exc)
                raise StoreError(f"cannot read its usage: {message}", source=part.rel) from exc
            if found is not None:
                yield found

    def _fail(self, plan: UnitPlan, message: str,
              reason: str = "not removed: archiving failed") -> Iterator[Record]:
        self.summary.kept["failed"] += 1
        for part in self._acted(plan):
            yield self.record(plan, part, "keep", reason, error=message)

    def _remove_unit(self, plan: UnitPlan, archives: dict[str, Archive]) -> Iterator[Record]:
        transcript_failed = False
        removed_any = False
        for part in self._acted(plan):
            protected = plan.protected.get(part.rel, [])
            if transcript_failed:
                yield self.record(plan, part, "keep",
                                   "left in place: the session's transcript could not be removed")
                continue
            if _wholly_protected(part, protected):
                yield from self._protected_records(plan, part)
                continue
            archive = archives.get(part.base)
            source = self.plan.source_of(part)
            result = source.remove(part, skip=frozenset(item.rel for item in protected),
                                   expected=archive.manifest if archive else None)
            error = "; ".join(f"{rel}: {msg}" for rel, msg in result.errors) or None
            self._count_bytes(plan, result.bytes)
            extra = {} if archive is None else {
                "archive": archive.path, "restore": source.restore_command(archive)}
            yield self.record(plan, part, self._action(), plan.reason, size=result.bytes,
                               error=error, **extra)
            yield from self._protected_records(plan, part)
            if error:
                self.summary.errors.append(error)
                transcript_failed = part.kind in source.transcript_kinds
            else:
                removed_any = True
                self._note_removed(plan, part)
                durable.crash_point(f"removed-{part.kind}")  # tests: killed between two parts
                if part.kind in source.transcript_kinds:  # and temp files a killed run left
                    sweep_beside(os.path.join(part.base, part.rel))
        if removed_any:
            self._count_removed(plan)


def iso_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _batch_key(plan: UnitPlan) -> str:
    """Units archived together: a session alone; loose items one batch per category."""
    if plan.unit.session is not None:
        return plan.unit.key
    return "\0" + (plan.unit.parts[0].category if plan.unit.parts else plan.unit.key)


def _wholly_protected(part: Part, protected: list[Any]) -> bool:
    return any(item.rel == part.rel for item in protected)


def _changed(plan: UnitPlan) -> str | None:
    """What changed in a unit since it was scanned (a resumed session), or None."""
    for part in plan.unit.parts:
        now = copy.copy(part)
        measure(now)
        if now.error or now.mtime != part.mtime or now.bytes != part.bytes:
            return part.rel
    return None
