"""Where Gemini CLI keeps its sessions, found as Gemini CLI 0.61.0 finds them.

    $GEMINI_CLI_HOME (else the home folder)/.gemini/
      settings.json                        general.sessionRetention (cleanup's default age)
      projects.json                        {"projects": {"/abs/project": "<short id>"}}
      tmp/<short id>/                      one folder per project ("proj", "proj-1"...; older
        .project_root                      versions: the SHA-256 of its path), naming its path
        chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl   one session (older ones: .json)
        chats/<session id>/<agent id>.jsonl            its subagents' sessions
        logs/session-<session id>.jsonl                its activity log
        tool-outputs/session-<session id>/             outputs its tool-output masking saved
        <session id>/                                  its plans and task tracker
        checkpoints/<name>.json                        /restore points (messageId: the session id)

The folder comes from ``homedir()`` in the client's core (``GEMINI_CLI_HOME`` when set, else
``os.homedir()``); the project's short id from ``ProjectRegistry.getShortId`` (the path as
``path.resolve`` gives it, mapped in ``projects.json`` and confirmed by ``.project_root`` in its
folder). A session is named by the ``sessionId`` of its file's first line: the file name keeps
only its first 8 characters, and the client matches files by the id inside too.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import orjson

from ctxtool.formats.adapter import SessionFile
from ctxtool.storage.gemini_settings import gemini_dir

PROJECT_ROOT_FILE = ".project_root"
SESSION_PREFIX = "session-"
# session-<time>-<id8>.json or .jsonl (the client's SHORT_ID_REGEX, sessionCleanup.ts)
SESSION_NAME = re.compile(r"^session-.*-([a-zA-Z0-9]{8})\.(jsonl?)$")
FIRST_LINE_BYTES = 64 << 10  # the metadata line: ~230 bytes, more with a summary or directories
NOT_PROJECTS = frozenset({"bin"})  # tmp/bin holds the client's own tools


def temp_root(env: Mapping[str, str]) -> Path:
    return gemini_dir(env) / "tmp"


def registry(home: Path) -> dict[str, str]:
    """``projects.json``: project path -> short id ({} when missing or unreadable, as the
    client resets it)."""
    try:
        data = orjson.loads((home / "projects.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


def project_root(folder: Path, by_id: Mapping[str, str] | None = None) -> str | None:
    """The project path a ``tmp/<short id>`` folder belongs to: its ``.project_root`` marker,
    else the path ``projects.json`` maps to its name (``by_id``: short id -> path)."""
    try:
        owner = (folder / PROJECT_ROOT_FILE).read_text("utf-8").strip()
        if owner:
            return owner
    except (OSError, UnicodeDecodeError):
        pass
    return (by_id or {}).get(folder.name)


def project_folders(env: Mapping[str, str], project: str | None = None) -> list[Path]:
    """The ``tmp/<short id>`` folders (of the sessions started in directory ``project`` when
    given: its short id in ``projects.json``, a folder whose ``.project_root`` names it, or
    the SHA-256 of its path older versions used)."""
    root = temp_root(env)
    folders = [Path(e.path) for e in _scandir(root)
               if e.is_dir(follow_symlinks=False) and e.name not in NOT_PROJECTS]
    if project is None:
        return sorted(folders)
    target = os.path.abspath(os.path.expanduser(project))  # the client's path.resolve
    names = {registry(gemini_dir(env)).get(target),
             hashlib.sha256(target.encode("utf-8")).hexdigest()}
    return sorted(f for f in folders if f.name in names or project_root(f) == target)


def session_id_in(path: Path) -> str | None:
    """The ``sessionId`` of a session file's first line (what the client's cleanup reads), or
    None when it has none (a file being written, or one JSON document)."""
    return _head_of(path)[0]


def _head_of(path: Path) -> tuple[str | None, bool]:
    """(the first line's ``sessionId``, whether the file is a start with nothing to resume)
    from the file's first 64 KB: a file that ends there and holds no message the client would
    resume is one its session list leaves out (every run writes one before it resumes)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(FIRST_LINE_BYTES + 1)
    except OSError:
        return None, False
    lines = head.split(b"\n")
    try:
        first = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        return None, False
    session = first.get("sessionId") if isinstance(first, dict) else None
    session = session if isinstance(session, str) and session else None
    return session, len(head) <= FIRST_LINE_BYTES and not any(_resumable(line) for line in lines)


def _resumable(line: bytes) -> bool:
    from ctxtool.formats.gemini.listing import is_resumable

    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError:
        return bool(line.strip())  # a line the client may read once it is whole
    if not isinstance(entry, dict):
        return False
    update = entry.get("$set")
    listed = update.get("messages") if isinstance(update, dict) else None
    records = listed if isinstance(listed, list) else [entry] if "id" in entry else []
    return any(isinstance(r, dict) and is_resumable(r) for r in records)


class ChatFile(NamedTuple):
    """One session file in a project's ``chats/``."""

    path: Path
    short_id: str  # the 8 characters the name ends with
    legacy: bool  # one JSON document (.json), which the client converts to .jsonl on resume


def chat_files(folder: Path) -> Iterator[ChatFile]:
    """The session files directly in ``folder/chats`` (subagents' folders left out)."""
    for entry in _scandir(folder / "chats"):
        found = SESSION_NAME.match(entry.name)
        if found and entry.is_file(follow_symlinks=False):
            yield ChatFile(Path(entry.path), found.group(1), found.group(2) == "json")


def session_files(env: Mapping[str, str], project: str | None = None) -> list[SessionFile]:
    """Every Gemini CLI session kept as JSONL, named by the id inside (else by the 8 characters
    of its name), its project's path telling candidates apart. Left out, as the client's own
    list leaves them out: a start with nothing to resume, and an older one-document ``.json``
    (the client converts it to ``.jsonl`` beside it when it resumes it)."""
    by_id = {v: k for k, v in registry(gemini_dir(env)).items()}
    found: list[SessionFile] = []
    for folder in project_folders(env, project):
        where = project_root(folder, by_id) or folder.name
        for chat in chat_files(folder):
            session, empty = _head_of(chat.path) if not chat.legacy else (None, True)
            if not empty:
                found.append(SessionFile(session or chat.short_id, chat.path, where))
    return found


def _scandir(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return list(entries)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


__all__ = ["ChatFile", "chat_files", "project_folders",
           "project_root", "registry", "session_files", "session_id_in", "temp_root"]
