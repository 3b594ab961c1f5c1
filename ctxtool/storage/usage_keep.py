"""``cleanup --keep-usage DIR``: a removed session's usage, kept where usage tools read it.

Each transcript of a session that goes is reduced to its usage lines (by the agent's cleanup
source, :meth:`~ctxtool.storage.cleanup_source.CleanupSource.usage`; the adapter says which
fields: no conversation text) and written to ``DIR/<its path under its folder>``, so the
folder mirrors the agent's own layout: ``DIR/projects/<project>/<session>.jsonl`` (and
``<session>/subagents/agent-*.jsonl``) for Claude Code, ``DIR/sessions/YYYY/MM/DD/rollout-*.jsonl``
(or ``archived_sessions/...``) for Codex CLI. ``CLAUDE_CONFIG_DIR="$HOME/.claude,DIR" ccusage``
and ``CODEX_HOME=DIR`` for Codex's tools then count it as before.

Files are 0600 in 0700 folders, opened for appending and never rewritten: when a usage file
exists already (a session archived, restored, used and cleaned again), only the lines not
already in it, byte for byte, are appended. Every file and every folder above it is fsynced
before :meth:`UsageKeeper.keep` returns, so the caller removes the session only once its usage
is on disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ctxtool.errors import StoreError
from ctxtool.storage.safe_fs import describe, open_folder

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(
    os, "O_CLOEXEC", 0)


class UsageKeeper:
    """Writes sessions' usage under one folder, created 0700 on first use."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._synced: set[str] = set()  # folders already made durable in this run

    def keep(self, usage: Iterable[tuple[str, list[bytes]]]) -> list[str]:
        """Append each (path under the folder, usage lines) - what the agent's cleanup source
        reads from a transcript about to go - to its file; the paths written.
        StoreError (nothing of the session to be removed) when one cannot be written."""
        written = []
        for rel, lines in usage:
            if not lines:
                continue  # no usage recorded: no file
            path = os.path.join(self.folder, rel)
            try:
                self._append(rel, lines)
            except OSError as exc:
                raise StoreError(f"cannot keep usage: {describe(exc)}", source=path) from exc
            written.append(path)
        return written

    def _append(self, rel: str, lines: list[bytes]) -> None:
        *parents, name = rel.split("/")
        self._prepare(parents)
        with open_folder(self.folder, parents) as folder:
            fd = os.open(folder.at(name), _FLAGS, 0o600, dir_fd=folder.fd)
            try:
                existing = _read_all(fd)
                data = b"".join(_new_lines(existing, lines))
                if data and existing and not existing.endswith(b"\n"):
                    data = b"\n" + data  # after a line a killed run left half written
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            _fsync_dir(folder.fd)  # the file's name, when it was just created

    def _prepare(self, parents: list[str]) -> None:
        """Create the folders down to the file, 0700, and make each one's name durable: once
        per folder and run."""
        if not self._synced:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            fd = os.open(os.path.dirname(os.path.abspath(self.folder)), os.O_RDONLY)
            try:
                _fsync_dir(fd)
            finally:
                os.close(fd)
        for depth in range(len(parents) + 1):
            key = "/".join(parents[:depth])
            if key not in self._synced:
                with open_folder(self.folder, parents[:depth], create=True) as folder:
                    _fsync_dir(folder.fd)
                self._synced.add(key)


def _fsync_dir(fd: int | None) -> None:
    if fd is not None:
        os.fsync(fd)


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _new_lines(existing: bytes, lines: list[bytes]) -> list[bytes]:
    """The lines not in ``existing`` already, byte for byte (a line a killed run left half
    written matches none: it is written again, whole)."""
    present = set(existing.split(b"\n"))
    return [line for line in lines if line[:-1] not in present]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
