"""filter-compacted over every corpus transcript: the view starts at the file's last real
compact_boundary (found here independently) and is made of the input's own lines, byte for
byte; files without one come out unchanged; the model view and the API conversions hold the
rules the APIs enforce."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxtool.core.messages.convert import to_anthropic, to_openai
from ctxtool.core.clearing.replace import CLEARED
from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from ctxtool.errors import InputError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import OnInvalid, iter_entries, write_entries
from ctxtool.types import Entry
from tests.api_message_rules import anthropic_problems, openai_problems
from tests.conftest import CORPUS, corpus_files, corpus_params, run_ctxtool

pytestmark = pytest.mark.corpus


def read(path: Path, on_invalid: OnInvalid = "keep") -> tuple[str, list[Entry]]:
    with path.open("rb") as stream:
        fmt, entries = detect_format(iter_entries(stream, str(path), on_invalid=on_invalid))
        return fmt, list(entries)


def transcript(path: Path) -> tuple[str, list[Entry]]:
    try:
        fmt, entries = read(path)
    except InputError:
        pytest.skip(f"{path.name} is not a transcript (see test_non_transcripts_fail_cleanly)")
    if fmt == "gemini":  # Gemini's compressions: tests/e2e/test_gemini_summarize.py
        pytest.skip(f"{path.name} is a Gemini CLI session, not Claude Code's shape")
    return fmt, entries


def last_boundary(entries: list[Entry]) -> tuple[int | None, bool]:
    """The last compact_boundary of the file's thread (the main thread when it has messages),
    and whether that thread is a side chain."""
    side = not any(e.get("type") in ("user", "assistant") and e.get("isSidechain") is not True
                   for e in entries)
    found = None
    for index, entry in enumerate(entries):
        if (entry.get("type") == "system" and entry.get("subtype") == "compact_boundary"
                and (entry.get("isSidechain") is True) == side):
            found = index
    return found, side


def written(entries: list[Any]) -> bytes:
    out = io.BytesIO()
    write_entries(entries, out)
    return out.getvalue()


def skip_param(reason: str) -> list[Any]:
    return [pytest.param(None, marks=pytest.mark.skip(reason=reason))]


WITH_BOUNDARY = [p for p in corpus_files() if b'"compact_boundary"' in p.read_bytes()]


@pytest.mark.parametrize("path", corpus_params())
def test_view_starts_at_the_last_boundary_with_the_input_bytes(path: Path) -> None:
    fmt, entries = transcript(path)
    plan = plan_cut(entries, fmt)
    view = list(filter_compacted(entries, plan))
    cut, side = last_boundary(entries)
    if cut is None and not plan.repeated:
        assert written(view) == path.read_bytes()
        return
    cut = cut or 0
    assert view[0] is entries[cut]
    # an entry written again (same uuid, timestamp and kind) is in the view once
    expected = [e for i, e in enumerate(entries[cut:], cut) if i not in plan.repeated and (
        not isinstance(e.get("isSidechain"), bool) or e["isSidechain"] == side)]
    assert len(view) == len(expected) and all(a is b for a, b in zip(view, expected))
    assert all(e.raw is not None for e in view)  # untouched: written as the input's own bytes


@pytest.mark.parametrize("path", corpus_params())
def test_model_view_and_api_messages(path: Path) -> None:
    fmt, entries = transcript(path)
    plan = plan_cut(entries, fmt)
    model = list(filter_compacted(entries, plan, view="model"))
    assert all(e.get("type") in ("user", "assistant") and not e.get("isApiErrorMessage")
               for e in model)
    chain = [None, *(m.get("uuid") for m in model)][:len(model)]
    assert [m.get("parentUuid") for m in model] == chain
    cleared = plan.cleared_tool_ids
    open_id = None  # lines of one response are merged: its id does not come back
    for entry in model:
        content = entry["message"]["content"]
        blocks = content if isinstance(content, list) else []
        if entry["type"] == "assistant":
            assert entry["message"].get("id") is None or entry["message"].get("id") != open_id
            open_id = entry["message"].get("id")
        elif not blocks or any(b.get("type") != "tool_result" for b in blocks):
            open_id = None
        for block in blocks:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in cleared:
                assert block["content"] == CLEARED
    assert anthropic_problems(list(to_anthropic(model, fmt))) == []
    assert openai_problems(list(to_openai(model, fmt))) == []


@pytest.mark.parametrize("path", WITH_BOUNDARY or skip_param(f"no corpus at {CORPUS}"),
                         ids=lambda p: p.name[-40:] if p else "none")
def test_real_entry_point_on_files_with_a_boundary(path: Path) -> None:
    proc = run_ctxtool("filter-compacted", input=path.read_bytes())  # piped: spooled
    assert proc.returncode == 0, proc.stderr
    _, entries = read(path)
    cut, _ = last_boundary(entries)
    assert cut is not None and proc.stdout.startswith(entries[cut].raw or b"-")
    converted = run_ctxtool("filter-compacted", "--to", "openai", str(path))
    assert converted.returncode == 0
    assert openai_problems([orjson.loads(line) for line in converted.stdout.splitlines()]) == []


@pytest.mark.parametrize("path", corpus_params())
def test_non_transcripts_fail_cleanly(path: Path) -> None:
    try:
        read(path, on_invalid="error")
    except InputError as exc:
        proc = run_ctxtool("filter-compacted", str(path))
        assert proc.returncode == 3 and proc.stdout == b""
        assert proc.stderr.decode().strip() == f"ctxtool: error: {exc}"
