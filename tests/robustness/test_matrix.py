"""The robustness matrix: every command against every kind of bad input, with what each must do
written down in one table (EXPECT).

Each cell is either an error - exactly one ``ctxtool: error: FILE:LINE: problem`` line on stderr
(``FILE`` alone when the problem is the whole file, no location where none exists) and the
documented exit code - or a graceful result (exit 0, at most a warning naming FILE:LINE). Never a
traceback, and stdout is always valid JSONL (or empty): transcripts for the transforms, the
report (``--json``) for estimate and validate, plan records for cleanup. "same" means stdout is
the input, byte for byte.

The cases (CASES, plus DIRECTORY, ENOTDIR, STDIN_EMPTY and the 100 MB line) and how each
reaches the command:

* invalid JSON on line 2; a truncated last line (no newline: a session killed mid-write), also
  after complete entries summarize appends to (what a transform appends goes before that
  line, see also tests/cli/test_partial_line.py); two
  objects glued on one line; invalid UTF-8; a BOM; CRLF line ends; only blank lines; a 0-byte
  file; empty stdin; a 100 MB line (real entry point only, once per command);
* JSON nested 10000 deep (past orjson's 1024 limit) and 1000 deep (which orjson reads but
  Python's recursion limit stops: walked or written back, it is reported as nested too deeply,
  naming the line when the line is what was being worked on; passed through, it is fine);
* a lone surrogate escape; a pretty-printed JSON document; a CSV file; binary junk; lines that
  are JSON but not objects; objects of no known transcript format;
* entries missing required fields (a user entry without message, an assistant without content,
  a tool_result without tool_use_id); an unpaired tool_use and tool_result; integers past 64 bits;
* a line longer than the maximum line length (``$CTXTOOL_MAX_LINE_BYTES``, 1 MiB in this
  matrix), and ``/dev/zero`` (no newline ever: the limit stops the read, memory stays bounded);
* a directory given as the input (for cleanup, whose input is a folder: a regular file as
  --root), and an input that cannot be opened: a path through a regular file
  (``file.txt/x.jsonl``, ENOTDIR). Permission bits cannot make a file unreadable for root, and a
  FIFO without a writer would block the open, so ENOTDIR is the failing read used here.

cleanup takes the bad content as a session transcript under ``--root``: it must still plan.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from ctxtool.formats.jsonl import BOM, dumps_json, loads_json
from tests.conftest import run_ctxtool
from tests.robustness.strategies import (cc_entry, compact, jsonl, tool_result_message,
                                         tool_use_message)

NOW = "2026-01-02T00:00:00Z"
SESSION = "5f0c4c4e-0000-4000-8000-000000000001"
BIG = 123456789012345678901234567890  # past 64 bits: orjson alone reads 1.2345678901234568e+29

# --- the inputs ----------------------------------------------------------------------------------

U1 = compact(cc_entry("user", "u1", None, {"role": "user", "content": "read the file"}))
A1 = compact(cc_entry("assistant", "a1", "u1", tool_use_message(
    "msg_1", "toolu_1", "Read", {"file_path": "/w/app/x.py"}), second=1))
R1 = compact(cc_entry("user", "u2", "a1", tool_result_message("toolu_1", "print(1)\n" * 400),
                      second=2))
A2 = compact(cc_entry("assistant", "a2", "u2", {"id": "msg_2", "role": "assistant", "content": [
    {"type": "text", "text": "done"}]}, second=3))
GOOD = U1 + A1 + R1 + A2
A1_DEEP = A1.replace(b'"input":{', b'"input":{"deep":' + b"[" * 1000 + b"]" * 1000 + b",", 1)

CASES: dict[str, bytes] = {
    "invalid_json": U1 + b'{"type": "user", oops}\n' + A2,
    "truncated_last_line": U1 + A1 + R1[:60],
    "truncated_after_clearing": GOOD + A2.replace(b'"a2"', b'"a3"')[:70],
    "two_objects_on_a_line": U1.rstrip(b"\n") + A1 + R1 + A2,
    "invalid_utf8": U1 + R1.replace(b"print(1)", b"pr\xffnt(1)", 1),
    "bom": BOM + GOOD,
    "crlf": GOOD.replace(b"\n", b"\r\n"),
    "blank_lines_only": b"\n\n\n",
    "zero_bytes": b"",
    "nested_10000": U1 + b'{"type":"user","x":' + b"[" * 10000 + b"]" * 10000 + b"}\n",
    "nested_1000": U1 + A1_DEEP + R1 + A2,
    "lone_surrogate": U1 + R1.replace(b"print(1)", b"pr\\ud800nt(1)", 1),
    "pretty_json_document": json.dumps({"messages": [{"role": "user", "content": "hi"}]},
                                       indent=2).encode(),
    "csv": b"name,value\nalpha,1\nbeta,2\n",
    "binary_junk": bytes(range(256)) * 8,
    "not_objects": U1 + b"[1,2,3]\n",
    "unknown_format": b'{"a":1}\n{"b":2}\n',
    "missing_fields": U1 + jsonl([
        cc_entry("user", "u2", "u1"),  # no message
        cc_entry("assistant", "a2", "u2", {"role": "assistant"}),  # no content
        cc_entry("user", "u3", "a2", {"role": "user", "content": [  # no tool_use_id
            {"type": "tool_result", "content": "x"}]})]),
    "unpaired_tools": U1 + A1 + compact(cc_entry("user", "u2", "a1", tool_result_message(
        "toolu_9", "orphan"))),
    "huge_integers": U1 + A1.replace(b'"usage":{', f'"big":{BIG},"usage":{{'.encode(), 1) + R1,
    "line_too_long": U1 + R1.replace(b"print(1)", b"x" * (1 << 20), 1) + A2,
}
MAX_LINE = "1M"  # $CTXTOOL_MAX_LINE_BYTES for the matrix
DIRECTORY, ENOTDIR, STDIN_EMPTY = "directory_as_input", "unreadable_enotdir", "empty_stdin"
DEV_ZERO = "dev_zero"
HUGE = "line_of_100_mb"

# how each command is run; {store} is a folder under the test's tmp_path
COMMANDS: dict[str, list[str]] = {
    "estimate": ["estimate", "--json"],
    "validate": ["validate", "--json"],
    "persist": ["persist", "--store", "{store}"],
    "restore": ["restore"],
    "snip": ["snip", "--store", "{store}"],
    "microcompact": ["microcompact", "--force", "--keep", "0", "--store", "{store}"],
    "summarize": ["summarize", "--llm", "offline", "--store", "{store}", "--now", NOW],
    "filter-compacted": ["filter-compacted"],
    "convert": ["convert", "--to", "anthropic"],
    "cleanup": ["cleanup", "--now", NOW, "--root", "{root}"],
    "vacuum": ["vacuum", "--store", "{store}"],
}
PASSTHROUGH = ("persist", "restore", "snip", "microcompact", "filter-compacted", "vacuum")

# --- what each must do ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    code: int = 0
    level: str | None = None  # "error": the one error line, "warning": a warning line, or None
    at: str = ""  # the location the message starts with: "{file}:2", "{file}", or "" (none)
    text: str = ""  # a fragment of that message
    # "same" (the input, byte for byte), "empty", "jsonl", or "prefix": the input byte for byte
    # (bad lines kept as they were), then valid JSONL (what summarize appends); "partial-last":
    # like "prefix" for the complete lines, then the truncated last line, unchanged, at the end
    stdout: str = "jsonl"
    reported: int | None = None  # validate: a problem reported on stdout for this line


def error(at: str, text: str, code: int = ExitCode.INVALID_INPUT) -> Expect:
    return Expect(int(code), "error", at, text)


def warning(at: str, text: str, stdout: str = "same") -> Expect:
    return Expect(0, "warning", at, text, stdout)


OK, SAME = Expect(), Expect(stdout="same")
NESTED = error("{file}:2", "input nested too deeply to process")
EMPTY = error("{file}", "empty input: no transcript lines to estimate")  # not "24,000 tokens"


def table(default: Expect, **per_command: Expect) -> dict[str, Expect]:
    """One row: ``default`` for every command but those named (``filter_compacted`` etc.)."""
    row = {name: default for name in COMMANDS}
    row.update({name.replace("_", "-"): value for name, value in per_command.items()})
    return row


def graceful(**per_command: Expect) -> dict[str, Expect]:
    """Input the commands take: transforms pass it through byte for byte, reports are JSONL."""
    reports = {"estimate": OK, "validate": OK, "summarize": OK, "convert": OK, "cleanup": OK}
    return table(SAME, **{**reports, **per_command})


def bad(at: str, text: str, **per_command: Expect) -> dict[str, Expect]:
    """An error for every command; validate reports the line too, cleanup plans regardless."""
    validate = Expect(3, "error", at, text, reported=int(at.split(":")[1]) if ":" in at else None)
    return table(error(at, text), **{"validate": validate, "cleanup": OK, **per_command})


def warned(line: int, text: str, *, summarize: str) -> dict[str, Expect]:
    """A line every command takes with a warning: transforms pass it through, reports are
    JSONL, validate reports the line, summarize writes ``summarize`` (see Expect.stdout)."""
    at = f"{{file}}:{line}"
    return table(warning(at, text), estimate=warning(at, text, "jsonl"),
                 summarize=warning(at, text, summarize), convert=warning(at, text, "jsonl"),
                 validate=Expect(reported=line), cleanup=OK)


EXPECT: dict[str, dict[str, Expect]] = {
    "invalid_json": bad("{file}:2", "invalid JSON"),
    # two valid lines: a summary would not be smaller, so the input is left as it is
    "truncated_last_line": warned(3, "truncated last line", summarize="same"),
    "truncated_after_clearing": warned(5, "truncated last line", summarize="partial-last"),
    "two_objects_on_a_line": warned(1, "2 JSON objects on one line", summarize="prefix"),
    "invalid_utf8": bad("{file}:2", "invalid UTF-8"),
    "bom": graceful(),
    "crlf": graceful(),
    "blank_lines_only": graceful(convert=Expect(stdout="empty"), validate=Expect(stdout="empty"),
                                 estimate=EMPTY),
    "zero_bytes": graceful(convert=Expect(stdout="empty"), validate=Expect(stdout="empty"),
                           estimate=EMPTY),
    STDIN_EMPTY: graceful(convert=Expect(stdout="empty"), validate=Expect(stdout="empty"),
                          estimate=EMPTY),
    "nested_10000": bad("{file}:2", "invalid JSON (depth limit exceeded)"),
    # read fine, but too deep to walk (estimate, validate, summarize) or to write back (convert:
    # the message it made from the line remembers the line); the line is named either way
    "nested_1000": graceful(estimate=NESTED, validate=NESTED, summarize=NESTED, convert=NESTED),
    "lone_surrogate": bad("{file}:2", "lone surrogate"),
    "pretty_json_document": bad(
        "{file}:1", "pretty-printed JSON document",
        # convert reads a pretty-printed document as an OpenCode export: the whole file is wrong
        convert=error("{file}", "not an OpenCode export")),
    "csv": bad("{file}:1", "invalid JSON"),
    "binary_junk": bad("{file}:1", "invalid JSON"),
    "not_objects": bad("{file}:2", "expected a JSON object, got an array"),
    "unknown_format": bad("{file}:1", "unknown transcript format"),
    "missing_fields": graceful(validate=Expect(3, "error", "{file}:2", "'message' is missing",
                                               reported=2)),
    "unpaired_tools": graceful(validate=Expect(3, "error", "{file}:3", "answers no tool_use",
                                               reported=3)),
    "huge_integers": graceful(),
    # cleanup keeps a session it cannot read, says so, and exits 1
    "line_too_long": bad("{file}:2", "line longer than 1 MiB (the maximum line length)",
                         cleanup=Expect(ExitCode.FAILED, "warning", "",
                                        "cannot read: line 2: line longer than 1 MiB")),
    DEV_ZERO: bad("{file}:1", "line longer than 1 MiB (the maximum line length)",
                  cleanup=error("", "--root: not a folder", ExitCode.USAGE)),
    DIRECTORY: table(error("{file}", "is a directory", ExitCode.STORAGE),
                     convert=error("{file}", "not an OpenCode storage folder"),
                     cleanup=error("", "--root: not a folder", ExitCode.USAGE)),
    ENOTDIR: table(error("{file}", "cannot read: Not a directory", ExitCode.STORAGE),
                   cleanup=error("", "--root: not a folder", ExitCode.USAGE)),
}


def test_the_table_covers_every_case_and_command() -> None:
    assert set(EXPECT) == {*CASES, DIRECTORY, ENOTDIR, STDIN_EMPTY, DEV_ZERO}
    assert all(set(row) == set(COMMANDS) for row in EXPECT.values())
    # sessions lists folders and statusline reads Claude Code's JSON: tests/sessions/
    # test_bad_sessions.py runs both over these same cases
    listed = set(cli.list_commands(None)) - {"sessions", "statusline"}  # type: ignore[arg-type]
    assert set(COMMANDS) == listed


# --- running one cell ----------------------------------------------------------------------------


@dataclass
class Cell:
    argv: list[str]
    data: bytes  # the input's bytes (b"" when there is no file)
    name: str  # how messages name the input
    stdin: bytes | None = None


def prepare(case: str, command: str, tmp_path: Path) -> Cell:
    store, root = tmp_path / "store", tmp_path / "claude"
    argv = [a.format(store=store, root=root) for a in COMMANDS[command]]
    (tmp_path / "file.txt").write_text("not a folder")
    if command == "cleanup":
        return _prepare_cleanup(case, argv, root, tmp_path)
    if case == DIRECTORY:
        return Cell(argv + [str(tmp_path)], b"", str(tmp_path))
    if case == ENOTDIR:
        path = str(tmp_path / "file.txt" / "x.jsonl")
        return Cell(argv + [path], b"", path)
    if case == STDIN_EMPTY:
        return Cell(argv + ["-"], b"", "<stdin>", stdin=b"")
    if case == DEV_ZERO:
        return Cell(argv + ["/dev/zero"], b"", "/dev/zero")
    path = tmp_path / f"{case}.jsonl"
    path.write_bytes(CASES[case])
    return Cell(argv + [str(path)], CASES[case], str(path))


def _prepare_cleanup(case: str, argv: list[str], root: Path, tmp_path: Path) -> Cell:
    """cleanup reads folders: the bad bytes become an old session transcript under --root."""
    if case in (DIRECTORY, ENOTDIR, DEV_ZERO):  # a regular file, or a path through one, as --root
        bad = {DIRECTORY: tmp_path / "file.txt", ENOTDIR: tmp_path / "file.txt" / "x",
               DEV_ZERO: Path("/dev/zero")}[case]
        return Cell([a.replace(str(root), str(bad)) for a in argv], b"", str(bad))
    transcript = root / "projects" / "-w-app" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_bytes(b"" if case == STDIN_EMPTY else CASES[case])
    os.utime(transcript, (1_700_000_000, 1_700_000_000))  # 2023: older than any default
    return Cell(argv, transcript.read_bytes(), str(transcript))


def check(cell: Cell, expect: Expect, command: str, code: int, stdout: bytes, stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert code == expect.code, (code, stderr)
    errors = [line for line in stderr.splitlines() if line.startswith("ctxtool: error:")]
    warnings = [line for line in stderr.splitlines() if line.startswith("ctxtool: warning:")]
    where = expect.at.format(file=cell.name)
    lead = f"ctxtool: {expect.level}: {where}: " if where else f"ctxtool: {expect.level}: "
    if expect.level == "error":
        assert len(errors) == 1, stderr
        assert errors[0].startswith(lead) and expect.text in errors[0], (lead, errors)
    else:
        assert not errors, stderr
    if expect.level == "warning":
        assert any(w.startswith(lead) and expect.text in w for w in warnings), (lead, stderr)
    else:
        assert not warnings, stderr
    check_stdout(cell, expect, command, stdout)


def check_stdout(cell: Cell, expect: Expect, command: str, stdout: bytes) -> None:
    if expect.stdout == "same":
        assert stdout == cell.data
        return
    if expect.stdout == "prefix":
        head = cell.data if cell.data.endswith(b"\n") else cell.data + b"\n"
        assert stdout.startswith(head) and len(stdout) > len(head)
        stdout = stdout[len(head):]
    if expect.stdout == "partial-last":
        cut = cell.data.rfind(b"\n") + 1
        head, tail = cell.data[:cut], cell.data[cut:]
        assert tail and stdout.startswith(head) and stdout.endswith(b"\n" + tail)
        assert len(stdout) > len(cell.data) + 1  # something was appended, before the tail
        stdout = stdout[len(head):-len(tail)]
    if expect.stdout == "empty" or expect.code:
        # a command that failed wrote nothing, or only whole lines before the failure
        assert expect.stdout != "empty" or stdout == b""
    records = valid_jsonl(stdout)
    if command == "cleanup" and not expect.code:
        assert any(r.get("path", "").endswith(f"{SESSION}.jsonl") for r in records), records
    if expect.reported is not None:
        assert any(r.get("line") == expect.reported for r in records), records


def valid_jsonl(data: bytes) -> list[dict[str, object]]:
    """Every line of stdout as a JSON object; raises on anything else."""
    records = []
    for number, line in enumerate(data.splitlines(), 1):
        body = line.removeprefix(BOM) if number == 1 else line
        if body.strip():
            value = loads_json(body)
            assert isinstance(value, dict), line[:100]
            records.append(value)
    return records


CELLS = [pytest.param(case, command, id=f"{case}-{command}")
         for case in EXPECT for command in COMMANDS]


@pytest.mark.parametrize(("case", "command"), CELLS)
def test_matrix(case: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # anything written by accident lands here, not in the repo
    monkeypatch.setenv("CTXTOOL_MAX_LINE_BYTES", MAX_LINE)
    cell = prepare(case, command, tmp_path)
    result = CliRunner().invoke(cli, cell.argv, input=cell.stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    check(cell, EXPECT[case][command], command, result.exit_code, result.stdout_bytes,
          result.stderr)


STDIN_ROWS = ("invalid_json", "truncated_last_line", "truncated_after_clearing",
              "two_objects_on_a_line", "binary_junk",
              "nested_1000", "huge_integers", "line_too_long")


@pytest.mark.parametrize(("case", "command"), [
    pytest.param(case, command, id=f"{case}-{command}")
    for case in STDIN_ROWS for command in COMMANDS if command != "cleanup"])
def test_matrix_on_stdin(case: str, command: str, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The same input piped in: messages name <stdin>, the commands that read twice spool it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CTXTOOL_MAX_LINE_BYTES", MAX_LINE)
    argv = [a.format(store=tmp_path / "store") for a in COMMANDS[command]]
    cell = Cell(argv + ["-"], CASES[case], "<stdin>", stdin=CASES[case])
    result = CliRunner().invoke(cli, cell.argv, input=cell.stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    check(cell, EXPECT[case][command], command, result.exit_code, result.stdout_bytes,
          result.stderr)


@pytest.mark.parametrize("argv", [["convert", "--to", "openai"], ["convert", "--to", "anthropic"],
                                  ["filter-compacted", "--to", "anthropic"],
                                  ["filter-compacted", "--to", "openai"]])
def test_nested_too_deeply_names_the_line_in_every_conversion(argv: list[str],
                                                              tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_bytes(CASES["nested_1000"])
    result = CliRunner().invoke(cli, [*argv, str(path)])
    check(Cell([*argv, str(path)], CASES["nested_1000"], str(path)), NESTED, argv[0],
          result.exit_code, result.stdout_bytes, result.stderr)


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The control: a traceback, a second error line or a broken stdout line each fail a cell."""
    cell = Cell([], b"x", "f.jsonl")
    for stderr, stdout in [("Traceback (most recent call last):", b""),
                           ("ctxtool: error: f.jsonl:2: a\nctxtool: error: f.jsonl:2: b", b""),
                           ("ctxtool: error: f.jsonl:2: invalid JSON", b'{"a":1}\n{"a":\n')]:
        with pytest.raises((AssertionError, ValueError)):  # orjson's JSONDecodeError is one
            check(cell, error("{file}:2", "invalid JSON"), "persist", 3, stdout, stderr)


