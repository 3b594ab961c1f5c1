"""Claude Code's sessions for ``cleanup``: its config folder (``$CLAUDE_CONFIG_DIR`` or
``~/.claude``), as Claude Code writes it::

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

Only these folders are ever looked at; anything else in the folder (settings, history.jsonl,
plugins, a project's ``memory/``) is never touched. Once the sessions went, each project's
``sessions-index.json`` drops them (atomically) and a project folder left empty goes.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterator
import orjson

from ctxtool.errors import StoreError
from ctxtool.formats.claude_code.usage import usage_only
from ctxtool.storage.atomic import write_bytes_atomic
from ctxtool.storage.cleanup_source import CleanupSource, OnError, Record, Run
from ctxtool.storage.cleanup_tree import CLAUDE_CATEGORIES, Part, Tree, Unit, add_part, entries
from ctxtool.storage.retention import combine
from ctxtool.storage.safe_fs import describe, open_nofollow

AGENT = "claude-code"
INDEX_NAME = "sessions-index.json"
# kind of a part that is a folder or file named after its session, per side category
_SESSION_KIND = {"file-history": "file-history", "session-env": "session-env",
                 "image-cache": "image-cache", "debug": "debug-log", "todos": "todos"}
_LOOSE_KIND = {"plans": "plan", "shell-snapshots": "shell-snapshot", "paste-cache": "paste"}
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


class ClaudeCodeSource(CleanupSource):
    agent = AGENT
    categories = CLAUDE_CATEGORIES
    transcript_kinds = ("transcript", "subagent-transcript")
    reduce_usage = staticmethod(usage_only)

    def __init__(self, folder: str) -> None:
        super().__init__(folder)
        self.indexes: list[str] = []  # rel paths of sessions-index.json files

    def scan(self, tree: Tree, on_error: OnError) -> None:
        for category in CLAUDE_CATEGORIES:
            folder = os.path.join(self.folder, category)
            if os.path.islink(folder):
                tree.skip(Part(self.folder, category, "symlink", category, symlink=True), AGENT)
            elif category == "projects":
                _scan_projects(tree, self.folder, self.indexes)
            else:
                _scan_side(tree, self.folder, category)

    def swept(self) -> list[str]:
        return [os.path.join(self.folder, name) for name in CLAUDE_CATEGORIES]

    def link(self, tree: Tree) -> None:
        """Older subagent transcripts (``agent-*.jsonl``, sessionId inside) and plan files
        (named by the slug a transcript records) join their session's unit, so they go and stay
        with it."""
        by_slug: dict[str, Unit] = {}
        for unit in tree.units.values():
            if unit.session is not None and unit.agent == AGENT:
                for slug in unit.activity.slugs:
                    # a resumed session may share its slug: the plan goes with the newest
                    other = by_slug.get(slug)
                    if other is None or _newest(unit) > _newest(other):
                        by_slug[slug] = unit
        for key, unit in list(tree.units.items()):
            owner = None
            if unit.agent != AGENT:
                continue
            if unit.session is None and key.rsplit("/", 1)[-1].startswith("agent-"):
                owner = tree.units.get(unit.activity.session_id or "")
            elif key.startswith("plans/") and key.endswith(".md"):
                slug = key[len("plans/"):-3].split("-agent-", 1)[0]
                owner = by_slug.get(slug)
            if owner is not None and owner is not unit and owner.session is not None:
                _merge(owner, unit)
                del tree.units[key]

    def finish(self, run: Run) -> Iterator[Record]:
        removed: dict[str, set[str]] = defaultdict(set)  # project rel -> its sessions that went
        for plan, part in run.removed_parts:
            if part.base == self.folder and part.kind == "transcript" and plan.unit.session:
                removed[part.rel.rsplit("/", 1)[0]].add(plan.unit.session)
        left: dict[str, int] = {}  # project rel -> sessions its index still lists
        for rel in sorted(self.indexes):
            sessions = removed.get(rel.rsplit("/", 1)[0])
            if sessions:
                record = self._update_index(run, rel, sessions, left)
                if record is not None:
                    yield record
        yield from self._empty_projects(run, removed, left)

    # --- sessions-index.json ----------------------------------------------------------------

    def _update_index(self, run: Run, rel: str, sessions: set[str],
                      left: dict[str, int]) -> Record | None:
        part = Part(self.folder, rel, "sessions-index", "projects")
        try:
            with os.fdopen(open_nofollow(self.folder, rel), "rb") as handle:
                data = handle.read()
            document = orjson.loads(data)
        except (OSError, orjson.JSONDecodeError) as exc:
            message = f"cannot read: {describe(exc) if isinstance(exc, OSError) else exc}"
            run.summary.errors.append(f"{rel}: {message}")
            return run.record(None, part, "keep", "index not updated", size=0, error=message,
                              agent=AGENT)
        entries_ = document.get("entries") if isinstance(document, dict) else None
        if not isinstance(entries_, list):
            return None
        kept = [entry for entry in entries_ if _indexed_session(entry) not in sessions]
        left[rel.rsplit("/", 1)[0]] = len(kept)
        dropped = sorted({_indexed_session(entry) or "" for entry in entries_} & sessions)
        if not dropped:
            return None
        new = orjson.dumps({**document, "entries": kept}, option=orjson.OPT_INDENT_2)
        new += b"\n" if data.endswith(b"\n") else b""
        gone = len(entries_) - len(kept)
        reason = f"dropped {gone} {'entry' if gone == 1 else 'entries'} of removed sessions"
        error = None
        if run.options.apply:
            try:
                write_bytes_atomic(os.path.join(self.folder, rel), new)
                run.summary.indexes += 1
            except StoreError as exc:
                error = exc.format()
                run.summary.errors.append(error)
        return run.record(None, part, "update", reason, size=len(new), error=error,
                          removed_sessions=dropped, agent=AGENT)

    # --- project folders left empty ---------------------------------------------------------

    def _empty_projects(self, run: Run, removed: dict[str, set[str]],
                        left_in_index: dict[str, int]) -> Iterator[Record]:
        """Project folders whose sessions all went: nothing left in them but, at most, an index
        listing no session. Claude Code makes the folder again when a session starts there."""
        for rel in sorted(removed):
            if not rel.startswith("projects/"):
                continue
            folder = os.path.join(self.folder, rel)
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            left = [name for name in names if f"{rel}/{name}" not in run.gone]
            if left and (left != [INDEX_NAME] or left_in_index.get(rel) != 0):
                continue  # something stays, or an index that lists sessions (or was unreadable)
            error = _remove_folder(run, folder, INDEX_NAME if INDEX_NAME in left else None)
            if error is None:
                run.summary.empty_folders += 1
            part = Part(self.folder, rel, "project-folder", "projects")
            yield run.record(None, part, "keep" if error else "delete",
                             "empty once its sessions went", size=0, error=error, agent=AGENT)


def _newest(unit: Unit) -> float:
    last = unit.last_activity()
    return last.timestamp() if last else 0.0


def _merge(owner: Unit, unit: Unit) -> None:
    owner.parts.extend(unit.parts)
    owner.transcripts.extend(unit.transcripts)
    owner.symlinks.extend(unit.symlinks)
    owner.projects |= unit.projects
    owner.activity = combine([owner.activity, unit.activity])


def _remove_folder(run: Run, folder: str, index: str | None) -> str | None:
    if not run.options.apply:
        return None
    try:
        if index is not None:
            os.unlink(os.path.join(folder, index))
        os.rmdir(folder)  # only ever removes an empty folder: a file written meanwhile stays
    except OSError as exc:
        message = f"{folder}: cannot remove: {describe(exc)}"
        run.summary.errors.append(message)
        return message
    return None


def _indexed_session(entry: object) -> str | None:
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("sessionId"), str):
        return str(entry["sessionId"])
    full = entry.get("fullPath")
    if isinstance(full, str) and full.endswith(".jsonl"):
        return os.path.basename(full)[:-len(".jsonl")]
    return None


# --- scanning -------------------------------------------------------------------------------

def _scan_projects(tree: Tree, root: str, indexes: list[str]) -> None:
    for project in entries(os.path.join(root, "projects")):
        rel_project = f"projects/{project.name}"
        if project.is_symlink():
            tree.skip(Part(root, rel_project, "symlink", "projects", symlink=True), AGENT)
            continue
        if not project.is_dir(follow_symlinks=False):
            continue
        children = entries(project.path)
        stems = {entry.name[:-6] for entry in children if entry.name.endswith(".jsonl")}
        for entry in children:
            _scan_project_entry(tree, root, rel_project, entry, stems, indexes)


def _scan_project_entry(tree: Tree, root: str, rel_project: str, entry: os.DirEntry[str],
                        stems: set[str], indexes: list[str]) -> None:
    rel = f"{rel_project}/{entry.name}"
    if entry.name == INDEX_NAME:
        if not entry.is_symlink():
            indexes.append(rel)
        return
    is_file = entry.is_symlink() or entry.is_file(follow_symlinks=False)
    if entry.name.endswith(".jsonl") and is_file:
        stem = entry.name[:-6]
        legacy_agent = stem.startswith("agent-")
        unit = tree.unit(f"{rel_project}/{stem}" if legacy_agent else stem,
                         None if legacy_agent else stem, AGENT)
        part = Part(root, rel, "subagent-transcript" if legacy_agent else "transcript", "projects")
        add_part(unit, part, entry)
        if not part.symlink:
            unit.transcripts.append(part)
            unit.projects.add(rel_project)
        return
    # a session's own folder; other folders (a project's memory/, ...) are not ours to touch
    if (entry.name in stems or _UUID.match(entry.name)) and (
            entry.is_symlink() or entry.is_dir(follow_symlinks=False)):
        unit = tree.unit(entry.name, entry.name, AGENT)
        part = Part(root, rel, "session-folder", "projects")
        add_part(unit, part, entry)
        if not part.symlink:
            unit.transcripts.extend(_subagent_transcripts(root, rel))


def _subagent_transcripts(root: str, rel_folder: str) -> list[Part]:
    found = []
    for entry in entries(os.path.join(root, rel_folder, "subagents")):
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
    for entry in entries(os.path.join(root, category)):
        rel = f"{category}/{entry.name}"
        if category == "debug" and entry.name == "latest" and entry.is_symlink():
            tree.skip(Part(root, rel, "symlink", category, symlink=True), AGENT)
        elif category in _SESSION_KIND:
            session = _session_of(category, entry.name)
            unit = tree.unit(session, session, AGENT)
            add_part(unit, Part(root, rel, _SESSION_KIND[category], category), entry)
        else:
            unit = tree.unit(rel, None, AGENT)
            add_part(unit, Part(root, rel, _LOOSE_KIND[category], category), entry)
