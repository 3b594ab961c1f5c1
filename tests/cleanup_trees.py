"""Fake ``~/.claude`` trees for the cleanup tests: every category, with controlled file times and
transcript timestamps relative to a fixed "now"."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
NOW_ARG = "2026-03-01T12:00:00Z"
PROJECT = "-home-me-app"


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def touch(path: Path, moment: datetime) -> None:
    """Set a path's mtime (not following symlinks) and, for a folder, everything inside it."""
    if path.is_dir() and not path.is_symlink():
        for child in path.rglob("*"):
            os.utime(child, (moment.timestamp(),) * 2, follow_symlinks=False)
    os.utime(path, (moment.timestamp(),) * 2, follow_symlinks=False)


def write(path: Path, data: str | bytes, moment: datetime) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    touch(path, moment)
    return path


def transcript_lines(session: str, stamps: list[datetime], *, slug: str | None = None,
                     extra: list[dict[str, object]] | None = None) -> str:
    lines = []
    for n, stamp in enumerate(stamps):
        entry: dict[str, object] = {"type": "user" if n % 2 == 0 else "assistant", "uuid": f"u{n}",
                                    "parentUuid": f"u{n - 1}" if n else None, "sessionId": session,
                                    "timestamp": iso(stamp),
                                    "message": {"role": "user", "content": f"line {n}"}}
        if slug:
            entry["slug"] = slug
        lines.append(json.dumps(entry))
    lines.extend(json.dumps(item) for item in extra or [])
    return "\n".join(lines) + "\n"


@dataclass
class Session:
    sid: str
    last: datetime  # newest timestamp inside and newest mtime
    root: Path
    project: str = PROJECT
    slug: str | None = None
    paths: list[Path] = field(default_factory=list)

    @property
    def transcript(self) -> Path:
        return self.root / "projects" / self.project / f"{self.sid}.jsonl"

    @property
    def folder(self) -> Path:
        return self.root / "projects" / self.project / self.sid


def add_session(root: Path, sid: str, last: datetime, *, slug: str | None = None,
                mtime: datetime | None = None, extra: list[dict[str, object]] | None = None,
                side: bool = True, project: str = PROJECT) -> Session:
    """A session with a transcript, tool-results, a subagent and (``side``) one file in every
    side category. Timestamps inside end at ``last``; files get ``mtime`` (default ``last``)."""
    session = Session(sid, last, root, project=project, slug=slug)
    when = mtime or last
    stamps = [last - timedelta(hours=2), last]
    lines = transcript_lines(sid, stamps, slug=slug, extra=extra)
    session.paths.append(write(session.transcript, lines, when))
    session.paths.append(write(session.folder / "tool-results" / "toolu_1.txt", "big output\n", when))
    write(session.folder / "subagents" / "agent-a1.jsonl",
          transcript_lines(sid, [last - timedelta(hours=3)]), when)
    touch(session.folder, when)
    if side:
        session.paths += [
            write(root / "file-history" / sid / "abc123@v1", "old file\n", when),
            write(root / "todos" / f"{sid}-agent-{sid}.json", "[]", when),
            write(root / "debug" / f"{sid}.txt", "debug\n", when),
            write(root / "session-env" / sid / "env", "X=1\n", when),
            write(root / "image-cache" / sid / "1.png", b"\x89PNG", when),
        ]
        for folder in ("file-history", "session-env", "image-cache"):
            touch(root / folder / sid, when)
        if slug:
            session.paths.append(write(root / "plans" / f"{slug}.md", "# plan\n", when))
    return session


def write_index(root: Path, sessions: list[Session], project: str = PROJECT) -> Path:
    index = {"version": 1, "entries": [
        {"sessionId": s.sid, "fullPath": str(s.transcript), "fileMtime": 0, "firstPrompt": "hi",
         "messageCount": 2, "created": iso(s.last), "modified": iso(s.last), "gitBranch": "",
         "projectPath": "/home/me/app", "isSidechain": False} for s in sessions],
        "originalPath": "/home/me/app"}
    path = root / "projects" / project / "sessions-index.json"
    path.write_text(json.dumps(index, indent=2) + "\n")
    return path


def claude_root(tmp_path: Path) -> Path:
    root = tmp_path / ".claude"
    root.mkdir()
    (root / "settings.json").write_text("{}")
    return root


def listing(folder: Path) -> dict[str, tuple[bytes | str | None, int]]:
    """Every path under ``folder`` with its content (files), link target (symlinks) and mtime."""
    found: dict[str, tuple[bytes | str | None, int]] = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        if path.is_symlink():
            content: bytes | str | None = os.readlink(path)
        elif path.is_file():
            content = path.read_bytes()
        else:
            content = None
        found[str(path.relative_to(folder))] = (content, st.st_mtime_ns)
    return found


def _blocks_writes(folder: Path) -> bool:
    probe = folder / ".probe"
    before = folder.stat()
    try:
        probe.touch(exist_ok=False)
    except PermissionError:
        return True
    probe.unlink()
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # the probe left no trace
    return False


@contextlib.contextmanager
def undeletable(folder: Path) -> Iterator[None]:
    """Make the entries of ``folder`` impossible for this process to remove, for real.

    A read-only folder does it for a normal user. Root ignores permissions (the probe shows it),
    so there the folder gets the immutable attribute (``chattr +i``); where that is not available
    the test is skipped (only this permission case: the same error path is also covered by tests
    that work as root).
    """
    folder.chmod(0o500)
    if _blocks_writes(folder):
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    folder.chmod(0o700)
    chattr = shutil.which("chattr")
    done = chattr and subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode == 0
    if not done:
        pytest.skip("running as root where chattr +i does not work: a folder cannot be made undeletable")
    try:
        yield
    finally:
        subprocess.run([str(chattr), "-i", str(folder)], check=True)
