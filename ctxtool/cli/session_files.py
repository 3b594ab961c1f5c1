"""Finding the sessions on this machine and reading each one from its ends.

Each agent's adapter says where its session files are (:meth:`FormatAdapter.session_files`:
Claude Code's ``<config>/projects/<slug of cwd>/<sessionId>.jsonl``, ``<config>`` being
``$CLAUDE_CONFIG_DIR`` or ``~/.claude``; Codex CLI's ``$CODEX_HOME/sessions/YYYY/MM/DD/
rollout-*.jsonl``) and which bytes find its lines (:attr:`FormatAdapter.session_marks`). A session
is read from its first 64 KB (project, first prompt), its last lines backwards until the last
API call (context now), its last 64 KB (title records) and a byte search for compaction
records: the cost per session does not depend on the transcript's length. One exception keeps
the figures those of ``estimate``: an agent whose estimate reads the whole session (Codex CLI)
and whose last lines hold no usage since its last compaction has its file read whole. No click
here: ``statusline`` and the selectors use it too.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import BinaryIO

from ctxtool import __version__
from ctxtool.cli.opencode_sessions import list_opencode
from ctxtool.cli.tail_read import HEAD_BYTES, marks_of, parse_lines, report_of_tail
from ctxtool.clock import parse_timestamp
from ctxtool.core.sizing.estimate import EstimateReport, estimate
from ctxtool.core.sizing.session_tail import in_chain
from ctxtool.core.sizing.sessions import SessionInfo, read_head, session_info, title_of
from ctxtool.formats.adapter import SessionFile, SessionMarks
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.registry import adapter_for, adapters
from ctxtool.storage.scan_cache import Resume, ScanCache, cache_path
from ctxtool.storage.tail import (
    Buffer,
    complete_length,
    head_lines,
    lines_backwards,
    lines_containing,
    mapped,
)

TITLE_BYTES = 64 << 10  # Claude Code appends its title records near the end
CACHE_VERSION = f"{__version__}/2"


def boundary_mark(first_line: bytes, marks: SessionMarks) -> bytes:
    """What to search for: writers of compact JSON (Claude Code, Codex CLI, ctxtool) get the
    longer needle, found about twice as fast as the short one any other writer gets."""
    compact = b'":"' in first_line and b'": "' not in first_line
    return marks.compaction_compact if compact else marks.compaction


def count_compactions(buffer: Buffer, chain: bool | None, mark: bytes, fmt: str,
                      resume: Resume = Resume(0, 0)) -> tuple[int, Resume]:
    """Compaction records of the session's chain, as ``estimate`` counts them, and where a
    later search can resume (the end of the last complete line, the count before it). Only
    the lines the byte search hits are parsed; ``resume`` skips what an earlier search saw."""
    is_compaction = adapter_for(fmt).is_compaction_record

    def count(lines: Iterable[bytes]) -> int:
        return sum(1 for entry in parse_lines(lines)
                   if is_compaction(entry) and in_chain(entry, chain))

    complete = complete_length(buffer)
    offset, before = resume if resume.offset <= complete else Resume(0, 0)
    found = before + count(lines_containing(buffer, mark, start=offset, end=complete))
    partial = count(lines_containing(buffer, mark, start=complete))  # a line being written
    return found + partial, Resume(complete, found)


def tail_title(buffer: Buffer, fmt: str) -> str | None:
    """The title records in the last TITLE_BYTES (searched as bytes; only hits are parsed)."""
    mark = marks_of(fmt).title
    if mark is None:
        return None
    start = max(0, len(buffer) - TITLE_BYTES)
    if start > 0:  # from the first line that starts in the block
        start = buffer.find(b"\n", start) + 1 or len(buffer)
    return title_of(parse_lines(lines_containing(buffer, mark, start=start)), fmt)


def whole_report(handle: BinaryIO, fmt: str, source: str,
                 env: Mapping[str, str] | None) -> EstimateReport:
    """``estimate`` of the whole file, streamed from its start (bad lines passed over, as the
    listing does)."""
    handle.seek(0)
    entries = iter_entries(handle, source, on_invalid="skip", exact_ints=False)
    return estimate(entries, fmt=fmt, source=source, top=0, env=env)


def read_session(found: SessionFile, fmt: str, *, cache: ScanCache | None = None,
                 env: Mapping[str, str] | None = None) -> SessionInfo:
    """One session of format ``fmt``, read from its ends (or its row from ``cache`` when the
    file has not changed). OSError when it cannot be read."""
    name = str(found.path)
    with open(found.path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        kept = cache.row(name, stat) if cache else None
        if kept is not None:
            with contextlib.suppress(TypeError):
                return SessionInfo(**kept)
        with mapped(handle) as buffer:  # one map: head, tail, titles and the search read it
            head = read_head(parse_lines(head_lines(buffer, max_bytes=HEAD_BYTES)), fmt)
            mark = boundary_mark(buffer[:buffer.find(b"\n", 0, 4096) + 1 or 4096],
                                 marks_of(fmt))
            key = f"{fmt}|{mark.decode()}|{head.chain}"
            compactions, done = count_compactions(
                buffer, head.chain, mark, fmt,
                cache.resume(name, stat, key) if cache else Resume(0, 0))
            report, last = report_of_tail(lines_backwards(buffer), chain=head.chain, fmt=fmt,
                                          source=name, compactions=compactions)
            if report.anchor is None and adapter_for(fmt).reads_whole_session:
                # its figure without a call since the compaction rests on the whole session
                report = whole_report(handle, fmt, name, env)
            title = tail_title(buffer, fmt) or head.title
    if last is None:
        last = datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc).isoformat()
    info = session_info(session_id=found.id, path=name, size=stat.st_size, head=head,
                        title=title, last_activity=last, report=report, agent=fmt)
    if cache is not None and cache.enabled:
        cache.record(name, stat, key=key, offset=done.offset, count=done.found,
                     row=info.as_record())
    return info


def _activity(row: SessionInfo) -> datetime:
    return parse_timestamp(row.last_activity) or datetime.fromtimestamp(0, tz=timezone.utc)


def list_sessions(env: Mapping[str, str], *, project: str | None = None,
                  since: datetime | None = None, archived: bool = False,
                  warn: Callable[[str], None] | None = None) -> list[SessionInfo]:
    """Every session of every agent whose sessions ctxtool finds (Claude Code's, Codex CLI's,
    OpenCode's; of ``project`` when given, active since ``since``; ``archived``: Codex's
    archived ones too), newest first. Sessions that cannot be read are left out with a
    warning."""
    rows = []
    cache = ScanCache(cache_path(env), CACHE_VERSION)
    for adapter in adapters():
        if adapter.session_marks is None:
            continue
        for found in adapter.session_files(env, project, archived=archived):
            path = found.path
            try:
                if since is not None and path.stat().st_mtime < since.timestamp():
                    continue  # not written since: its last entry is older still
                rows.append(read_session(found, adapter.name, cache=cache, env=env))
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
