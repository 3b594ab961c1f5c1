"""Running a cleanup plan: one record per action, and (with ``apply``) the actions themselves.

For each removable unit, in order: check that nothing changed since the scan; with an archive
folder, write and verify the unit's archive; with a keep-usage folder, append the usage of its
transcripts there (fsynced; if that fails, the unit stays whole); remove its transcripts first and its side files only
if the transcripts went; leave referenced files in place. Then drop removed sessions from their
project's ``sessions-index.json`` (atomically), and remove a project folder left empty (or holding
only an index that lists no session any more). Every record carries the run's time. An error on one path is recorded and the sweep
goes on; :attr:`CleanupRun.summary` counts what happened.
"""

from __future__ import annotations

import copy
import itertools
import os
import shlex
from collections import Counter, defaultdict
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

from ctxtool.errors import StoreError
from ctxtool.storage import durable
from ctxtool.storage.archive import Archive, write_archive
from ctxtool.storage.atomic import sweep_beside, write_bytes_atomic
from ctxtool.storage.cleanup_plan import CleanupOptions, CleanupPlan, UnitPlan, plan_cleanup
from ctxtool.storage.cleanup_tree import STORE, Part, measure
from ctxtool.storage.safe_fs import describe, open_nofollow, remove
from ctxtool.storage.usage_keep import UsageKeeper

__all__ = ["CleanupOptions", "CleanupPlan", "CleanupRun", "Summary", "plan_cleanup"]
TRANSCRIPT_KINDS = ("transcript", "subagent-transcript", "codex-rollout")
Record = dict[str, Any]


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

    def as_dict(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "removed_sessions": self.removed_sessions,
                "removed_items": self.removed_items, "bytes": self.bytes,
                "kept": dict(sorted(self.kept.items())), "referenced_files": self.referenced_files,
                "indexes_updated": self.indexes, "empty_folders": self.empty_folders,
                "archives": self.archives,
                "errors": len(self.errors)}


