"""Planning a cleanup: every agent's sources find their units, read each one's activity, then
one rule decides for all of them, and files kept sessions still point at are protected.

Nothing here changes the disk. ``plan_cleanup`` returns a :class:`CleanupPlan` that
``ctxtool.storage.cleanup`` turns into records (dry run) or actions (``--apply``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TypeVar

from ctxtool.storage.cleanup_source import CleanupSource, agents, make_source
from ctxtool.storage.cleanup_store import StoreSource
from ctxtool.storage.cleanup_tree import (CATEGORIES, Part, Protected, Tree, Unit, UnitPlan, measure,
                                         measure_all)
from ctxtool.storage.retention import LIVE_WINDOW, Retention, decide, reference_key
from ctxtool.storage.store import LINES

T = TypeVar("T")
Progress = Callable[[Iterable[T], int, str], Iterable[T]]



def _no_progress(items: Iterable[T], total: int, desc: str) -> Iterable[T]:
    return items


@dataclass(frozen=True)
class CleanupOptions:
    older_than: timedelta
    now: datetime
    folders: Mapping[str, str] = field(default_factory=dict)  # agent -> real path of its folder
    store: str | None = None  # real path of ctxtool's store, if any
    include: tuple[str, ...] = CATEGORIES  # categories acted on (all are read, for ages)
    archive_dir: str | None = None
    apply: bool = False
    live_window: timedelta = LIVE_WINDOW  # sessions active this recently are always kept
    keep_usage: str | None = None  # folder a removed session's usage is written to first
    # agent -> its own rule (Gemini CLI's general.sessionRetention), in place of older_than
    # for its sessions: set only when --older-than is not given
    retention: Mapping[str, Retention] = field(default_factory=dict)
    # agent -> project (as Unit.projects names it) -> the rule that project's own settings give
    project_retention: Mapping[str, Mapping[str, Retention]] = field(default_factory=dict)

    def rule_for(self, unit: Unit) -> Retention | None:
        """The agent's own rule for ``unit``: its project's, when that project has one."""
        projects = self.project_retention.get(unit.agent, {})
        found = next((projects[name] for name in sorted(unit.projects) if name in projects), None)
        return found or self.retention.get(unit.agent)

    def age_limit(self, unit: Unit) -> timedelta | None:
        """How long ``unit`` may stay inactive (None: for ever)."""
        rule = self.rule_for(unit)
        return self.older_than if rule is None else rule.older_than

    @property
    def root(self) -> str | None:
        """Claude Code's folder, when it is cleaned (its settings give the default age)."""
        return self.folders.get("claude-code")


@dataclass
class CleanupPlan:
    options: CleanupOptions
    tree: Tree
    units: list[UnitPlan]
    sources: list[CleanupSource] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, problem) while reading

    def source_of(self, part: Part) -> CleanupSource:
        """The source whose folder ``part`` is under."""
        return next(source for source in self.sources if source.folder == part.base)

    def agent_source(self, agent: str) -> CleanupSource | None:
        return next((source for source in self.sources if source.agent == agent), None)


def sources_of(folders: Mapping[str, str], store: str | None) -> list[CleanupSource]:
    """The sources of a run: each agent's folder (agent -> real path), then ctxtool's store."""
    found = [make_source(agent, folders[agent]) for agent in agents() if agent in folders]
    return [*found, StoreSource(store)] if store is not None else found


def plan_cleanup(options: CleanupOptions, *, progress: Progress = _no_progress) -> CleanupPlan:
    """Scan, read, link, decide and protect. Every category is scanned and read, whatever
    ``include`` says, so a session's age and the references that protect files count everything."""
    errors: list[tuple[str, str]] = []

    def on_error(rel: str, message: str) -> None:
        errors.append((rel, message))

    sources = sources_of(options.folders, options.store)
    tree = Tree()
    for source in sources:
        source.scan(tree, on_error)
    measure_all(tree, on_error)
    by_agent = {source.agent: source for source in sources}
    readable = [unit for unit in tree.units.values() if unit.transcripts]
    for unit in progress(readable, len(readable), "reading sessions"):
        # file times alone keep this unit: its timestamps cannot change that, only its references
        # to other units' files matter, and those need no JSON parsing
        idle = options.now.timestamp() - unit.newest_mtime
        limit = options.age_limit(unit)
        kept_anyway = limit is None or idle < limit.total_seconds()
        unit.activity = by_agent[unit.agent].read(unit, on_error, parse=not kept_anyway)
    for source in sources:
        source.link(tree)
    plans = [_decide(unit, options) for unit in _ordered(tree.units.values())]
    _keep_newest(plans, options)
    _protect_referenced(plans)
    return CleanupPlan(options=options, tree=tree, units=plans, sources=sources, errors=errors)


def _ordered(units: Iterable[Unit]) -> list[Unit]:
    # sessions first, then loose items grouped by category (one archive per category and run)
    return sorted((unit for unit in units if unit.parts or unit.symlinks),
                  key=lambda unit: (unit.session is None, unit.key))


