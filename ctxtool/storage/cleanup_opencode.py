"""OpenCode's sessions for ``cleanup``: its data folder (``$XDG_DATA_HOME/opencode`` or
``~/.local/share/opencode``)::

    opencode.db                            every session's rows (category opencode-sessions)
    tool-output/tool_<id>                  full tool outputs a session's parts name
    plans/<created>-<slug>.md              plan mode's file (a project outside git)
    storage/session_diff/<session>.json    a revert's file changes

A unit is a session tree (a session and its child sessions, :mod:`.opencode_cleanup`): one part
``opencode.db`` standing for its rows, dated by their newest ``time_updated``, and its files
above. Its rows go in :meth:`OpenCodeSource.forget`, one transaction; its files after. The
archive is each session's ``opencode export`` (``DIR/<id>.json``, back with ``opencode
import``) and its files (``DIR/<id>.opencode-files.tar.gz``); its usage, one line per assistant
message in ``DIR/opencode/<id>.jsonl``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from ctxtool.errors import StoreError
from ctxtool.formats.opencode.usage import usage_only
from ctxtool.storage import opencode_cleanup as db_cleanup
from ctxtool.storage.archive import Archive
from ctxtool.storage.cleanup_source import CleanupSource, OnError
from ctxtool.storage.cleanup_tree import OPENCODE_SESSIONS, Part, Tree, measure
from ctxtool.storage.opencode_archive import restore_command, write_export, write_side_files
from ctxtool.storage.opencode_db_file import DB_NAME
from ctxtool.storage.retention import Activity
from ctxtool.storage.safe_fs import Removal

if TYPE_CHECKING:
    from ctxtool.storage.cleanup_tree import Unit, UnitPlan

AGENT = "opencode"
ROWS = "opencode-session"  # the part that stands for a session tree's rows
FILE_KIND = "opencode-file"
USAGE_FOLDER = "opencode"
BUSY = f"OpenCode's {DB_NAME} is locked by another process"


@dataclass
class RowsPart(Part):
    """The part standing for a session tree's rows (every tree's is ``opencode.db``): its size
    and time are the rows', not the file's."""

    session: str = ""
    is_path: ClassVar[bool] = False


@dataclass
class OpenCodeArchive(Archive):
    """A tree's archive: each session's export, and its files' tar.gz (when it has any)."""

    exports: dict[str, str] = field(default_factory=dict)  # session id -> DIR/<id>.json
    files: str | None = None
    directory: str = ""


