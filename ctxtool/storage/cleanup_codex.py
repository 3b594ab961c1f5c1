"""Codex CLI's sessions for ``cleanup``: its folder (``$CODEX_HOME`` or ``~/.codex``)::

    sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl     one rollout per session
    archived_sessions/.../rollout-*.jsonl                 the ones the user archived

(category codex-sessions). A resumed session appends to its rollout, so a session is one file.
Before the rollout goes, Codex's own records of the thread go as ``codex delete`` removes them
(``storage/codex_threads.py``); a database Codex is writing keeps the session whole. Anything
else in the folder (config.toml, auth.json, history.jsonl) is never touched.
"""

from __future__ import annotations

import os
import re

from ctxtool.formats.codex import usage_only
from ctxtool.storage.cleanup_source import CleanupSource, OnError
from ctxtool.storage.cleanup_tree import CODEX_FOLDERS, CODEX_SESSIONS, Part, Tree, UnitPlan
from ctxtool.storage.codex_threads import ThreadsBusy, delete_thread_records

AGENT = "codex"
_ROLLOUT = re.compile(
    r"^rollout-.*-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
    r"\.jsonl$")


class CodexSource(CleanupSource):
    agent = AGENT
    categories = (CODEX_SESSIONS,)
    transcript_kinds = ("codex-rollout",)
    reduce_usage = staticmethod(usage_only)

    def scan(self, tree: Tree, on_error: OnError) -> None:
        """One unit per session, keyed by the id that ends the rollout's name."""
        for folder in CODEX_FOLDERS:
            base = os.path.join(self.folder, folder)
            if os.path.islink(base):
                tree.skip(Part(self.folder, folder, "symlink", CODEX_SESSIONS, symlink=True),
                          AGENT)
                continue
            for current, dirs, files in os.walk(base):  # never follows symlinked folders
                dirs.sort()
                rel_dir = os.path.relpath(current, self.folder)
                for name in sorted(files):
                    found = _ROLLOUT.match(name)
                    if found is not None:
                        self._add(tree, f"{rel_dir}/{name}", found.group(1))

    def _add(self, tree: Tree, rel: str, session: str) -> None:
        unit = tree.unit(f"codex/{session}", session, AGENT)
        part = Part(self.folder, rel, "codex-rollout", CODEX_SESSIONS)
        if os.path.islink(os.path.join(self.folder, rel)):
            part.symlink = True
            unit.symlinks.append(part)
        else:
            unit.parts.append(part)
            unit.transcripts.append(part)

    def swept(self) -> list[str]:
        return [os.path.join(self.folder, name) for name in CODEX_FOLDERS]

    def forget(self, plan: UnitPlan, *, apply: bool) -> str | None:
        """The thread's rows in Codex's databases (a dry run opens none of them)."""
        if not apply or plan.unit.session is None:
            return None
        try:
            delete_thread_records(self.folder, plan.unit.session)
        except ThreadsBusy as exc:
            return str(exc)
        return None