class CleanupRun:
    """Iterate :meth:`records` to carry out (or, without ``apply``, describe) a plan."""

    def __init__(self, plan: CleanupPlan) -> None:
        self.plan = plan
        self.options = plan.options
        self.summary = Summary(dry_run=not plan.options.apply)
        self.summary.errors.extend(f"{rel}: {msg}" for rel, msg in plan.errors)
        self._removed: dict[str, set[str]] = defaultdict(set)  # project rel -> session ids
        self._gone: set[str] = set()  # rels removed (or that would be, in a dry run)
        self._index_left: dict[str, int] = {}  # project rel -> sessions its index still lists
        self._stamp = self.options.now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.time = iso_time(self.options.now)
        self._keeper = UsageKeeper(self.options.keep_usage) if self.options.keep_usage else None

    def records(self) -> Iterator[Record]:
        for part in self.plan.tree.skipped:
            if part.category in self.options.include:
                yield self._record(None, part, "keep", "symlink, not followed")
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
        yield from self._update_indexes()
        yield from self._empty_projects()

    # --- building records -------------------------------------------------------------------

    def _acted(self, plan: UnitPlan) -> list[Part]:
        return plan.acted_parts(self.options.include)

    def _record(self, plan: UnitPlan | None, part: Part, action: str, reason: str, *,
                size: int | None = None, **extra: Any) -> Record:
        last = plan.last_activity if plan else None
        record: Record = {
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
            yield self._record(plan, part, "keep", reason or plan.reason, error=part.error,
                               referenced_by=who or None)

    def _protected_records(self, plan: UnitPlan, part: Part) -> Iterator[Record]:
        for item in plan.protected.get(part.rel, []):
            self.summary.referenced_files += 1
            yield self._record(plan, part, "keep", f"referenced by {', '.join(item.referenced_by)}",
                               size=item.bytes, path=item.rel,
                               referenced_by=list(item.referenced_by))

    def _action(self) -> str:
        return "archive" if self.options.archive_dir else "delete"

    def _count_removed(self, plan: UnitPlan) -> None:
        if plan.unit.session is not None:
            self.summary.removed_sessions += 1
        else:
            self.summary.removed_items += 1

    def _describe(self, plan: UnitPlan) -> Iterator[Record]:
        """The dry run: what --apply would do."""
        self._count_removed(plan)
        for part in self._acted(plan):
            protected = plan.protected.get(part.rel, [])
            if _wholly_protected(part, protected):
                yield from self._protected_records(plan, part)
                continue
            size = part.bytes - sum(item.bytes for item in protected)
            self.summary.bytes += size
            yield self._record(plan, part, self._action(), plan.reason, size=size)
            yield from self._protected_records(plan, part)
            self._note_removed(plan, part)

    def _note_removed(self, plan: UnitPlan, part: Part) -> None:
        if not plan.protected.get(part.rel):  # a folder keeping referenced files stays
            self._gone.add(part.rel)
        if part.kind == "transcript" and plan.unit.session is not None:
            self._removed[part.rel.rsplit("/", 1)[0]].add(plan.unit.session)

    # --- applying ---------------------------------------------------------------------------

    def _apply_batch(self, plans: list[UnitPlan]) -> Iterator[Record]:
        fresh = []
        for plan in plans:
            changed = _changed(plan)
            if changed:
                yield from self._keep(plan, status="changed",
                                      reason=f"changed since the scan: {changed}")
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
            if self._keeper is None or (yield from self._keep_usage(plan, self._keeper)):
                yield from self._remove_unit(plan, archives)

    def _archive(self, plans: list[UnitPlan]) -> dict[str, Archive]:
        """One archive per base folder (the root, the store) for this batch of units."""
        assert self.options.archive_dir is not None
        by_base: dict[str, list[Part]] = defaultdict(list)
        skip: set[str] = set()
        for plan in plans:
            for part in self._acted(plan):
                by_base[part.base].append(part)
                skip.update(item.rel for item in plan.protected.get(part.rel, []))
        archives = {}
        for base, parts in by_base.items():
            stem = self._archive_stem(plans[0], base)
            archive = write_archive(self.options.archive_dir, stem, base,
                                    [part.rel for part in parts], skip=frozenset(skip))
            archives[base] = archive
            self.summary.archives.append(archive.path)
        return archives

    def _archive_stem(self, plan: UnitPlan, base: str) -> str:
        in_store = base == self.options.store and base != self.options.root
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
            if keeper.keep(transcripts):
                self.summary.usage_kept += 1
        except StoreError as exc:
            self.summary.errors.append(exc.format())
            yield from self._fail(plan, exc.format(), "not removed: its usage could not be kept")
            return False
        durable.crash_point("after-usage")  # tests: killed between the usage and the removal
        return True

    def _fail(self, plan: UnitPlan, message: str,
              reason: str = "not removed: archiving failed") -> Iterator[Record]:
        self.summary.kept["failed"] += 1
        for part in self._acted(plan):
            yield self._record(plan, part, "keep", reason, error=message)

    def _remove_unit(self, plan: UnitPlan, archives: dict[str, Archive]) -> Iterator[Record]:
        transcript_failed = False
        removed_any = False
        for part in self._acted(plan):
            protected = plan.protected.get(part.rel, [])
            if transcript_failed:
                yield self._record(plan, part, "keep",
                                   "left in place: the session's transcript could not be removed")
                continue
            if _wholly_protected(part, protected):
                yield from self._protected_records(plan, part)
                continue
            archive = archives.get(part.base)
            result = remove(part.base, part.rel, skip=frozenset(item.rel for item in protected),
                            expected=archive.manifest if archive else None)
            error = "; ".join(f"{rel}: {msg}" for rel, msg in result.errors) or None
            self.summary.bytes += result.bytes
            extra = {} if archive is None else {
                "archive": archive.path, "restore": _restore_command(archive.path, part.base)}
            yield self._record(plan, part, self._action(), plan.reason, size=result.bytes,
                               error=error, **extra)
            yield from self._protected_records(plan, part)
            if error:
                self.summary.errors.append(error)
                transcript_failed = part.kind in TRANSCRIPT_KINDS
            else:
                removed_any = True
                self._note_removed(plan, part)
                if part.kind in TRANSCRIPT_KINDS:  # and the temp files a killed run left of it
                    sweep_beside(os.path.join(part.base, part.rel))
        if removed_any:
            self._count_removed(plan)

    # --- sessions-index.json ----------------------------------------------------------------

    def _update_indexes(self) -> Iterator[Record]:
        for rel in sorted(self.plan.tree.indexes):
            sessions = self._removed.get(rel.rsplit("/", 1)[0])
            if sessions:
                record = self._update_index(rel, sessions)
                if record is not None:
                    yield record

    def _update_index(self, rel: str, sessions: set[str]) -> Record | None:
        root = self.plan.tree.root
        assert root is not None  # indexes are only found under a root
        part = Part(root, rel, "sessions-index", "projects")
        try:
            with os.fdopen(open_nofollow(root, rel), "rb") as handle:
                data = handle.read()
            document = orjson.loads(data)
        except (OSError, orjson.JSONDecodeError) as exc:
            message = f"cannot read: {describe(exc) if isinstance(exc, OSError) else exc}"
            self.summary.errors.append(f"{rel}: {message}")
            return self._record(None, part, "keep", "index not updated", size=0, error=message)
        entries = document.get("entries") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            return None
        kept = [entry for entry in entries if _indexed_session(entry) not in sessions]
        self._index_left[rel.rsplit("/", 1)[0]] = len(kept)
        dropped = sorted({_indexed_session(entry) or "" for entry in entries} & sessions)
        if not dropped:
            return None
        new = orjson.dumps({**document, "entries": kept}, option=orjson.OPT_INDENT_2)
        new += b"\n" if data.endswith(b"\n") else b""
        gone = len(entries) - len(kept)
        reason = f"dropped {gone} {'entry' if gone == 1 else 'entries'} of removed sessions"
        error = None
        if self.options.apply:
            try:
                write_bytes_atomic(os.path.join(root, rel), new)
                self.summary.indexes += 1
            except StoreError as exc:
                error = exc.format()
                self.summary.errors.append(error)
        return self._record(None, part, "update", reason, size=len(new), error=error,
                            removed_sessions=dropped)


    # --- project folders left empty ---------------------------------------------------------

    def _empty_projects(self) -> Iterator[Record]:
        """Project folders whose sessions all went: nothing left in them but, at most, an index
        listing no session. Claude Code makes the folder again when a session starts there."""
        root = self.plan.tree.root
        for rel in sorted(self._removed) if root is not None else []:
            if not rel.startswith("projects/"):  # Codex CLI's dated folders are its own
                continue
            folder = os.path.join(root, rel)
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            left = [name for name in names if f"{rel}/{name}" not in self._gone]
            index = "sessions-index.json"
            if left and (left != [index] or self._index_left.get(rel) != 0):
                continue  # something stays, or an index that lists sessions (or was unreadable)
            error = self._remove_folder(folder, index if index in left else None)
            if error is None:
                self.summary.empty_folders += 1
            part = Part(root, rel, "project-folder", "projects")
            yield self._record(None, part, "keep" if error else "delete",
                               "empty once its sessions went", size=0, error=error)

    def _remove_folder(self, folder: str, index: str | None) -> str | None:
        if not self.options.apply:
            return None
        try:
            if index is not None:
                os.unlink(os.path.join(folder, index))
            os.rmdir(folder)  # only ever removes an empty folder: a file written meanwhile stays
        except OSError as exc:
            message = f"{folder}: cannot remove: {describe(exc)}"
            self.summary.errors.append(message)
            return message
        return None


def iso_time(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def _batch_key(plan: UnitPlan) -> str:
    """Units archived together: a session alone; loose items one batch per category."""
    if plan.unit.session is not None:
        return plan.unit.key
    return "\0" + (plan.unit.parts[0].category if plan.unit.parts else plan.unit.key)


def _wholly_protected(part: Part, protected: list[Any]) -> bool:
    return any(item.rel == part.rel for item in protected)


def _indexed_session(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("sessionId"), str):
        return str(entry["sessionId"])
    full = entry.get("fullPath")
    if isinstance(full, str) and full.endswith(".jsonl"):
        return os.path.basename(full)[:-len(".jsonl")]
    return None


def _changed(plan: UnitPlan) -> str | None:
    """What changed in a unit since it was scanned (a resumed session), or None."""
    for part in plan.unit.parts:
        now = copy.copy(part)
        measure(now)
        if now.error or now.mtime != part.mtime or now.bytes != part.bytes:
            return part.rel
    return None


def _restore_command(archive: str, base: str) -> str:
    return f"tar -xzf {shlex.quote(archive)} -C {shlex.quote(base)}"

