"""Finding the sessions on this machine and reading each one from its ends.

Claude Code keeps ``<config>/projects/<slug of cwd>/<sessionId>.jsonl`` (``<config>`` is
``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). A session is read from its first 64 KB (project, first
prompt), its last lines backwards until the last API call (context now), its last 64 KB (title
records) and a byte search for compact boundaries: the cost per session does not depend on the
transcript's length. No click here: ``statusline`` and the selectors use it too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import orjson

from ctxtool.core.chain import is_compact_boundary
from ctxtool.core.clock import parse_timestamp
from ctxtool.core.estimate import EstimateReport
from ctxtool.core.session_tail import estimate_tail, in_chain, last_timestamp
from ctxtool.core.sessions import SessionInfo, read_head, session_info, title_of
from ctxtool.storage.paths import claude_config_dir, project_slug
from ctxtool.storage.tail import iter_head_lines, iter_lines_reversed, lines_containing

HEAD_BYTES = 64 << 10
TITLE_BYTES = 64 << 10  # Claude Code appends its title records near the end
BOUNDARY_MARK = b'"compact_boundary"'
TITLE_MARKS = (b'title"', b'"summary"')


def parse_lines(lines: Iterable[bytes]) -> Iterator[dict[str, object]]:
    """The JSON objects among ``lines``; anything else (a line cut short by a session still
    being written, blank lines) is passed over."""
    for line in lines:
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def projects_dir(env: Mapping[str, str]) -> Path:
    return claude_config_dir(env) / "projects"


def project_folder(project: str, env: Mapping[str, str]) -> Path:
    """The folder of the sessions started in ``project`` (a directory, ``.`` = here)."""
    return projects_dir(env) / project_slug(os.path.abspath(os.path.expanduser(project)))


def claude_session_files(env: Mapping[str, str], project: str | None = None) -> list[Path]:
    """Every Claude Code session transcript (subagent files left out), of one project or all."""
    folders = [project_folder(project, env)] if project else _folders(projects_dir(env))
    files = []
    for folder in folders:
        try:
            with os.scandir(folder) as found:
                files += [Path(e.path) for e in found if e.name.endswith(".jsonl")
                          and not e.name.startswith("agent-") and e.is_file()]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return files


def _folders(root: Path) -> list[Path]:
    try:
        with os.scandir(root) as found:
            return [Path(e.path) for e in found if e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []


@dataclass(frozen=True)
class TailOptions:
    """What the tail estimate needs beyond the file (the statusline knows the window)."""

    model: str | None = None
    context_window: int | None = None
    env: Mapping[str, str] | None = None


def count_compactions(handle: BinaryIO, chain: bool | None) -> int:
    """Compact boundaries of the session's chain, as ``estimate`` counts them: only the lines
    the byte search hits are parsed."""
    return sum(1 for entry in parse_lines(lines_containing(handle, BOUNDARY_MARK))
               if is_compact_boundary(entry) and in_chain(entry, chain))


def tail_report(handle: BinaryIO, *, chain: bool | None, source: str | None = None,
                options: TailOptions = TailOptions()) -> EstimateReport:
    """``estimate``'s report (context now, window, compactions) from the file's ends."""
    compactions = count_compactions(handle, chain)
    return estimate_tail(parse_lines(iter_lines_reversed(handle)), chain=chain,
                         compactions=compactions, source=source, model=options.model,
                         context_window=options.context_window, env=options.env)


def _title(handle: BinaryIO, head: list[dict[str, object]]) -> str | None:
    tail: list[bytes] = []
    read = 0
    for line in iter_lines_reversed(handle):
        read += len(line)
        if any(mark in line for mark in TITLE_MARKS):
            tail.append(line)
        if read >= TITLE_BYTES:
            break
    return title_of([*head, *parse_lines(reversed(tail))])


def read_claude_session(path: Path, *, options: TailOptions = TailOptions()) -> SessionInfo:
    """One Claude Code session, read from its ends. OSError when it cannot be read."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head_entries = list(parse_lines(iter_head_lines(handle, max_bytes=HEAD_BYTES)))
        head = read_head(head_entries)
        report = tail_report(handle, chain=head.chain, source=str(path), options=options)
        last = last_timestamp(parse_lines(islice(iter_lines_reversed(handle), 200)))
        title = _title(handle, head_entries)
    if last is None:
        last = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).isoformat()
    return session_info(session_id=path.stem, path=str(path), size=size, head=head,
                        title=title, last_activity=last, report=report)


def _activity(row: SessionInfo) -> datetime:
    return parse_timestamp(row.last_activity) or datetime.fromtimestamp(0, tz=timezone.utc)


def list_sessions(env: Mapping[str, str], *, project: str | None = None,
                  since: datetime | None = None,
                  warn: Callable[[str], None] | None = None) -> list[SessionInfo]:
    """Every session (of ``project`` when given, active since ``since``), newest first.
    Files that cannot be read are left out with a warning."""
    rows = []
    for path in claude_session_files(env, project):
        try:
            if since is not None and path.stat().st_mtime < since.timestamp():
                continue  # not written since: its last entry is older still
            rows.append(read_claude_session(path))
        except OSError as exc:
            if warn is not None:
                warn(f"{path}: cannot read: {exc.strerror or exc}")
    if since is not None:
        rows = [row for row in rows if _activity(row) >= since]
    rows.sort(key=lambda row: (_activity(row), row.id), reverse=True)
    return rows
