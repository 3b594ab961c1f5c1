"""Verified, atomically written ``.tar.gz`` archives of paths under a root folder.

Members are stored relative to the root, so ``tar -xzf ARCHIVE -C ROOT`` puts them back where
they were. The archive is written to a temp file beside its final name, read back and compared
with what was put in (every file's SHA-256 and size, every link target), and only then moved into
place under a name that never overwrites an existing archive. The returned manifest lets the
caller remove only what the archive really holds, unchanged.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import stat
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import BinaryIO

from ctxtool.errors import StoreError
from ctxtool.storage.atomic import MARK, sweep_stale
from ctxtool.storage.safe_fs import Stat, describe, open_nofollow, walk

SUFFIX = ".tar.gz"


@dataclass
class Archive:
    path: str
    manifest: dict[str, Stat] = field(default_factory=dict)  # rel path -> what was archived
    digests: dict[str, str] = field(default_factory=dict)  # file -> sha256, link -> its target


class _Hashing:
    """A read-only file wrapper that hashes what tarfile reads from it."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.sha = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.sha.update(data)
        return data


def free_name(folder: str, stem: str) -> str:
    """``folder/stem.tar.gz``, or ``stem.1.tar.gz``, ``stem.2.tar.gz``... if taken; the name is
    claimed by creating it exclusively, so two writers never pick the same one."""
    for n in range(10_000):
        name = os.path.join(folder, f"{stem}{'' if n == 0 else f'.{n}'}{SUFFIX}")
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return name
        except FileExistsError:
            continue
    raise StoreError(f"cannot find a free archive name for {stem} in {folder}")


def write_archive(folder: str, stem: str, base: str, rels: Iterable[str], *,
                  skip: frozenset[str] = frozenset()) -> Archive:
    """Archive ``base/rel`` for each rel (folders recursively, symlinks as links, ``skip`` left
    out) into ``folder/stem.tar.gz``; verified before it gets its final name. StoreError on any
    failure, with nothing left behind."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        sweep_stale(folder, prefix=f".{stem}.")  # a partial archive a killed run left
        # marked as ctxtool's: a later run writing in this folder sweeps it, whatever its stem
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}.{MARK}", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise StoreError(f"cannot write archive: {describe(exc)}", source=folder) from exc
    archive = Archive(path=tmp)
    try:
        with os.fdopen(fd, "wb") as raw:
            # mtime=0: the same content gives the same archive bytes
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz, \
                    tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for rel in rels:
                    _add_tree(tar, base, rel, skip, archive)
            raw.flush()
            os.fsync(raw.fileno())
        verify(tmp, archive)
        final = free_name(folder, stem)
        try:
            os.replace(tmp, final)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(final)  # the empty placeholder that claimed the name
            raise
        _fsync_folder(folder)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise StoreError(f"cannot write archive: {describe(exc)}", source=folder) from exc
        raise
    archive.path = final
    return archive


def _add_tree(tar: tarfile.TarFile, base: str, rel: str, skip: frozenset[str],
              archive: Archive) -> None:
    for member_rel, st in walk(base, rel):
        if member_rel in skip or any(member_rel.startswith(f"{s}/") for s in skip):
            continue
        info = tarfile.TarInfo(member_rel)
        info.mode, info.mtime = stat.S_IMODE(st.st_mode), int(st.st_mtime)
        info.uid, info.gid = st.st_uid, st.st_gid
        if stat.S_ISDIR(st.st_mode):
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        elif stat.S_ISLNK(st.st_mode):
            info.type, info.linkname = tarfile.SYMTYPE, os.readlink(os.path.join(base, member_rel))
            archive.digests[member_rel] = info.linkname
            tar.addfile(info)
        elif stat.S_ISREG(st.st_mode):
            st = _add_file(tar, base, member_rel, info, archive)
        else:
            continue  # sockets, fifos: nothing to keep
        archive.manifest[member_rel] = Stat(st.st_size, st.st_mtime_ns, stat.S_ISDIR(st.st_mode))


def _add_file(tar: tarfile.TarFile, base: str, rel: str, info: tarfile.TarInfo,
              archive: Archive) -> os.stat_result:
    with os.fdopen(open_nofollow(base, rel), "rb") as handle:
        st = os.fstat(handle.fileno())  # the size tar will read, even if the file grows
        info.size = st.st_size
        hashing = _Hashing(handle)
        tar.addfile(info, hashing)  # type: ignore[arg-type]
    archive.digests[rel] = hashing.sha.hexdigest()
    return st


def verify(path: str, archive: Archive) -> None:
    """Read the archive back: every manifest entry present with the same type, size, content
    hash and link target; nothing else. Raises StoreError when it does not match."""
    seen: set[str] = set()
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for member in tar:
                _check_member(tar, member, archive)
                seen.add(member.name)
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise StoreError(f"archive failed verification: {exc}", source=path) from exc
    missing = set(archive.manifest) - seen
    if missing:
        raise StoreError(f"archive failed verification: missing {sorted(missing)[0]}", source=path)


def _check_member(tar: tarfile.TarFile, member: tarfile.TarInfo, archive: Archive) -> None:
    expected = archive.manifest.get(member.name)
    if expected is None:
        raise tarfile.TarError(f"unexpected member {member.name}")
    if member.isfile():
        if member.size != expected.size or _digest(tar, member) != archive.digests.get(member.name):
            raise tarfile.TarError(f"content differs for {member.name}")
    elif member.issym():
        if member.linkname != archive.digests.get(member.name):
            raise tarfile.TarError(f"link target differs for {member.name}")
    elif member.isdir() != expected.is_dir:
        raise tarfile.TarError(f"type differs for {member.name}")


def _digest(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    sha = hashlib.sha256()
    extracted = tar.extractfile(member)
    if extracted is not None:
        for chunk in iter(lambda: extracted.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def _fsync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
