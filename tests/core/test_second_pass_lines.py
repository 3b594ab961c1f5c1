"""The second pass of snip and microcompact parses only the lines it changes: the lines of the
results it clears (and of the calls whose input it clears, with clear_tool_inputs), plus the
anchor line snip's boundary needs. The output is the same as with every line parsed."""

from __future__ import annotations

import io
from collections.abc import Collection, Iterator
from datetime import datetime, timezone
from typing import Any

from ctxtool.core.clearing.microcompact import (MicrocompactOptions, MicrocompactReport,
                                               microcompact)
from ctxtool.core.clearing.snip import SnipReport, snip
from ctxtool.formats.jsonl import iter_entries, write_entries
from ctxtool.io.spool import iter_lazy_entries
from ctxtool.types import CLAUDE_CODE, Entry
from tests.clearing_helpers import MemoryStore, Session, text_with_tokens

NOW = datetime(2026, 2, 1, tzinfo=timezone.utc)


class SpyingSource:
    """A transcript read twice (a LazySource) that remembers which lines the second read was
    asked to parse."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.parsed: set[tuple[str, int]] = set()

    def __iter__(self) -> Iterator[Entry]:
        return iter_entries(io.BytesIO(self.data), "t.jsonl")

    def iter_parsing(self, lines: Collection[tuple[str, int]]) -> Iterator[Entry]:
        self.parsed = set(lines)
        return iter_lazy_entries(io.BytesIO(self.data).readlines(), "t.jsonl", lines)


def written(entries: Any) -> bytes:
    out = io.BytesIO()
    write_entries(entries, out)
    return out.getvalue()


def line_of(entries: list[dict[str, Any]], tool_id: str, kind: str) -> tuple[str, int]:
    for number, entry in enumerate(entries, start=1):
        for block in entry.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("type") == kind and \
                    tool_id in (block.get("id"), block.get("tool_use_id")):
                return "t.jsonl", number
    raise AssertionError(tool_id)


def session() -> tuple[Session, str, str]:
    s = Session().user("go")
    old = s.call("Read", {"file_path": "/a.py"}, text_with_tokens(3_000, "a.py, read 1"))
    bash = s.sized_call("Bash", 4_000)
    s.call("Read", {"file_path": "/a.py"}, text_with_tokens(3_000, "a.py, read 2"))
    for _ in range(3):
        s.sized_call("Grep", 200)
    s.assistant("done", usage={"input_tokens": 9_000, "output_tokens": 10})
    return s, old, bash


def test_snip_parses_only_the_results_it_clears_and_the_anchor() -> None:
    s, old, _ = session()
    source = SpyingSource(s.jsonl())
    report = SnipReport()
    now = NOW
    out = written(snip(source, fmt=CLAUDE_CODE, store=MemoryStore(), report=report, now=now))
    anchor = ("t.jsonl", len(s.entries))
    assert report.clear.results_cleared == 1
    assert source.parsed == {line_of(s.entries, old, "tool_result"), anchor}
    everything = written(snip(list(iter_entries(io.BytesIO(s.jsonl()), "t.jsonl")),
                              fmt=CLAUDE_CODE, store=MemoryStore(), now=now))
    assert out == everything


def test_microcompact_parses_a_call_line_only_when_it_clears_the_input() -> None:
    s, _, _ = session()
    for clear_inputs in (False, True):
        options = MicrocompactOptions(force=True, keep=1, target=0, clear_at_least=0,
                                     clear_tool_inputs=clear_inputs)
        source = SpyingSource(s.jsonl())
        report = MicrocompactReport()
        out = written(microcompact(source, fmt=CLAUDE_CODE, store=MemoryStore(),
                                   options=options, report=report, now=NOW))
        chosen = report.clear.cleared_ids
        assert len(chosen) >= 2
        results = {line_of(s.entries, tool_id, "tool_result") for tool_id in chosen}
        calls = {line_of(s.entries, tool_id, "tool_use") for tool_id in chosen}
        assert source.parsed == (results | calls if clear_inputs else results)
        everything = written(microcompact(list(iter_entries(io.BytesIO(s.jsonl()), "t.jsonl")),
                                          fmt=CLAUDE_CODE, store=MemoryStore(), options=options,
                                          now=NOW))
        assert out == everything
