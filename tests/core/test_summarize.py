"""summarize as a transform: what is appended to a Claude Code transcript, what a message list
becomes, the kept tail, restored files, --auto and the failure paths."""

from __future__ import annotations

import io
from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from ctxtool.core.summarizing.file_state import collect_file_state, strip_line_numbers
from ctxtool.core.summarizing.offline import OfflineSummarizer
from ctxtool.core.summarizing.summarize import SummarizeOptions, SummarizeReport, compact, summarize
from ctxtool.core.validating.validate import validate
from ctxtool.errors import LLMError
from ctxtool.formats.jsonl import iter_entries, write_entries
from ctxtool.llm.base import SummaryRequest, SummaryResult
from ctxtool.storage.store import ToolResultStore
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI, OPENCODE
from tests.summarize_builder import Session, coding_session, text_block

NOW = datetime(2026, 2, 1, 12, 0, 0, 250000, tzinfo=timezone.utc)
OPTIONS = SummarizeOptions(now=NOW)


class Failing:
    name = "anthropic"
    model = "claude-haiku-4-5"

    def summarize(self, request: SummaryRequest, *, progress=None) -> SummaryResult:
        raise LLMError("gave up after 3 attempts in a row: Anthropic API error 529: Overloaded")


def read(data: bytes) -> list:
    return list(iter_entries(io.BytesIO(data), "session.jsonl"))


def written(entries: list) -> bytes:
    out = io.BytesIO()
    write_entries(entries, out)
    return out.getvalue()


def test_claude_code_keeps_every_line_then_boundary_and_summary() -> None:
    session = coding_session()
    data = session.jsonl()
    done = compact(read(data), fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, transcript_path="/p/s.jsonl"))
    output = written(done.entries)
    assert output.startswith(data)  # every input line unchanged, byte for byte
    boundary, summary = [orjson.loads(line) for line in output[len(data):].splitlines()]
    last = session.entries[-1]
    assert boundary["parentUuid"] is None and boundary["logicalParentUuid"] == last["uuid"]
    assert (boundary["type"], boundary["subtype"], boundary["content"]) == (
        "system", "compact_boundary", "Conversation compacted")
    pre, post = done.report.tokens_before, done.report.tokens_after
    assert post < pre
    # durationMs: how long the summary took; 0 on a clock fixed with now
    assert boundary["compactMetadata"] == {"trigger": "manual", "preTokens": pre, "durationMs": 0,
                                           "postTokens": post, "cumulativeDroppedTokens": pre - post}
    for key in ("sessionId", "cwd", "version", "gitBranch", "userType"):
        assert boundary[key] == summary[key] == last[key]
    assert boundary["timestamp"] == summary["timestamp"] == "2026-02-01T12:00:00.250Z"
    assert summary["parentUuid"] == boundary["uuid"]
    assert summary["isCompactSummary"] is True and summary["isVisibleInTranscriptOnly"] is True
    text = summary["message"]["content"]
    assert text.startswith("This session is being continued from a previous conversation that ran "
                           "out of context. The summary below covers the earlier portion")
    # ends as Claude Code 2.1.14's own manual summary: the transcript's path, no note to carry on
    assert text.endswith("read the full transcript at: /p/s.jsonl")
    assert done.summary and done.summary in text and done.report.compacted
    assert not [p for p in validate(read(output), fmt=CLAUDE_CODE) if p.severity == "error"]


def test_same_input_same_bytes_and_auto_trigger() -> None:
    data = coding_session().jsonl()
    runs = [written(compact(read(data), fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                            options=OPTIONS).entries) for _ in range(2)]
    assert runs[0] == runs[1]
    auto = compact(read(data), fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, auto=True, auto_compact_at=10))
    assert auto.entries[-2]["compactMetadata"]["trigger"] == "auto"
    assert auto.entries[-1]["message"]["content"].endswith(
        "\nPlease continue the conversation from where we left it off without asking the user any "
        "further questions. Continue with the last task that you were asked to work on.")


@pytest.mark.parametrize(("version", "auto", "note"), [
    ("2.0.76", True, "Please continue the conversation from where we left it off without"),
    ("2.1.39", True, "Please continue the conversation from where we left off without"),
    ("2.1.39", False, None),  # the corpus's manual compactions end with the summary
    ("2.1.330", False, "Continue the conversation from where it left off without asking"),
    ("2.1.332", True, "Continue the conversation from where it left off without asking"),
])
def test_the_closing_note_is_the_one_the_sessions_version_writes(version: str, auto: bool,
                                                                 note: str | None) -> None:
    data = coding_session().jsonl().replace(b'"version":"2.1.14"', f'"version":"{version}"'.encode())
    done = compact(read(data), fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, auto=auto, auto_compact_at=10 if auto else None))
    text = done.entries[-1]["message"]["content"]
    assert done.entries[-1]["version"] == version
    if note is None:
        assert "further questions" not in text and text.endswith(done.summary.strip())
    else:
        assert text[text.index(note) - 1] == "\n" and text.endswith(
            ("work on.", "as if the break never happened."))


