"""Reading a Claude Code config folder (and ctxtool's store) into cleanup units.

A unit is what goes or stays as a whole: a session (its transcript, its folder with
``tool-results/`` and ``subagents/``, and its side files elsewhere in the root), or one item that
belongs to no session (a shell snapshot, a paste). Layout, as Claude Code writes it::

    projects/<project>/<session>.jsonl          transcript          (category projects)
    projects/<project>/<session>/               tool-results/, subagents/agent-*.jsonl
    projects/<project>/agent-<id>.jsonl         older subagent transcript (sessionId inside)
    projects/<project>/sessions-index.json      index of the project's sessions
    file-history/<session>/                     file backups for /rewind
    todos/<session>-agent-<agent>.json          todo lists
    plans/<slug>.md                             plan-mode files (slug written in the transcript)
    debug/<session>.txt                         debug logs (debug/latest is a symlink: skipped)
    shell-snapshots/snapshot-<shell>-<ms>-<rand>.sh    not tied to a session
    session-env/<session>/                      per-session environment
    paste-cache/<hash>.txt                      pasted text, shared between sessions
    image-cache/<session>/<n>.png               pasted images
    $CTXTOOL_STORE/<session or default>/tool-results/    ctxtool's own store
    $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl   Codex CLI sessions
    $CODEX_HOME/archived_sessions/.../rollout-*.jsonl   (category codex-sessions, its own base)

Only these folders are ever looked at; anything else in the root (settings, history.jsonl,
plugins, a project's ``memory/``) is never touched. Symlinks are never followed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ctxtool.errors import UsageError
from ctxtool.storage import marker
from ctxtool.storage.retention import Activity
from ctxtool.storage.safe_fs import describe

CLAUDE_CATEGORIES = ("projects", "file-history", "todos", "plans", "debug", "shell-snapshots",
                     "session-env", "paste-cache", "image-cache")
STORE = "store"
CODEX_SESSIONS = "codex-sessions"
CODEX_FOLDERS = ("sessions", "archived_sessions")  # under $CODEX_HOME, as Codex CLI keeps them
CATEGORIES = (*CLAUDE_CATEGORIES, STORE, CODEX_SESSIONS)
# kind of a part that is a folder or file named after its session, per side category
_SESSION_KIND = {"file-history": "file-history", "session-env": "session-env",
                 "image-cache": "image-cache", "debug": "debug-log", "todos": "todos"}
_LOOSE_KIND = {"plans": "plan", "shell-snapshots": "shell-snapshot", "paste-cache": "paste"}
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_CODEX_ROLLOUT = re.compile(
    r"^rollout-.*-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$")
_CODEX_MARKERS = (*CODEX_FOLDERS, "config.toml", "auth.json", "history.jsonl")
_CLAUDE_MARKERS = ("projects", "settings.json", "history.jsonl", "file-history", "todos",
                   "statsig", "shell-snapshots", "session-env", ".credentials.json", "ide")
INDEX_NAME = "sessions-index.json"


@dataclass
class Part:
    """One top-level path of a unit, relative to its base folder (the root or the store)."""

    base: str
    rel: str
    kind: str
    category: str
    bytes: int = 0
    mtime: float = 0.0  # newest lstat mtime of the path and everything inside it
    symlink: bool = False
    error: str | None = None  # could not be measured (unreadable folder...)


@dataclass
class Unit:
    key: str
    session: str | None
    parts: list[Part] = field(default_factory=list)
    transcripts: list[Part] = field(default_factory=list)  # parts (or files inside) to read
    projects: set[str] = field(default_factory=set)  # project folders holding its transcript
    symlinks: list[Part] = field(default_factory=list)  # never followed: the unit stays whole
    activity: Activity = field(default_factory=Activity)

    @property
    def newest_mtime(self) -> float:
        return max((part.mtime for part in self.parts), default=0.0)

    def last_activity(self) -> datetime | None:
        stamps = [self.activity.newest] if self.activity.newest else []
        if self.parts:
            stamps.append(datetime.fromtimestamp(self.newest_mtime, tz=timezone.utc))
        return max(stamps) if stamps else None


@dataclass
class Tree:
    root: str | None
    store: str | None
    codex: str | None = None
    units: dict[str, Unit] = field(default_factory=dict)
    indexes: list[str] = field(default_factory=list)  # rel paths of sessions-index.json files
    skipped: list[Part] = field(default_factory=list)  # symlinked category/project folders

    def unit(self, key: str, session: str | None) -> Unit:
        found = self.units.get(key)
        if found is None:
            found = self.units[key] = Unit(key=key, session=session)
        return found


def check_folder(path: str, *, what: str, force: bool) -> str:
    """The real path of a folder cleanup may work in, or UsageError.

    ``/`` and the home folder itself are always refused; a folder that does not look like a
    Claude Code config folder (``what="root"``) is refused unless ``force``; a store
    (``what="store"``) must hold the mark ctxtool writes when it creates one, ``force`` or not.
    """
    real = os.path.realpath(path)
    option = {"root": "--root", "store": "--store", "codex": "--codex-home"}[what]
    if not os.path.isdir(real):
        raise UsageError(f"{option}: not a folder: {path}")
    if real == os.path.realpath(os.sep) or os.path.dirname(real) == real:
        raise UsageError(f"{option}: refusing to clean the filesystem root {path}")
    if real == os.path.realpath(Path.home()):
        raise UsageError(f"{option}: refusing to clean the home folder itself ({path})",
                         hint="point it at ~/.claude, not ~")
    if what == "store":
        if not marker.is_marked(real):  # never by name: see storage/marker.py
            raise UsageError(f"{option}: {path} is not a store ctxtool made (no {marker.MARKER} "
                             "file in it); nothing is cleaned there",
                             hint=f"if an older ctxtool made it, mark it: touch "
                                  f"{os.path.join(path, marker.MARKER)}")
        return real
    if what == "codex":
        if not _looks_like(real, ".codex", _CODEX_MARKERS) and not force:
            raise UsageError(f"{option}: {path} does not look like a Codex CLI folder",
                             hint="pass --force if it really is one")
        return real
    if not _looks_like(real, ".claude", _CLAUDE_MARKERS) and not force:
        raise UsageError(f"{option}: {path} does not look like a Claude Code config folder",
                         hint="pass --force if it really is one")
    return real


def _looks_like(real: str, name: str, markers: tuple[str, ...]) -> bool:
    return os.path.basename(real) == name or any(
        os.path.lexists(os.path.join(real, marker)) for marker in markers)


def measure(part: Part) -> None:
    """Fill in a part's size and newest mtime by walking it without following symlinks."""
    try:
        top = os.lstat(os.path.join(part.base, part.rel))
        total, newest = (0 if stat.S_ISDIR(top.st_mode) else top.st_size), top.st_mtime
        folders = [os.path.join(part.base, part.rel)] if stat.S_ISDIR(top.st_mode) else []
        while folders:  # unordered and iterative: only the sums matter here
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    st = entry.stat(follow_symlinks=False)
                    newest = max(newest, st.st_mtime)
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    else:
                        total += st.st_size
    except OSError as exc:
        part.error = describe(exc)
        total, newest = 0, 0.0
    part.bytes, part.mtime = total, newest


