"""Gemini CLI sessions (tests/fixtures/gemini-cli-0.61.0, written by the real client) through
the real entry point: the commands that read them, byte for byte where they change nothing.
Every command handles them now; an agent's adapter may still name the commands that handle
its sessions, and one that does not refuses them (one line on stderr naming the file, the line
and the command; exit 3; nothing on stdout; the file untouched) rather than report nothing to
do or write lines the agent cannot load."""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from click.testing import CliRunner

from ctxtool import statusline
from ctxtool.cli import cli
from ctxtool.core.sizing.estimate import estimate
from ctxtool.core.sizing.status import StatusInput
from ctxtool.formats.detect import detect_format
from ctxtool.errors import ExitCode
from ctxtool.formats.gemini.adapter import GeminiAdapter
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.registry import adapter_for, register, unregister
from ctxtool.formats.schemas import load_schema
from ctxtool.statusline import fields_of, parse_line
from tests.conftest import FIXTURES, run_ctxtool
from tests.gemini_builders import dump, random_session

GEMINI = FIXTURES / "gemini-cli-0.61.0"
SESSIONS = sorted(GEMINI.glob("*.jsonl"))
# the transforms that read Gemini sessions, with options under which they change nothing
UNCHANGED = {"persist": ["--max-chars", "100000000"], "snip": ["--min-tokens", "100000000"],
             "microcompact": ["--keep", "1000"], "restore": [], "summarize": []}


def test_every_command_that_reads_a_transcript_handles_gemini() -> None:
    handled = adapter_for("gemini").handled_by
    assert handled is not None
    assert set(UNCHANGED) | {"estimate", "statusline", "validate", "convert", "filter-compacted",
                             "vacuum"} <= handled


def assert_refused(result, where: str, command: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == ExitCode.INVALID_INPUT, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"ctxtool: error: {where}: {command} does not handle "
                                    "Gemini CLI sessions yet")


class _VacuumNot(GeminiAdapter):
    """Gemini's adapter as it was before vacuum handled its sessions."""

    handled_by = frozenset(GeminiAdapter.handled_by or ()) - {"vacuum"}


@pytest.fixture
def vacuum_not() -> Iterator[None]:
    register(_VacuumNot())
    try:
        yield
    finally:
        unregister("gemini")


def test_a_command_not_handling_an_agent_yet_refuses(vacuum_not: None, tmp_path: Path,
                                                     runner: CliRunner) -> None:
    path = tmp_path / "session.jsonl"
    shutil.copy(GEMINI / "resumed.jsonl", path)
    result = runner.invoke(cli, ["vacuum", str(path)])
    assert_refused(result, f"{path}:1", "vacuum")
    assert path.read_bytes() == (GEMINI / "resumed.jsonl").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]
    forced = runner.invoke(cli, ["vacuum", "--format", "gemini"],
                           input=(GEMINI / "new.jsonl").read_bytes())
    assert_refused(forced, "<stdin>:1", "vacuum")


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
@pytest.mark.parametrize("command", sorted(UNCHANGED))
def test_a_transform_that_changes_nothing_gives_the_session_back_byte_for_byte(
        command: str, path: Path, tmp_path: Path) -> None:
    """`ctxtool persist < session | cmp - session`."""
    proc = run_ctxtool(command, *UNCHANGED[command], input=path.read_bytes(), cwd=tmp_path,
                       env={"CTXTOOL_STORE": str(tmp_path / "store")})
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == path.read_bytes()


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name)
def test_estimate_reads_each_session(path: Path) -> None:
    proc = run_ctxtool("estimate", "--json", str(path))
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    jsonschema.validate(report, load_schema("estimate-report"))
    assert report["format"] == "gemini" and report["method"] == "usage"
    assert report["thresholds"]["window"] == 1_048_576
    assert report["gemini"]["compresses_at"] == 524_288
    assert report["compact_boundaries"] == (path.name == "compressed.jsonl")


def test_the_timeline_marks_gemini_s_compression() -> None:
    proc = run_ctxtool("estimate", str(GEMINI / "compressed.jsonl"), "--timeline")
    assert proc.returncode == 0, proc.stderr.decode()
    assert "C compaction (1" in proc.stdout.decode()


def test_stdin_from_any_line_is_read() -> None:
    """A session piped from its third line on (no metadata line): its messages still count."""
    data = b"".join((GEMINI / "new.jsonl").read_bytes().splitlines(keepends=True)[2:])
    proc = run_ctxtool("estimate", "--json", input=data)
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["anchor"]["prompt_tokens"] == 11_781


