"""Properties of every transform over generated transcripts (see strategies.py), run on the core
functions directly: the output is valid JSONL, no tool_use loses its tool_result (nor the other
way round), every parentUuid names an entry of the output, a second run changes nothing where
the command promises it, and ``restore`` gives back the input byte for byte after ``persist``,
``snip`` and ``microcompact``."""

from __future__ import annotations

import io
import tempfile
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from ctxtool.core.clearing.microcompact import MicrocompactOptions, microcompact
from ctxtool.core.clearing.persist import PersistOptions, persist
from ctxtool.core.clearing.restore import RestoreReport, restore
from ctxtool.core.clearing.snip import SnipOptions, snip
from ctxtool.core.messages.blocks import iter_tool_results, iter_tool_uses
from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from ctxtool.core.summarizing.offline import OfflineSummarizer
from ctxtool.core.summarizing.summarize import SummarizeOptions, compact
from ctxtool.formats.jsonl import BOM, iter_entries, loads_json, write_entries
from ctxtool.storage.store import ToolResultStore
from ctxtool.types import CLAUDE_CODE, Entry
from tests.robustness.strategies import Transcript, transcripts

NOW = datetime(2026, 1, 2, 0, 0, 0, tzinfo=timezone.utc)
PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

Transform = Callable[[list[Entry], str, ToolResultStore], Iterable[dict[str, Any]]]


def read(data: bytes) -> list[Entry]:
    return list(iter_entries(io.BytesIO(data), "t.jsonl"))


def write(entries: Iterable[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    write_entries(entries, out)
    return out.getvalue()


# Small limits so the transforms act on most generated transcripts.
TRANSFORMS: dict[str, Transform] = {
    "persist": lambda entries, fmt, store: persist(
        entries, fmt=fmt, store=store,
        options=PersistOptions(max_chars=300, max_message_chars=900)),
    "snip": lambda entries, fmt, store: snip(
        entries, fmt=fmt, store=store, options=SnipOptions(keep=1, min_tokens=0)),
    "microcompact": lambda entries, fmt, store: microcompact(
        entries, fmt=fmt, store=store, now=NOW,
        options=MicrocompactOptions(force=True, keep=1, target=0)),
    "filter-compacted": lambda entries, fmt, store: filter_compacted(
        entries, plan_cut(entries, fmt)),
    "summarize": lambda entries, fmt, store: compact(
        entries, fmt=fmt, summarizer=OfflineSummarizer(), store=store,
        options=SummarizeOptions(keep_last=2, now=NOW)).entries,
}
IDEMPOTENT = ("persist", "snip", "microcompact", "filter-compacted")  # what their --help promises
RESTORABLE = ("persist", "snip", "microcompact")


def run(name: str, data: bytes, fmt: str, store: ToolResultStore) -> bytes:
    return write(TRANSFORMS[name](read(data), fmt, store))


# --- the invariants -------------------------------------------------------------------------------

def parsed_lines(data: bytes) -> Iterator[dict[str, Any]]:
    """Each line of ``data`` as a JSON object (a BOM on line 1 and blank lines allowed)."""
    for number, line in enumerate(data.split(b"\n"), 1):
        body = line.removeprefix(BOM) if number == 1 else line
        if body.strip():
            value = loads_json(body)
            assert isinstance(value, dict), f"line {number} is not a JSON object: {line[:80]!r}"
            yield value


def assert_tool_pairs(entries: list[dict[str, Any]], fmt: str, *,
                      before: list[dict[str, Any]]) -> None:
    """Every tool_use in ``entries`` has a tool_result there and the other way round, except
    where the input itself had no partner."""
    uses = {u.id for i, e in enumerate(entries) for u in iter_tool_uses(e, fmt, i)}
    results = {r.tool_use_id for i, e in enumerate(entries) for r in iter_tool_results(e, fmt, i)}
    paired_before = ({u.id for e in before for u in iter_tool_uses(e, fmt)}
                     & {r.tool_use_id for e in before for r in iter_tool_results(e, fmt)})
    assert not (uses ^ results) & paired_before, f"orphaned tool ids: {sorted(uses ^ results)}"


def assert_chain(entries: list[dict[str, Any]]) -> None:
    uuids = {e["uuid"] for e in entries if isinstance(e.get("uuid"), str)}
    dangling = [e["parentUuid"] for e in entries
                if isinstance(e.get("parentUuid"), str) and e["parentUuid"] not in uuids]
    assert not dangling, f"parentUuid pointing nowhere: {dangling}"


def check_output(name: str, transcript: Transcript, out: bytes) -> None:
    entries = list(parsed_lines(out))
    before = [dict(e) for e in read(transcript.data)]
    if name in RESTORABLE or (name == "summarize" and transcript.fmt == CLAUDE_CODE):
        # they remove no entry (summarize appends to a Claude Code transcript; for message lists
        # it replaces the history by the summary, and filter-compacted cuts it)
        assert len(entries) >= len([e for e in before if e])
    assert_tool_pairs(entries, transcript.fmt, before=before)
    if transcript.fmt == CLAUDE_CODE:
        assert_chain(entries)


# --- the properties -------------------------------------------------------------------------------

@settings(max_examples=10, deadline=None)
@given(transcript=transcripts())
def test_generated_transcripts_hold_the_invariants(transcript: Transcript) -> None:
    """The control: what the properties check holds for the inputs, and fails on a broken one."""
    entries = list(parsed_lines(transcript.data))
    assert_tool_pairs(entries, transcript.fmt, before=entries)
    assert_chain(entries)
    with pytest.raises(AssertionError):
        assert_chain([{"uuid": "a", "parentUuid": "gone"}])
    with pytest.raises(AssertionError):
        both = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "x",
                                                   "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]
        assert_tool_pairs(both[:1], "anthropic", before=both)


@pytest.mark.parametrize("name", list(TRANSFORMS))
@PROPERTY
@given(transcript=transcripts())
def test_transform_keeps_the_invariants(name: str, transcript: Transcript) -> None:
    with tempfile.TemporaryDirectory() as root:
        store = ToolResultStore(root, durable=False)
        once = run(name, transcript.data, transcript.fmt, store)
        check_output(name, transcript, once)
        if name in IDEMPOTENT:
            assert run(name, once, transcript.fmt, store) == once, f"{name} twice != once"
        if name in RESTORABLE:
            back = write(restore(read(once), fmt=transcript.fmt,
                                 store=ToolResultStore(root), report=RestoreReport()))
            assert back == transcript.data
        assert_inside(Path(root))


@PROPERTY
@given(transcript=transcripts())
def test_restore_undoes_a_whole_pipeline(transcript: Transcript) -> None:
    """persist | snip | microcompact | restore gives back the input, byte for byte."""
    with tempfile.TemporaryDirectory() as root:
        store = ToolResultStore(root, durable=False)
        data = transcript.data
        for name in RESTORABLE:
            data = run(name, data, transcript.fmt, store)
        check_output("microcompact", transcript, data)
        back = write(restore(read(data), fmt=transcript.fmt, store=ToolResultStore(root),
                             report=RestoreReport()))
        assert back == transcript.data


def assert_inside(root: Path) -> None:
    """Whatever a transform saved stays under the store root, as regular files."""
    for path in root.rglob("*"):
        assert path.resolve().is_relative_to(root.resolve())
        assert not path.is_symlink()


@PROPERTY
@given(transcript=transcripts(max_turns=3))
def test_identity_round_trip_is_byte_identical(transcript: Transcript) -> None:
    assert write(read(transcript.data)) == transcript.data