def _entries(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as found:
            return sorted(found, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []


def scan(root: str | None, store: str | None, *, categories: tuple[str, ...] = CATEGORIES,
         on_error: Callable[[str, str], None] | None = None, codex: str | None = None) -> Tree:
    """Every unit under ``root`` (and ``store``, and the Codex CLI folder ``codex``), measured
    but not yet read.

    ``categories`` limits which folders are walked at all; units still collect every part of
    those folders, so their age counts everything in them.
    """
    tree = Tree(root=root, store=store, codex=codex)
    for category in categories:
        if category == STORE:
            if store is not None:
                _scan_store(tree, store)
            continue
        if category == CODEX_SESSIONS:
            if codex is not None:
                _scan_codex(tree, codex)
            continue
        if root is None:
            continue
        folder = os.path.join(root, category)
        if os.path.islink(folder):
            tree.skipped.append(Part(root, category, "symlink", category, symlink=True))
        elif category == "projects":
            _scan_projects(tree, root)
        else:
            _scan_side(tree, root, category)
    for unit in tree.units.values():
        for part in unit.parts:
            measure(part)
            if part.error and on_error:
                on_error(part.rel, part.error)
    return tree


def _add(unit: Unit, part: Part, entry: os.DirEntry[str]) -> None:
    if entry.is_symlink():
        part.symlink = True
        unit.symlinks.append(part)
    else:
        unit.parts.append(part)


def _scan_projects(tree: Tree, root: str) -> None:
    for project in _entries(os.path.join(root, "projects")):
        rel_project = f"projects/{project.name}"
        if project.is_symlink():
            tree.skipped.append(Part(root, rel_project, "symlink", "projects", symlink=True))
            continue
        if not project.is_dir(follow_symlinks=False):
            continue
        children = _entries(project.path)
        stems = {entry.name[:-6] for entry in children if entry.name.endswith(".jsonl")}
        for entry in children:
            _scan_project_entry(tree, root, rel_project, entry, stems)


def _scan_project_entry(tree: Tree, root: str, rel_project: str, entry: os.DirEntry[str],
                        stems: set[str]) -> None:
    rel = f"{rel_project}/{entry.name}"
    if entry.name == INDEX_NAME:
        if not entry.is_symlink():
            tree.indexes.append(rel)
        return
    is_file = entry.is_symlink() or entry.is_file(follow_symlinks=False)
    if entry.name.endswith(".jsonl") and is_file:
        stem = entry.name[:-6]
        legacy_agent = stem.startswith("agent-")
        unit = tree.unit(f"{rel_project}/{stem}" if legacy_agent else stem,
                         None if legacy_agent else stem)
        part = Part(root, rel, "subagent-transcript" if legacy_agent else "transcript", "projects")
        _add(unit, part, entry)
        if not part.symlink:
            unit.transcripts.append(part)
            unit.projects.add(rel_project)
        return
    # a session's own folder; other folders (a project's memory/, ...) are not ours to touch
    if (entry.name in stems or _UUID.match(entry.name)) and (
            entry.is_symlink() or entry.is_dir(follow_symlinks=False)):
        unit = tree.unit(entry.name, entry.name)
        part = Part(root, rel, "session-folder", "projects")
        _add(unit, part, entry)
        if not part.symlink:
            unit.transcripts.extend(_subagent_transcripts(root, rel))


def _subagent_transcripts(root: str, rel_folder: str) -> list[Part]:
    found = []
    for entry in _entries(os.path.join(root, rel_folder, "subagents")):
        if entry.name.endswith(".jsonl") and entry.is_file(follow_symlinks=False):
            found.append(Part(root, f"{rel_folder}/subagents/{entry.name}", "subagent-transcript",
                              "projects"))
    return found


def _session_of(category: str, name: str) -> str:
    if category == "todos":
        return name.split("-agent-", 1)[0].removesuffix(".json")
    if category == "debug":
        return name.removesuffix(".txt")
    return name


def _scan_side(tree: Tree, root: str, category: str) -> None:
    for entry in _entries(os.path.join(root, category)):
        rel = f"{category}/{entry.name}"
        if category == "debug" and entry.name == "latest" and entry.is_symlink():
            tree.skipped.append(Part(root, rel, "symlink", category, symlink=True))
        elif category in _SESSION_KIND:
            session = _session_of(category, entry.name)
            unit = tree.unit(session, session)
            _add(unit, Part(root, rel, _SESSION_KIND[category], category), entry)
        else:
            unit = tree.unit(rel, None)
            _add(unit, Part(root, rel, _LOOSE_KIND[category], category), entry)


def _scan_codex(tree: Tree, codex: str) -> None:
    """Codex CLI rollouts: one unit per session, keyed by the id that ends the file name (a
    resumed session appends to its rollout, so there is one file per session)."""
    for folder in CODEX_FOLDERS:
        base = os.path.join(codex, folder)
        if os.path.islink(base):
            tree.skipped.append(Part(codex, folder, "symlink", CODEX_SESSIONS, symlink=True))
            continue
        for current, dirs, files in os.walk(base):  # never follows symlinked folders
            dirs.sort()
            rel_dir = os.path.relpath(current, codex)
            for name in sorted(files):
                found = _CODEX_ROLLOUT.match(name)
                if found is None:
                    continue
                entry_path = os.path.join(current, name)
                unit = tree.unit(f"codex/{found.group(1)}", found.group(1))
                part = Part(codex, f"{rel_dir}/{name}", "codex-rollout", CODEX_SESSIONS)
                if os.path.islink(entry_path):
                    part.symlink = True
                    unit.symlinks.append(part)
                else:
                    unit.parts.append(part)
                    unit.transcripts.append(part)


def _scan_store(tree: Tree, store: str) -> None:
    """The store's session folders that hold only what ctxtool writes (marker.is_ours): each
    joins its session's unit ("default" stands alone). Anything else someone put in the store
    (a loose file, a folder of photos, a file of theirs in a session folder) is never touched;
    nor is a symlink (never followed: a session's keeps that session whole)."""
    for entry in _entries(store):
        if not marker.SESSION_NAME.fullmatch(entry.name) or not (
                entry.is_symlink() or marker.is_ours(entry.path)):
            continue
        unit = (tree.unit(entry.name, entry.name) if entry.name != "default"
                else tree.unit(f"store/{entry.name}", None))
        _add(unit, Part(store, entry.name, "store", STORE), entry)
