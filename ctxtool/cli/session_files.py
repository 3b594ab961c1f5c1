"""Finding the sessions on this machine and reading each one from its ends.

Claude Code keeps ``<config>/projects/<slug of cwd>/<sessionId>.jsonl`` (``<config>`` is
``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). A session is read from its first 64 KB (project, first
prompt), its last lines backwards until the last API call (context now), its last 64 KB (title
records) and a byte search for compact boundaries: the cost per session does not depend on the
transcript's length. No click here: ``statusline`` and the selectors use it too.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from ctxtool import __version__
from ctxtool.cli.opencode_sessions import list_opencode
from ctxtool.cli.tail_read import BOUNDARY_MARK, HEAD_BYTES, parse_lines, report_of_tail
from ctxtool.clock import parse_timestamp
from ctxtool.core.sizing.session_tail import in_chain
from ctxtool.core.sizing.sessions import SessionInfo, read_head, session_info, title_of
from ctxtool.formats.claude_code.chain import is_compact_boundary
from ctxtool.storage.scan_cache import Resume, ScanCache, cache_path
from ctxtool.storage.session_dirs import claude_session_files
from ctxtool.storage.tail import (
    Buffer,
    complete_length,
    head_lines,
    lines_backwards,
    lines_containing,
    mapped,
)

TITLE_BYTES = 64 << 10  # Claude Code appends its title records near the end
COMPACT_MARK = b'"subtype":"compact_boundary"'
TITLE_MARK = b'title"'  # custom-title, ai-title
CACHE_VERSION = f"{__version__}/1"


def boundary_mark(first_line: bytes) -> bytes:
    """What to search for: writers of compact JSON (Claude Code, ctxtool) write the boundary
    as ``"subtype":"compact_boundary"``, a long needle found twice as fast as the bare value;
    any other writer gets the value alone."""
    return COMPACT_MARK if b'":"' in first_line and b'": "' not in first_line else BOUNDARY_MARK


def count_compactions(buffer: Buffer, chain: bool | None, mark: bytes = BOUNDARY_MARK,
                      resume: Resume = Resume(0, 0)) -> tuple[int, Resume]:
    """Compact boundaries of the session's chain, as ``estimate`` counts them, and where a
    later search can resume (the end of the last complete line, the count before it). Only
    the lines the byte search hits are parsed; ``resume`` skips what an earlier search saw."""
    def count(lines: Iterable[bytes]) -> int:
        return sum(1 for entry in parse_lines(lines)
                   if is_compact_boundary(entry) and in_chain(entry, chain))

    complete = complete_length(buffer)
    offset, before = resume if resume.offset <= complete else Resume(0, 0)
    found = before + count(lines_containing(buffer, mark, start=offset, end=complete))
    partial = count(lines_containing(buffer, mark, start=complete))  # a line being written
    return found + partial, Resume(complete, found)


def tail_title(buffer: Buffer) -> str | None:
    """The title records in the last TITLE_BYTES (searched as bytes; only hits are parsed)."""
    start = max(0, len(buffer) - TITLE_BYTES)
    if start > 0:  # from the first line that starts in the block
        start = buffer.find(b"\n", start) + 1 or len(buffer)
    return title_of(parse_lines(lines_containing(buffer, TITLE_MARK, start=start)))


def read_claude_session(path: Path, *, cache: ScanCache | None = None) -> SessionInfo:
    """One Claude Code session, read from its ends (or its row from ``cache`` when the file has
    not changed). OSError when it cannot be read."""
    name = str(path)
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        kept = cache.row(name, stat) if cache else None
        if kept is not None:
            with contextlib.suppress(TypeError):
                return SessionInfo(**kept)
        with mapped(handle) as buffer:  # one map: head, tail, titles and the search read it
            head = read_head(parse_lines(head_lines(buffer, max_bytes=HEAD_BYTES)))
            mark = boundary_mark(buffer[:buffer.find(b"\n", 0, 4096) + 1 or 4096])
            key = f"{mark.decode()}|{head.chain}"
            compactions, done = count_compactions(
                buffer, head.chain, mark,
                cache.resume(name, stat, key) if cache else Resume(0, 0))
            report, last = report_of_tail(lines_backwards(buffer), chain=head.chain,
                                          source=name, compactions=compactions)
            title = tail_title(buffer) or head.title
    if last is None:
        last = datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc).isoformat()
    info = session_info(session_id=path.stem, path=name, size=stat.st_size, head=head,
                        title=title, last_activity=last, report=report)
    if cache is not None and cache.enabled:
        cache.record(name, stat, key=key, offset=done.offset, count=done.found,
                     row=info.as_record())
    return info


def _activity(row: SessionInfo) -> datetime:
    return parse_timestamp(row.last_activity) or datetime.fromtimestamp(0, tz=timezone.utc)


def list_sessions(env: Mapping[str, str], *, project: str | None = None,
                  since: datetime | None = None,
                  warn: Callable[[str], None] | None = None) -> list[SessionInfo]:
    """Every session, Claude Code's and OpenCode's (of ``project`` when given, active since
    ``since``), newest first. Sessions that cannot be read are left out with a warning."""
    rows = []
    cache = ScanCache(cache_path(env), CACHE_VERSION)
    for path in claude_session_files(env, project):
        try:
            if since is not None and path.stat().st_mtime < since.timestamp():
                continue  # not written since: its last entry is older still
            rows.append(read_claude_session(path, cache=cache))
        except OSError as exc:
            if warn is not None:
                warn(f"{path}: cannot read: {exc.strerror or exc}")
        except RecursionError:  # a line nested too deeply to walk: that session only
            if warn is not None:
                warn(f"{path}: left out: a line nested too deeply to process")
    rows += list_opencode(env, project=project, since=since, cache=cache, warn=warn)
    cache.save()
    if since is not None:
        rows = [row for row in rows if _activity(row) >= since]
    rows.sort(key=lambda row: (_activity(row), row.id), reverse=True)
    return rows
