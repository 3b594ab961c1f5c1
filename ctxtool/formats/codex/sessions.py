"""Codex CLI's sessions on disk: ``$CODEX_HOME`` (``~/.codex``), its rollouts under
``sessions/YYYY/MM/DD/``, what ``codex delete`` removes of a thread besides its rollout, and the
prompt a session listing shows."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxtool.formats.adapter import SessionFile, SessionMarks
from ctxtool.formats.codex.rollout import item_of, parts_text
from ctxtool.formats.jsonl import loads_json
from ctxtool.storage.session_dirs import project_directory

def codex_home(env: Mapping[str, str] | None = None) -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (codex-rs ``find_codex_home``)."""
    env = os.environ if env is None else env
    home = env.get("CODEX_HOME")
    if home:
        return Path(home).expanduser()
    return Path(env.get("HOME") or Path.home()) / ".codex"


# What ``codex delete --force <id>`` (Codex CLI 0.171.0) removes of a thread besides its
# rollout, per database under $CODEX_HOME, in the order cleanup removes it (what Codex rebuilds
# from the rollout first, the thread's own row last): (table, column naming the thread...).
# Seen removed on databases the real client wrote, rows planted in each table; the statements as
# its binary spells them ("DELETE FROM thread_spawn_edges WHERE parent_thread_id = ? OR
# child_thread_id = ?"). Left alone by it, so by cleanup: goals_1's
# thread_goal_continuation_deferrals, queue_1, and every other database.
THREAD_RECORDS: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    ("thread_history_1.sqlite", (("thread_items", ("thread_id",)),
                                 ("thread_realtime_items", ("thread_id",)),
                                 ("thread_turns", ("thread_id",)),
                                 ("thread_history_projection_state", ("thread_id",)))),
    ("goals_1.sqlite", (("thread_goals", ("thread_id",)),)),
    ("memories_1.sqlite", (("stage1_outputs", ("thread_id",)),)),
    ("logs_2.sqlite", (("logs", ("thread_id",)),)),
    ("state_5.sqlite", (("thread_dynamic_tools", ("thread_id",)),
                        ("thread_spawn_edges", ("parent_thread_id", "child_thread_id")),
                        ("thread_read_receipts", ("thread_id",)),
                        ("thread_attachments", ("thread_id",)),
                        ("guardian_review_feedback", ("thread_id",)),
                        ("threads", ("id",)))),
)


def session_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where Codex keeps rollouts: ``<codex home>/sessions`` (and ``archived_sessions``)."""
    home = codex_home(env)
    return [home / "sessions", home / "archived_sessions"]


# User messages Codex writes itself in front of the user's first prompt (and after a
# compaction): the environment, AGENTS.md and skill instructions, shell commands the user ran,
# aborted turns, sub-agent notices. Its resume picker passes over them as these do.
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                    "<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>",
                    "<permissions instructions>")
# A rollout's name: rollout-<YYYY-MM-DDThh-mm-ss>-<id>.jsonl; the id is a UUID
ROLLOUT_PREFIX = "rollout-"
ID_LENGTH = 36
META_BYTES = 1 << 20  # the session_meta line (its base instructions: ~22 KB in 0.169.0)
SESSION_MARKS = SessionMarks(compaction=b'"compacted"', compaction_compact=b'"type":"compacted"',
                             usage=b'"token_count"', model=b'"turn_context"')  # no titles


def prompt_of(entry: Mapping[str, Any]) -> str | None:
    """The text of a user message the user typed (see :data:`CONTEXT_PREFIXES`), or None."""
    item = item_of(entry)
    if item is None or item.get("type") != "message" or item.get("role") != "user":
        return None
    texts = [b["text"].strip() for b in parts_text(item.get("content")) if b["type"] == "text"]
    if any(text.startswith(CONTEXT_PREFIXES) for text in texts):
        return None
    return next((text for text in texts if text), None)


def rollout_id(name: str) -> str | None:
    """The session id a rollout's file name ends with, or None for another file."""
    if not name.startswith(ROLLOUT_PREFIX) or not name.endswith(".jsonl"):
        return None
    stem = name[:-len(".jsonl")]
    return stem[-ID_LENGTH:] if len(stem) > len(ROLLOUT_PREFIX) + ID_LENGTH else None


def meta_cwd(path: Path) -> str | None:
    """The ``cwd`` of a rollout's ``session_meta`` (its first line), or None."""
    try:
        with open(path, "rb") as handle:
            line = handle.readline(META_BYTES)
        entry = loads_json(line)
    except (OSError, ValueError):
        return None
    payload = entry.get("payload") if isinstance(entry, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) and entry.get("type") == "session_meta" \
        else None
    return cwd if isinstance(cwd, str) else None


def rollouts(env: Mapping[str, str], project: str | None = None, *,
             archived: bool = False) -> list[SessionFile]:
    """The rollouts under ``<codex home>/sessions`` (and ``archived_sessions`` when
    ``archived``); of ``project`` only when given (read from each one's first line)."""
    roots = session_roots(env)
    where = project_directory(project) if project else None
    found = []
    for root in roots if archived else roots[:1]:
        for folder, _, names in os.walk(root):
            for name in names:
                sid = rollout_id(name)
                if sid is None:
                    continue
                path = Path(folder) / name
                if where is None or meta_cwd(path) == where:
                    found.append(SessionFile(sid, path, f"codex {where or folder}"))
    return found
