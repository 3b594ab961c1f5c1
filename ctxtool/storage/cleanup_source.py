"""What ``cleanup`` asks of one agent: the :class:`CleanupSource` interface, and the registry of
the agents it cleans.

A source is one agent's storage seen by cleanup, rooted at one folder (the agent's own, found
from the variables the agent itself reads: see :func:`agent_folder`). Cleanup plans and applies
the same way for every agent; only these steps differ, so only these are asked of a source:

1. :meth:`~CleanupSource.scan` - find its sessions: add one :class:`Unit` per session (and per
   loose item) to the tree, every part measured (size and newest time);
2. :meth:`~CleanupSource.read` - a session's last activity (and the references that protect
   files), read from its transcripts or records; then :meth:`~CleanupSource.link` joins loose
   items to their session;
3. :meth:`~CleanupSource.archive` - write and verify an archive of a session's parts, and say in
   :meth:`~CleanupSource.restore_command` how to bring it back;
4. :meth:`~CleanupSource.usage` - a transcript's usage lines for ``--keep-usage``, and where
   under that folder they go;
5. :meth:`~CleanupSource.forget` then :meth:`~CleanupSource.remove` - remove the agent's own
   records of a session (database rows), then its parts; a session whose records cannot be
   removed now (a database another process holds) is kept whole, status "busy";
6. :meth:`~CleanupSource.finish` - what is left once every session went (an index to rewrite,
   a folder left empty).

The base class gives the behaviour of an agent that keeps a session as JSONL files (Claude Code,
Codex CLI): an agent overrides only what it does differently. Adding an agent = one module
``ctxtool/storage/cleanup_<agent>.py`` with a subclass, one line in :data:`SOURCES`, and the
adapter's :meth:`~ctxtool.formats.adapter.FormatAdapter.home_folder` (where the agent keeps its
things, from its own variables).
"""

from __future__ import annotations

import importlib
import os
import shlex
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ctxtool.errors import InputError
from ctxtool.formats.jsonl import bounded_lines, iter_entries
from ctxtool.storage.archive import Archive, write_archive
from ctxtool.storage.retention import Activity, Retention, combine, line_facts, session_activity
from ctxtool.storage.safe_fs import Removal, describe, open_nofollow, remove

if TYPE_CHECKING:
    from ctxtool.storage.cleanup_tree import Part, Tree, Unit, UnitPlan

Reduce = Callable[[Mapping[str, Any]], "dict[str, Any] | None"]
OnError = Callable[[str, str], None]
Record = dict[str, Any]

#: agent name (its ``--agent`` and ``--format`` name) -> (module, class); in the plan's order
SOURCES: dict[str, tuple[str, str]] = {
    "claude-code": ("ctxtool.storage.cleanup_claude", "ClaudeCodeSource"),
    "codex": ("ctxtool.storage.cleanup_codex", "CodexSource"),
    "opencode": ("ctxtool.storage.cleanup_opencode", "OpenCodeSource"),
    "gemini": ("ctxtool.storage.cleanup_gemini", "GeminiSource"),
}
#: ctxtool's own store: not an agent's, cleaned with whichever agent's sessions it holds
STORE_AGENT = "ctxtool"


class Run(Protocol):
    """What :meth:`CleanupSource.finish` sees of the run (``ctxtool.storage.cleanup.CleanupRun``)."""

    summary: Any  # the run's Summary: counts and errors a finishing step adds to
    options: Any  # the run's CleanupOptions (``apply``...)
    removed_parts: list[tuple[UnitPlan, Part]]  # what went (or would go, in a dry run)
    gone: set[str]  # rel paths removed (or that would be), folders that keep nothing

    def record(self, plan: UnitPlan | None, part: Part, action: str, reason: str, *,
               size: int | None = None, agent: str | None = None, **extra: Any) -> Record:
        ...


