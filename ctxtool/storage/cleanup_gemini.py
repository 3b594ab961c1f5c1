"""Gemini CLI's sessions for ``cleanup``: its folder (``$GEMINI_CLI_HOME/.gemini`` or
``~/.gemini``), one ``tmp/<project>/`` folder per project (see
:mod:`ctxtool.formats.gemini.sessions`). A session (category gemini-sessions) is every file
Gemini CLI 0.61.0 itself deletes with it (``deleteSessionFileAndArtifacts``,
``deleteSubagentSessionDirAndArtifactsAsync``), and its ``/restore`` points::

    chats/session-<time>-<id8>.jsonl (and .json)   the session (every file with its id)
    chats/<session id>/                             its subagents' sessions (read too), and for each
    logs/session-<agent id>.jsonl, tool-outputs/session-<agent id>/   their artifacts
    logs/session-<session id>.jsonl                 its activity log
    tool-outputs/session-<session id>/              outputs its masking saved
    <session id>/                                   its plans and task tracker
    checkpoints/<name>.json                         /restore points whose messageId is its own
    chats/ctxtool-store/<session id>/               what ctxtool kept of it (vacuum's recipes)

The chats file goes first; a run killed after it leaves the rest as a unit of the same id,
which the next run removes (its age: the files' times). ``--keep-usage DIR`` keeps the tokens
of each model message of the session and its subagents in ``DIR/gemini/<session id>.jsonl``
(:mod:`ctxtool.formats.gemini.usage`). Anything else (settings.json,
projects.json, ``.project_root``, ``logs.json``, ``shell_history``, ``memory/``, a saved
``/chat`` checkpoint) is never touched.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ctxtool.errors import InputError
from ctxtool.formats.gemini.sessions import (NOT_PROJECTS, SESSION_NAME, project_root, registry,
                                             session_id_in)
from ctxtool.formats.gemini.usage import usage_only
from ctxtool.formats.jsonl import bounded_lines, iter_entries
from ctxtool.storage.cleanup_source import CleanupSource, OnError
from ctxtool.storage.cleanup_tree import GEMINI_SESSIONS, Part, Tree, Unit, add_part, entries
from ctxtool.storage import marker
from ctxtool.storage.gemini_retention import project_retention, read_retention
from ctxtool.storage.gemini_settings import project_folder
from ctxtool.storage.retention import Activity, Retention, combine, line_facts, session_activity
from ctxtool.storage.safe_fs import describe, open_nofollow
from ctxtool.storage.store import DEFAULT_ROOT

AGENT = "gemini"
CHAT, SUBAGENTS, LOG = "gemini-chat", "gemini-subagents", "gemini-log"
SUBAGENT_CHAT = "gemini-subagent-chat"  # a file in chats/<session id>/: read, gone with its folder
USAGE_FOLDER = "gemini"  # under --keep-usage
OUTPUTS, FOLDER, CHECKPOINT = "gemini-tool-outputs", "gemini-session-folder", "gemini-checkpoint"
# the client never takes these folder names for a session's own folder (RESERVED_SESSION_DIR_NAMES)
_NOT_SESSIONS = frozenset({"chats", "logs", "tool-outputs", "checkpoints", "memory", "plans",
                           "tracker", "bin"})
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_ARTIFACT = re.compile(r"^session-(.+?)(\.jsonl)?$")
_MESSAGE_ID = re.compile(rb'"messageId"\s*:\s*"([^"\\]+)"')
CHECKPOINT_BYTES = 64 << 20  # a /restore point holds the history: read this much at most
LEGACY_BYTES = 256 << 20  # an older one-document session is parsed whole, up to this


class GeminiSource(CleanupSource):
    agent = AGENT
    categories = (GEMINI_SESSIONS,)
    transcript_kinds = (CHAT, SUBAGENT_CHAT)

    def scan(self, tree: Tree, on_error: OnError) -> None:
        """One unit per session id and project folder."""
        temp = os.path.join(self.folder, "tmp")
        if os.path.islink(temp):
            tree.skip(Part(self.folder, "tmp", "symlink", GEMINI_SESSIONS, symlink=True), AGENT)
            return
        for project in entries(temp):
            if project.is_symlink():
                tree.skip(Part(self.folder, f"tmp/{project.name}", "symlink", GEMINI_SESSIONS,
                               symlink=True), AGENT)
            elif project.is_dir() and project.name != "bin":
                _scan_project(tree, self.folder, f"tmp/{project.name}")

    def swept(self) -> list[str]:
        return [os.path.join(self.folder, "tmp")]

    def own_retention(self, env: Mapping[str, str]) -> Retention:
        """``general.sessionRetention``, as Gemini CLI applies it (storage/gemini_retention)."""
        return read_retention(env)

    def project_retention(self, env: Mapping[str, str]) -> dict[str, Retention]:
        """The projects whose own ``.gemini/settings.json`` sets ``sessionRetention`` for their
        sessions, as the client run in that folder merges it; their folder found as
        :func:`~ctxtool.formats.gemini.sessions.project_root` finds it (or, for an older
        hash-named folder, the path that hashes to its name)."""
        rules = {}
        for project in entries(os.path.join(self.folder, "tmp")):
            if not project.is_dir(follow_symlinks=False) or project.name in NOT_PROJECTS:
                continue
            root = self._project_root(project.name) or project_folder(project.name, env)
            rule = project_retention(env, root) if root else None
            if rule is not None:
                rules[f"tmp/{project.name}"] = rule
        return rules

    def read(self, unit: Unit, on_error: OnError, *, parse: bool) -> Activity:
        """The newest message ``timestamp`` or ``lastUpdated`` in the session's files (the
        client dates a session by ``lastUpdated``)."""
        found = []
        for part in unit.transcripts:
            try:
                with os.fdopen(open_nofollow(part.base, part.rel), "rb") as stream:
                    if part.rel.endswith(".json"):
                        found.append(_legacy_activity(stream.read(LEGACY_BYTES)))
                    elif parse:
                        lines = iter_entries(stream, part.rel, on_invalid="keep")
                        found.append(session_activity(_dated(lines)))
                    else:
                        found.append(line_facts(bounded_lines(stream, part.rel)))
            except FileNotFoundError:
                continue
            except (OSError, ValueError, InputError) as exc:
                part.error = f"cannot read: {describe(exc) if isinstance(exc, OSError) else exc}"
                on_error(part.rel, part.error)
        return combine(found)

    def usage(self, part: Part) -> tuple[str, list[bytes]] | None:
        """One line per model message of a session's file, or of one of its subagents', in
        ``gemini/<session id>.jsonl``."""
        if part.kind not in self.transcript_kinds:
            return None
        import orjson

        with os.fdopen(open_nofollow(part.base, part.rel), "rb") as stream:
            if part.rel.endswith(".json"):
                entries = [_legacy_document(stream.read(LEGACY_BYTES))]
            else:
                entries = list(iter_entries(stream, part.rel, on_invalid="skip"))
        project, _, rest = part.rel.partition("/chats/")
        parent = rest.split("/")[0] if part.kind == SUBAGENT_CHAT else None
        lines = usage_only(entries, directory=self._project_root(project.split("/", 1)[-1]),
                           parentSessionId=parent)
        if not lines:
            return None
        session = parent or lines[0].get("sessionId") or rest.rsplit(".", 1)[0]
        return (f"{USAGE_FOLDER}/{session}.jsonl",
                [orjson.dumps(line) + b"\n" for line in lines])

    @functools.cached_property
    def _by_id(self) -> dict[str, str]:
        """``projects.json``'s short id -> project folder."""
        return {short: path for path, short in registry(Path(self.folder)).items()}

    def _project_root(self, name: str) -> str | None:
        """The folder of project ``tmp/<name>`` (see :func:`project_root`)."""
        return project_root(Path(self.folder, "tmp", name), self._by_id)


