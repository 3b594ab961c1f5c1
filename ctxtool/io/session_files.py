"""Finding the sessions on this machine and reading each one from its ends.

Each agent's adapter says where its session files are (:meth:`FormatAdapter.session_files`:
Claude Code's ``<config>/projects/<slug of cwd>/<sessionId>.jsonl``, ``<config>`` being
``$CLAUDE_CONFIG_DIR`` or ``~/.claude``; Codex CLI's ``$CODEX_HOME/sessions/YYYY/MM/DD/
rollout-*.jsonl``) and which bytes find its lines (:attr:`FormatAdapter.session_marks`). A session
is read from its first 64 KB (project, first prompt), its last lines backwards until the last
API call (context now), its last 64 KB (title records) and a byte search for compaction
records: the cost per session does not depend on the transcript's length. One exception keeps
the figures those of ``estimate``: a session its agent reads whole is sized from its first line
and its lines since its last checkpoint (Gemini CLI), or from its last lines when they hold
usage since its last compaction (Codex CLI); else its file is read whole. No click
here: ``statusline`` and the selectors use it too.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import BinaryIO, NamedTuple

from ctxtool import __version__
from ctxtool.clock import parse_timestamp
from ctxtool.core.sizing.estimate import EstimateReport, estimate
from ctxtool.core.sizing.session_tail import in_chain, view_report
from ctxtool.core.sizing.sessions import SessionInfo, read_head, session_info, title_of
from ctxtool.formats.adapter import SessionFile, SessionMarks
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.registry import adapter_for, adapters
from ctxtool.io.opencode_sessions import list_opencode
from ctxtool.io.tail_read import HEAD_BYTES, marks_of, parse_line, parse_lines, report_of_tail
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


def whole_session_report(tail: EstimateReport, buffer: Buffer, handle: BinaryIO, fmt: str,
                         source: str, env: Mapping[str, str] | None,
                         compactions: int) -> EstimateReport:
    """The figure of a session its agent reads whole, as ``estimate`` gives it: from its first
    line and the lines since its last view start (Gemini CLI's checkpoint) when a call there
    anchors it; else the ``tail``'s when a call anchors that (Codex CLI); else the whole file's."""
    first = next(parse_lines(head_lines(buffer, max_bytes=HEAD_BYTES)), None)
    view = view_report(first, lines_backwards(buffer), parse=parse_line, fmt=fmt,
                       source=source, top=0, env=env) if first is not None else None
    if view is not None:
        return view._replace(compact_boundaries=compactions)
    if tail.anchor is not None:
        return tail
    return whole_report(handle, fmt, source, env)


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
            if adapter_for(fmt).reads_whole_session:
                report = whole_session_report(report, buffer, handle, fmt, name, env,
                                              compactions)
            title = tail_title(buffer, fmt) or head.title
    if last is None:
        last = datetime.fromtimestamp(stat.st_mtime, tz=timezone.utc).isoformat()
    info = session_info(session_id=found.id, path=name, size=stat.st_size, head=head,
                        title=title, last_activity=last, report=report, agent=fmt)
    if cache is not None and cache.enabled:
        cache.record(name, stat, key=key, offset=done.offset, count=done.found,
                     row=info.as_record())
    return info


def last_active(row: SessionInfo) -> datetime:
    """What "newest" means everywhere (``sessions``' order, its LAST ACTIVE column, ``--latest``):
    the time of the session's last recorded entry (OpenCode: its update time), or the file's
    modification time when it records none. A rewrite by a tool (an --in-place run, a copy)
    moves the file's time, not this."""
    return parse_timestamp(row.last_activity) or datetime.fromtimestamp(0, tz=timezone.utc)


def newest_first(rows: Iterable[SessionInfo]) -> list[SessionInfo]:
    return sorted(rows, key=lambda row: (last_active(row), row.id), reverse=True)


class Latest(NamedTuple):
    """A session ``--latest`` may choose: ``found`` (a file of agent ``fmt``) is read for its
    last activity; ``updated`` (an OpenCode session's update time, seconds) is that already."""

    id: str
    found: SessionFile | None
    fmt: str | None
    updated: float | None = None


def newest(candidates: Sequence[Latest], env: Mapping[str, str]) -> int:
    """The index of the candidate ``ctxtool sessions`` lists first (see :func:`last_active`).
    Files are read newest-written first, from the ends as ``sessions`` reads them (its cache
    too), until the next file was last written before the best activity found: a file's
    entries are not dated after the file was written, so no older file can be newer. Usually
    one or two files are read."""
    cache = ScanCache(cache_path(env), CACHE_VERSION)
    bounds = [(c.updated if c.updated is not None else _mtime(c), i)
              for i, c in enumerate(candidates)]
    best: tuple[datetime, str] | None = None
    chosen = 0
    for bound, i in sorted(bounds, reverse=True):
        if best is not None and bound < best[0].timestamp():
            break
        key = (_activity_of(candidates[i], bound, cache, env), candidates[i].id)
        if best is None or key > best:
            best, chosen = key, i
    cache.save()
    return chosen


def _mtime(candidate: Latest) -> float:
    try:
        return candidate.found.path.stat().st_mtime if candidate.found else 0.0
    except OSError:
        return 0.0


def _activity_of(candidate: Latest, bound: float, cache: ScanCache,
                 env: Mapping[str, str]) -> datetime:
    """Its last activity as ``sessions`` shows it; an agent whose files ``sessions`` cannot
    read from their ends, or a file that cannot be read, by the file's time."""
    fallback = datetime.fromtimestamp(bound, tz=timezone.utc)
    fmt = candidate.fmt
    if candidate.found is None or fmt is None or adapter_for(fmt).session_marks is None:
        return fallback
    try:
        return last_active(read_session(candidate.found, fmt, cache=cache, env=env))
    except (OSError, RecursionError):
        return fallback


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
        rows = [row for row in rows if last_active(row) >= since]
    return newest_first(rows)