class OpenCodeSource(CleanupSource):
    agent = AGENT
    categories = (OPENCODE_SESSIONS,)
    transcript_kinds = (ROWS,)

    def __init__(self, folder: str) -> None:
        super().__init__(folder)
        self.db = Path(folder) / DB_NAME
        self.trees: dict[str, db_cleanup.SessionTree] = {}
        self._named: dict[str, set[str]] | None = None  # tool output -> sessions naming it
        self._exports: dict[str, dict[str, bytes]] = {}  # root -> archived export per session
        self._busy = False  # the database stayed locked once: the run leaves it alone
        self._writable: bool | None = None  # the write lock was had once (checked once)

    def scan(self, tree: Tree, on_error: OnError) -> None:
        if not self.db.is_file():
            return
        try:
            found = db_cleanup.scan(self.db)
        except StoreError as exc:
            on_error(DB_NAME, exc.message)
            return
        for session in found:
            self.trees[session.id] = session
            unit = tree.unit(f"{AGENT}/{session.id}", session.id, AGENT)
            part = RowsPart(self.folder, DB_NAME, ROWS, OPENCODE_SESSIONS,
                            mtime=session.last_ms / 1000, session=session.id)
            unit.parts.append(part)
            unit.transcripts.append(part)

    def read(self, unit: Unit, on_error: OnError, *, parse: bool) -> Activity:
        """The tree's newest row; when it may go (``parse``), its rows, size and files too."""
        session = self.trees[unit.session or ""]
        if parse:
            try:
                if self._named is None:
                    self._named = db_cleanup.tool_outputs(self.db, self.folder)
                db_cleanup.measure(self.db, self.folder, [session], self._named)
            except StoreError as exc:
                unit.parts[0].error = exc.message
                on_error(DB_NAME, exc.message)
            unit.parts[0].bytes = session.bytes - sum(f.bytes for f in session.files)
            for found in session.files:
                part = Part(self.folder, found.rel, FILE_KIND, OPENCODE_SESSIONS)
                measure(part)
                unit.parts.append(part)
        return Activity(newest=datetime.fromtimestamp(session.last_ms / 1000, tz=timezone.utc))

    # --- archives ---------------------------------------------------------------------------

    def archive(self, archive_dir: str, stem: str, parts: list[Part],
                skip: frozenset[str]) -> Archive:
        """Each session's export, verified; then the tree's files as a tar.gz."""
        session = self._tree_of(parts)
        exports = db_cleanup.read_exports(self.db, session.ids)
        written = OpenCodeArchive(path="", directory=session.directory)
        for ident in session.ids:
            written.exports[ident] = write_export(archive_dir, ident, exports[ident])
        written.path = written.exports[session.id]
        files = [part.rel for part in parts if part.kind == FILE_KIND and part.rel not in skip]
        if files:
            side = write_side_files(archive_dir, session.id, self.folder, files)
            written.files, written.manifest, written.digests = side.path, side.manifest, side.digests
        self._exports[session.id] = exports
        return written

    def restore_command(self, archive: Archive) -> str:
        if not isinstance(archive, OpenCodeArchive):
            return super().restore_command(archive)
        steps = [restore_command(list(archive.exports.values()), archive.directory)]
        if archive.files:
            steps.append(f"tar -xzf {shlex.quote(archive.files)} -C {shlex.quote(self.folder)}")
        return " && ".join(steps)

    # --- usage ------------------------------------------------------------------------------

    def usage(self, part: Part) -> tuple[str, list[bytes]] | None:
        """One line per assistant message of every session of the tree."""
        if part.kind != ROWS:
            return None
        session = self._tree_of([part])
        exports = self._exports.get(session.id) or db_cleanup.read_exports(self.db, session.ids)
        lines = []
        for ident in session.ids:
            document = orjson.loads(exports[ident])
            for message in document.get("messages", []):
                line = usage_only(message.get("info") or {}, document.get("info") or {})
                if line is not None:
                    lines.append(orjson.dumps(line) + b"\n")
        return (f"{USAGE_FOLDER}/{session.id}.jsonl", lines) if lines else None

    # --- removing ---------------------------------------------------------------------------

    def forget(self, plan: UnitPlan, *, apply: bool) -> str | None:
        """Every row of the tree, in one transaction (the archive, when one was written, must
        still be what the database holds). Without ``apply``: whether the write lock can be
        had (taken and let go, nothing written; once busy, busy for the rest of the run)."""
        session = self.trees.get(plan.unit.session or "")
        if session is None:
            return None
        try:
            if self._busy:
                return BUSY
            if not apply:
                if self._writable is None:
                    db_cleanup.check_writable(self.db)
                    self._writable = True
                return None
            db_cleanup.remove_tree(self.db, session, exports=self._exports.get(session.id))
        except db_cleanup.DatabaseBusy:
            self._busy = True
            return BUSY
        return None

    def remove(self, part: Part, *, skip: frozenset[str],
               expected: Mapping[str, Any] | None) -> Removal:
        """The rows part went with :meth:`forget`; files go as files."""
        if part.kind == ROWS:
            return Removal(bytes=part.bytes)
        return super().remove(part, skip=skip, expected=expected)

    def _tree_of(self, parts: list[Part]) -> db_cleanup.SessionTree:
        rows = next(part for part in parts if isinstance(part, RowsPart))
        return self.trees[rows.session]
