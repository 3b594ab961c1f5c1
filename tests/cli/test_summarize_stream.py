"""`ctxtool summarize` offline reads a Claude Code transcript twice instead of holding it: the
output and the report are exactly those of the buffered way (core.compact over a list)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.core.summarizing.offline import OfflineSummarizer
from ctxtool.core.summarizing.summarize import SummarizeOptions, compact
from ctxtool.errors import CtxtoolError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import iter_entries, iter_lines_out
from ctxtool.types import CLAUDE_CODE
from tests.conftest import ROOT, corpus_params, run_ctxtool
from tests.summarize_builder import Session, coding_session, text_block

NOW = "2026-02-03T10:00:00Z"
EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"


def buffered(path: Path, **options: object) -> tuple[bytes, dict[str, object]]:
    """What core.compact makes of the transcript held as a list."""
    with path.open("rb") as handle:
        fmt, stream = detect_format(iter_entries(handle, str(path), on_invalid="keep"))
        items = list(stream)
    done = compact(items, fmt=fmt, summarizer=OfflineSummarizer(), options=SummarizeOptions(
        now=datetime(2026, 2, 3, 10, tzinfo=timezone.utc), transcript_path=str(path.resolve()),
        **options))  # type: ignore[arg-type]
    assert isinstance(done.entries, list)
    return b"".join(iter_lines_out(done.entries)), done.report.as_dict()


def streamed(path: Path, *args: str) -> tuple[bytes, dict[str, object]]:
    report = Path.cwd() / "report.json"  # a fresh folder per test (conftest)
    result = CliRunner().invoke(cli, ["summarize", "--llm", "offline", "--now", NOW,
                                      "--report", str(report), *args, str(path)])
    assert result.exit_code == 0, result.stderr
    return result.stdout_bytes, json.loads(report.read_text())


def write(tmp_path: Path, session: Session) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_bytes(session.jsonl())
    return path


def subagent_only(tmp_path: Path) -> Path:
    s = Session(sidechain=True)  # a subagent's own transcript: nothing but a side chain
    s.user("Explore the repository")
    s.assistant(text_block("It holds a pager."))
    return write(tmp_path, s)


@pytest.mark.parametrize("make", [lambda p: EXAMPLE, lambda p: write(p, coding_session()),
                                  subagent_only], ids=["example", "coding", "subagent"])
def test_streamed_output_and_report_equal_the_buffered_ones(tmp_path: Path, make) -> None:
    path = make(tmp_path)
    out, report = streamed(path)
    want_out, want_report = buffered(path)
    assert out == want_out
    assert report == want_report
    assert out.startswith(path.read_bytes())  # every input line first, byte for byte


def test_keep_options_still_work_through_the_buffered_way(tmp_path: Path) -> None:
    path = write(tmp_path, coding_session())
    out, report = streamed(path, "--keep-last", "2", "--restore-files", "1")
    want_out, want_report = buffered(path, keep_last=2, restore_files=1)
    assert out == want_out and report == want_report and report["kept_messages"] == 2


def test_a_pipe_gives_what_the_file_gives() -> None:
    from_file = run_ctxtool("summarize", "--llm", "offline", "--now", NOW, "-o", "-", str(EXAMPLE))
    piped = run_ctxtool("summarize", "--llm", "offline", "--now", NOW, input=EXAMPLE.read_bytes())
    assert from_file.returncode == 0 and piped.returncode == 0, piped.stderr
    # the summary names the input file, or nothing for stdin: the rest is the same
    assert piped.stdout.startswith(EXAMPLE.read_bytes())
    assert piped.stdout.count(b"\n") == from_file.stdout.count(b"\n")


def test_nothing_to_summarize_passes_the_input_through(tmp_path: Path) -> None:
    s = Session()
    s.boundary("This session is being continued from a previous conversation that ran out of "
               "context. The summary below covers the earlier portion of the conversation.\n\n"
               "Summary:\n1. Primary Request and Intent:\n   x")
    path = write(tmp_path, s)
    out, report = streamed(path)
    assert out == path.read_bytes()
    assert report["reason"] == "nothing to summarize: no messages" and report["compacted"] is False


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_every_corpus_transcript_streams_to_the_buffered_bytes(path: Path, tmp_path: Path) -> None:
    try:
        with path.open("rb") as handle:
            fmt, _ = detect_format(iter_entries(handle, str(path), on_invalid="keep"))
    except CtxtoolError:
        pytest.skip("not a transcript (a control file of the corpus)")
    if fmt != CLAUDE_CODE:
        pytest.skip("only Claude Code transcripts are streamed")
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    out, report = streamed(copy, "--on-invalid", "keep")  # as the buffered read below
    want_out, want_report = buffered(copy)
    assert out == want_out and report == want_report
