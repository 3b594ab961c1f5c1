"""OpenCode's JSON session storage (OpenCode <= 1.1), read and written file by file.

Layout under ``~/.local/share/opencode/storage/`` (``storage/storage.ts``, ``cli/cmd/import.ts``)::

    session/<projectID>/<sessionID>.json     the session record
    message/<sessionID>/<messageID>.json     one message's info (role, time, tokens, parentID...)
    part/<messageID>/<partID>.json           one part (text, tool, reasoning, file, compaction...)

Each file is ``JSON.stringify(record, null, 2)`` with no final newline. OpenCode 1.2 migrated
these files into ``opencode.db`` (SQLite) on first run and no longer reads them; for such
installs, see :mod:`ctxtool.storage.opencode_db`.

Writing only touches files whose content changes, never deletes one, and writes each file
atomically, parts before their message and the session record last, so OpenCode never sees a
message whose parts are missing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtool.errors import InputError, StoreError, UsageError
from ctxtool.formats.opencode.export import (
    SESSION_KEY, check_message, is_message, is_session_line, js_stringify, loads_document,
    sort_messages,
)
from ctxtool.storage.atomic import write_bytes_atomic

_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
TREE_HINT = "give the OpenCode storage folder (~/.local/share/opencode/storage) or its parent"


def _ignore(_: str) -> None:
    pass


def find_root(path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    """(storage root, session id or None) for a storage folder, its parent, its ``message/``
    folder or a ``message/<sessionID>`` folder. Raises InputError for anything else."""
    folder = Path(path)
    if folder.parent.name == "message" and (folder.parent.parent / "part").is_dir():
        return folder.parent.parent, folder.name
    for candidate in (folder, folder / "storage", folder.parent):  # the parent: given message/
        if (candidate / "message").is_dir() and (candidate == folder.parent) == (folder.name == "message"):
            return candidate, None
    raise InputError("not an OpenCode storage folder (no message/ inside)", source=str(folder),
                     hint=TREE_HINT)


def list_sessions(root: Path) -> list[str]:
    """Session ids that have messages; OpenCode's ids sort newest first."""
    return sorted(p.name for p in (root / "message").iterdir() if p.is_dir())


def pick_session(root: Path, wanted: str | None) -> str:
    sessions = list_sessions(root)
    if wanted is not None:
        if wanted not in sessions:
            raise InputError(f"no session {wanted} (no message/{wanted}/ folder)", source=str(root),
                             hint=f"sessions here: {', '.join(sessions[:5]) or 'none'}")
        return wanted
    if len(sessions) == 1:
        return sessions[0]
    if not sessions:
        raise InputError("no sessions in this storage folder", source=str(root))
    raise UsageError(f"{root}: {len(sessions)} sessions; pick one with --session ID",
                     hint=f"newest: {', '.join(sessions[:5])}")


def _read_json(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise StoreError(f"cannot read: {exc.strerror or exc}", source=str(path)) from exc
    return loads_document(data, str(path), hint="an OpenCode storage file should hold one JSON object")


def _json_files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot list: {exc.strerror or exc}", source=str(folder)) from exc


def session_file(root: Path, session_id: str) -> Path | None:
    """``session/<projectID>/<sessionID>.json`` wherever it is, or None."""
    found = sorted((root / "session").glob(f"*/{session_id}.json"))
    return found[0] if found else None


def read_session(root: Path, session_id: str, *,
                 warn: Callable[[str], None] = _ignore) -> list[dict[str, Any]]:
    """The session line (when its record exists) and the messages with their parts, in time
    order; parts in id order, as OpenCode loads them."""
    messages = []
    for path in _json_files(root / "message" / session_id):
        info = _read_json(path)
        parts = [_read_json(p) for p in _json_files(root / "part" / path.stem)]
        message = {"info": info, "parts": parts}
        check_message(message, "message", str(path))
        messages.append(message)
    record = session_file(root, session_id)
    if record is None:
        warn(f"{root}: no session/*/{session_id}.json; the output has no session line")
        return sort_messages(messages)
    return [{SESSION_KEY: _read_json(record)}, *sort_messages(messages)]


# --- writing ---------------------------------------------------------------------------------------

@dataclass
class WriteReport:
    """What :func:`write_session` did: files written, files already identical, and files of this
    session found in the tree that the entries no longer mention (left in place)."""

    session_id: str = ""
    written: list[str] = field(default_factory=list)
    unchanged: int = 0
    left: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"session": self.session_id, "files_written": len(self.written),
                "files_unchanged": self.unchanged, "files_left": len(self.left)}


