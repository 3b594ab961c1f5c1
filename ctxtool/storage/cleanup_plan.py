"""Planning a cleanup: read every unit's transcripts, date it, decide, protect referenced files.

Nothing here changes the disk. ``plan_cleanup`` returns a :class:`CleanupPlan` that
``ctxtool.storage.cleanup`` turns into records (dry run) or actions (``--apply``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from ctxtool.errors import InputError
from ctxtool.formats.jsonl import bounded_lines, iter_entries
from ctxtool.storage.cleanup_tree import CATEGORIES, Part, Tree, Unit, measure, scan
from ctxtool.storage.retention import (LIVE_WINDOW, Activity, combine, decide, line_facts,
                                    reference_key, session_activity)
from ctxtool.storage.safe_fs import describe, open_nofollow
from ctxtool.storage.store import LINES

T = TypeVar("T")
Progress = Callable[[Iterable[T], int, str], Iterable[T]]
# transcripts first: if one cannot be removed, the session's side files stay with it
_ORDER = {"transcript": 0, "codex-rollout": 0, "subagent-transcript": 1, "session-folder": 2}


def _no_progress(items: Iterable[T], total: int, desc: str) -> Iterable[T]:
    return items


@dataclass(frozen=True)
class CleanupOptions:
    root: str | None  # real path of the Claude Code config folder (None: there is none)
    store: str | None  # real path of ctxtool's store, if any
    older_than: timedelta
    now: datetime
    include: tuple[str, ...] = CATEGORIES  # categories acted on (all are read, for ages)
    archive_dir: str | None = None
    apply: bool = False
    live_window: timedelta = LIVE_WINDOW  # sessions active this recently are always kept
    codex: str | None = None  # real path of the Codex CLI folder ($CODEX_HOME), if any
    keep_usage: str | None = None  # folder a removed session's usage is written to first


@dataclass
class Protected:
    """A file inside a removable unit that a kept transcript still points at."""

    rel: str
    bytes: int
    referenced_by: tuple[str, ...]


@dataclass
class UnitPlan:
    unit: Unit
    remove: bool
    status: str  # old, active, recent, symlink, unreadable, empty (then changed, failed on apply)
    reason: str
    last_activity: datetime | None
    protected: dict[str, list[Protected]] = field(default_factory=dict)  # part rel -> files

    def acted_parts(self, include: tuple[str, ...]) -> list[Part]:
        parts = [part for part in self.unit.parts if part.category in include]
        return sorted(parts, key=lambda part: (_ORDER.get(part.kind, 9), part.base, part.rel))


@dataclass
class CleanupPlan:
    options: CleanupOptions
    tree: Tree
    units: list[UnitPlan]
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, problem) while reading


def plan_cleanup(options: CleanupOptions, *, progress: Progress = _no_progress) -> CleanupPlan:
    """Scan, read, link, decide and protect. Every category is scanned and read, whatever
    ``include`` says, so a session's age and the references that protect files count everything."""
    errors: list[tuple[str, str]] = []
    tree = scan(options.root, options.store, codex=options.codex,
                on_error=lambda rel, msg: errors.append((rel, msg)))
    readable = [unit for unit in tree.units.values() if unit.transcripts]
    for unit in progress(readable, len(readable), "reading sessions"):
        # file times alone keep this unit: its timestamps cannot change that, only its references
        # to other units' files matter, and those need no JSON parsing
        idle = options.now.timestamp() - unit.newest_mtime
        kept_anyway = idle < options.older_than.total_seconds()
        unit.activity = _read_unit(unit, errors, parse=not kept_anyway)
    _link_loose_units(tree)
    plans = [_decide(unit, options) for unit in _ordered(tree.units.values())]
    _protect_referenced(plans)
    return CleanupPlan(options=options, tree=tree, units=plans, errors=errors)


def _ordered(units: Iterable[Unit]) -> list[Unit]:
    # sessions first, then loose items grouped by category (one archive per category and run)
    return sorted((unit for unit in units if unit.parts or unit.symlinks),
                  key=lambda unit: (unit.session is None, unit.key))


def _read_unit(unit: Unit, errors: list[tuple[str, str]], *, parse: bool) -> Activity:
    found = []
    for part in unit.transcripts:
        try:
            with os.fdopen(open_nofollow(part.base, part.rel), "rb") as stream:
                found.append(session_activity(iter_entries(stream, part.rel, on_invalid="keep"))
                             if parse else line_facts(bounded_lines(stream, part.rel)))
        except FileNotFoundError:
            continue  # removed since the scan (Claude Code's own cleanup, the user)
        except (OSError, ValueError, InputError) as exc:  # InputError: a line past the limit
            message = (describe(exc) if isinstance(exc, OSError)
                       else f"line {exc.lineno}: {exc.message}" if isinstance(exc, InputError)
                       else str(exc))
            part.error = f"cannot read: {message}"
            errors.append((part.rel, part.error))
    return combine(found)


def _link_loose_units(tree: Tree) -> None:
    """Older subagent transcripts (``agent-*.jsonl``, sessionId inside) and plan files (named by
    the slug a transcript records) join their session's unit, so they go and stay with it."""
    by_slug: dict[str, Unit] = {}
    for unit in tree.units.values():
        if unit.session is not None:
            for slug in unit.activity.slugs:
                # a resumed session may share its slug: the plan goes with the newest of them
                other = by_slug.get(slug)
                if other is None or _newest(unit) > _newest(other):
                    by_slug[slug] = unit
    for key, unit in list(tree.units.items()):
        owner = None
        if unit.session is None and key.rsplit("/", 1)[-1].startswith("agent-"):
            owner = tree.units.get(unit.activity.session_id or "")
        elif key.startswith("plans/") and key.endswith(".md"):
            slug = key[len("plans/"):-3].split("-agent-", 1)[0]
            owner = by_slug.get(slug)
        if owner is not None and owner is not unit and owner.session is not None:
            _merge(owner, unit)
            del tree.units[key]


def _newest(unit: Unit) -> float:
    last = unit.last_activity()
    return last.timestamp() if last else 0.0


def _merge(owner: Unit, unit: Unit) -> None:
    owner.parts.extend(unit.parts)
    owner.transcripts.extend(unit.transcripts)
    owner.symlinks.extend(unit.symlinks)
    owner.projects |= unit.projects
    owner.activity = combine([owner.activity, unit.activity])


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
    verdict = decide(last, now=options.now, older_than=options.older_than,
                     live_window=options.live_window)
    return UnitPlan(unit, verdict.remove, verdict.status, verdict.reason, last)


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
