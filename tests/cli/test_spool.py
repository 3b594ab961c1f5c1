"""The re-readable inputs of two-pass commands: the lazy second pass frames lines exactly like
iter_entries, stdin is spooled or rewound, and stdout sees nothing when a run fails."""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from ctxtool.errors import StoreError
from ctxtool.formats.jsonl import iter_entries, write_entries
from ctxtool.io import spool
from ctxtool.io.spool import LineTable, iter_lazy_entries, iter_spans
from ctxtool.types import Entry
from tests.clearing_helpers import Session
from tests.conftest import ctxtool_executable, run_ctxtool

A = b'{"type":"user","uuid":"a","message":{"role":"user","content":"hi"}}'
B = b'{"type":"assistant","uuid":"b","message":{"role":"assistant","content":"yo"}}'
FRAMINGS = {
    "plain": A + b"\n" + B + b"\n",
    "no final newline": A + b"\n" + B,
    "crlf": A + b"\r\n" + B + b"\r\n",
    "bom": b"\xef\xbb\xbf" + A + b"\n" + B + b"\n",
    "blank lines": b"\n\n" + A + b"\n\n  \n" + B + b"\n\n",
    "glued": A + B + b"\n" + B + b"\n",
    "only blanks": b"\n \n",
    "empty": b"",
    "truncated last line": A + b"\n" + B[:20],
}


def write(entries: list[Entry]) -> bytes:
    out = io.BytesIO()
    write_entries(entries, out)
    return out.getvalue()


def lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


@pytest.mark.parametrize("data", FRAMINGS.values(), ids=list(FRAMINGS))
def test_unparsed_second_pass_is_a_byte_copy(data: bytes) -> None:
    lazy = list(iter_lazy_entries(lines(data), "f", parse=()))
    assert all(e.invalid for e in lazy)
    assert write(lazy) == data


@pytest.mark.parametrize("data", FRAMINGS.values(), ids=list(FRAMINGS))
def test_parsed_lines_match_iter_entries(data: bytes) -> None:
    full = list(iter_entries(lines(data), "f", on_invalid="keep"))
    every_line = {("f", n) for n in range(1, len(lines(data)) + 1)}
    lazy = list(iter_lazy_entries(lines(data), "f", parse=every_line))
    assert [(dict(e), e.raw, e.lineno, e.invalid, e.glued) for e in lazy] == \
        [(dict(e), e.raw, e.lineno, e.invalid, e.glued) for e in full]


def test_only_the_asked_lines_are_parsed() -> None:
    data = b"\n" + A + b"\n" + B + b"\n\n" + A + b"\n"
    lazy = list(iter_lazy_entries(lines(data), "f", parse={("f", 3)}))
    assert [e.invalid for e in lazy] == [True, False, True]
    assert lazy[1] == {"type": "assistant", "uuid": "b",
                       "message": {"role": "assistant", "content": "yo"}}
    assert lazy[1].lineno == 3 and lazy[1].raw == B + b"\n\n"


def table_of(data: bytes) -> LineTable:
    table = LineTable()
    for entry in iter_entries(lines(data), "f", on_invalid="keep"):
        table.add(entry)
    return table


@pytest.mark.parametrize("block", [7, 1 << 20])
@pytest.mark.parametrize("data", FRAMINGS.values(), ids=list(FRAMINGS))
def test_offset_second_pass_copies_blocks_and_parses_the_asked_lines(
        monkeypatch: pytest.MonkeyPatch, data: bytes, block: int) -> None:
    monkeypatch.setattr(spool, "COPY_CHUNK", block)
    table = table_of(data)
    assert table.size == len(data)
    copied = list(iter_spans(io.BytesIO(data), "f", table, []))
    assert all(e.invalid for e in copied) and write(copied) == data
    full = list(iter_entries(lines(data), "f", on_invalid="keep"))
    parsed = list(iter_spans(io.BytesIO(data), "f", table, sorted(set(table.linenos))))
    assert [(dict(e), e.raw, e.lineno, e.invalid, e.glued) for e in parsed] == \
        [(dict(e), e.raw, e.lineno, e.invalid, e.glued) for e in full]