def _safe(ident: Any, what: str, source: str) -> str:
    if not isinstance(ident, str) or not _SAFE_ID.match(ident):
        raise InputError(f"{what} {ident!r} cannot be a file name", source=source,
                         hint="OpenCode ids look like ses_..., msg_..., prt_...")
    return ident


def _split(entries: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any] | None, list[Mapping[str, Any]]]:
    header = None
    messages = []
    for entry in entries:
        if is_session_line(entry):
            header = entry
        elif is_message(entry):
            messages.append(entry)
    return header, messages


def _session_id(header: Mapping[str, Any] | None, messages: list[Mapping[str, Any]], source: str) -> str:
    ids = {m["info"].get("sessionID") for m in messages}
    if header is not None:
        return _safe(header[SESSION_KEY].get("id"), "session id", source)
    if len(ids) != 1:
        raise InputError(f"messages of {len(ids)} sessions and no session line", source=source,
                         hint="write one session at a time")
    return _safe(ids.pop(), "session id", source)


def write_session(entries: Iterable[Mapping[str, Any]], root: str | os.PathLike[str], *,
                  source: str = "<input>", warn: Callable[[str], None] = _ignore) -> WriteReport:
    """Write one session's entries into the storage tree at ``root`` (created if missing)."""
    tree = Path(root)
    header, messages = _split(entries)
    report = WriteReport(session_id=_session_id(header, messages, source))
    files: list[tuple[Path, Any]] = []
    for message in messages:
        message_id = _safe(message["info"].get("id"), "message id", source)
        for part in message["parts"]:
            name = _safe(part.get("id"), "part id", source) + ".json"
            files.append((tree / "part" / message_id / name, part))
        files.append((tree / "message" / report.session_id / f"{message_id}.json", message["info"]))
    if header is not None:
        files.append((_session_path(tree, header[SESSION_KEY], report.session_id), header[SESSION_KEY]))
    else:
        warn(f"{source}: no session line; session/*/{report.session_id}.json not written")
    for path, record in files:
        _write_if_changed(path, record, report)
    report.left = _unmentioned(tree, report.session_id, [m["info"]["id"] for m in messages], files)
    return report


def _session_path(tree: Path, record: Mapping[str, Any], session_id: str) -> Path:
    existing = session_file(tree, session_id)
    if existing is not None:
        return existing
    project = record.get("projectID")
    folder = project if isinstance(project, str) and _SAFE_ID.match(project) else "global"
    return tree / "session" / folder / f"{session_id}.json"


def _write_if_changed(path: Path, record: Any, report: WriteReport) -> None:
    data = js_stringify(record).encode("utf-8")
    try:
        if path.read_bytes() == data:
            report.unchanged += 1
            return
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot read: {exc.strerror or exc}", source=str(path)) from exc
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create folder: {exc.strerror or exc}", source=str(path.parent)) from exc
    write_bytes_atomic(path, data)
    report.written.append(str(path))


def _unmentioned(tree: Path, session_id: str, message_ids: list[str],
                 files: list[tuple[Path, Any]]) -> list[str]:
    """Files of this session's messages that the entries did not write (kept: nothing is lost)."""
    wanted = {path for path, _ in files}
    left = [p for p in _json_files(tree / "message" / session_id) if p not in wanted]
    for message_id in [*message_ids, *(p.stem for p in left)]:
        left.extend(p for p in _json_files(tree / "part" / message_id) if p not in wanted)
    return [str(p) for p in left]


__all__ = ["WriteReport", "find_root", "list_sessions", "pick_session", "read_session",
           "session_file", "write_session"]
