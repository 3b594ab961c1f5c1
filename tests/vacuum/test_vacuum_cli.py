"""``ctxtool vacuum`` as a transform and as a sweep, and ``restore`` undoing it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from ctxtool.formats.schemas import load_schema
from tests.conftest import run_ctxtool
from tests.vacuum.builders import SESSION, doubled_session, entry, write_session


def test_stdout_drops_the_second_copies_and_restore_gives_the_original(tmp_path: Path) -> None:
    data, twice = doubled_session()
    source = tmp_path / "s.jsonl"
    source.write_bytes(data)
    out = run_ctxtool("vacuum", str(source), "-o", str(tmp_path / "v.jsonl"))
    assert out.returncode == 0, out.stderr
    vacuumed = (tmp_path / "v.jsonl").read_bytes()
    assert len(vacuumed) == len(data) - twice
    assert vacuumed == b"".join(data.splitlines(keepends=True)[:10] + data.splitlines(
        keepends=True)[-1:])
    assert b"repeated entry: 5" in out.stderr
    back = run_ctxtool("restore", str(tmp_path / "v.jsonl"))
    assert back.returncode == 0, back.stderr
    assert back.stdout == data
    # the recipe sits in the session's folder of the store beside the input
    assert list((tmp_path / "ctxtool-store" / SESSION / "ctxtool-vacuum").glob("recipe-*.json"))


def test_in_place_keeps_lines_appended_after_it_for_restore(tmp_path: Path) -> None:
    data, _ = doubled_session()
    path = write_session(tmp_path / "cfg", data)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    done = run_ctxtool("vacuum", "--in-place", "--json", str(path), env=env)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["bytes_before"] == len(data) and records[-1]["record"] == "total"
    for record in records:
        jsonschema.Draft202012Validator(load_schema("vacuum-record")).validate(record)
    # the store is the session's own folder, beside the transcript (as persist's)
    assert list((path.parent / SESSION / "ctxtool-vacuum").glob("recipe-*.json"))
    with path.open("ab") as handle:  # the agent goes on writing
        handle.write(entry(99))
    back = run_ctxtool("restore", str(path), env=env)
    assert back.stdout == data + entry(99)


def test_nothing_to_take_out_leaves_the_file_alone(tmp_path: Path) -> None:
    path = write_session(tmp_path / "cfg", b"".join(entry(i) for i in range(4)))
    before = path.stat()
    done = run_ctxtool("vacuum", "--in-place", str(path))
    assert done.returncode == 0, done.stderr
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert b"nothing to take out" in done.stderr


def test_a_line_written_twice_but_not_byte_for_byte_stays(tmp_path: Path) -> None:
    first = entry(1)
    data = entry(0) + first + first.replace(b'"cwd"', b'"cwd" ', 1)
    source = tmp_path / "s.jsonl"
    source.write_bytes(data)
    out = run_ctxtool("vacuum", str(source))
    assert out.stdout == data


def test_the_sweep_plans_then_applies(tmp_path: Path) -> None:
    data, twice = doubled_session()
    path = write_session(tmp_path / "cfg", data)
    write_session(tmp_path / "cfg", entry(0), name="other")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "codex")}
    plan = run_ctxtool("vacuum", "--all", "--json", env=env)
    assert plan.returncode == 0, plan.stderr
    records = [json.loads(line) for line in plan.stdout.splitlines()]
    validator = jsonschema.Draft202012Validator(load_schema("vacuum-record"))
    for record in records:
        validator.validate(record)
    assert [r["record"] for r in records] == ["session", "total"]
    assert records[0]["path"] == str(path) and records[0]["bytes_saved"] == twice
    assert records[1]["sessions"] == 2 and records[1]["bytes_saved"] == twice
    assert path.read_bytes() == data  # a plan changes nothing
    rows = run_ctxtool("vacuum", "--all", env=env)
    assert rows.stdout == b""  # stdout: --json's records only
    assert rows.stderr.decode().splitlines() == [
        f"ctxtool: vacuum: {path}: 7.5 KB -> 5.1 KB (would take out repeated entry: 5)",
        "ctxtool: vacuum: 2 sessions, 8.0 KB -> 5.6 KB: 2.4 KB to reclaim"]
    done = run_ctxtool("vacuum", "--all", "--apply", env=env)
    assert done.returncode == 0, done.stderr
    assert len(path.read_bytes()) == len(data) - twice
    assert b"reclaimed" in done.stderr


def test_the_sweep_skips_live_sessions(tmp_path: Path) -> None:
    data, _ = doubled_session()
    path = write_session(tmp_path / "cfg", data, age=10)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "codex")}
    done = run_ctxtool("vacuum", "--all", "--apply", env=env)
    assert done.returncode == 0, done.stderr
    assert path.read_bytes() == data
    assert b"1 skipped (live)" in done.stderr


@pytest.mark.parametrize("args, message", [
    (("--apply", "x.jsonl"), b"--apply goes with --all"),
    (("--all", "x.jsonl"), b"give no FILE"),
    (("--json", "x.jsonl"), b"--json goes with --in-place or --all"),
    (("--all", "--agent", "anthropic"), b"--agent anthropic"),
    (("a.jsonl", "b.jsonl"), b"give one FILE"),
])
def test_usage_errors(tmp_path: Path, args: tuple[str, ...], message: bytes) -> None:
    done = run_ctxtool("vacuum", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and b"Traceback" not in done.stderr


def test_a_line_that_is_not_json_stops_it_unless_kept(tmp_path: Path) -> None:
    data, twice = doubled_session()
    source = tmp_path / "s.jsonl"
    source.write_bytes(b"{oops\n" + data)
    bad = run_ctxtool("vacuum", str(source))
    assert bad.returncode == 3 and bad.stdout == b""
    assert f"ctxtool: error: {source}:1: invalid JSON".encode() in bad.stderr
    kept = run_ctxtool("vacuum", "--on-invalid", "keep", str(source))
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout.startswith(b"{oops\n") and len(kept.stdout) == len(data) + 6 - twice
    skip = run_ctxtool("vacuum", "--on-invalid", "skip", str(source))
    assert skip.returncode == 2 and b"never drops a line" in skip.stderr


def test_in_place_keeps_the_modification_time(tmp_path: Path) -> None:
    data, twice = doubled_session()
    path = write_session(tmp_path / "cfg", data)
    before = path.stat().st_mtime_ns
    done = run_ctxtool("vacuum", "--in-place", str(path))
    assert done.returncode == 0, done.stderr
    assert len(path.read_bytes()) == len(data) - twice
    assert path.stat().st_mtime_ns == before  # still listed, aged and judged live as before


def test_a_second_plan_reads_only_what_changed(tmp_path: Path) -> None:
    data, twice = doubled_session()
    path = write_session(tmp_path / "cfg", data)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg"), "CODEX_HOME": str(tmp_path / "codex"),
           "CTXTOOL_CACHE_DIR": str(tmp_path / "cache")}
    first = run_ctxtool("vacuum", "--all", "--json", env=env)
    assert (tmp_path / "cache" / "vacuum.json").is_file()
    # the same file (inode, size, time) with other bytes: only a cached plan still sees copies
    stat = path.stat()
    lines = data.splitlines(keepends=True)
    other = b"".join(lines[:10] + [line.replace(b"hello", b"HELLO") for line in lines[10:15]]
                     + lines[15:])
    with path.open("r+b") as handle:
        handle.write(other)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    again = run_ctxtool("vacuum", "--all", "--json", env=env)
    assert again.returncode == 0 and again.stdout == first.stdout
    off = run_ctxtool("vacuum", "--all", "--json", env={**env, "CTXTOOL_CACHE_DIR": "off"})
    assert json.loads(off.stdout.splitlines()[-1])["bytes_saved"] == 0  # read: no copies
    path.write_bytes(data)
    with path.open("ab") as handle:  # grown: read again
        handle.write(entry(50) + entry(0) + entry(51))
    grown = run_ctxtool("vacuum", "--all", "--json", env=env)
    saved = json.loads(grown.stdout.splitlines()[-1])["bytes_saved"]
    assert saved == twice + len(entry(0))


def test_stdin_of_a_claude_code_session_restores_from_its_folder(tmp_path: Path) -> None:
    data, _ = doubled_session()
    cfg = tmp_path / "cfg"
    session = write_session(cfg, data)
    project = cfg / "projects" / "-tmp-vacuum-project"
    assert session.parent == project
    env = {"CLAUDE_CONFIG_DIR": str(cfg), "CTXTOOL_STORE": ""}
    out = run_ctxtool("vacuum", "-", input=data, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert list((project / SESSION / "ctxtool-vacuum").glob("recipe-*.json"))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "v.jsonl").write_bytes(out.stdout)
    back = run_ctxtool("restore", str(tmp_path / "elsewhere" / "v.jsonl"), env=env, cwd=tmp_path)
    assert back.stdout == data, back.stderr


def test_vacuumed_twice_restore_twice_gives_the_first_original(tmp_path: Path) -> None:
    data, _ = doubled_session()
    path = write_session(tmp_path / "cfg", data)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    assert run_ctxtool("vacuum", "--in-place", str(path), env=env).returncode == 0
    more = entry(20) + entry(0) + entry(1) + entry(21)  # the agent goes on, and repeats again
    with path.open("ab") as handle:
        handle.write(more)
    appended = path.read_bytes()
    assert run_ctxtool("vacuum", "--in-place", "--force", str(path), env=env).returncode == 0
    assert len(path.read_bytes()) == len(appended) - len(entry(0) + entry(1))
    once = run_ctxtool("restore", str(path), "-o", str(tmp_path / "once.jsonl"), env=env)
    assert once.returncode == 0 and (tmp_path / "once.jsonl").read_bytes() == appended
    twice = run_ctxtool("restore", str(tmp_path / "once.jsonl"), env=env)
    assert twice.stdout == data + more
