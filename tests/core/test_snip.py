"""snip core: each supersession rule, the protections, placeholders, idempotence, restore."""

from __future__ import annotations

from typing import Any

import pytest

from ctxtool.core.clearing.replace import SNIPPED
from ctxtool.core.clearing.restore import restore
from ctxtool.core.clearing.snip import SnipOptions, SnipReport, snip
from ctxtool.core.sizing.tokens import Thresholds
from ctxtool.errors import UsageError
from ctxtool.types import CLAUDE_CODE, OPENAI
from tests.clearing_helpers import MemoryStore, Session, result_contents, text_with_tokens


def run(entries: list[dict[str, Any]], fmt: str = CLAUDE_CODE, store: Any = None,
        limits: Any = None, **options: Any) -> tuple[list[dict[str, Any]], SnipReport]:
    report = SnipReport()
    out = list(snip(entries, fmt=fmt, store=store, options=SnipOptions(**options),
                    limits=limits, report=report))
    return out, report


def snipped(entries: list[dict[str, Any]]) -> list[str]:
    return [tid for tid, content in result_contents(entries).items()
            if isinstance(content, str) and content.startswith(SNIPPED)]


def read(session: Session, path: str, tokens: int = 500, **span: int) -> str:
    return session.call("Read", {"file_path": path, **span},
                        text_with_tokens(tokens, f"{path} {span} read {session.calls + 1}"))


def padding(session: Session, count: int = 3) -> None:
    """Newer unrelated results, so the ones under test are not among the newest --keep."""
    for _ in range(count):
        session.sized_call("Bash", 300)


def test_a_file_read_again_snips_the_older_read() -> None:
    session = Session().user("go")
    old, other, new = read(session, "/a.py"), read(session, "/b.py"), read(session, "/a.py")
    padding(session)
    out, report = run(session.entries)
    assert snipped(out) == [old]
    assert new not in snipped(out) and other not in snipped(out)
    assert report.reasons == {"read again later": 1}


@pytest.mark.parametrize(("older", "newer", "superseded"), [
    ({"offset": 10, "limit": 20}, {}, True),
    ({"offset": 10, "limit": 20}, {"offset": 5, "limit": 100}, True),
    ({"offset": 10, "limit": 20}, {"offset": 10, "limit": 20}, True),
    ({}, {"offset": 1, "limit": 50}, False),
    ({"offset": 10, "limit": 20}, {"offset": 15, "limit": 100}, False),
    ({"offset": 1, "limit": 100}, {"offset": 50, "limit": 10}, False),
])
def test_only_a_covering_range_supersedes(older: dict[str, int], newer: dict[str, int],
                                          superseded: bool) -> None:
    session = Session().user("go")
    first = read(session, "/a.py", **older)
    read(session, "/a.py", **newer)
    padding(session)
    out, _ = run(session.entries)
    assert snipped(out) == ([first] if superseded else [])


@pytest.mark.parametrize("tool", ["Edit", "Write", "MultiEdit"])
def test_a_read_followed_by_a_change_is_stale(tool: str) -> None:
    session = Session().user("go")
    before = read(session, "/a.py")
    session.call(tool, {"file_path": "/a.py", "old_string": "x", "new_string": "y"}, "ok")
    after = read(session, "/b.py")
    session.call(tool, {"file_path": "/c.py"}, "ok")
    padding(session)
    out, report = run(session.entries)
    assert snipped(out) == [before]
    assert after not in snipped(out)
    assert report.reasons == {"file changed after the read": 1}


def test_searches_beyond_the_newest_3_per_tool() -> None:
    session = Session().user("go")
    greps = [session.call("Grep", {"pattern": f"p{i}"}, text_with_tokens(400, f"grep {i}"))
             for i in range(5)]
    globs = [session.call("Glob", {"pattern": f"*{i}"}, text_with_tokens(400, f"glob {i}"))
             for i in range(3)]
    padding(session)
    out, _ = run(session.entries)
    assert snipped(out) == greps[:2]  # the 4th newest Grep goes, the 3rd newest stays
    out, _ = run(session.entries, keep_searches=1)
    assert snipped(out) == greps[:4] + globs[:2]


def test_identical_results_keep_the_newest() -> None:
    session = Session().user("go")
    same = text_with_tokens(400, "same output")
    first = session.call("Bash", {"command": "make"}, same)
    second = session.call("Bash", {"command": "make"}, same)
    last = session.call("Bash", {"command": "make"}, same)
    padding(session)
    out, _ = run(session.entries)
    assert snipped(out) == [first, second] and last not in snipped(out)
    out, _ = run(session.entries, identical=False)
    assert snipped(out) == []