# --- the 100 MB line, through the real entry point ------------------------------------------------


HUGE_CHUNK = 'line of tool output 中文 "quoted" \\ \t end\n'
HUGE_REPEAT = 100 * 2**20 // len(orjson.dumps(HUGE_CHUNK)[1:-1])


@pytest.fixture(scope="session")
def huge_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prompt, a tool call and a 100 MB tool result on one line (made once per session)."""
    path = tmp_path_factory.mktemp("huge") / "huge.jsonl"
    spelled, repeat = orjson.dumps(HUGE_CHUNK)[1:-1], HUGE_REPEAT
    result = cc_entry("user", "u2", "a1", tool_result_message("toolu_big", "@"), second=2)
    head, tail = compact(result).split(b'"@"')
    with path.open("wb") as out:
        out.write(U1 + A1.replace(b"toolu_1", b"toolu_big") + head + b'"')
        out.write(spelled * repeat)
        out.write(b'"' + tail)
    return path


HUGE_EXPECT = table(SAME, estimate=OK, validate=Expect(stdout="empty"), summarize=OK, convert=OK,
                    cleanup=OK, persist=OK, microcompact=OK)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_line_of_100_mb(command: str, huge_transcript: Path, tmp_path: Path) -> None:
    assert huge_transcript.stat().st_size > 100 * 2**20
    argv = [a.format(store=tmp_path / "store", root=tmp_path / "claude") for a in COMMANDS[command]]
    if command == "cleanup":
        transcript = tmp_path / "claude" / "projects" / "-w-app" / f"{SESSION}.jsonl"
        transcript.parent.mkdir(parents=True)
        os.link(huge_transcript, transcript)
        os.utime(transcript, (1_700_000_000, 1_700_000_000))
        cell = Cell(argv, b"", str(transcript))
    else:
        argv.append(str(huge_transcript))
        cell = Cell(argv, huge_transcript.read_bytes(), str(huge_transcript))
    proc = run_ctxtool(*argv, cwd=tmp_path, timeout=300)
    check(cell, HUGE_EXPECT[command], command, proc.returncode, proc.stdout, proc.stderr.decode())
    if command in ("persist", "microcompact"):  # the 100 MB went to the store, not to stdout
        assert len(proc.stdout) < 20_000
        saved = [p for p in (tmp_path / "store").rglob("toolu_big*") if p.is_file()]
        assert saved and saved[0].stat().st_size == len(HUGE_CHUNK.encode()) * HUGE_REPEAT


@pytest.mark.parametrize("command", ["estimate", "persist"])
def test_dev_zero_ends_with_one_line_in_bounded_memory(command: str, tmp_path: Path) -> None:
    """Input without any newline, at the default maximum line length (256 MiB), through the real
    entry point: exit 3 and one line, with the address space capped at 1 GiB (reading the whole
    "line" would end in MemoryError and a traceback instead)."""
    import resource
    import subprocess

    from tests.conftest import ctxtool_executable

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {k: v for k, v in os.environ.items() if k != "CTXTOOL_MAX_LINE_BYTES"}
    store = ["--store", str(tmp_path / "s")] if command == "persist" else []
    proc = subprocess.run([*ctxtool_executable(), command, *store, "/dev/zero"],
                          capture_output=True, preexec_fn=cap, env=env, timeout=300, check=False)
    assert proc.returncode == ExitCode.INVALID_INPUT, proc.stderr[-2000:]
    assert proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [
        "ctxtool: error: /dev/zero:1: line longer than 256 MiB (the maximum line length); not a "
        "transcript? — raise $CTXTOOL_MAX_LINE_BYTES (e.g. 1G) if it really is one"]


# --- integers past 64 bits: exact wherever an entry is changed ------------------------------------


def test_orjson_alone_would_lose_big_integers() -> None:
    """The control for the tests below: why the reader checks for long digit runs."""
    assert orjson.loads(f'{{"n":{BIG}}}')["n"] != BIG
    assert loads_json(f'{{"n":{BIG},"m":[-{BIG}]}}'.encode()) == {"n": BIG, "m": [-BIG]}
    assert dumps_json({"n": BIG, "s": "中"}) == f'{{"n":{BIG},"s":"中"}}'.encode()
    assert dumps_json([{"n": BIG}], indent=True) == f'[\n  {{\n    "n": {BIG}\n  }}\n]'.encode()
    with pytest.raises(ValueError):
        loads_json(b'{"n": NaN}')  # the stdlib path stays strict too (orjson refuses first)


def big_transcript() -> bytes:
    """Every entry carries BIG (top level, and in the tool inputs): a compaction that keeps the
    read before it (filter-compacted splices that segment back in, re-pointing and zeroing
    entries), then the same file read twice with large results, so every transform changes
    entries holding BIG."""
    def read(uuid: str, parent: str, tool_id: str, second: int) -> dict[str, object]:
        use = tool_use_message(f"msg_{uuid}", tool_id, "Read",
                               {"file_path": "/w/app/x.py", "trace": BIG})
        return cc_entry("assistant", uuid, parent, use, second=second, traceId=BIG)

    def result(uuid: str, parent: str, tool_id: str, second: int) -> dict[str, object]:
        return cc_entry("user", uuid, parent, tool_result_message(tool_id, "x = 1\n" * 10_000),
                        second=second, traceId=BIG)

    entries = [
        cc_entry("user", "u1", None, {"role": "user", "content": "go"}, traceId=BIG),
        read("a0", "u1", "toolu_0", 1), result("u2", "a0", "toolu_0", 2),
        cc_entry("system", "b1", None, second=3, subtype="compact_boundary",
                 content="Conversation compacted", logicalParentUuid="u2", traceId=BIG,
                 compactMetadata={"trigger": "manual", "preTokens": 1000, "preservedSegment": {
                     "headUuid": "a0", "anchorUuid": "s1", "tailUuid": "u2"}}),
        cc_entry("user", "s1", "b1", {"role": "user", "content": "Summary: earlier work"},
                 second=4, isCompactSummary=True, traceId=BIG),
        cc_entry("user", "u3", "s1", {"role": "user", "content": "read it again"}, second=5,
                 traceId=BIG),
        read("a1", "u3", "toolu_1", 6), result("u4", "a1", "toolu_1", 7),
        read("a2", "u4", "toolu_2", 8), result("u5", "a2", "toolu_2", 9),
        cc_entry("assistant", "a3", "u5", {"id": "msg_3", "role": "assistant", "content": [
            {"type": "text", "text": "done"}]}, second=10, traceId=BIG),
    ]
    return jsonl(entries)


@pytest.mark.parametrize("argv", [
    ["persist", "--store", "{store}"],
    ["snip", "--store", "{store}", "--keep", "0"],
    ["microcompact", "--force", "--keep", "0", "--target", "0", "--store", "{store}"],
    ["summarize", "--llm", "offline", "--keep-last", "1", "--store", "{store}", "--now", NOW],
    ["filter-compacted"],
    ["filter-compacted", "--view", "model"],
    ["convert", "--to", "openai"],
    ["estimate", "--per-entry"],
], ids=lambda argv: " ".join(argv[:3]))
def test_changed_entries_keep_big_integers_exact(argv: list[str], tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    source.write_bytes(big_transcript())
    proc = run_ctxtool(*[a.format(store=tmp_path / "store") for a in argv], str(source),
                       cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout != source.read_bytes()  # something was changed and written back
    assert b"e+29" not in proc.stdout and b"e29" not in proc.stdout
    assert str(BIG).encode() in proc.stdout
    for record in valid_jsonl(proc.stdout):
        for value in ("traceId", "trace"):
            assert record.get(value, BIG) == BIG


def test_restore_gives_big_integers_back(tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    source.write_bytes(big_transcript())
    store = str(tmp_path / "store")
    persisted = run_ctxtool("persist", "--store", store, str(source))
    assert persisted.returncode == 0 and b"<persisted-output>" in persisted.stdout
    snipped = run_ctxtool("snip", "--keep", "0", "--store", store, input=persisted.stdout)
    back = run_ctxtool("restore", input=snipped.stdout)
    assert back.returncode == 0, back.stderr
    assert back.stdout == source.read_bytes()
