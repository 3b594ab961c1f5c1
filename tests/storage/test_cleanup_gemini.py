"""``cleanup --agent gemini``: Gemini CLI's sessions under ``~/.gemini/tmp/<project>/`` go whole
(every chats file with the id, the subagents' folder and their artifacts, the log, the tool
outputs, the session's folder, its /restore points) by last activity, Gemini's own
``general.sessionRetention`` being the default age; nothing else of ``~/.gemini`` is touched
(ctxtool/storage/cleanup_gemini.py, storage/gemini_retention.py). The real client's side is
tests/e2e/test_gemini_disk.py."""

from __future__ import annotations

import json
import signal
import stat
import tarfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from ctxtool.formats.schemas import load_schema
from ctxtool.storage.durable import CRASH_ENV
from ctxtool.storage.gemini_retention import read_retention
from tests.cleanup_trees import NOW, NOW_ARG, iso, listing, touch, write
from tests.conftest import run_ctxtool
from tests.gemini_builders import FIXTURES

DAYS = timedelta(days=1)
OLD = "0a0a0a0a-0000-4000-8000-000000000001"
NEW = "0b0b0b0b-0000-4000-8000-000000000002"
KID = "0c0c0c0c-0000-4000-8000-000000000003"


def chat(gemini: Path, project: str, session: str, last: datetime, *,
         legacy: bool = False) -> Path:
    """The real resumed session, its id and every time set to ``session`` and ``last``."""
    lines = []
    for line in (FIXTURES / "resumed.jsonl").read_bytes().splitlines():
        entry = orjson.loads(line.replace(b"5e551011-0000-4000-8000-000000000001",
                                          session.encode()))
        for record in [entry, *(entry.get("$set", {}).get("messages") or [])]:
            for key in ("timestamp", "lastUpdated", "startTime"):
                if key in record:
                    record[key] = iso(last)
            if isinstance(record.get("$set"), dict) and "lastUpdated" in record["$set"]:
                record["$set"]["lastUpdated"] = iso(last)
        lines.append(orjson.dumps(entry))
    name = f"session-{last:%Y-%m-%dT%H-%M}-{session[:8]}.json{'' if legacy else 'l'}"
    data = b"\n".join(lines) + b"\n"
    return write(gemini / "tmp" / project / "chats" / name, data, last)


def gemini_folder(tmp_path: Path) -> Path:
    gemini = tmp_path / "home" / ".gemini"
    old = NOW - 40 * DAYS
    write(gemini / "settings.json", json.dumps({"security": {}}), NOW - 90 * DAYS)
    write(gemini / "projects.json", json.dumps({"projects": {"/w/proj": "proj"}}), old)
    write(gemini / "tmp" / "proj" / ".project_root", "/w/proj", old)
    write(gemini / "tmp" / "proj" / "logs.json", "[]", old)
    write(gemini / "tmp" / "proj" / "shell_history", "ls\n", old)
    chat(gemini, "proj", OLD, old)
    write(gemini / "tmp/proj/chats" / OLD / f"{KID}.jsonl", b"{}\n", old)  # a subagent
    write(gemini / f"tmp/proj/logs/session-{OLD}.jsonl", b"{}\n", old)
    write(gemini / f"tmp/proj/logs/session-{KID}.jsonl", b"{}\n", old)
    write(gemini / f"tmp/proj/tool-outputs/session-{OLD}/read_file_1_x.txt", "out", old)
    write(gemini / f"tmp/proj/tool-outputs/session-{KID}/grep_2_y.txt", "out", old)
    write(gemini / f"tmp/proj/{OLD}/plans/plan.md", "# plan", old)
    write(gemini / "tmp/proj/checkpoints/2026-01-01-notes.txt-write_file.json",
          json.dumps({"history": [], "messageId": f"{OLD}########2"}, indent=2), old)
    write(gemini / "tmp/proj/checkpoint-mytag.json", "{}", old)  # /chat save: not a session's
    write(gemini / "tmp/proj/chats/ctxtool-store/.ctxtool-store", "", old)
    write(gemini / f"tmp/proj/chats/ctxtool-store/{OLD}/ctxtool-vacuum/recipe-1.json", "{}", old)
    for folder in (f"chats/{OLD}", f"tool-outputs/session-{OLD}", f"tool-outputs/session-{KID}",
                   OLD, f"chats/ctxtool-store/{OLD}"):
        touch(gemini / "tmp" / "proj" / folder, old)  # folders dated as what they hold
    chat(gemini, "proj", NEW, NOW - 2 * DAYS)
    write(gemini / f"tmp/proj/logs/session-{NEW}.jsonl", b"{}\n", NOW - 2 * DAYS)
    return gemini