def test_statusline_reads_a_gemini_session() -> None:
    proc = run_ctxtool("statusline", "--color", "never", "--format",
                       "{model} {context_tokens} {window_tokens} {compact_at_tokens}",
                       str(GEMINI / "resumed.jsonl"))
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b"gemini-3.8-flash 12030 1048576 524288\n"


def with_calls(lines: list[bytes], seed: int) -> list[bytes]:
    """``lines`` (tests/gemini_builders.random_session) with ``tokens`` on some model records,
    in lines and in checkpoints: calls that anchor the figure."""
    rng = random.Random(seed)

    def called(record: Any) -> Any:
        if isinstance(record, dict) and record.get("type") == "gemini" and rng.random() < 0.5:
            return {**record, "tokens": {"input": rng.randint(1, 9_000), "output": 7},
                    "model": rng.choice(["gemini-3.8-flash", "gemma-4-31b-it"])}
        return record

    out = []
    for line in lines:
        entry = json.loads(line) if line.strip() else None
        if isinstance(entry, dict) and isinstance(entry.get("$set"), dict) \
                and isinstance(entry["$set"].get("messages"), list):
            entry["$set"]["messages"] = [called(r) for r in entry["$set"]["messages"]]
            line = dump(entry)
        elif entry is not None:
            line = dump(called(entry))
        out.append(line)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_statusline_gives_estimate_s_figure_from_the_last_checkpoint(tmp_path: Path,
                                                                     seed: int) -> None:
    """The statusline reads a Gemini session from its first line and its last checkpoint on
    (a ``$set`` of the message list replaces every message before it): the figure is the one
    ``estimate`` gives reading the whole file, whatever rewinds, rewrites and checkpoints the
    log holds."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(with_calls(random_session(seed, records=60), seed)))
    with open(path, "rb") as handle:
        fmt, entries = detect_format(iter_entries(handle, str(path), on_invalid="skip"))
        whole = estimate(entries, fmt=fmt, env=os.environ)
    fields = fields_of(StatusInput(transcript_path=str(path)))
    assert (fields["context_tokens"], fields["method"], fields["compact_at_tokens"],
            fields["window_tokens"], fields["model_id"]) == (
        whole.context_tokens, whole.method, whole.compact_at, whole.limits.window,
        whole.model or "-")


def test_statusline_parses_nothing_before_the_last_checkpoint(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             ) -> None:
    lines = (GEMINI / "compressed.jsonl").read_bytes().splitlines(keepends=True)
    checkpoint = max(i for i, line in enumerate(lines) if line.startswith(b'{"$set":{"messages"'))
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines))
    parsed: list[bytes] = []

    def parse(line: bytes) -> dict[str, Any] | None:
        parsed.append(line)
        return parse_line(line)

    monkeypatch.setattr(statusline, "parse_line", parse)
    assert fields_of(StatusInput(transcript_path=str(path)))["context_tokens"] == 11_897
    assert set(parsed) <= {lines[0], *lines[checkpoint:]}
    # the control: with no call after the checkpoint the figure rests on the whole file
    parsed.clear()
    path.write_bytes(b"".join(lines[:checkpoint + 1]))
    fields_of(StatusInput(transcript_path=str(path)))
    assert set(lines[1:checkpoint]) <= set(parsed)


DOCUMENT = {"sessionId": "s1", "projectHash": "ab12", "startTime": "2026-03-01T10:00:00Z",
            "lastUpdated": "2026-03-01T10:05:00Z",
            "messages": [{"id": "m1", "timestamp": "2026-03-01T10:00:00Z", "type": "user",
                          "content": [{"text": "hi " * 400}]}]}


def test_an_older_one_document_session_on_one_line_is_read() -> None:
    """Its messages are added as Gemini adds a metadata line's (no reply: no anchor)."""
    proc = run_ctxtool("estimate", "--json", input=json.dumps(DOCUMENT).encode())
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(proc.stdout)
    assert report["method"] == "heuristic" and report["breakdown"]["user_text"] > 150


def indented_session(tmp_path: Path, output: str = "x") -> Path:
    """resumed.jsonl as an older client wrote a session: its conversation in one document,
    indented; the read_file response is ``output``."""
    from ctxtool.formats.gemini.records import replay

    conversation = replay(json.loads(line) for line in (GEMINI / "resumed.jsonl").open("rb"))
    text = json.dumps({**conversation.metadata, "messages": conversation.records()})
    text = text.replace(json.dumps(NOTES)[1:-1], json.dumps(output)[1:-1])
    path = tmp_path / "session-2026-11-27T16-22-5e551011.json"
    path.write_text(json.dumps(json.loads(text), indent=2))
    return path


