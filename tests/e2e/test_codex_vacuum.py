"""The real Codex CLI reads a vacuumed rollout exactly as the original: ``ctxtool vacuum`` takes
out the history of compactions that a later compaction of the same turn replaces, and Codex's
next request is the same (ids aside) after ``exec resume``, after ``thread/fork`` through each
turn and after ``thread/revert`` (app-server) - the three ways it rebuilds a thread's history
from the file. ``ctxtool restore`` gives the original back byte for byte.

The session is written here by the real client against the fake Responses API with
``model_auto_compact_token_limit`` low, so it compacts before and during its turns (each turn
holds at least two compactions); each variant is placed in a fresh CODEX_HOME (Codex indexes a
rollout's byte offsets in its databases: tests/e2e/codex_cli.py ``place``). Module-scoped: one
client run per variant and way of reading.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.codex_cli import CodexCli
from tests.e2e.fake_responses import FakeResponses, call, say

COMPACT_AT = 9000  # tokens: the fake API counts characters / 4, so a long output compacts
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STARTED_AT = re.compile(r'(turn_started_at_unix_ms\\?":)\d+')


@dataclass
class Rollout:
    rel: Path  # inside CODEX_HOME
    session: str
    data: bytes
    turns: list[str]  # turn ids, in order


def entries(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


def turn_ids(data: bytes) -> list[str]:
    return [e["payload"]["turn_id"] for e in entries(data)
            if e["type"] == "event_msg" and e["payload"].get("type") == "task_started"]


def compactions_by_turn(data: bytes) -> list[list[int]]:
    """The line numbers of each turn's compactions."""
    turns: list[list[int]] = []
    for number, entry in enumerate(entries(data)):
        if entry["type"] == "event_msg" and entry["payload"].get("type") == "task_started":
            turns.append([])
        elif entry["type"] == "compacted" and turns:
            turns[-1].append(number)
    return turns


def two_turns(cx: CodexCli, api: FakeResponses) -> Rollout:
    """A session of two turns that compacts before and during each."""
    (cx.cwd / "big.txt").write_text("".join(f"line {n}: alpha beta gamma delta\n"
                                            for n in range(1, 600)))
    api.push(call("exec_command", {"cmd": "cat big.txt"}, text="Reading it."),
             call("exec_command", {"cmd": "seq 1 1500"}),
             call("exec_command", {"cmd": "seq 1 1501"}),
             say("Read and counted."))
    first = cx.ask("Read big.txt, then count twice.")
    assert first.returncode == 0, first.stderr
    api.push(call("exec_command", {"cmd": "seq 1 1600"}), say("Counted again."))
    second = cx.resume(first.thread_id, "Count once more.")
    assert second.returncode == 0, second.stderr
    path = cx.session_path(first.thread_id)
    data = path.read_bytes()
    assert api.compactions(), "the client never compacted"
    return Rollout(path.relative_to(cx.codex_home), first.thread_id, data, turn_ids(data))


COMPACTING = f"model_auto_compact_token_limit = {COMPACT_AT}\n"