def test_auto_passes_through_below_the_threshold() -> None:
    items = read(coding_session().jsonl())
    done = compact(items, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(auto=True, auto_compact_at=10_000_000))
    assert done.entries == items and done.summary is None and not done.report.compacted
    assert "below the auto-compact threshold" in (done.report.reason or "")


def model_view(entries: list) -> list:
    return list(filter_compacted(entries, plan_cut(entries, CLAUDE_CODE), view="model"))


def newest(entries: list) -> list:
    """The session as Claude Code 2.1.332 would have written it (both preserved forms)."""
    return [{**e, "version": "2.1.332"} if "version" in e else e for e in entries]


def test_keep_last_keeps_messages_by_reference_never_splitting_a_tool_pair() -> None:
    session = coding_session(history=40)  # enough for the summary to save something
    items = newest(read(session.jsonl()))
    done = compact(items, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, keep_last=3))
    boundary, summary = done.entries[len(items):]  # nothing copied: kept where they are
    meta = boundary["compactMetadata"]
    segment, listed = meta["preservedSegment"], meta["preservedMessages"]
    assert segment["anchorUuid"] == listed["anchorUuid"] == summary["uuid"]
    assert segment["tailUuid"] == items[-1]["uuid"] == boundary["logicalParentUuid"]
    assert listed["allUuids"][0] == segment["headUuid"] and listed["allUuids"][-1] == segment["tailUuid"]
    # the last 3 messages are the answer, the prompt and the tool result of the second `pytest`
    # run - whose tool_use (and the text streamed with it) joined the tail
    kept = [e for e in items if e["uuid"] in set(listed["uuids"])]
    assert [e["type"] for e in kept] == ["assistant", "user", "user", "assistant"]
    view = model_view(done.entries)
    assert view[0]["uuid"] == summary["uuid"]
    blocks = [b for e in view if isinstance(e["message"]["content"], list)
              for b in e["message"]["content"]]
    uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
    assert uses == results == ["toolu_test2"]  # once each: nothing sent twice
    assert done.report.kept_messages >= 3 and done.report.tokens_after < done.report.tokens_before
    assert "Thanks! Now make the page size" not in done.summary  # kept verbatim, not summarized
    assert "kept verbatim" in summary["message"]["content"]
    assert not [p for p in validate(done.entries, fmt=CLAUDE_CODE) if p.severity == "error"]


def test_keep_tokens_and_streamed_responses_stay_whole() -> None:
    s = Session()
    s.user("first " + "x y " * 10000)
    s.assistant(text_block("a" * 4000), text_block("b" * 4000), message_id="msg_stream")
    s.user("second")
    s.assistant(text_block("ok"))
    done = compact(newest(s.entries), fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, keep_tokens=200))
    listed = set(done.entries[-2]["compactMetadata"]["preservedMessages"]["uuids"])
    stream = [e["uuid"] for e in s.entries if e["message"].get("id") == "msg_stream"]
    assert len(listed & set(stream)) in (0, 2)
    assert model_view(done.entries)[-1]["message"]["content"][0]["text"] == "ok"


def test_a_summary_that_saves_nothing_leaves_the_input_as_it_is() -> None:
    s = Session()
    s.user("hi")
    s.assistant(text_block("hello"))
    s.entries[-1]["message"]["usage"]["cache_read_input_tokens"] = 500  # a small context
    done = compact(s.entries, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(), options=OPTIONS)
    assert done.entries == s.entries and not done.report.compacted
    assert "would not make the context smaller" in (done.report.reason or "")


def test_keeping_everything_leaves_nothing_to_summarize() -> None:
    items = read(coding_session().jsonl())
    done = compact(items, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(keep_last=1000))
    assert done.entries == items and "kept tail holds every message" in (done.report.reason or "")


