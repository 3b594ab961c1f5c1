"""snip and persist append a microcompact_boundary when they shrank what the last API call saw.

The meter anchors on that call's recorded usage; the boundary's ``tokensSaved`` is what it
subtracts. Only savings BEFORE the anchor count (later entries are estimated as they are now).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ctxtool.formats.claude_code.boundary import is_own_boundary
from ctxtool.core.clearing.persist import PersistOptions, PersistReport, persist
from ctxtool.core.clearing.restore import restore
from ctxtool.core.clearing.snip import SnipReport, snip
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.types import CLAUDE_CODE
from tests.clearing_helpers import MemoryStore, Session, text_with_tokens

NOW = datetime(2026, 1, 2, tzinfo=timezone.utc)
USAGE = {"input_tokens": 40_000, "output_tokens": 50}


def context(entries: list[dict[str, Any]]) -> int:
    meter = ContextMeter(CLAUDE_CODE)
    for entry in entries:
        meter.add(entry)
    return meter.context_tokens


def run_persist(entries: list[dict[str, Any]], store: Any = None,
                **options: Any) -> tuple[list[dict[str, Any]], PersistReport]:
    report = PersistReport()
    out = list(persist(entries, fmt=CLAUDE_CODE, store=store if store is not None
                       else MemoryStore(), options=PersistOptions(**options), report=report,
                       now=NOW))
    return out, report


def big_session(*, usage_after: bool = True) -> Session:
    session = Session().user("go")
    session.sized_call("Bash", 8_000)
    session.sized_call("Bash", 50)
    if usage_after:
        session.assistant("done", usage=USAGE)
    return session


def test_persist_before_the_anchor_appends_the_saving() -> None:
    session = big_session()
    store = MemoryStore()
    out, report = run_persist(session.entries, store, max_chars=1000)
    assert report.persisted == 1 and len(out) == len(session.entries) + 1
    boundary = out[-1]
    meta = boundary["microcompactMetadata"]
    assert boundary["subtype"] == "microcompact_boundary" and is_own_boundary(boundary)
    assert meta["compactedToolIds"] == []
    assert meta["tokensSaved"] == report.tokens_before - report.tokens_after > 7_000
    assert boundary["parentUuid"] == session.entries[-1]["uuid"]
    assert boundary["timestamp"] == "2026-01-02T00:00:00.000Z"
    assert boundary["sessionId"] == "sess-1"
    assert context(out) == context(session.entries) - meta["tokensSaved"]
    assert list(restore(out, fmt=CLAUDE_CODE, store=store)) == session.entries


def test_persist_twice_and_without_usage_append_nothing() -> None:
    out, _ = run_persist(big_session().entries, max_chars=1000)
    again, report = run_persist(out, max_chars=1000)
    assert again == out and report.persisted == 0
    plain = big_session(usage_after=False).entries
    out, report = run_persist(plain, max_chars=1000)
    assert report.persisted == 1 and len(out) == len(plain)


def test_persist_after_the_anchor_appends_nothing() -> None:
    session = Session().user("go").assistant("thinking", usage=USAGE)
    session.sized_call("Bash", 8_000)
    out, report = run_persist(session.entries, max_chars=1000)
    assert report.persisted == 1 and len(out) == len(session.entries)


def test_only_savings_before_the_last_anchor_count() -> None:
    session = Session().user("go")
    session.sized_call("Bash", 8_000)
    session.assistant("one", usage=USAGE)
    session.sized_call("Bash", 6_000)  # after the anchor: estimated as it is now
    out, report = run_persist(session.entries, max_chars=1000)
    assert report.persisted == 2
    saved = out[-1]["microcompactMetadata"]["tokensSaved"]
    assert 7_000 < saved < 8_000


def test_a_compaction_after_the_changes_leaves_no_saving() -> None:
    session = Session().user("go")
    session.sized_call("Bash", 8_000)
    session.compact()
    session.assistant("after", usage=USAGE)
    out, report = run_persist(session.entries, max_chars=1000)
    assert report.persisted == 1 and len(out) == len(session.entries)


def test_persist_truncate_appends_the_boundary_too() -> None:
    session = big_session()
    out, report = run_persist(session.entries, None, max_chars=1000, truncate=True)
    assert report.truncated == 1
    assert out[-1]["microcompactMetadata"]["tokensSaved"] \
        == report.tokens_before - report.tokens_after


def run_snip(entries: list[dict[str, Any]], store: Any = None) -> tuple[list[dict[str, Any]],
                                                                        SnipReport]:
    report = SnipReport()
    return list(snip(entries, fmt=CLAUDE_CODE, store=store, report=report, now=NOW)), report


def read(session: Session, path: str, tokens: int) -> str:
    return session.call("Read", {"file_path": path},
                        text_with_tokens(tokens, f"{path} read {session.calls + 1}"))


def test_snip_lists_its_ids_and_the_saving_before_the_anchor() -> None:
    session = Session().user("go")
    old = read(session, "/a.py", 3_000)
    read(session, "/a.py", 3_000)
    for _ in range(3):
        session.sized_call("Bash", 200)
    session.assistant("done", usage=USAGE)
    store = MemoryStore()
    out, report = run_snip(session.entries, store)
    meta = out[-1]["microcompactMetadata"]
    assert meta["compactedToolIds"] == [old] and is_own_boundary(out[-1])
    assert meta["tokensSaved"] == report.clear.tokens_before - report.clear.tokens_after > 2_500
    assert context(out) == context(session.entries) - meta["tokensSaved"]
    assert list(restore(out, fmt=CLAUDE_CODE, store=store)) == session.entries
    again, _ = run_snip(out, store)
    assert again == out


def test_snip_after_the_anchor_saves_nothing_there() -> None:
    session = Session().user("go").assistant("start", usage=USAGE)
    old = read(session, "/a.py", 3_000)
    read(session, "/a.py", 3_000)
    for _ in range(3):
        session.sized_call("Bash", 200)
    out, _ = run_snip(session.entries)
    meta = out[-1]["microcompactMetadata"]
    assert meta["compactedToolIds"] == [old] and meta["tokensSaved"] == 0
    assert context(out) < context(session.entries)  # the estimate after the anchor shrank


def with_side_chain(session: Session, tokens: int) -> list[dict[str, Any]]:
    """``session`` with a subagent's call stored in the main file (Claude Code 1.0 did), its
    own usage and a large result, before the main chain's last entry."""
    side = Session(session_id=session.session_id)
    side.user("subagent task")
    side.calls = 100  # tool ids of its own
    side.sized_call("Bash", tokens)
    side.assistant("sub done", usage={"input_tokens": 90_000, "output_tokens": 5})
    for entry in side.entries:
        entry["isSidechain"] = True
    return [*session.entries[:-1], *side.entries, session.entries[-1]]


def test_savings_in_a_side_chain_are_not_taken_from_the_main_context() -> None:
    entries = with_side_chain(big_session(), 8_000)
    out, report = run_persist(entries, max_chars=1000)
    assert report.persisted == 2  # both large results are saved
    meta = out[-1]["microcompactMetadata"]
    # only the main chain's saving: the side chain's result was never in this context
    main_only, _ = run_persist(big_session().entries, max_chars=1000)
    assert meta["tokensSaved"] == main_only[-1]["microcompactMetadata"]["tokensSaved"]
    assert context(out) == context(main_only)
    assert out[-1]["parentUuid"] == entries[-1]["uuid"]  # on the main chain
