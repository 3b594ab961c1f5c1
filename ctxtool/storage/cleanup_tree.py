"""Cleanup's units: what goes or stays as a whole, whatever agent it belongs to.

A unit is a session (every path of it: its transcript, its side files, its folder in ctxtool's
store) or one item that belongs to no session (a shell snapshot, a paste). Each agent's
:class:`~ctxtool.storage.cleanup_source.CleanupSource` finds its own units (Claude Code:
``cleanup_claude``, Codex CLI: ``cleanup_codex``, ctxtool's store: ``cleanup_store``); this module
holds what they share: parts and units, measuring a path without following symlinks, and the
checks on a folder before anything in it is cleaned. Symlinks are never followed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import ClassVar

from ctxtool.errors import UsageError
from ctxtool.storage import marker
from ctxtool.storage.retention import Activity
from ctxtool.storage.safe_fs import describe

# transcripts first: if one cannot be removed, the session's side files stay with it
_ORDER = {"transcript": 0, "codex-rollout": 0, "opencode-session": 0, "gemini-chat": 0,
          "subagent-transcript": 1, "session-folder": 2}
CLAUDE_CATEGORIES = ("projects", "file-history", "todos", "plans", "debug", "shell-snapshots",
                     "session-env", "paste-cache", "image-cache")
STORE = "store"
CODEX_SESSIONS = "codex-sessions"
OPENCODE_SESSIONS = "opencode-sessions"
GEMINI_SESSIONS = "gemini-sessions"
CODEX_FOLDERS = ("sessions", "archived_sessions")  # under $CODEX_HOME, as Codex CLI keeps them
CATEGORIES = (*CLAUDE_CATEGORIES, STORE, CODEX_SESSIONS, OPENCODE_SESSIONS, GEMINI_SESSIONS)
_CODEX_MARKERS = (*CODEX_FOLDERS, "config.toml", "auth.json", "history.jsonl")
_CLAUDE_MARKERS = ("projects", "settings.json", "history.jsonl", "file-history", "todos",
                   "statsig", "shell-snapshots", "session-env", ".credentials.json", "ide")


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
    # False: the part stands for rows in an agent's database, measured by its source
    is_path: ClassVar[bool] = True


@dataclass
class Unit:
    key: str
    session: str | None
    agent: str  # the agent whose session (or item) it is: claude-code, codex, ...
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
class Tree:
    units: dict[str, Unit] = field(default_factory=dict)
    skipped: list[tuple[Part, str]] = field(default_factory=list)  # (symlinked folder, agent)

    def unit(self, key: str, session: str | None, agent: str) -> Unit:
        """The unit of ``key``, made for ``agent`` if there is none yet (a part of ctxtool's
        store joins the unit of its session, whichever agent it is)."""
        found = self.units.get(key)
        if found is None:
            found = self.units[key] = Unit(key=key, session=session, agent=agent)
        return found

    def skip(self, part: Part, agent: str) -> None:
        """A symlinked folder: never followed, said so in the plan."""
        self.skipped.append((part, agent))


def check_folder(path: str, *, what: str, force: bool) -> str:
    """The real path of a folder cleanup may work in, or UsageError.

    ``/`` and the home folder itself are always refused; a folder that does not look like a
    Claude Code config folder (``what`` "claude-code" or "root") or a Codex CLI folder ("codex")
    is refused unless ``force``; a store (``what="store"``) must hold the mark ctxtool writes
    when it creates one, ``force`` or not. Another agent's folder gets the first checks only.
    """
    real = os.path.realpath(path)
    what = "claude-code" if what == "root" else what
    option = {"claude-code": "--root", "store": "--store", "codex": "--codex-home"}.get(
        what, f"--agent {what}")
    if not os.path.isdir(real):
        raise UsageError(f"{option}: not a folder: {path}")
    if real == os.path.realpath(os.sep) or os.path.dirname(real) == real:
        raise UsageError(f"{option}: refusing to clean the filesystem root {path}")
    if real == os.path.realpath(Path.home()):
        raise UsageError(f"{option}: refusing to clean the home folder itself ({path})",
                         hint="point it at the agent's folder (~/.claude), not ~")
    if what == "store":
        if not marker.is_marked(real):  # never by name: see storage/marker.py
            raise UsageError(f"{option}: {path} is not a store ctxtool made (no {marker.MARKER} "
                             "file in it); nothing is cleaned there",
                             hint=f"if an older ctxtool made it, mark it: touch "
                                  f"{os.path.join(path, marker.MARKER)}")
        return real
    looks = {"claude-code": (".claude", _CLAUDE_MARKERS), "codex": (".codex", _CODEX_MARKERS)}
    if what in looks and not force and not _looks_like(real, *looks[what]):
        name = "a Claude Code config folder" if what == "claude-code" else "a Codex CLI folder"
        raise UsageError(f"{option}: {path} does not look like {name}",
                         hint="pass --force if it really is one")
    return real


def _looks_like(real: str, name: str, markers: tuple[str, ...]) -> bool:
    return os.path.basename(real) == name or any(
        os.path.lexists(os.path.join(real, marker)) for marker in markers)


def measure(part: Part) -> None:
    """Fill in a part's size and newest mtime by walking it without following symlinks."""
    if not part.is_path:
        return
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


def entries(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as found:
            return sorted(found, key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return []


def add_part(unit: Unit, part: Part, entry: os.DirEntry[str]) -> None:
    if entry.is_symlink():
        part.symlink = True
        unit.symlinks.append(part)
    else:
        unit.parts.append(part)


def measure_all(tree: Tree, on_error: Callable[[str, str], None]) -> None:
    """Measure every part of the tree's units, once every source has scanned."""
    for unit in tree.units.values():
        for part in unit.parts:
            measure(part)
            if part.error:
                on_error(part.rel, part.error)