NOTES = "".join(f"line {n}: alpha beta gamma\n" for n in range(1, 11))


def test_an_older_one_document_session_indented_is_read_as_on_one_line(tmp_path: Path) -> None:
    """Sessions from before the JSONL form are one indented JSON document: read whole, as
    Gemini CLI reads them, the same as the document on one line."""
    indented = indented_session(tmp_path, NOTES)
    line = tmp_path / "one-line.json"
    line.write_bytes(json.dumps(json.loads(indented.read_bytes())).encode() + b"\n")
    for command in (["convert", "--to", "anthropic"], ["validate"],
                    ["statusline", "--color", "never"], ["estimate", "--json"]):
        runs = [run_ctxtool(*command, str(path)) for path in (indented, line)]
        assert [run.returncode for run in runs] == [0, 0], runs[0].stderr.decode()
        results = [(run.stdout + run.stderr).replace(path.name.encode(), b"F")
                   for run, path in zip(runs, (indented, line))]
        assert results[0] == results[1], command
    report = json.loads(runs[0].stdout)
    assert report["format"] == "gemini" and report["anchor"]["prompt_tokens"] == 12_022
    same = run_ctxtool("persist", str(indented))  # nothing to move: the bytes as they were
    assert same.returncode == 0 and same.stdout == indented.read_bytes()


def test_a_transform_writes_the_document_on_one_line_and_restore_gives_it_back(
        tmp_path: Path) -> None:
    indented = indented_session(tmp_path, "".join(f"row {n}: alpha beta gamma delta\n"
                                                  for n in range(4000)))
    store = tmp_path / "store"
    persisted = run_ctxtool("persist", "--store", str(store), str(indented))
    assert persisted.returncode == 0, persisted.stderr.decode()
    assert persisted.stdout.count(b"\n") == 1 and b"<tool_output_masked>" in persisted.stdout
    assert len(persisted.stdout) < indented.stat().st_size // 10
    document = json.loads(persisted.stdout)  # one document still, as Gemini reads it whole
    assert document["sessionId"] == "5e551011-0000-4000-8000-000000000001"
    back = run_ctxtool("restore", "--store", str(store), input=persisted.stdout)
    assert back.returncode == 0 and back.stdout == indented.read_bytes()


def test_a_broken_document_names_the_line_where_it_breaks(tmp_path: Path) -> None:
    indented = indented_session(tmp_path)
    lines = indented.read_bytes().splitlines(keepends=True)
    indented.write_bytes(b"".join(lines[:40]))  # cut short: the file of a killed write
    proc = run_ctxtool("estimate", str(indented))
    assert proc.returncode == ExitCode.INVALID_INPUT and proc.stdout == b""
    assert proc.stderr.decode().startswith(
        f"ctxtool: error: {indented}:40: not JSONL, and not one JSON document either: ")
    other = tmp_path / "other.json"  # a document no agent writes: not JSONL, as before
    other.write_text(json.dumps({"sessionId": "s1", "messages": []}, indent=2))
    proc = run_ctxtool("estimate", str(other))
    assert proc.returncode == ExitCode.INVALID_INPUT
    assert f"{other}:1: not JSONL: this looks like a pretty-printed JSON document" \
        in proc.stderr.decode()


@pytest.mark.parametrize("target", ["anthropic", "openai"])
def test_convert_gives_the_messages_gemini_sends_each_result_once(target: str,
                                                                  tmp_path: Path) -> None:
    """resumed.jsonl: Gemini would send the read_file result three times; the messages hold it
    once, answering its call, and validate as the target's messages."""
    proc = run_ctxtool("convert", "--to", target, str(GEMINI / "resumed.jsonl"))
    assert proc.returncode == 0, proc.stderr.decode()
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [m["role"] for m in lines][:2] == ["user", "assistant"]
    assert lines[-1]["content"] == "gamma comes third."
    text = proc.stdout.decode()
    assert text.count("line 10: alpha beta gamma") == 1
    out = tmp_path / "messages.jsonl"
    out.write_bytes(proc.stdout)
    check = run_ctxtool("validate", "--format", target, str(out))
    assert (check.returncode, check.stdout) == (0, b""), check.stdout.decode()
