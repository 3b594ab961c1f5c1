"""What ``summarize`` gives every agent's compaction writer besides the summary: the moment in the
form agents write it, and the files re-attached after the summary (their latest content as the
transcript recorded it, within Claude Code's limits). The lines themselves are the adapters'
(``formats/<agent>``, see :meth:`ctxtool.formats.adapter.FormatAdapter.compaction_writer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from ctxtool.core.clearing.persist import truncate_text
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.core.summarizing.file_state import FileRecord

RESTORE_FILE_TOKENS = 5_000  # per restored file (Claude Code's limit)
RESTORE_TOTAL_TOKENS = 50_000  # all restored files together


def iso_timestamp(now: datetime) -> str:
    """``2026-01-02T19:21:02.004Z``: the form Claude Code writes."""
    utc = now.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def restored_file_text(record: FileRecord, budget: int) -> str:
    """A file's latest known content as a note to the model, cut to ``budget`` tokens."""
    content = record.content or ""
    tokens = estimate_text_tokens(content)
    if tokens > budget:
        content = truncate_text(content, max(200, len(content) * budget // tokens))
    return (f"<system-reminder>\nRestored by ctxtool after compaction: the latest content of "
            f"{record.path} as this session's transcript recorded it. The file may have changed "
            f"on disk since; read it again before editing.\n</system-reminder>\n{content}")


def restored_files(records: Sequence[FileRecord], count: int) -> list[tuple[FileRecord, str]]:
    """(file, note text) for up to ``count`` files, newest first, within the token limits."""
    chosen: list[tuple[FileRecord, str]] = []
    total = 0
    for record in records:
        if len(chosen) >= count:
            break
        if record.content is None or not record.content.strip():
            continue
        text = restored_file_text(record, RESTORE_FILE_TOKENS)
        tokens = estimate_text_tokens(text)
        if total + tokens > RESTORE_TOTAL_TOKENS:
            break
        chosen.append((record, text))
        total += tokens
    return chosen