VALIDATOR = jsonschema.Draft202012Validator(load_schema("cleanup-record"))


def cleanup(gemini: Path, *args: str,
            env: dict[str, str] | None = None) -> tuple[int, list[dict[str, Any]], bytes]:
    proc = run_ctxtool("cleanup", "--agent", "gemini", "--now", NOW_ARG, "--json", *args,
                       env={"HOME": str(gemini.parent), "GEMINI_CLI_SYSTEM_SETTINGS_PATH":
                            str(gemini.parent / "no-system.json"), **(env or {})})
    records = [orjson.loads(line) for line in proc.stdout.splitlines()]
    for record in records:
        if "path" in record:
            VALIDATOR.validate(record)
    return proc.returncode, records, proc.stderr


OLD_PARTS = {f"tmp/proj/chats/session-{(NOW - 40 * DAYS):%Y-%m-%dT%H-%M}-0a0a0a0a.jsonl",
             f"tmp/proj/chats/{OLD}", f"tmp/proj/logs/session-{OLD}.jsonl",
             f"tmp/proj/logs/session-{KID}.jsonl", f"tmp/proj/tool-outputs/session-{OLD}",
             f"tmp/proj/tool-outputs/session-{KID}", f"tmp/proj/{OLD}",
             "tmp/proj/checkpoints/2026-01-01-notes.txt-write_file.json",
             f"tmp/proj/chats/ctxtool-store/{OLD}"}


def test_an_old_session_is_planned_whole_with_everything_the_client_deletes_with_it(
        tmp_path: Path) -> None:
    gemini = gemini_folder(tmp_path)
    before = listing(gemini)
    code, records, err = cleanup(gemini)
    assert code == 0, err
    assert listing(gemini) == before  # a plan changes nothing
    planned = {r["path"] for r in records if r.get("action") == "delete"}
    assert planned == OLD_PARTS
    assert all(r["session"] == OLD and r["agent"] == "gemini" and r["category"] ==
               "gemini-sessions" for r in records if r.get("action") == "delete")
    kept = {r["session"] for r in records if r.get("action") == "keep"}
    assert kept == {NEW}
    summary = records[-1]["summary"]
    assert summary["agents"]["gemini"]["sessions"] == 1 and summary["removed_sessions"] == 1
    assert "gemini: 30d+" in err.decode()


def test_apply_archives_removes_and_the_archive_puts_it_back(tmp_path: Path) -> None:
    gemini = gemini_folder(tmp_path)
    before = listing(gemini)
    archive = tmp_path / "archive"
    code, records, err = cleanup(gemini, "--apply", "--archive", str(archive))
    assert code == 0, err
    left = listing(gemini)
    assert not [p for p in left if OLD in p or KID in p or "0a0a0a0a" in p]
    assert {p for p in before if p not in left} >= {"tmp/proj/logs/session-" + OLD + ".jsonl"}
    for kept in ("settings.json", "projects.json", "tmp/proj/.project_root", "tmp/proj/logs.json",
                 "tmp/proj/shell_history", "tmp/proj/checkpoint-mytag.json",
                 "tmp/proj/chats/ctxtool-store/.ctxtool-store",
                 f"tmp/proj/logs/session-{NEW}.jsonl"):
        assert kept in left, kept
    tarball, = archive.glob(f"{OLD}*.tar.gz")
    restore = next(r["restore"] for r in records if r.get("restore"))
    assert restore == f"tar -xzf {tarball} -C {gemini}"
    with tarfile.open(tarball) as tar:
        tar.extractall(gemini, filter="tar")
    after = listing(gemini)
    assert after.keys() == before.keys()
    assert {p: v[0] for p, v in after.items()} == {p: v[0] for p, v in before.items()}