def test_offset_second_pass_parses_only_the_asked_line() -> None:
    data = b"\n" + A + b"\n" + B + b"\n\n" + A + b"\n"
    out = list(iter_spans(io.BytesIO(data), "f", table_of(data), [3]))
    assert [e.invalid for e in out] == [True, False, True]
    assert out[1].lineno == 3 and out[1].raw == B + b"\n\n" and out[1]["uuid"] == "b"
    assert write(out) == data


def session_bytes() -> bytes:
    session = Session().user("go")
    for size in (30_000, 30_000, 30_000, 100, 100, 100):
        session.sized_call("Bash", size)
    return session.jsonl()


def test_piped_and_seekable_stdin_and_file_give_the_same_output(tmp_path: Path) -> None:
    data = session_bytes()
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    args = ("microcompact", "--force", "--no-save", "--now", "2026-01-02T00:00:00Z")
    from_file = run_ctxtool(*args, str(path))
    from_pipe = run_ctxtool(*args, input=data)
    with path.open("rb") as stdin:  # `< s.jsonl`: a seekable stdin, rewound instead of copied
        from_redirect = subprocess.run([*ctxtool_executable(), *args], stdin=stdin,
                                       capture_output=True, check=False)
    assert from_file.returncode == from_pipe.returncode == from_redirect.returncode == 0
    assert b"[Old tool result content cleared]" in from_file.stdout
    assert from_pipe.stdout == from_file.stdout == from_redirect.stdout