def test_the_newest_3_results_are_never_snipped() -> None:
    session = Session().user("go")
    a1 = read(session, "/a.py")
    read(session, "/a.py")
    out, _ = run(session.entries)
    assert snipped(out) == []  # both reads are among the 3 newest results
    session.sized_call("Bash", 300)
    out, _ = run(session.entries)
    assert snipped(out) == []  # the older read is the 3rd newest
    session.sized_call("Bash", 300)
    out, _ = run(session.entries)
    assert snipped(out) == [a1]  # now the 4th newest
    out, _ = run(session.entries, keep=4)
    assert snipped(out) == []


def test_small_results_are_left_alone() -> None:
    session = Session().user("go")
    small = read(session, "/a.py", tokens=99)
    read(session, "/a.py", tokens=99)
    big = read(session, "/b.py", tokens=100)
    read(session, "/b.py", tokens=100)
    padding(session)
    out, _ = run(session.entries)
    assert snipped(out) == [big] and small not in snipped(out)
    out, _ = run(session.entries, min_tokens=0)
    assert snipped(out) == [small, big]


def test_min_usage_snips_only_above_the_percentage() -> None:
    session = Session().user("go")
    old = read(session, "/a.py")
    read(session, "/a.py")
    padding(session)
    window = Thresholds(window=100_000, max_output=32_000, effective=80_000,
                        auto_compact=67_000, warning=47_000, blocking=97_000)
    # of the effective window, 100,000 - 20,000 (seed 001): 58.8% and 61.3%
    for used, cleared in ((47_000, False), (49_000, True)):
        entries = [*session.entries,
                   Session().assistant("ok", usage={"input_tokens": used}).entries[0]]
        out, report = run(entries, min_usage=60, limits=lambda model, version=None: window)
        assert snipped(out) == ([old] if cleared else [])
        assert report.usage_percent is not None and (report.usage_percent > 60) is cleared


def test_placeholders_saved_and_not_saved_and_restore() -> None:
    session = Session().user("go")
    old = read(session, "/a.py")
    read(session, "/a.py")
    padding(session)
    store = MemoryStore()
    out, report = run(session.entries, store=store)
    path = f"/mem/sess-1/tool-results/{old}.txt"
    assert result_contents(out)[old] == f"{SNIPPED}\nTool result saved to: {path}"
    assert report.clear.files_saved == 1
    assert list(restore(out, fmt=CLAUDE_CODE, store=store)) == session.entries
    out, _ = run(session.entries, store=None)
    assert result_contents(out)[old] == "[Content snipped - re-read if needed]"
    assert len(out) == len(session.entries) + 1  # the boundary recording the snip
    assert out[-1]["subtype"] == "microcompact_boundary"


def test_snipping_twice_changes_nothing() -> None:
    session = Session().user("go")
    same = text_with_tokens(400, "same output")
    for path in ("/a.py", "/a.py", "/b.py"):
        read(session, path)
    for _ in range(5):
        session.call("Grep", {"pattern": "x"}, text_with_tokens(400, f"g{session.calls}"))
    session.call("Bash", {"command": "make"}, same)
    session.call("Bash", {"command": "make"}, same)
    padding(session)
    store = MemoryStore()
    once, first = run(session.entries, store=store)
    twice, second = run(once, store=store)
    assert first.clear.results_cleared == 4
    assert twice == once and second.clear.results_cleared == 0


def test_results_before_the_last_compaction_are_left_alone() -> None:
    session = Session().user("go")
    old = read(session, "/a.py")
    session.compact()
    read(session, "/a.py")
    padding(session)
    out, _ = run(session.entries)
    assert old not in snipped(out)


def test_openai_reads() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i, path in enumerate(["/a.py", "/a.py", "/x", "/y", "/z"]):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function",
             "function": {"name": "read_file", "arguments": f'{{"path": "{path}"}}'}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}",
                         "content": text_with_tokens(300, f"{path} {i}")})
    out, _ = run(messages, fmt=OPENAI)
    assert out[2]["content"] == SNIPPED and out[4] is messages[4]


def test_bad_options() -> None:
    with pytest.raises(UsageError):
        SnipOptions(keep=-1)
    with pytest.raises(UsageError):
        SnipOptions(min_usage=120)