@pytest.mark.parametrize("settings, planned", [
    ({"maxAge": "7d"}, {OLD}),
    ({"maxAge": "1d"}, {OLD, NEW}),
    ({"maxAge": "60d"}, set()),
    ({"enabled": False}, set()),
    ({"maxAge": "12h"}, set()),  # shorter than minRetention: Gemini applies none
    ({"maxAge": "12h", "minRetention": "1h"}, {OLD, NEW}),
    ({"maxAge": "60d", "maxCount": 1}, {OLD}),
])
def test_general_session_retention_is_the_default_age(tmp_path: Path, settings: dict[str, Any],
                                                       planned: set[str]) -> None:
    gemini = gemini_folder(tmp_path)
    text = "// user settings\n" + json.dumps({"general": {"sessionRetention": settings}})
    write(gemini / "settings.json", text, NOW - 90 * DAYS)
    code, records, err = cleanup(gemini)
    assert code == 0, err
    assert {r["session"] for r in records if r.get("action") == "delete"} == planned
    reasons = {r["reason"] for r in records if r.get("session") in (OLD, NEW)}
    assert all("general.sessionRetention" in reason for reason in reasons), reasons
    code, records, err = cleanup(gemini, "--older-than", "30d")
    assert {r["session"] for r in records if r.get("action") == "delete"} == {OLD}


def test_retention_read_as_the_client_merges_it(tmp_path: Path) -> None:
    folder = tmp_path / ".gemini"
    system = tmp_path / "etc" / "settings.json"
    env = {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(system), "HOME": str(tmp_path)}
    assert read_retention(env).older_than == 30 * DAYS  # the schema's default
    write(folder / "settings.json", json.dumps({"general": {"sessionRetention": {
        "maxAge": "2w", "maxCount": 5}}}), NOW)
    rule = read_retention(env)
    assert (rule.older_than, rule.keep_newest, rule.problem) == (14 * DAYS, 5, None)
    write(system, json.dumps({"general": {"sessionRetention": {"maxAge": "3m"}}}), NOW)
    assert read_retention(env).older_than == 90 * DAYS  # system settings win
    write(system, json.dumps({"general": {"sessionRetention": {"maxCount": 0}}}), NOW)
    rule = read_retention(env)
    assert rule.older_than is None and "maxCount 0" in (rule.problem or "")


OTHER = "0d0d0d0d-0000-4000-8000-000000000004"


def two_projects(tmp_path: Path, own: dict[str, Any] | str) -> tuple[Path, Path]:
    """Project proj (its folder real, with ``own`` as its .gemini/settings.json) and project
    other, each with a session 10 days old and one 2 days old."""
    gemini = gemini_folder(tmp_path)
    folder = tmp_path / "w" / "proj"
    write(folder / ".gemini" / "settings.json",
          own if isinstance(own, str) else json.dumps({"general": {"sessionRetention": own}}),
          NOW - 90 * DAYS)
    write(gemini / "tmp" / "proj" / ".project_root", str(folder), NOW - 90 * DAYS)
    write(gemini / "tmp" / "other" / ".project_root", str(tmp_path / "w" / "other"), NOW)
    chat(gemini, "proj", KID, NOW - 10 * DAYS)
    chat(gemini, "other", OTHER, NOW - 10 * DAYS)
    chat(gemini, "other", "0e0e0e0e-0000-4000-8000-000000000005", NOW - 2 * DAYS)
    return gemini, folder


def deleted(records: list[dict[str, Any]]) -> set[str]:
    return {r["session"] for r in records if r.get("action") == "delete"}


TRUSTED = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


