"""OpenCode's sessions for ``ctxtool sessions`` and the session selectors.

OpenCode (1.2 and later) keeps every session in one SQLite database,
``$XDG_DATA_HOME/opencode/opencode.db`` (default ``~/.local/share/opencode/opencode.db``),
opened read-only here. A row's figures are those of ``ctxtool estimate <db> --session ID``:
OpenCode's cut at its last compaction needs the whole session, so a session is read whole once
and its row kept in the listing's cache until OpenCode writes to it again (the update times of
the session and of its rows, read from the indexes, say when). Sub-agent sessions (those with a
parent) are left out of the listing, as Claude Code's ``agent-*`` files are. No click here.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.sizing.sessions import SessionHead, SessionInfo, first_prompt, session_info
from ctxtool.errors import InputError, StoreError
from ctxtool.formats.jsonl import write_entries
from ctxtool.storage import opencode_config, opencode_db
from ctxtool.storage.scan_cache import ScanCache
from ctxtool.storage.session_dirs import opencode_database, project_directory
from ctxtool.types import OPENCODE


def _iso(ms: object) -> str | None:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def opencode_sessions(env: Mapping[str, str], *, project: str | None = None,
                      children: bool = False) -> tuple[Path, list[opencode_db.SessionSummary]]:
    """OpenCode's database and its sessions (of ``project``), most recently updated first;
    no sessions when there is no database. InputError/StoreError when it cannot be read."""
    db = opencode_database(env)
    if not db.is_file():
        return db, []
    found = opencode_db.list_sessions(db)
    where = project_directory(project) if project else None
    return db, [s for s in found if (children or not s.parent_id)
                and (where is None or s.directory == where)]


def read_opencode_session(db: Path, summary: opencode_db.SessionSummary,
                          env: Mapping[str, str]) -> SessionInfo:
    """One OpenCode session's row, measured as ``ctxtool estimate`` measures it."""
    entries = opencode_db.read_session(db, summary.id)
    buffer = io.BytesIO()  # its size: the JSONL ctxtool reads for it (what convert prints)
    write_entries(entries, buffer)

    def limits(provider: str | None, model: str | None, folder: str | None) -> dict[str, int]:
        return opencode_config.model_limits(provider, model, env=env, directory=folder)

    report = estimate(entries, fmt=OPENCODE, env=env, top=0, source=str(db),
                      model_limits=limits)
    record = entries[0].get("session") if entries else None
    created = record.get("time", {}).get("created") if isinstance(record, dict) else None
    head = SessionHead(session_id=summary.id, cwd=summary.directory,
                       first_prompt=first_prompt(entries, OPENCODE), started=_iso(created))
    return session_info(session_id=summary.id, path=str(db), size=len(buffer.getvalue()),
                        head=head, title=summary.title or None,
                        last_activity=_iso(summary.updated), report=report, agent=OPENCODE)


def list_opencode(env: Mapping[str, str], *, project: str | None, since: datetime | None,
                  cache: ScanCache, warn: Callable[[str], None] | None) -> list[SessionInfo]:
    """The rows of OpenCode's sessions (none without its database); a database that cannot
    be read is left out with a warning."""
    try:
        db, found = opencode_sessions(env, project=project)
        stamps = opencode_db.session_stamps(db) if found else {}
    except (InputError, StoreError) as exc:
        if warn is not None:
            warn(f"{exc.source or opencode_database(env)}: OpenCode's sessions left out: "
                 f"{exc.message}")
        return []
    rows = []
    for summary in found:
        if since is not None and summary.updated < since.timestamp() * 1000:
            continue
        key, stamp = f"{db}#{summary.id}", stamps.get(summary.id, [])
        kept = cache.kept_row(key, stamp)
        if kept is not None:
            try:
                rows.append(SessionInfo(**kept))
                continue
            except TypeError:
                pass
        try:
            row = read_opencode_session(db, summary, env)
        except (InputError, StoreError) as exc:
            if warn is not None:
                warn(f"{db}: session {summary.id} left out: {exc.message}")
            continue
        except RecursionError:  # a record nested too deeply to walk: that session only
            if warn is not None:
                warn(f"{db}: session {summary.id} left out: a record nested too deeply")
            continue
        if cache.enabled:
            cache.keep_row(key, stamp, row.as_record())
        rows.append(row)
    return rows


__all__ = ["list_opencode", "opencode_sessions", "read_opencode_session"]