class CleanupSource:
    """One agent's storage under :attr:`folder` (a real path), as cleanup sees it."""

    agent: ClassVar[str] = ""
    categories: ClassVar[tuple[str, ...]] = ()  # its --include/--exclude categories
    transcript_kinds: ClassVar[tuple[str, ...]] = ()  # part kinds that hold a session's lines
    reduce_usage: ClassVar[Reduce | None] = None  # one line -> its usage-only form (None: none)

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.folder!r})"

    # --- 1. finding sessions ----------------------------------------------------------------

    def scan(self, tree: Tree, on_error: OnError) -> None:
        """Add this agent's units to ``tree`` (created with ``tree.unit(key, session, self)``),
        their parts measured; a path that cannot be measured is reported to ``on_error``."""
        raise NotImplementedError

    def own_retention(self, env: Mapping[str, str]) -> Retention | None:
        """The agent's own retention rule, cleanup's default for its sessions when
        ``--older-than`` is not given; None: the run's default (Claude Code's
        ``cleanupPeriodDays``, else 30 days)."""
        return None

    def project_retention(self, env: Mapping[str, str]) -> Mapping[str, Retention]:
        """Projects whose own settings give their sessions another rule than
        :meth:`own_retention` (Gemini CLI's ``<project>/.gemini/settings.json``): project, as
        :attr:`Unit.projects` names it -> its rule. Used only where :meth:`own_retention` is."""
        return {}

    def swept(self) -> list[str]:
        """The folders parts are removed from: ``--archive`` and ``--keep-usage`` may not be
        (inside) one of them."""
        return [self.folder]

    def link(self, tree: Tree) -> None:
        """Once every unit is read: join loose units to the session they belong to (Claude
        Code's plan files, named by a slug its transcript records)."""

    # --- 2. last activity -------------------------------------------------------------------

    def read(self, unit: Unit, on_error: OnError, *, parse: bool) -> Activity:
        """The unit's activity from its JSONL transcripts. ``parse`` False: only what the lines'
        bytes tell (the unit is kept by its file times anyway; references still count)."""
        found = []
        for part in unit.transcripts:
            try:
                with os.fdopen(open_nofollow(part.base, part.rel), "rb") as stream:
                    found.append(session_activity(iter_entries(stream, part.rel,
                                                               on_invalid="keep"))
                                 if parse else line_facts(bounded_lines(stream, part.rel)))
            except FileNotFoundError:
                continue  # removed since the scan (the agent's own cleanup, the user)
            except (OSError, ValueError, InputError) as exc:  # InputError: a line past the limit
                part.error = f"cannot read: {_problem(exc)}"
                on_error(part.rel, part.error)
        return combine(found)

    # --- 3. archives ------------------------------------------------------------------------

    def archive(self, archive_dir: str, stem: str, parts: list[Part],
                skip: frozenset[str]) -> Archive:
        """A verified archive of ``parts`` (all under :attr:`folder`) in ``archive_dir``;
        StoreError when it cannot be written or verified (then nothing is removed)."""
        return write_archive(archive_dir, stem, self.folder, [part.rel for part in parts],
                             skip=skip)

    def restore_command(self, archive: Archive) -> str:
        """One shell command that puts an archive's content back where the agent finds it."""
        return f"tar -xzf {shlex.quote(archive.path)} -C {shlex.quote(self.folder)}"

    # --- 4. usage ---------------------------------------------------------------------------

    def usage(self, part: Part) -> tuple[str, list[bytes]] | None:
        """(path under the --keep-usage folder, lines) of one part's usage, or None when the
        part records none. The default: each line reduced by :attr:`reduce_usage`, written
        where the part is under the agent's folder. OSError, ValueError or InputError when the
        part cannot be read."""
        reduce = type(self).reduce_usage
        if reduce is None or part.kind not in self.transcript_kinds:
            return None
        import orjson

        with os.fdopen(open_nofollow(part.base, part.rel), "rb") as stream:
            reduced = (reduce(entry) for entry in iter_entries(stream, part.rel,
                                                                on_invalid="skip"))
            lines = [orjson.dumps(line) + b"\n" for line in reduced if line is not None]
        return (part.rel, lines) if lines else None

    # --- 5. removing ------------------------------------------------------------------------

    def forget(self, plan: UnitPlan, *, apply: bool) -> str | None:
        """Remove what the agent itself records of the session besides its parts (database
        rows), before the parts go. The reason it cannot now (a database another process is
        writing: the session is kept whole, said so, no error), or None; StoreError when it
        cannot at all (the session is kept, an error). Without ``apply``, only check: change
        nothing. The default: an agent that records nothing else."""
        return None

    def remove(self, part: Part, *, skip: frozenset[str],
               expected: Mapping[str, Any] | None) -> Removal:
        """Remove one part (never following symlinks; only what ``expected`` - an archive's
        manifest - holds unchanged, when given; never the ``skip`` paths)."""
        return remove(part.base, part.rel, skip=skip, expected=expected)  # type: ignore[arg-type]

    # --- 6. after the sweep -----------------------------------------------------------------

    def finish(self, run: Run) -> Iterator[Record]:
        """Records of what is done once the run's sessions went (or would go)."""
        return iter(())


def _problem(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return describe(exc)
    if isinstance(exc, InputError):
        return f"line {exc.lineno}: {exc.message}"
    return str(exc)


def agents() -> tuple[str, ...]:
    """The agents cleanup knows, in the plan's order."""
    return tuple(SOURCES)


def make_source(agent: str, folder: str) -> CleanupSource:
    module, name = SOURCES[agent]
    source: CleanupSource = getattr(importlib.import_module(module), name)(folder)
    return source


def agent_title(agent: str) -> str:
    """How people call the agent: "Claude Code", "Codex CLI"..."""
    from ctxtool.formats.registry import adapter_for

    return adapter_for(agent).title or agent


def agent_folder(agent: str, env: Mapping[str, str]) -> str:
    """The agent's folder as the agent itself finds it (its adapter reads the same variables,
    with the same defaults); it may not exist."""
    from ctxtool.formats.registry import adapter_for

    folder = adapter_for(agent).home_folder(env)
    assert folder is not None, f"{agent} keeps no folder"
    return str(folder)
