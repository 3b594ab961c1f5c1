"""``cleanup --archive DIR`` for OpenCode: each removed session as the JSON ``opencode export``
prints, so ``opencode import DIR/<id>.json`` brings it back.

A session's export goes to ``DIR/<sessionID>.json`` (``<sessionID>.1.json``... when taken: an
archive is never overwritten). It is written to a temp file in DIR, fsynced, read back and
compared byte for byte with what was meant, and only then linked to its name (a name that exists
makes the link fail, so two runs never share one), its folder fsynced. Killed before the link,
the temp file (``.<id>.ctxtool-XXXXXXXX.tmp``) is all that is left, and a later run sweeps it;
no ``.json`` in DIR is ever a partial one. The session's files in OpenCode's data folder (tool
outputs, plan, diff) go into ``DIR/<rootID>.opencode-files.tar.gz`` (:mod:`.archive`), restored
with ``tar -xzf ... -C <data folder>``.
"""

from __future__ import annotations

import os
import shlex

from ctxtool.errors import StoreError
from ctxtool.storage import durable
from ctxtool.storage.archive import Archive, write_archive
from ctxtool.storage.atomic import temp_file
from ctxtool.storage.safe_fs import describe

SIDE_FILES_STEM = "{}.opencode-files"


def write_export(folder: str, session_id: str, data: bytes) -> str:
    """Archive one session's export bytes; the path written. StoreError when it cannot be
    written or does not read back the same (nothing is left under a ``.json`` name then)."""
    prefix = f".{session_id}."
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with temp_file(folder, prefix=prefix) as (fd, tmp):
            try:
                half = len(data) // 2
                _write_all(fd, data[:half])
                durable.crash_point("opencode-archive-write")  # tests: killed mid-write
                _write_all(fd, data[half:])
                os.fsync(fd)
            finally:
                os.close(fd)
            _verify(tmp, data)
            path = _link_free(folder, session_id, tmp)
        _fsync_folder(folder)
    except OSError as exc:
        raise StoreError(f"cannot write archive: {describe(exc)}", source=folder) from exc
    return path


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _verify(path: str, data: bytes) -> None:
    with open(path, "rb") as handle:
        if handle.read() != data:
            raise StoreError("archive failed verification: it does not read back as written",
                             source=path)


def _link_free(folder: str, session_id: str, tmp: str) -> str:
    for n in range(10_000):
        path = os.path.join(folder, f"{session_id}{'' if n == 0 else f'.{n}'}.json")
        try:
            os.link(tmp, path)
            return path
        except FileExistsError:
            continue
    raise StoreError(f"cannot find a free archive name for {session_id}", source=folder)


def _fsync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_side_files(folder: str, root_id: str, data_dir: str, rels: list[str]) -> Archive:
    """The tree's files in OpenCode's data folder, as a verified tar.gz."""
    return write_archive(folder, SIDE_FILES_STEM.format(root_id), data_dir, rels)


def restore_command(paths: list[str], directory: str) -> str:
    """The command that brings archived sessions back: ``opencode import`` files a session
    under the project of the folder it runs in, so it runs in the session's own directory."""
    imports = " && ".join(f"opencode import {shlex.quote(path)}" for path in paths)
    return f"cd {shlex.quote(directory)} && {imports}"


__all__ = ["restore_command", "write_export", "write_side_files"]