def test_a_projects_own_retention_decides_for_its_sessions(tmp_path: Path) -> None:
    gemini, folder = two_projects(tmp_path, {"maxAge": "7d"})
    code, records, err = cleanup(gemini, env=TRUSTED)
    assert code == 0, err
    assert deleted(records) == {OLD, KID}  # proj: 7d; other: the user's 30d
    own = f"general.sessionRetention in {folder}/.gemini/settings.json"
    assert own in next(r["reason"] for r in records if r.get("session") == KID)
    assert "(gemini: 30d+; tmp/proj: 7d+)" in err.decode()
    code, records, err = cleanup(gemini, "--older-than", "5d", env=TRUSTED)
    assert deleted(records) == {OLD, KID, OTHER}  # --older-than: every project alike


def test_a_projects_own_count_counts_its_sessions_only(tmp_path: Path) -> None:
    gemini, _ = two_projects(tmp_path, {"maxAge": "60d", "maxCount": 1})
    code, records, err = cleanup(gemini, env=TRUSTED)
    assert code == 0, err
    assert deleted(records) == {OLD, KID}  # proj keeps its newest (NEW); 60d for OLD, 30d else
    gemini, _ = two_projects(tmp_path / "merged", {"maxCount": 1})
    code, records, err = cleanup(gemini, env=TRUSTED)
    assert deleted(records) == {OLD, KID}  # merged key by key: the user's maxAge 30d stays


def test_an_untrusted_projects_own_settings_are_not_read(tmp_path: Path) -> None:
    gemini, folder = two_projects(tmp_path, {"maxAge": "7d"})
    code, records, err = cleanup(gemini)
    assert code == 0, err
    assert deleted(records) == {OLD}  # Gemini CLI does not read an untrusted folder's file
    write(gemini / "trustedFolders.json", json.dumps({str(folder): "TRUST_FOLDER"}), NOW)
    assert deleted(cleanup(gemini)[1]) == {OLD, KID}
    write(gemini / "trustedFolders.json", json.dumps({str(folder): "DO_NOT_TRUST"}), NOW)
    assert deleted(cleanup(gemini)[1]) == {OLD}
    elsewhere = tmp_path / "trusted.json"
    write(elsewhere, json.dumps({str(folder / "x"): "TRUST_PARENT"}), NOW)
    assert deleted(cleanup(gemini, env={"GEMINI_CLI_TRUSTED_FOLDERS_PATH": str(elsewhere)})[1]) \
        == {OLD, KID}


def test_system_settings_win_over_a_projects_own(tmp_path: Path) -> None:
    gemini, _ = two_projects(tmp_path, {"maxAge": "7d"})
    system = gemini.parent / "no-system.json"
    write(system, json.dumps({"general": {"sessionRetention": {"maxAge": "60d"}}}), NOW)
    code, records, err = cleanup(gemini, env=TRUSTED)
    assert code == 0, err
    assert deleted(records) == set()


def test_a_projects_bad_retention_keeps_its_sessions_and_says_so(tmp_path: Path) -> None:
    gemini, folder = two_projects(tmp_path, {"maxAge": "12h"})
    code, records, err = cleanup(gemini, env=TRUSTED)
    assert code == 0, err
    assert deleted(records) == set()  # Gemini cleans none of that project's sessions then
    assert f"{folder}/.gemini/settings.json: maxAge 12h is shorter than minRetention 1d" \
        in err.decode()
    gemini, _ = two_projects(tmp_path / "unparsable", "{not json")
    assert deleted(cleanup(gemini, env=TRUSTED)[1]) == {OLD}  # a file it cannot read: skipped


def subagent_turn(moment: datetime) -> bytes:
    """A subagent's file: its metadata and one model message with its tokens."""
    return b"".join(orjson.dumps(line) + b"\n" for line in (
        {"sessionId": KID, "projectHash": "ab" * 32, "startTime": iso(moment),
         "lastUpdated": iso(moment), "kind": "subagent"},
        {"id": "m-1", "timestamp": iso(moment), "type": "gemini", "content": "secret words",
         "model": "gemini-3.8-flash", "tokens": {"input": 900, "output": 7, "cached": 0,
                                                 "thoughts": 0, "tool": 0, "total": 907}}))


