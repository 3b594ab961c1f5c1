"""Small OpenCode databases for tests, with the schema OpenCode 1.18.33 creates.

The ``session``, ``message``, ``part`` and ``migration`` tables below are those of a database the
real OpenCode 1.18.33 wrote (``sqlite_master``); the other tables of that database play no part
in what ctxtool reads or writes. Entries go in as OpenCode stores them: ``data`` is the message
info without ``id``/``sessionID`` and the part without ``id``/``sessionID``/``messageID``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ctxtool.storage.opencode_db import KNOWN_MIGRATIONS
from tests.opencode_builders import SESSION, T0

SCHEMA = """
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text,
  `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer,
  `summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `metadata` text,
  `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  `revert` text, `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer);
CREATE TABLE `message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE TABLE `part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`)
    REFERENCES `message`(`id`) ON DELETE CASCADE);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE TABLE "migration" (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);
"""

# The tables of OpenCode 1.18.33's database that are keyed by a session too (same source), and
# its event log (``event_sequence``/``event``, keyed by ``aggregate_id``: a session's id).
RECORD_SCHEMA = """
CREATE TABLE `event_sequence` (`aggregate_id` text PRIMARY KEY, `seq` integer NOT NULL,
  `owner_id` text);
CREATE TABLE `event` (
  `id` text PRIMARY KEY, `aggregate_id` text NOT NULL, `seq` integer NOT NULL,
  `type` text NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_event_aggregate_id_event_sequence_aggregate_id_fk` FOREIGN KEY (`aggregate_id`)
    REFERENCES `event_sequence`(`aggregate_id`) ON DELETE CASCADE);
CREATE UNIQUE INDEX `event_aggregate_seq_idx` ON `event` (`aggregate_id`,`seq`);
CREATE TABLE `todo` (
  `session_id` text NOT NULL, `content` text NOT NULL, `status` text NOT NULL,
  `priority` text NOT NULL, `position` integer NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`),
  CONSTRAINT `fk_todo_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE TABLE `session_share` (
  `session_id` text PRIMARY KEY, `id` text NOT NULL, `secret` text NOT NULL, `url` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  CONSTRAINT `fk_session_share_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE TABLE `session_context_epoch` (
  `session_id` text PRIMARY KEY, `baseline` text NOT NULL, `snapshot` text NOT NULL,
  `baseline_seq` integer NOT NULL,
  CONSTRAINT `fk_session_context_epoch_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE TABLE `session_input` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `prompt` text NOT NULL,
  `delivery` text NOT NULL, `admitted_seq` integer NOT NULL, `promoted_seq` integer,
  `time_created` integer NOT NULL,
  CONSTRAINT `fk_session_input_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE);
CREATE TABLE `session_message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL, `seq` integer NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL,
  CONSTRAINT `fk_session_message_session_id_session_id_fk` FOREIGN KEY (`session_id`)
    REFERENCES `session`(`id`) ON DELETE CASCADE);
"""


def make_db(path: Path, *, wal: bool = True, records: bool = False) -> Path:
    """An empty database; ``records``: with every table keyed by a session (RECORD_SCHEMA)."""
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(SCHEMA + (RECORD_SCHEMA if records else ""))
    conn.executemany("INSERT INTO migration VALUES (?, ?)",
                     [(name, T0) for name in sorted(KNOWN_MIGRATIONS)])
    conn.commit()
    conn.close()
    return path


def add_session(path: Path, messages: Iterable[dict[str, Any]], *, session: str = SESSION,
                updated: int = T0, **columns: Any) -> None:
    """One session row and its messages and parts."""
    row = {"id": session, "project_id": "global", "slug": "quiet-lake", "directory": "/w",
           "path": "w", "title": "A test session", "version": "1.18.33",
           "permission": '[{"permission":"question","pattern":"*","action":"deny"}]',
           "agent": "build", "model": '{"id":"claude-x","providerID":"anthropic","variant":"default"}',
           "time_created": T0, "time_updated": updated, **columns}
    conn = sqlite3.connect(path)
    conn.execute(f"INSERT INTO session ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                 list(row.values()))
    for message in messages:
        info = message["info"]
        data = {k: v for k, v in info.items() if k not in ("id", "sessionID")}
        created = info["time"]["created"]
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                     (info["id"], session, created, created, json.dumps(data)))
        for part in message["parts"]:
            body = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
            conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                         (part["id"], info["id"], session, created, created, json.dumps(body)))
    conn.commit()
    conn.close()


def add_records(path: Path, session: str, *, events: int = 3, updated: int = T0) -> None:
    """One row of each table keyed by ``session`` (RECORD_SCHEMA), ``events`` events."""
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO event_sequence VALUES (?, ?, NULL)", (session, events - 1))
    conn.executemany("INSERT INTO event VALUES (?, ?, ?, ?, ?)",
                     [(f"evt_{session}_{n}", session, n, "session.updated.1",
                       json.dumps({"sessionID": session})) for n in range(events)])
    conn.execute("INSERT INTO todo VALUES (?, 'a todo', 'pending', 'high', 0, ?, ?)",
                 (session, updated, updated))
    conn.execute("INSERT INTO session_share VALUES (?, ?, 'secret', 'https://x', ?, ?)",
                 (session, f"shr_{session}", updated, updated))
    conn.execute("INSERT INTO session_context_epoch VALUES (?, '{}', '{}', 0)", (session,))
    conn.execute("INSERT INTO session_input VALUES (?, ?, 'hi', 'queued', 0, NULL, ?)",
                 (f"inp_{session}", session, updated))
    conn.execute("INSERT INTO session_message VALUES (?, ?, 'user', 0, ?, ?, '{}')",
                 (f"smg_{session}", session, updated, updated))
    conn.commit()
    conn.close()


def keyed_rows(path: Path, session: str) -> dict[str, int]:
    """How many rows each table keyed by a session holds for ``session`` (read-only)."""
    from ctxtool.formats.opencode.layout import SESSION_TABLES

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {table: conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?",
                                    (session,)).fetchone()[0]
                for table, column in SESSION_TABLES.items()}
    finally:
        conn.close()


def rows(path: Path) -> list[tuple[Any, ...]]:
    """Every row of the three tables, for comparing a database before and after."""
    conn = sqlite3.connect(path)
    try:
        return [(table, *row) for table in ("session", "message", "part")
                for row in conn.execute(f"SELECT * FROM {table} ORDER BY id")]
    finally:
        conn.close()


def snapshot(db: Path, folder: Path) -> Path:
    """The database's files (file, -wal, -shm) copied aside: the database as it is now."""
    folder.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            shutil.copyfile(f"{db}{suffix}", folder / f"opencode.db{suffix}")
    return folder / "opencode.db"


def integrity(db: Path) -> str:
    """SQLite's ``PRAGMA integrity_check`` of the database: ``ok`` when it is whole."""
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()