def _decide(unit: Unit, options: CleanupOptions) -> UnitPlan:
    last = unit.last_activity()
    broken = [part for part in [*unit.parts, *unit.transcripts] if part.error]
    if unit.symlinks:
        reason = f"has a symlink, not followed: {unit.symlinks[0].rel}"
        return UnitPlan(unit, False, "symlink", reason, last)
    if broken:
        return UnitPlan(unit, False, "unreadable", f"{broken[0].rel}: {broken[0].error}", last)
    if last is None:
        return UnitPlan(unit, False, "empty", "no activity found", last)
    limit = options.age_limit(unit)
    verdict = decide(last, now=options.now, older_than=timedelta.max if limit is None else limit,
                     live_window=options.live_window)
    rule = options.rule_for(unit)
    reason = verdict.reason
    if rule is not None and verdict.status != "active":
        reason = (f"{reason.split(' (limit')[0]} ({rule.origin})" if limit is None
                  else f"{reason[:-1]}, {rule.origin})")
    return UnitPlan(unit, verdict.remove, verdict.status, reason, last)


def _keep_newest(plans: list[UnitPlan], options: CleanupOptions) -> None:
    """Of each project's sessions of an agent whose own rule keeps a count of them, newest
    first, those past that count go too (never one within the live window: it stays
    "active")."""
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    by_project: dict[tuple[str, str], list[UnitPlan]] = defaultdict(list)
    for plan in plans:
        if plan.unit.session is not None:
            by_project[plan.unit.agent, ",".join(sorted(plan.unit.projects))].append(plan)
    for group in by_project.values():
        rule = options.rule_for(group[0].unit)  # one agent, one project: one rule
        if rule is None or rule.keep_newest is None:
            continue
        group.sort(key=lambda plan: plan.last_activity or epoch, reverse=True)
        for plan in group[rule.keep_newest:]:
            if plan.status == "recent":
                plan.remove, plan.status = True, "old"
                plan.reason = f"not among its project's newest {rule.keep_newest} ({rule.origin})"


def _label(unit: Unit) -> str:
    return unit.session or unit.key


def _protect_referenced(plans: list[UnitPlan]) -> None:
    """Files of removable units that kept transcripts reference are left in place."""
    # "tool-results/<folder>" -> file name -> sessions referencing it
    referrers: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for plan in plans:
        if not plan.remove:
            for key in plan.unit.activity.references:
                folder, _, name = key.rpartition("/")
                referrers[folder][name].add(_label(plan.unit))
    if not referrers:
        return
    for plan in plans:
        if plan.remove:
            for part in plan.unit.parts:
                found = list(_referenced_files(part, referrers))
                if found:
                    plan.protected[part.rel] = found
            _keep_if_all_protected(plan)


def _keep_if_all_protected(plan: UnitPlan) -> None:
    """A unit every part of which is itself referenced (a paste) simply stays."""
    whole = [item for part in plan.unit.parts for item in plan.protected.get(part.rel, [])
             if item.rel == part.rel]
    if plan.unit.parts and len(whole) == len(plan.unit.parts):
        who = sorted({name for item in whole for name in item.referenced_by})
        plan.remove, plan.status = False, "referenced"
        plan.reason = f"referenced by {', '.join(who)}"


def _candidates(part: Part) -> Iterator[tuple[str, str]]:
    """(reference folder key, rel folder) where references to files of this part point."""
    name = part.rel.rsplit("/", 1)[-1]
    if part.kind in ("session-folder", "store"):
        yield f"tool-results/{name}", f"{part.rel}/tool-results"
    elif part.kind == "image-cache":
        yield f"image-cache/{name}", part.rel


def _referenced_files(part: Part, referrers: dict[str, dict[str, set[str]]]) -> Iterator[Protected]:
    if part.kind == "paste":
        _, _, stem = reference_key("paste-cache", part.rel.rsplit("/", 1)[-1]).rpartition("/")
        who = referrers.get("paste-cache", {}).get(stem)
        if who:
            yield Protected(part.rel, part.bytes, tuple(sorted(who)))
        return
    everyone: set[str] = set()
    for folder_key, rel_folder in _candidates(part):
        for name, who in sorted(referrers.get(folder_key, {}).items()):
            rel = f"{rel_folder}/{name}"
            try:
                size = os.lstat(os.path.join(part.base, rel)).st_size
            except OSError:
                continue  # the referenced file is not there: nothing to keep
            everyone |= who
            yield Protected(rel, size, tuple(sorted(who)))
    if everyone:
        yield from _lines_beside(part, everyone)


def _lines_beside(part: Part, referrers: set[str]) -> Iterator[Protected]:
    """``restore`` needs the exact original lines ctxtool saved beside kept tool results."""
    lines = Part(part.base, f"{part.rel}/{LINES}", part.kind, part.category)
    path = os.path.join(part.base, lines.rel)
    if os.path.isdir(path) and not os.path.islink(path):
        measure(lines)
        yield Protected(lines.rel, lines.bytes, tuple(sorted(referrers)))
