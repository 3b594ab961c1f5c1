"""OpenCode's JSON storage tree: reading a session, writing it back file by file."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

import orjson
import pytest

from ctxtool.errors import InputError, StoreError, UsageError
from ctxtool.formats.opencode.export import entries_from_export, loads_document
from ctxtool.storage.opencode_tree import (
    find_root, list_sessions, pick_session, read_session, write_session,
)
from tests.opencode_builders import FIXTURE, SESSION, user

SES = "ses_4a1b2c3d4ffeAbCdEfGhIjKlMn"
OTHER = "ses_4a1b2c3d5ffeOtherSession01"


def export_entries() -> list[dict]:
    data = (FIXTURE / "export.json").read_bytes()
    return entries_from_export(loads_document(data, "export.json"), "export.json")


def same_tree(left: Path, right: Path) -> bool:
    cmp = filecmp.dircmp(left, right)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    return all(same_tree(left / d, right / d) for d in cmp.common_dirs)


def test_reading_the_tree_gives_what_the_export_gives() -> None:
    assert read_session(FIXTURE / "storage", SES) == export_entries()


def test_other_session_and_parts_in_id_order() -> None:
    entries = read_session(FIXTURE / "storage", OTHER)
    assert entries[0]["session"]["projectID"] == "global"
    assert [p["text"] for p in entries[1]["parts"]] == ["hello"]
    parts = read_session(FIXTURE / "storage", SES)[2]["parts"]
    assert [p["id"] for p in parts] == sorted(p["id"] for p in parts)


def test_write_into_an_empty_folder_recreates_the_session_byte_for_byte(tmp_path: Path) -> None:
    report = write_session(export_entries(), tmp_path / "storage")
    assert report.session_id == SES and report.unchanged == 0 and report.left == []
    assert len(report.written) == 51
    original = FIXTURE / "storage"
    for written in report.written:
        relative = Path(written).relative_to(tmp_path / "storage")
        assert Path(written).read_bytes() == (original / relative).read_bytes(), relative


def test_writing_back_into_the_same_tree_changes_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "storage"
    shutil.copytree(FIXTURE / "storage", tree)
    report = write_session(read_session(tree, SES), tree)
    assert report.written == [] and report.unchanged == 51
    assert same_tree(tree, FIXTURE / "storage")


def test_only_changed_records_are_rewritten_and_missing_ones_are_left(tmp_path: Path) -> None:
    tree = tmp_path / "storage"
    shutil.copytree(FIXTURE / "storage", tree)
    entries = read_session(tree, SES)
    message = entries[2]
    parts = list(message["parts"])
    tool = next(i for i, p in enumerate(parts) if p["type"] == "tool")
    parts[tool] = {**parts[tool], "state": {**parts[tool]["state"], "time": {
        **parts[tool]["state"]["time"], "compacted": 5}}}
    entries[2] = {**message, "parts": parts}
    dropped = entries.pop(1)  # the first message is not in the new entries
    warnings: list[str] = []
    report = write_session(entries, tree, warn=warnings.append)
    assert [Path(p).name for p in report.written] == [parts[tool]["id"] + ".json"]
    saved = orjson.loads(Path(report.written[0]).read_bytes())
    assert saved["state"]["time"]["compacted"] == 5
    left = {Path(p).stem for p in report.left}
    assert dropped["info"]["id"] in left and {p["id"] for p in dropped["parts"]} <= left
    assert (tree / "message" / SES / f"{dropped['info']['id']}.json").exists()  # never deleted
    assert warnings == []


def test_without_a_session_line_the_session_file_is_not_written(tmp_path: Path) -> None:
    warnings: list[str] = []
    report = write_session([user(1), user(2)], tmp_path, source="x.jsonl", warn=warnings.append)
    assert report.session_id == SESSION
    assert not (tmp_path / "session").exists()
    assert (tmp_path / "message" / SESSION / "msg_001.json").exists()
    assert "no session line" in warnings[0]


@pytest.mark.parametrize("bad", ["../evil", "a/b", "", ".hidden", None])
def test_ids_that_cannot_be_file_names_are_refused(tmp_path: Path, bad: object) -> None:
    message = user(1)
    message["info"]["id"] = bad
    with pytest.raises(InputError, match="cannot be a file name"):
        write_session([{"session": {"id": "ses_ok"}}, message], tmp_path)
    assert not (tmp_path / "part").exists()


def test_messages_of_two_sessions_without_header_are_refused(tmp_path: Path) -> None:
    other = user(2)
    other["info"]["sessionID"] = "ses_other"
    with pytest.raises(InputError, match="2 sessions"):
        write_session([user(1), other], tmp_path)


def test_find_root_accepts_the_folder_its_parent_and_a_session_folder(tmp_path: Path) -> None:
    storage = FIXTURE / "storage"
    assert find_root(storage) == (storage, None)
    assert find_root(FIXTURE) == (storage, None)
    assert find_root(storage / "message" / SES) == (storage, SES)
    assert find_root(storage / "message") == (storage, None)
    with pytest.raises(InputError):
        find_root(storage / "part")
    with pytest.raises(InputError, match="not an OpenCode storage folder"):
        find_root(tmp_path)


def test_pick_session() -> None:
    storage = FIXTURE / "storage"
    assert list_sessions(storage) == [SES, OTHER]
    assert pick_session(storage, OTHER) == OTHER
    with pytest.raises(UsageError, match="2 sessions; pick one with --session"):
        pick_session(storage, None)
    with pytest.raises(InputError, match="no session ses_nope"):
        pick_session(storage, "ses_nope")


def test_a_broken_record_names_its_file(tmp_path: Path) -> None:
    tree = tmp_path / "storage"
    shutil.copytree(FIXTURE / "storage", tree)
    broken = next((tree / "part").rglob("*.json"))
    broken.write_bytes(b'{\n  "id": "prt_x",\n  oops\n}')
    with pytest.raises(InputError) as caught:
        for session in list_sessions(tree):
            read_session(tree, session)
    assert caught.value.source == str(broken) and caught.value.lineno == 3


def test_a_record_that_is_not_a_message_is_refused(tmp_path: Path) -> None:
    (tmp_path / "message" / "ses_a").mkdir(parents=True)
    (tmp_path / "message" / "ses_a" / "msg_1.json").write_bytes(b'{"id": "msg_1", "role": "robot"}')
    with pytest.raises(InputError, match="unknown role 'robot'"):
        read_session(tmp_path, "ses_a")


def test_an_unwritable_tree_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    with pytest.raises(StoreError):
        write_session(export_entries(), blocker)