def _scan_project(tree: Tree, base: str, project: str) -> None:
    """The sessions of one ``tmp/<project>`` folder, then what their ids name elsewhere in it."""
    units: dict[str, Unit] = {}

    def unit_of(session: str) -> Unit:
        if session not in units:
            units[session] = tree.unit(f"gemini/{project}/{session}", session, AGENT)
            units[session].projects.add(project)  # maxCount counts per project
        return units[session]

    for entry in entries(os.path.join(base, project, "chats")):
        found = SESSION_NAME.match(entry.name)
        rel = f"{project}/chats/{entry.name}"
        if found and (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
            session = _session_of(entry) or found.group(1)
            part = Part(base, rel, CHAT, GEMINI_SESSIONS)
            add_part(unit_of(session), part, entry)
            if not part.symlink:
                unit_of(session).transcripts.append(part)
    claimed: set[str] = set()  # artifacts of subagents, which go with their parent
    for entry in entries(os.path.join(base, project, "chats")):
        if (entry.name in units or _UUID.match(entry.name)) and (
                entry.is_dir(follow_symlinks=False) or entry.is_symlink()):
            _add_subagents(unit_of(entry.name), base, f"{project}/chats/{entry.name}", entry,
                           claimed)
    _add_stores(base, project, units)
    _add_artifacts(base, project, unit_of, claimed)
    for entry in entries(os.path.join(base, project)):
        if entry.name not in _NOT_SESSIONS and (entry.name in units or _UUID.match(entry.name)) \
                and (entry.is_dir(follow_symlinks=False) or entry.is_symlink()):
            add_part(unit_of(entry.name), Part(base, f"{project}/{entry.name}", FOLDER,
                                               GEMINI_SESSIONS), entry)
    _add_checkpoints(base, project, units)


def _session_of(entry: os.DirEntry[str]) -> str | None:
    if entry.is_symlink():
        return None
    if entry.name.endswith(".jsonl"):
        return session_id_in(entry.path)  # type: ignore[arg-type]
    try:  # one JSON document
        with open(entry.path, "rb") as handle:
            session = _legacy_document(handle.read(LEGACY_BYTES)).get("sessionId")
    except OSError:
        return None
    return session if isinstance(session, str) and session else None


def _add_subagents(unit: Unit, base: str, rel: str, entry: os.DirEntry[str],
                   claimed: set[str]) -> None:
    """``chats/<session id>/``, and the logs and tool outputs of each subagent in it."""
    add_part(unit, Part(base, rel, SUBAGENTS, GEMINI_SESSIONS), entry)
    if entry.is_symlink():
        return
    project = rel.split("/chats/", 1)[0]
    for agent in entries(entry.path):
        if agent.is_file(follow_symlinks=False) and agent.name.endswith((".json", ".jsonl")):
            claimed |= _add_named(unit, base, project, agent.name.rsplit(".", 1)[0])
            unit.transcripts.append(Part(base, f"{rel}/{agent.name}", SUBAGENT_CHAT,
                                         GEMINI_SESSIONS))


def _add_artifacts(base: str, project: str, unit_of: Any, claimed: set[str]) -> None:
    """``logs/session-<id>.jsonl`` and ``tool-outputs/session-<id>/``, joined to the unit of
    their id (a unit of their own when its chats file is gone: a killed run's leftovers)."""
    for folder, kind, suffix in (("logs", LOG, ".jsonl"), ("tool-outputs", OUTPUTS, None)):
        for entry in entries(os.path.join(base, project, folder)):
            found = _ARTIFACT.match(entry.name)
            if found is None or (found.group(2) or None) != suffix:
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if (suffix is None) != is_dir and not entry.is_symlink():
                continue
            rel = f"{project}/{folder}/{entry.name}"
            if rel not in claimed:
                add_part(unit_of(found.group(1)), Part(base, rel, kind, GEMINI_SESSIONS), entry)


def _add_named(unit: Unit, base: str, project: str, session: str) -> set[str]:
    """A subagent's log and tool outputs, in its parent's unit; their paths."""
    added = set()
    for folder, name, kind in (("logs", f"session-{session}.jsonl", LOG),
                               ("tool-outputs", f"session-{session}", OUTPUTS)):
        path = os.path.join(base, project, folder, name)
        if os.path.lexists(path):
            part = Part(base, f"{project}/{folder}/{name}", kind, GEMINI_SESSIONS)
            added.add(part.rel)
            if os.path.islink(path):
                part.symlink = True
                unit.symlinks.append(part)
            else:
                unit.parts.append(part)
    return added


def _add_stores(base: str, project: str, units: Mapping[str, Unit]) -> None:
    """What ctxtool keeps of a session beside its file (``chats/ctxtool-store/<id>/``: vacuum's
    recipes, saved tool results), in a store ctxtool made."""
    store = os.path.join(base, project, "chats", DEFAULT_ROOT)
    if os.path.islink(store) or not marker.is_marked(store):
        return
    for entry in entries(store):
        if entry.name in units:
            add_part(units[entry.name], Part(base, f"{project}/chats/{DEFAULT_ROOT}/{entry.name}",
                                             "store", GEMINI_SESSIONS), entry)


def _add_checkpoints(base: str, project: str, units: Mapping[str, Unit]) -> None:
    """``/restore`` points: their ``messageId`` is the session's id, or it followed by
    ``########<n>`` (the prompt id)."""
    for entry in entries(os.path.join(base, project, "checkpoints")):
        if not entry.name.endswith(".json") or not entry.is_file(follow_symlinks=False):
            continue
        try:
            with open(entry.path, "rb") as handle:
                found = _MESSAGE_ID.search(handle.read(CHECKPOINT_BYTES))
        except OSError:
            continue
        session = found.group(1).decode("utf-8", "replace").split("########")[0] if found else ""
        if session in units:
            add_part(units[session], Part(base, f"{project}/checkpoints/{entry.name}",
                                          CHECKPOINT, GEMINI_SESSIONS), entry)


def _dated(lines: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Lines as :func:`session_activity` dates them: a ``$set`` (or the first line) by its
    ``lastUpdated``."""
    for line in lines:
        if getattr(line, "invalid", False):
            yield line
            continue
        update = line.get("$set")
        stamp = (update if isinstance(update, dict) else line).get("lastUpdated")
        yield line if not isinstance(stamp, str) or "timestamp" in line else \
            {"timestamp": stamp}


def _legacy_document(data: bytes) -> dict[str, Any]:
    """An older one-document session ({} when it is not one)."""
    import orjson

    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}
    return document if isinstance(document, dict) else {}


def _legacy_activity(data: bytes) -> Activity:
    document = _legacy_document(data)
    if not document:
        return Activity()
    messages = document.get("messages")
    lines = [document, *(m for m in messages if isinstance(m, dict))] \
        if isinstance(messages, list) else [document]
    return session_activity(_dated(lines))