def test_a_failure_while_writing_leaves_stdout_empty(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store should go")
    proc = run_ctxtool("microcompact", "--force", "--store", str(blocker / "store"),
                       input=session_bytes())
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout == b""
    assert proc.stderr.decode().startswith("ctxtool: error: ")
    assert b"Traceback" not in proc.stderr


# --- staged stdout: produced bytes staged, unchanged input bytes copied from the input at the end --

def staged_copy(path: Path, wanted: list[int], out: BinaryIO, *,
                before_copy: Callable[[], object] = lambda: None) -> None:
    """``path`` through a Stage (the unparsed bytes as Blocks, the ``wanted`` lines written
    again by orjson), then copied out to ``out``."""
    data = path.read_bytes()
    table = table_of(data)
    with tempfile.TemporaryFile() as temp, spool.Stage(temp) as stage:
        with path.open("rb") as stream:
            entries = changed(iter_spans(stream, str(path), table, wanted))
            write_entries(stage.track(entries), stage)  # type: ignore[arg-type]
        before_copy()
        stage.copy_out(out)


def changed(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """The entries with every parsed one as a changed line (written again by orjson), and a
    line added at the end (after a last line without newline, the writer adds one)."""
    return [*(e if e.invalid else Entry(dict(e), source=e.source, lineno=e.lineno)
              for e in entries), {"type": "added"}]


@pytest.mark.parametrize("wanted", [[], [1], [2], [1, 2, 3]])
@pytest.mark.parametrize("block", [7, 1 << 20])
@pytest.mark.parametrize("data", FRAMINGS.values(), ids=list(FRAMINGS))
def test_a_file_read_by_offset_and_a_stage_write_what_a_stream_gives(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: bytes, block: int,
        wanted: list[int]) -> None:
    monkeypatch.setattr(spool, "COPY_CHUNK", block)
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    expected = write(changed(iter_spans(io.BytesIO(data), "f", table_of(data), wanted)))
    with path.open("rb") as stream:
        blocks = changed(iter_spans(stream, "f", table_of(data), wanted))
    assert write(blocks) == expected  # read when asked for, after the stream was closed
    # a file by sendfile, a file opened for appending (sendfile refuses: EINVAL), memory
    with (tmp_path / "out").open("wb") as out:
        staged_copy(path, wanted, out)
    (tmp_path / "appended").write_bytes(b"before\n")
    with (tmp_path / "appended").open("ab") as out:
        staged_copy(path, wanted, out)
    in_memory = io.BytesIO()
    staged_copy(path, wanted, in_memory)
    assert (tmp_path / "out").read_bytes() == expected
    assert (tmp_path / "appended").read_bytes() == b"before\n" + expected
    assert in_memory.getvalue() == expected


def test_a_block_of_a_file_cut_short_fails_when_read(tmp_path: Path) -> None:
    data = session_bytes()
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    with path.open("rb") as stream:
        blocks = list(iter_spans(stream, str(path), table_of(data), []))
    os.truncate(path, len(data) - 10)
    with pytest.raises(StoreError) as failed:
        write(blocks)
    assert "the input changed while it was read (ended 10 bytes early)" in str(failed.value)


def test_unchanged_bytes_are_planned_from_the_input_not_staged(tmp_path: Path) -> None:
    data = session_bytes()
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    with tempfile.TemporaryFile() as temp, spool.Stage(temp) as stage, path.open("rb") as stream:
        write_entries(stage.track(iter_spans(stream, "f", table_of(data), [])), stage)  # type: ignore[arg-type]
        temp.flush()
        assert os.fstat(temp.fileno()).st_size == 0
        out = io.BytesIO()
        stage.copy_out(out)
    assert out.getvalue() == data


def test_an_input_cut_short_before_the_copy_fails_with_nothing_written(tmp_path: Path) -> None:
    data = session_bytes()
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    with (tmp_path / "out").open("wb") as out, pytest.raises(StoreError) as failed:
        staged_copy(path, [2], out, before_copy=lambda: os.truncate(path, len(data) - 10))
    assert "the input changed while it was read" in str(failed.value)
    assert (tmp_path / "out").read_bytes() == b""


def test_bytes_appended_before_the_copy_are_not_part_of_the_run(tmp_path: Path) -> None:
    data = session_bytes()
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    out = io.BytesIO()
    staged_copy(path, [], out, before_copy=lambda: path.open("ab").write(A + b"\n"))
    assert out.getvalue() == data + b'{"type":"added"}\n'


@pytest.mark.parametrize("stdout", ["file", "append", "devnull"])
def test_stdout_as_a_file_gets_what_a_pipe_gets(tmp_path: Path, stdout: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(session_bytes() + A[:30])  # and a truncated last line, which goes last
    args = ("microcompact", "--force", "--no-save", "--now", "2026-01-02T00:00:00Z", str(path))
    piped = run_ctxtool(*args)
    assert piped.returncode == 0 and b"[Old tool result content cleared]" in piped.stdout
    target = tmp_path / "out" if stdout != "devnull" else Path(os.devnull)
    if stdout == "append":
        target.write_bytes(b"before\n")
    with target.open("ab" if stdout == "append" else "wb") as out:
        proc = subprocess.run([*ctxtool_executable(), *args], stdout=out, stderr=subprocess.PIPE,
                              check=False)
    assert proc.returncode == 0, proc.stderr
    if stdout != "devnull":
        prefix = b"before\n" if stdout == "append" else b""
        assert target.read_bytes() == prefix + piped.stdout


def test_a_file_read_from_where_its_stream_stood(tmp_path: Path) -> None:
    """A rewound stdin starts where the shell left it: blocks are found from there."""
    data = session_bytes()
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"not this\n" + data)
    with path.open("rb") as stream:
        stream.read(9)
        entries = changed(iter_spans(stream, "f", table_of(data), [2]))
    assert write(entries) == write(changed(iter_spans(io.BytesIO(data), "f", table_of(data), [2])))


def test_more_inputs_than_files_held_open_give_the_same_output(tmp_path: Path) -> None:
    paths = []
    for i in range(spool.InputFile.MOST_OPEN + 4):
        paths.append(str(tmp_path / f"s{i}.jsonl"))
        Path(paths[-1]).write_bytes(session_bytes())
    args = ("microcompact", "--force", "--no-save", "--now", "2026-01-02T00:00:00Z", *paths)
    staged = run_ctxtool(*args)
    written = run_ctxtool(*args, "-o", str(tmp_path / "out.jsonl"))
    assert staged.returncode == written.returncode == 0, staged.stderr
    assert staged.stdout.count(b"[Old tool result content cleared]") > len(paths)
    assert staged.stdout == (tmp_path / "out.jsonl").read_bytes()