def test_keep_usage_keeps_the_tokens_of_every_model_message_before_the_session_goes(
        tmp_path: Path) -> None:
    gemini = gemini_folder(tmp_path)
    write(gemini / "tmp/proj/chats" / OLD / f"{KID}.jsonl", subagent_turn(NOW - 40 * DAYS),
          NOW - 40 * DAYS)
    usage, archive = tmp_path / "usage", tmp_path / "archive"
    args = ("--apply", "--archive", str(archive), "--keep-usage", str(usage))
    code, records, err = cleanup(gemini, *args)
    assert code == 0, err
    kept = usage / "gemini" / f"{OLD}.jsonl"
    assert sorted(p.name for p in (usage / "gemini").iterdir()) == [kept.name]  # NEW stays
    lines = [orjson.loads(line) for line in kept.read_bytes().splitlines()]
    assert [(line["sessionId"], line["tokens"]["input"], line["tokens"]["output"])
            for line in lines] == [(OLD, 11624, 26), (OLD, 11781, 17), (OLD, 11901, 8),
                                   (OLD, 12022, 8), (KID, 900, 7)]
    assert {line.get("parentSessionId") for line in lines} == {None, OLD}
    assert {line["directory"] for line in lines} == {"/w/proj"}
    assert all(set(line) <= {"id", "timestamp", "type", "model", "tokens", "sessionId",
                             "projectHash", "directory", "parentSessionId"} for line in lines)
    assert b"secret words" not in kept.read_bytes()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert "usage of 1 sessions kept" in err.decode()
    tarball, = archive.glob(f"{OLD}*.tar.gz")
    with tarfile.open(tarball) as tar:  # brought back and cleaned again: nothing counted twice
        tar.extractall(gemini, filter="tar")
    code, records, err = cleanup(gemini, *args)
    assert code == 0, err
    assert len(kept.read_bytes().splitlines()) == 5


def test_keep_usage_reads_an_older_one_document_session(tmp_path: Path) -> None:
    gemini = gemini_folder(tmp_path)
    old = NOW - 40 * DAYS
    document = {"sessionId": OTHER, "projectHash": "ab" * 32, "startTime": iso(old),
                "lastUpdated": iso(old), "messages": [orjson.loads(line) for line in
                                                      subagent_turn(old).splitlines()[1:]]}
    write(gemini / "tmp/proj/chats" / f"session-{old:%Y-%m-%dT%H-%M}-0d0d0d0d.json",
          json.dumps(document, indent=2), old)
    code, _, err = cleanup(gemini, "--apply", "--keep-usage", str(tmp_path / "usage"))
    assert code == 0, err
    line, = (orjson.loads(x) for x in (tmp_path / "usage/gemini" / f"{OTHER}.jsonl")
             .read_bytes().splitlines())
    assert (line["sessionId"], line["tokens"]["total"], line["directory"]) == (
        OTHER, 907, "/w/proj")


def test_a_run_killed_after_the_chats_file_leaves_a_unit_the_next_run_takes(
        tmp_path: Path) -> None:
    gemini = gemini_folder(tmp_path)
    code, _, err = cleanup(gemini, "--apply", env={CRASH_ENV: "removed-gemini-chat"})
    assert code == -signal.SIGKILL, err
    left = listing(gemini)
    assert not [p for p in left if "chats/session-" in p and "0a0a0a0a" in p]  # it went first
    assert f"tmp/proj/logs/session-{OLD}.jsonl" in left
    code, records, err = cleanup(gemini, "--apply")
    assert code == 0, err
    assert not [p for p in listing(gemini) if OLD in p or KID in p]
    assert any(NEW in p for p in listing(gemini))


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    gemini = gemini_folder(tmp_path)
    outside = tmp_path / "outside"
    write(outside / "keep.txt", "mine", NOW - 90 * DAYS)
    (gemini / f"tmp/proj/tool-outputs/session-{OLD}").rename(tmp_path / "moved")
    (gemini / f"tmp/proj/tool-outputs/session-{OLD}").symlink_to(outside)
    code, records, err = cleanup(gemini, "--apply")
    assert code == 0, err
    assert (outside / "keep.txt").read_text() == "mine"
    assert {r["reason"].split(":")[0] for r in records if r.get("session") == OLD} <= {
        "has a symlink, not followed"}