@pytest.fixture(scope="module")
def rollout(codex_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Rollout:
    with FakeResponses() as api:
        return two_turns(CodexCli(codex_bin, tmp_path_factory.mktemp("codex-compacting"), api,
                                  COMPACTING), api)


@pytest.fixture(scope="module")
def vacuumed(rollout: Rollout, tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, Path]:
    """The rollout vacuumed by ctxtool, and the store it used."""
    where = tmp_path_factory.mktemp("codex-vacuum")
    source, out, store = where / rollout.rel.name, where / "vacuumed.jsonl", where / "store"
    source.write_bytes(rollout.data)
    proc = run_ctxtool("vacuum", str(source), "-o", str(out), "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    return out.read_bytes(), store


def comparable(body: dict[str, Any], root: Path) -> str:
    """A request with what differs from run to run put aside: ids, the run's folder, the time
    the turn started."""
    text = json.dumps(body, sort_keys=True).replace(str(root), "<root>")
    return _STARTED_AT.sub(r"\g<1>0", _UUID.sub("<id>", text))


Reader = Callable[[CodexCli, Rollout], dict[str, Any]]
READS: dict[str, Reader] = {
    "resume": lambda cx, r: cx.resume(r.session, "continue").first,
    "fork through turn 1": lambda cx, r: _server(cx, "fork", r.session, r.turns[0]),
    "fork through turn 2": lambda cx, r: _server(cx, "fork", r.session, r.turns[1]),
    "revert before turn 2": lambda cx, r: _server(cx, "revert", r.session, r.turns[1]),
}


def _server(cx: CodexCli, how: str, session: str, turn: str) -> dict[str, Any]:
    with cx.app_server() as server:
        if how == "fork":
            return server.fork_turn(session, turn, "continue")
        return server.revert_turn(session, turn, "continue")


@pytest.fixture(scope="module")
def sent(codex_bin: str, rollout: Rollout, vacuumed: tuple[bytes, Path],
         tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], str]:
    """``sent(variant, read)``: the first request Codex sends after reading that variant of the
    rollout that way, comparable (once per pair)."""
    variants = {"original": rollout.data, "vacuumed": vacuumed[0],
                "turn-end history changed": _changed_turn_end(rollout.data)}
    done: dict[tuple[str, str], str] = {}

    def get(variant: str, read: str) -> str:
        if (variant, read) not in done:
            root = tmp_path_factory.mktemp("codex-read")
            with FakeResponses() as api:
                cx = CodexCli(codex_bin, root, api)
                cx.place(variants[variant], rollout.rel)
                api.push(say("Again."))
                done[variant, read] = comparable(READS[read](cx, rollout), root)
        return done[variant, read]

    return get


def _changed_turn_end(data: bytes) -> bytes:
    """The rollout with a word changed in the history of the compaction that ends turn 1."""
    lines = data.splitlines(keepends=True)
    at = compactions_by_turn(data)[0][-1]
    entry = json.loads(lines[at])
    for item in entry["payload"]["replacement_history"]:
        for part in item.get("content") or []:
            if part.get("text", "").startswith("Read big.txt"):
                part["text"] = "Changed: " + part["text"]
    lines[at] = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    return b"".join(lines)


def test_the_session_compacts_more_than_once_in_a_turn(rollout: Rollout) -> None:
    turns = compactions_by_turn(rollout.data)
    assert len(turns) == 2 and all(len(found) >= 2 for found in turns), turns
    assert entries(rollout.data)[0]["payload"]["cli_version"] == "0.171.0"


def test_vacuum_takes_out_the_superseded_histories(rollout: Rollout,
                                                  vacuumed: tuple[bytes, Path]) -> None:
    data, _ = vacuumed
    before, after = entries(rollout.data), entries(data)
    assert len(after) == len(before)
    superseded = [n for found in compactions_by_turn(rollout.data) for n in found[:-1]]
    changed = [n for n, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == superseded
    history_bytes = sum(len(json.dumps(before[n]["payload"]["replacement_history"],
                                       ensure_ascii=False, separators=(",", ":")))
                        for n in superseded)
    assert len(rollout.data) - len(data) >= history_bytes > 0
    for n in superseded:
        assert after[n]["payload"]["replacement_history"] == []
        assert after[n]["payload"]["ctxtool_vacuumed"].startswith("sha256:")


@pytest.mark.parametrize("read", list(READS))
def test_codex_reads_the_vacuumed_rollout_as_the_original(sent: Callable[[str, str], str],
                                                          read: str) -> None:
    assert sent("vacuumed", read) == sent("original", read)


def test_a_fork_does_read_the_history_that_ends_a_turn(sent: Callable[[str, str], str]) -> None:
    """Why vacuum keeps each turn's last compaction: a fork through that turn rebuilds from it
    (and the comparison above would see a change)."""
    changed = sent("turn-end history changed", "fork through turn 1")
    assert changed != sent("original", "fork through turn 1")
    assert "Changed: Read big.txt" in changed


def test_restore_gives_back_the_original(rollout: Rollout, vacuumed: tuple[bytes, Path],
                                         tmp_path: Path) -> None:
    data, store = vacuumed
    (tmp_path / "v.jsonl").write_bytes(data)
    proc = run_ctxtool("restore", str(tmp_path / "v.jsonl"), "-o", str(tmp_path / "back.jsonl"),
                       "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "back.jsonl").read_bytes() == rollout.data
    assert Counter(p.suffix for p in store.rglob("*") if p.is_file())[".bin"] >= 1


def test_in_place_in_a_live_codex_home_forks_as_before(codex_bin: str, tmp_path: Path) -> None:
    """In the CODEX_HOME that wrote it, Codex has indexed the rollout's turns by byte offset
    (thread_history_1.sqlite); vacuum --in-place resets that index, so a fork of the vacuumed
    rollout is the original's fork (with the stale index it sent another history)."""
    with FakeResponses() as api:
        cx = CodexCli(codex_bin, tmp_path, api, COMPACTING)
        made = two_turns(cx, api)
        path = cx.codex_home / made.rel
        forks = []
        for step in ("original", "vacuumed"):
            if step == "vacuumed":
                proc = run_ctxtool("vacuum", "--in-place", "--force", str(path),
                                   "--store", str(tmp_path / "store"))
                assert proc.returncode == 0, proc.stderr
                assert len(path.read_bytes()) < len(made.data)
            api.push(say("Forked."))
            forks.append(comparable(_server(cx, "fork", made.session, made.turns[0]), tmp_path))
    assert forks[1] == forks[0]
