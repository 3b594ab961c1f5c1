"""Cleanup's safety rails: no symlink followed, nothing outside the root, per-file errors that
really happen, verified archives, the lock, refused roots."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest

from ctxtool.errors import OperationError, StoreError, UsageError
from ctxtool.storage.archive import verify, write_archive
from ctxtool.storage.cleanup_tree import check_folder
from ctxtool.storage.lock import folder_lock
from ctxtool.storage.safe_fs import Stat, remove
from tests.cleanup_trees import NOW, PROJECT, add_session, claude_root, listing, undeletable, write
from tests.storage.test_cleanup import by_path, run

DAYS = timedelta(days=1)


def test_remove_refuses_a_parent_swapped_for_a_symlink(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    write(outside / "victim" / "data.txt", "precious", NOW)
    (root / "projects").mkdir(parents=True)
    (root / "projects" / "p").symlink_to(outside)  # was a folder when scanned
    result = remove(str(root), "projects/p/victim")
    assert result.errors and result.errors[0][0] == "projects/p/victim"
    assert (outside / "victim" / "data.txt").read_text() == "precious"


def test_remove_takes_a_symlink_itself_never_its_target(tmp_path: Path) -> None:
    write(tmp_path / "outside" / "data.txt", "precious", NOW)
    folder = tmp_path / "root" / "s"
    folder.mkdir(parents=True)
    (folder / "link").symlink_to(tmp_path / "outside")
    (folder / "file-link").symlink_to(tmp_path / "outside" / "data.txt")
    result = remove(str(tmp_path / "root"), "s")
    assert not result.errors and not folder.exists()
    assert (tmp_path / "outside" / "data.txt").read_text() == "precious"


def test_remove_leaves_skipped_paths_and_their_folders(tmp_path: Path) -> None:
    write(tmp_path / "s" / "tool-results" / "keep.txt", "k", NOW)
    write(tmp_path / "s" / "tool-results" / "drop.txt", "d", NOW)
    write(tmp_path / "s" / "subagents" / "a.jsonl", "{}", NOW)
    result = remove(str(tmp_path), "s", skip=frozenset({"s/tool-results/keep.txt"}))
    assert not result.errors and result.kept == ["s/tool-results/keep.txt"]
    assert sorted(p.name for p in (tmp_path / "s").rglob("*")) == ["keep.txt", "tool-results"]


def test_remove_with_a_manifest_leaves_what_changed_or_appeared(tmp_path: Path) -> None:
    """The archive holds an older state: a file rewritten since, and a file created since in a
    folder (which therefore cannot be removed), stay - and they are errors, even as root."""
    changed = write(tmp_path / "s" / "a.txt", "v1", NOW)
    same = write(tmp_path / "s" / "b.txt", "b", NOW)
    manifest = {"s": Stat(0, 0, True),
                "s/a.txt": Stat(changed.stat().st_size, changed.stat().st_mtime_ns),
                "s/b.txt": Stat(same.stat().st_size, same.stat().st_mtime_ns)}
    changed.write_text("v2, longer")
    (tmp_path / "s" / "new").mkdir()
    result = remove(str(tmp_path), "s", expected=manifest)
    assert not same.exists()
    assert changed.read_text() == "v2, longer" and (tmp_path / "s" / "new").is_dir()
    assert sorted(rel for rel, _ in result.errors) == ["s/a.txt", "s/new"]


def test_remove_of_a_vanished_path_is_not_an_error(tmp_path: Path) -> None:
    assert remove(str(tmp_path), "gone/away").errors == []
    assert remove(str(tmp_path), "gone").errors == []


def test_a_deletion_that_fails_is_reported_and_the_sweep_goes_on(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    stuck = add_session(root, "stuck", NOW - 40 * DAYS)
    fine = add_session(root, "fine", NOW - 40 * DAYS)
    with undeletable(root / "file-history" / "stuck"):
        records, summary = run(root, apply=True)
    found = by_path(records)
    assert "error" in found["file-history/stuck"] and found["file-history/stuck"]["action"] == "delete"
    assert (root / "file-history" / "stuck" / "abc123@v1").exists()
    assert not stuck.transcript.exists()  # the rest of that session went
    assert not fine.transcript.exists() and not (root / "file-history" / "fine").exists()
    assert len(summary.errors) == 1


def test_when_a_transcript_cannot_go_its_side_files_stay(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    stuck = add_session(root, "stuck", NOW - 40 * DAYS, project="-locked")
    with undeletable(root / "projects" / "-locked"):
        records, summary = run(root, apply=True)
    found = by_path(records)
    assert "error" in found["projects/-locked/stuck.jsonl"]
    assert stuck.transcript.exists() and (root / "file-history" / "stuck").exists()
    assert found["file-history/stuck"]["action"] == "keep"
    assert "transcript could not be removed" in found["file-history/stuck"]["reason"]
    assert summary.removed_sessions == 0 and summary.errors


def test_an_unreadable_transcript_keeps_its_session(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    locked = add_session(root, "locked", NOW - 40 * DAYS)
    locked.transcript.chmod(0)
    try:
        locked.transcript.read_bytes()
    except PermissionError:
        pass
    else:
        locked.transcript.chmod(0o600)
        pytest.skip("root reads any file whatever its mode; the same error path is covered by "
                    "test_a_transcript_swapped_for_a_symlink_before_reading_is_an_error")
    try:
        records, summary = run(root, apply=True)
    finally:
        locked.transcript.chmod(0o600)
    record = by_path(records)[f"projects/{PROJECT}/locked.jsonl"]
    assert record["action"] == "keep" and "Permission denied" in record["error"]
    assert (root / "file-history" / "locked").exists() and summary.errors


def test_archive_verification_catches_a_mismatch(tmp_path: Path) -> None:
    write(tmp_path / "root" / "debug" / "s.txt", "log", NOW)
    archive = write_archive(str(tmp_path / "out"), "s", str(tmp_path / "root"), ["debug/s.txt"])
    verify(archive.path, archive)  # what was written reads back the same
    archive.digests["debug/s.txt"] = "0" * 64
    with pytest.raises(StoreError, match="content differs"):
        verify(archive.path, archive)
    archive.manifest["debug/other.txt"] = Stat(1, 1)
    archive.digests["debug/s.txt"] = "x"
    with pytest.raises(StoreError, match="failed verification"):
        verify(archive.path, archive)


def test_archive_keeps_symlinks_as_links(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root / "s" / "f.txt", "x", NOW)
    (root / "s" / "link").symlink_to("/etc/passwd")
    archive = write_archive(str(tmp_path / "out"), "s", str(root), ["s"])
    assert archive.digests["s/link"] == "/etc/passwd"
    assert set(archive.manifest) == {"s", "s/f.txt", "s/link"}


def test_lock_refuses_a_second_holder(tmp_path: Path) -> None:
    with folder_lock(str(tmp_path)):
        with pytest.raises(OperationError, match=r"another cleanup is running \(pid \d+\)"):
            with folder_lock(str(tmp_path)):
                pass
    with folder_lock(str(tmp_path)):  # released with the first holder
        pass


@pytest.mark.parametrize("make, ok", [
    (lambda d: (d / "projects").mkdir(), True),
    (lambda d: (d / "settings.json").write_text("{}"), True),
    (lambda d: (d / "random.txt").write_text("x"), False),
])
def test_check_folder_wants_something_that_looks_like_claude(tmp_path: Path, make, ok: bool) -> None:
    folder = tmp_path / "config"
    folder.mkdir()
    make(folder)
    if ok:
        assert check_folder(str(folder), what="root", force=False) == os.path.realpath(folder)
    else:
        with pytest.raises(UsageError, match="does not look like a Claude Code config folder"):
            check_folder(str(folder), what="root", force=False)
        assert check_folder(str(folder), what="root", force=True) == os.path.realpath(folder)


def test_check_folder_refuses_root_and_home_even_with_force(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="filesystem root"):
        check_folder("/", what="root", force=True)
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)  # even one that looks right
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(UsageError, match="home folder itself"):
        check_folder(str(home), what="root", force=True)
    with pytest.raises(UsageError, match="not a folder"):
        check_folder(str(tmp_path / "missing"), what="root", force=True)


def test_check_folder_for_a_store_wants_the_mark_not_a_name(tmp_path: Path) -> None:
    """A store is what ctxtool made (its mark), never a folder named like one: "ctxtool-src"
    holding a copy of the package, or one that merely has <x>/tool-results folders."""
    for name, make in [("ctxtool-src", lambda d: (d / "cli").mkdir()),
                       ("mine", lambda d: (d / "s1" / "tool-results").mkdir(parents=True)),
                       ("empty-ctxtool-store", lambda d: None)]:
        folder = tmp_path / name
        folder.mkdir()
        make(folder)
        for force in (False, True):
            with pytest.raises(UsageError, match="not a store ctxtool made"):
                check_folder(str(folder), what="store", force=force)
        (folder / ".ctxtool-store").write_text("")
        assert check_folder(str(folder), what="store", force=False) == os.path.realpath(folder)


def test_an_outside_target_reached_through_every_kind_of_link_stays(tmp_path: Path) -> None:
    """A linked project folder, linked side folders and linked files: the run removes the old
    session's real files and leaves every link target alone."""
    root = claude_root(tmp_path)
    outside = tmp_path / "outside"
    write(outside / "proj" / "x.jsonl", '{"timestamp":"2020-01-01T00:00:00Z"}\n', NOW - 400 * DAYS)
    write(outside / "env" / "e", "E", NOW - 400 * DAYS)
    (root / "projects").mkdir()
    (root / "projects" / "-linked").symlink_to(outside / "proj")
    (root / "session-env").mkdir()
    (root / "session-env" / "ghost").symlink_to(outside / "env")
    add_session(root, "old", NOW - 40 * DAYS)
    before = listing(outside)
    records, summary = run(root, apply=True, older=timedelta(days=1))
    assert listing(outside) == before
    found = by_path(records)
    assert found["projects/-linked"]["kind"] == "symlink" and found["projects/-linked"]["action"] == "keep"
    assert found["session-env/ghost"]["action"] == "keep"
    assert not (root / "projects" / PROJECT / "old.jsonl").exists() and not summary.errors