def test_restore_files_from_the_transcript() -> None:
    items = read(coding_session(history=80).jsonl())  # the summary and files save something
    done = compact(items, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, restore_files=5))
    restored = [e for e in done.entries[len(items):] if e.get("isMeta")]
    assert done.report.restored_files == ["/work/app/tests/test_pager.py", "/work/app/app/pager.py"]
    pager = restored[1]["message"]["content"]
    assert "latest content of /work/app/app/pager.py" in pager
    assert pager.endswith("def pages(n, size):\n    return -(-n // size)\n")  # edit applied
    assert restored[0]["parentUuid"] == done.entries[len(items) + 1]["uuid"]


def test_file_state_reads_edits_and_partial_reads() -> None:
    s = Session()
    s.call("r1", "Read", {"file_path": "/a.py"}, "     1\tx = 1\n     2\ty = 2",
           structured={"type": "text", "file": {"content": "x = 1\ny = 2", "numLines": 2, "totalLines": 2}})
    s.call("e1", "Edit", {"file_path": "/a.py", "old_string": "y = 2", "new_string": "y = 3"}, "ok")
    s.call("r2", "Read", {"file_path": "/b.py", "offset": 10, "limit": 5}, "    10\tpartial")
    s.call("e2", "Edit", {"file_path": "/c.py", "old_string": "a", "new_string": "b"}, "no", )
    state = collect_file_state(s.entries, CLAUDE_CODE)
    assert state.files["/a.py"].content == "x = 1\ny = 3" and state.files["/a.py"].edits == 1
    assert state.files["/b.py"].content is None and state.files["/b.py"].reads == 1
    assert state.files["/c.py"].content is None  # no known content to apply the edit to
    assert strip_line_numbers("     1\u2192a\n     2\u2192b") == "a\nb"
    assert strip_line_numbers("not numbered") == "not numbered"


@pytest.mark.parametrize("fmt", [ANTHROPIC, OPENAI])
def test_message_lists_become_summary_plus_tail_and_the_original_is_saved(
        tmp_path: Path, fmt: str) -> None:
    lines = [{"role": "user", "content": "write a haiku about tests"},
             {"role": "assistant", "content": "green bars in the dawn " * 300},
             {"role": "user", "content": "now one about bugs"},
             {"role": "assistant", "content": "a moth in the relay"}]
    if fmt == OPENAI:
        lines.insert(0, {"role": "system", "content": "You are a poet."})
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    store = ToolResultStore(tmp_path)
    report = SummarizeReport()
    out = list(summarize(read(data), fmt=fmt, summarizer=OfflineSummarizer(), store=store,
                         options=SummarizeOptions(now=NOW, keep_last=2), report=report))
    saved = Path(report.transcript_saved or "")
    assert saved.read_bytes() == data and saved.parent.name == "transcripts"
    lead = [{"role": "system", "content": "You are a poet."}] if fmt == OPENAI else []
    assert out[:len(lead)] == lead
    summary = out[len(lead)]
    assert summary["role"] == "user" and summary["content"].startswith(
        "[ctxtool summary] This session is being continued from a previous conversation")
    assert str(saved) in summary["content"] and "write a haiku about tests" in summary["content"]
    assert written(out[len(lead) + 1:]) == data.split(b"\n", len(lines) - 2)[-1]  # tail unchanged


def test_passthrough_on_error_gives_the_input_back() -> None:
    items = read(coding_session().jsonl())
    with pytest.raises(LLMError):
        compact(items, fmt=CLAUDE_CODE, summarizer=Failing(), options=OPTIONS)
    done = compact(items, fmt=CLAUDE_CODE, summarizer=Failing(),
                   options=SummarizeOptions(passthrough_on_error=True))
    assert done.entries == items and "529" in (done.report.error or "")


def test_empty_and_unsupported_inputs() -> None:
    done = compact([], fmt=CLAUDE_CODE, summarizer=OfflineSummarizer())
    assert done.entries == [] and done.report.reason == "nothing to summarize: no messages"
    empty = compact([], fmt=OPENCODE, summarizer=OfflineSummarizer())  # OpenCode is read too
    assert empty.entries == [] and empty.report.reason == "nothing to summarize: no messages"


@settings(max_examples=40, deadline=None)
@given(keep_last=st.integers(0, 25), keep_tokens=st.integers(0, 3000), restore=st.integers(0, 3))
def test_any_tail_keeps_pairs_and_chains(keep_last: int, keep_tokens: int, restore: int) -> None:
    """Whatever is kept, the output validates: tool pairs whole, every parentUuid resolves."""
    items = read(coding_session().jsonl())
    done = compact(items, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=NOW, keep_last=keep_last, keep_tokens=keep_tokens,
                                            restore_files=restore))
    assert not [p.format() for p in validate(done.entries, fmt=CLAUDE_CODE)
                if p.severity == "error"]
    assert done.entries[:len(items)] == items
