"""Cleanup planning and applying on real fake ``~/.claude`` trees: categories, ages, references,
the sessions index, archives."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from ctxtool.storage.cleanup import CleanupOptions, CleanupRun, Summary, plan_cleanup
from ctxtool.storage.cleanup_tree import CATEGORIES
from tests.cleanup_trees import (NOW, PROJECT, add_session, claude_root, listing, touch, write,
                                 write_index)

OLD, RECENT, LIVE = "0ld00000-0000-0000-0000-000000000000", "rec00000-0000-0000-0000-000000000000", \
    "11ve0000-0000-0000-0000-000000000000"
DAYS = timedelta(days=1)


def run(root: Path | None, *, apply: bool = False, older: timedelta = 30 * DAYS,
        include: tuple[str, ...] = CATEGORIES, archive: Path | None = None,
        store: Path | None = None, progress: Callable[..., Iterable[Any]] | None = None,
        ) -> tuple[list[dict[str, Any]], Summary]:
    options = CleanupOptions(folders={"claude-code": os.path.realpath(root)} if root else {},
                             store=os.path.realpath(store) if store else None, older_than=older,
                             now=NOW, include=include, apply=apply,
                             archive_dir=str(archive) if archive else None)
    plan = plan_cleanup(options, **({"progress": progress} if progress else {}))
    cleanup = CleanupRun(plan)
    records = list(cleanup.records())
    return records, cleanup.summary


def by_path(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {record["path"]: record for record in records}


def side_paths(sid: str) -> list[str]:
    return [f"projects/{PROJECT}/{sid}.jsonl", f"projects/{PROJECT}/{sid}", f"file-history/{sid}",
            f"todos/{sid}-agent-{sid}.json", f"debug/{sid}.txt", f"session-env/{sid}",
            f"image-cache/{sid}"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """An old session (every side file, a plan, a legacy subagent file), a recent one, a live one,
    and loose items old and new in every category that has them."""
    root = claude_root(tmp_path)
    old = add_session(root, OLD, NOW - 40 * DAYS, slug="old-brave-owl")
    add_session(root, RECENT, NOW - 2 * DAYS, slug="new-calm-fox")
    add_session(root, LIVE, NOW - 90 * DAYS, mtime=NOW - timedelta(minutes=20))
    write(root / "projects" / PROJECT / "agent-legacy1.jsonl",
          json.dumps({"sessionId": OLD, "timestamp": "2026-01-01T00:00:00Z"}) + "\n", NOW - 40 * DAYS)
    for age, name in ((50, "old"), (3, "new")):
        write(root / "shell-snapshots" / f"snapshot-zsh-{name}.sh", "x", NOW - age * DAYS)
        write(root / "paste-cache" / f"{name}hash.txt", "pasted", NOW - age * DAYS)
        write(root / "plans" / f"orphan-{name}.md", "# plan", NOW - age * DAYS)
    write_index(root, [old])
    return root


def test_dry_run_plans_every_category_and_changes_nothing(tree: Path) -> None:
    before = listing(tree)
    records, summary = run(tree)
    assert listing(tree) == before  # not even a lock file
    found = by_path(records)
    for rel in [*side_paths(OLD), "plans/old-brave-owl.md", f"projects/{PROJECT}/agent-legacy1.jsonl"]:
        assert found[rel]["action"] == "delete" and found[rel]["session"] == OLD, rel
        assert found[rel]["dry_run"] is True
    for rel in [*side_paths(RECENT), "plans/new-calm-fox.md"]:
        assert found[rel]["action"] == "keep" and found[rel]["reason"].startswith("recent"), rel
    for rel in side_paths(LIVE):
        assert found[rel]["action"] == "keep" and found[rel]["reason"].startswith("active"), rel
    assert found["shell-snapshots/snapshot-zsh-old.sh"]["action"] == "delete"
    assert found["paste-cache/oldhash.txt"]["action"] == "delete"
    assert found["plans/orphan-old.md"]["action"] == "delete"
    assert found["plans/orphan-old.md"]["session"] is None
    for rel in ("shell-snapshots/snapshot-zsh-new.sh", "paste-cache/newhash.txt", "plans/orphan-new.md"):
        assert found[rel]["action"] == "keep"
    index = found[f"projects/{PROJECT}/sessions-index.json"]
    assert index["action"] == "update" and index["removed_sessions"] == [OLD]
    assert summary.removed_sessions == 1 and summary.removed_items == 3
    assert summary.kept == {"active": 1, "recent": 4} and not summary.errors


def test_apply_removes_the_old_session_whole_and_nothing_else(tree: Path) -> None:
    records, summary = run(tree, apply=True)
    for rel in [*side_paths(OLD), "plans/old-brave-owl.md", f"projects/{PROJECT}/agent-legacy1.jsonl",
                "shell-snapshots/snapshot-zsh-old.sh", "paste-cache/oldhash.txt", "plans/orphan-old.md"]:
        assert not os.path.lexists(tree / rel), rel
    for rel in [*side_paths(RECENT), *side_paths(LIVE), "settings.json", "plans/new-calm-fox.md",
                "shell-snapshots/snapshot-zsh-new.sh", "paste-cache/newhash.txt"]:
        assert os.path.lexists(tree / rel), rel
    assert all(record["dry_run"] is False for record in records)
    freed = sum(r["bytes"] for r in records if r["action"] == "delete")
    assert freed == summary.bytes > 0
    assert not summary.errors
    # a second run finds nothing more to remove
    again, summary2 = run(tree, apply=True)
    assert not [r for r in again if r["action"] != "keep"] and summary2.bytes == 0


def test_age_is_the_later_of_timestamps_and_file_times(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    # timestamps say 2 days, files say 60 days: kept
    add_session(root, "s-inside", NOW - 2 * DAYS, mtime=NOW - 60 * DAYS)
    # timestamps say 60 days, but its file-history was written 3 days ago: kept, all of it
    add_session(root, "s-side", NOW - 60 * DAYS)
    touch(root / "file-history" / "s-side", NOW - 3 * DAYS)
    # both old: removed
    add_session(root, "s-old", NOW - 60 * DAYS)
    records, _ = run(root)
    found = by_path(records)
    assert found[f"projects/{PROJECT}/s-inside.jsonl"]["action"] == "keep"
    assert found[f"projects/{PROJECT}/s-inside.jsonl"]["last_activity"] == "2026-02-27T12:00:00Z"
    assert {found[rel]["action"] for rel in side_paths("s-side")} == {"keep"}
    assert found[f"projects/{PROJECT}/s-side.jsonl"]["age_seconds"] == 3 * 86400
    assert {found[rel]["action"] for rel in side_paths("s-old")} == {"delete"}


def test_a_session_active_within_the_hour_survives_any_limit(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    add_session(root, "busy", NOW - 100 * DAYS)
    write(root / "debug" / "busy.txt", "still logging\n", NOW - timedelta(minutes=5))
    add_session(root, "idle", NOW - timedelta(hours=2))
    records, _ = run(root, apply=True, older=timedelta(0))
    assert (root / "projects" / PROJECT / "busy.jsonl").exists()
    assert not (root / "projects" / PROJECT / "idle.jsonl").exists()
    assert by_path(records)["debug/busy.txt"]["reason"].startswith("active")


def test_tool_results_referenced_by_a_kept_transcript_stay(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    old = add_session(root, "old", NOW - 40 * DAYS)
    write(old.folder / "tool-results" / "toolu_2.txt", "not referenced\n", NOW - 40 * DAYS)
    write(old.folder / "ctxtool-lines" / "abc.jsonl", "{}\n", NOW - 40 * DAYS)
    touch(old.folder, NOW - 40 * DAYS)
    pointer = f"Full output saved to: {old.folder}/tool-results/toolu_1.txt\n\nPreview"
    result = {"type": "tool_result", "tool_use_id": "t",
              "content": f"<persisted-output>{pointer}</persisted-output>"}
    add_session(root, "new", NOW - 1 * DAYS,
                extra=[{"type": "user", "message": {"role": "user", "content": [result]}}])
    records, summary = run(root, apply=True)
    assert (old.folder / "tool-results" / "toolu_1.txt").read_text() == "big output\n"
    assert (old.folder / "ctxtool-lines" / "abc.jsonl").exists()  # restore needs it beside the result
    assert not (old.folder / "tool-results" / "toolu_2.txt").exists()
    assert not (old.folder / "subagents").exists() and not old.transcript.exists()
    kept = by_path(records)[f"projects/{PROJECT}/old/tool-results/toolu_1.txt"]
    assert kept["action"] == "keep" and kept["referenced_by"] == ["new"] and kept["bytes"] == 11
    assert summary.referenced_files == 2


def test_references_count_from_a_session_kept_by_its_timestamps(tmp_path: Path) -> None:
    """The referencing session's files are 60 days old, its timestamps 2 days: it is read in
    full (not just scanned), kept, and its references protect."""
    root = claude_root(tmp_path)
    old = add_session(root, "old", NOW - 40 * DAYS)
    add_session(root, "new", NOW - 2 * DAYS, mtime=NOW - 60 * DAYS, extra=[
        {"type": "user", "content": f"{old.folder}/tool-results/toolu_1.txt"}])
    records, _ = run(root, apply=True)
    assert (old.folder / "tool-results" / "toolu_1.txt").exists() and not old.transcript.exists()
    assert by_path(records)[f"projects/{PROJECT}/new.jsonl"]["last_activity"] == "2026-02-27T12:00:00Z"


def test_a_plan_shared_by_two_sessions_goes_with_the_newest(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    add_session(root, "first", NOW - 90 * DAYS, slug="same-slug")
    add_session(root, "resumed", NOW - 5 * DAYS, slug="same-slug")
    records, _ = run(root, apply=True)
    assert (root / "plans" / "same-slug.md").exists()
    assert by_path(records)["plans/same-slug.md"]["session"] == "resumed"
    assert not (root / "projects" / PROJECT / "first.jsonl").exists()


def test_references_from_a_removed_transcript_protect_nothing(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    first = add_session(root, "first", NOW - 50 * DAYS)
    add_session(root, "second", NOW - 40 * DAYS, extra=[
        {"type": "user", "content": f"{first.folder}/tool-results/toolu_1.txt"}])
    run(root, apply=True)
    assert not first.folder.exists()


def test_references_protect_image_and_paste_cache(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    add_session(root, "old", NOW - 40 * DAYS)
    write(root / "paste-cache" / "feedbeef.txt", "pasted", NOW - 40 * DAYS)
    add_session(root, "new", NOW - DAYS, extra=[
        {"type": "user", "content": "[Image: source: ~/.claude/image-cache/old/1.png]"},
        {"display": "x", "pastedContents": {"1": {"id": 1, "contentHash": "feedbeef"}}}])
    records, _ = run(root, apply=True)
    assert (root / "image-cache" / "old" / "1.png").exists()
    assert (root / "paste-cache" / "feedbeef.txt").exists()
    assert not (root / "file-history" / "old").exists()
    assert by_path(records)["paste-cache/feedbeef.txt"]["referenced_by"] == ["new"]


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    outside = tmp_path / "outside"
    write(outside / "precious.txt", "keep me", NOW - 100 * DAYS)
    write(outside / "debug" / "other.txt", "keep me too", NOW - 100 * DAYS)
    old = add_session(root, "old", NOW - 40 * DAYS)
    (old.folder / "tool-results" / "escape").symlink_to(outside)
    (root / "file-history" / "old" / "link.txt").symlink_to(outside / "precious.txt")
    touch(old.folder, NOW - 40 * DAYS)
    touch(root / "file-history" / "old", NOW - 40 * DAYS)
    # a linked session transcript: its session stays whole
    linked = add_session(root, "linked", NOW - 40 * DAYS)
    linked.transcript.unlink()
    linked.transcript.symlink_to(outside / "precious.txt")
    # a linked category folder is not entered
    os.symlink(outside / "debug", root / "debug-tmp")
    shutil.rmtree(root / "debug")
    (root / "debug-tmp").rename(root / "debug")
    before = listing(outside)
    records, summary = run(root, apply=True)
    assert listing(outside) == before
    assert not old.folder.exists() and not (root / "file-history" / "old").exists()
    found = by_path(records)
    assert found[f"projects/{PROJECT}/linked.jsonl"]["kind"] == "transcript"
    assert found[f"projects/{PROJECT}/linked.jsonl"]["action"] == "keep"
    assert found[f"projects/{PROJECT}/linked"]["reason"].startswith("has a symlink")
    assert linked.folder.exists() and (root / "file-history" / "linked").exists()
    assert found["debug"]["kind"] == "symlink" and found["debug"]["action"] == "keep"
    assert not summary.errors


def test_sessions_index_rewritten_atomically_without_removed_sessions(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    old = add_session(root, "old", NOW - 40 * DAYS)
    new = add_session(root, "new", NOW - DAYS)
    index = write_index(root, [old, new])
    data = json.loads(index.read_text())
    data["entries"].append({"fullPath": str(old.transcript), "summary": "no sessionId here"})
    data["futureField"] = {"kept": True}
    index.write_text(json.dumps(data, indent=2) + "\n")
    inode = index.stat().st_ino
    records, summary = run(root, apply=True)
    after = json.loads(index.read_text())
    assert [entry["sessionId"] for entry in after["entries"]] == ["new"]
    assert after["futureField"] == {"kept": True} and after["version"] == 1
    assert index.read_text().endswith("}\n") and '\n  "entries": [' in index.read_text()
    assert index.stat().st_ino != inode  # replaced by rename, never rewritten in place
    assert not list(index.parent.glob(".sessions-index.json.*"))
    record = by_path(records)[f"projects/{PROJECT}/sessions-index.json"]
    assert record["removed_sessions"] == ["old"] and "dropped 2 entries" in record["reason"]
    assert summary.indexes == 1


def test_a_broken_index_is_reported_and_the_sweep_goes_on(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    add_session(root, "old", NOW - 40 * DAYS)
    index = root / "projects" / PROJECT / "sessions-index.json"
    index.write_text('{"version": 1, "entries": [')
    records, summary = run(root, apply=True)
    assert not (root / "projects" / PROJECT / "old.jsonl").exists()
    assert index.read_text() == '{"version": 1, "entries": ['
    record = by_path(records)[f"projects/{PROJECT}/sessions-index.json"]
    assert record["action"] == "keep" and record["error"].startswith("cannot read")
    assert len(summary.errors) == 1


def test_store_folders_go_with_their_session(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    store = tmp_path / "ctxtool-store"
    add_session(root, "old", NOW - 40 * DAYS)
    write(store / "old" / "tool-results" / "toolu_9.txt", "stored", NOW - 10 * DAYS)
    write(store / "gone" / "tool-results" / "toolu_8.txt", "stored", NOW - 40 * DAYS)
    write(store / "default" / "tool-results" / "toolu_7.txt", "stored", NOW - 2 * DAYS)
    for name, age in (("old", 10), ("gone", 40), ("default", 2)):
        touch(store / name, NOW - age * DAYS)
    records, _ = run(root, store=store, apply=True, archive=tmp_path / "archive")
    found = by_path(records)
    # the store folder was touched 10 days ago, so the whole "old" session is still recent
    assert found["old"]["action"] == "keep" and found["old"]["session"] == "old"
    assert (root / "projects" / PROJECT / "old.jsonl").exists()
    assert found["gone"]["action"] == "archive" and not (store / "gone").exists()
    assert found["gone"]["archive"].endswith("gone.store.tar.gz")
    assert found["gone"]["restore"] == f"tar -xzf {found['gone']['archive']} -C {os.path.realpath(store)}"
    assert found["default"]["action"] == "keep" and found["default"]["session"] is None


def test_included_categories_only(tree: Path) -> None:
    records, _ = run(tree, apply=True, include=("debug", "shell-snapshots"))
    assert not (tree / "debug" / f"{OLD}.txt").exists()
    assert not (tree / "shell-snapshots" / "snapshot-zsh-old.sh").exists()
    assert (tree / "projects" / PROJECT / f"{OLD}.jsonl").exists()
    assert (tree / "file-history" / OLD).exists() and (tree / "paste-cache" / "oldhash.txt").exists()
    assert {record["category"] for record in records} == {"debug", "shell-snapshots"}
    assert "sessions-index" not in {record["kind"] for record in records}


def test_folders_that_are_not_ours_are_never_touched(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    for rel in (f"projects/{PROJECT}/memory/MEMORY.md", "history.jsonl", "plugins/x/y.json",
                f"projects/{PROJECT}/notes.txt", "statsig/cache"):
        write(root / rel, "mine", NOW - 400 * DAYS)
    before = listing(root)
    records, _ = run(root, apply=True, older=timedelta(days=1))
    assert records == [] and listing(root) == before


def test_a_unit_changed_after_the_scan_is_kept(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    old = add_session(root, "old", NOW - 40 * DAYS)

    def resume_session(items: Iterable[Any], total: int, desc: str) -> Iterable[Any]:
        yield from items
        with old.transcript.open("a") as handle:  # the user resumes it while we plan
            handle.write('{"type":"user"}\n')

    records, summary = run(root, apply=True, progress=resume_session)
    assert old.transcript.exists() and (root / "file-history" / "old").exists()
    assert by_path(records)[f"projects/{PROJECT}/old.jsonl"]["reason"].startswith("changed since the scan")
    assert summary.kept == {"changed": 1} and not summary.errors


def test_a_transcript_swapped_for_a_symlink_before_reading_is_an_error(tmp_path: Path) -> None:
    root = claude_root(tmp_path)
    old = add_session(root, "old", NOW - 40 * DAYS)
    other = add_session(root, "other", NOW - 40 * DAYS)

    def swap(items: Iterable[Any], total: int, desc: str) -> Iterable[Any]:
        old.transcript.unlink()
        old.transcript.symlink_to(tmp_path / "elsewhere.jsonl")
        yield from items

    records, summary = run(root, apply=True, progress=swap)
    record = by_path(records)[f"projects/{PROJECT}/old.jsonl"]
    assert record["action"] == "keep" and record["error"].startswith("cannot read")
    assert (root / "file-history" / "old").exists()  # the session stays whole
    assert not other.transcript.exists()  # and the sweep went on
    assert len(summary.errors) == 1


def test_archive_restores_byte_identical(tree: Path, tmp_path: Path) -> None:
    before = listing(tree)
    archive_dir = tmp_path / "archive"
    records, summary = run(tree, apply=True, archive=archive_dir)
    archived = {record["archive"] for record in records if record["action"] == "archive"}
    assert archived == set(summary.archives) and len(archived) == 4  # the session + 3 categories
    assert oct(os.stat(next(iter(archived))).st_mode & 0o777) == "0o600"
    session_archive = archive_dir / f"{OLD}.tar.gz"
    with tarfile.open(session_archive) as tar:
        names = tar.getnames()
    assert f"projects/{PROJECT}/{OLD}.jsonl" in names and all(not n.startswith("/") for n in names)
    for path in archived:
        if shutil.which("tar"):
            subprocess.run(["tar", "-xzf", path, "-C", str(tree)], check=True)
        else:  # pragma: no cover
            with tarfile.open(path) as tar:
                tar.extractall(tree, filter="data")
    restored = listing(tree)
    for rel, (content, _) in before.items():
        if rel != f"projects/{PROJECT}/sessions-index.json":
            assert restored[rel][0] == content, rel


def test_archive_names_never_overwrite(tree: Path, tmp_path: Path) -> None:
    archive_dir = tmp_path / "archive"
    archive_dir.mkdir()
    (archive_dir / f"{OLD}.tar.gz").write_bytes(b"an older archive")
    records, _ = run(tree, apply=True, archive=archive_dir)
    assert (archive_dir / f"{OLD}.tar.gz").read_bytes() == b"an older archive"
    record = by_path(records)[f"projects/{PROJECT}/{OLD}.jsonl"]
    assert record["archive"] == str(archive_dir / f"{OLD}.1.tar.gz")
    assert not list(archive_dir.glob(".*"))  # no temp files left


def test_archive_failure_keeps_everything_and_is_an_error(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "archive"
    blocker.write_text("a file where the archive folder should be")
    before = listing(tree)
    records, summary = run(tree, apply=True, archive=blocker)
    assert listing(tree) == {**before, **{k: v for k, v in listing(tree).items() if k.endswith(".lock")}}
    failed = [record for record in records if "error" in record]
    assert failed and all(record["action"] == "keep" for record in failed)
    assert all("archiving failed" in record["reason"] for record in failed)
    assert summary.errors
