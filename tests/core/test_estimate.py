"""ContextMeter and estimate(): usage anchor, de-dup, boundaries, breakdown, thresholds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxtool.core.sizing.estimate import (
    ContextMeter, annotate, api_view, entry_breakdown, estimate, tool_target,
)
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS, usage_of
from ctxtool.core.sizing.tokens import IMAGE_TOKENS, estimate_entry_tokens, estimate_text_tokens
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.registry import adapter_for
from ctxtool.types import CLAUDE_CODE, Entry
from tests.conftest import corpus_params
from tests.estimate_builders import (
    CODE, PROSE, assistant, compact_boundary, compact_summary, microcompact_boundary, session,
    tool_result, tool_use, usage, user,
)

CC = CLAUDE_CODE


def meter_over(entries: list[dict[str, Any]], **kwargs: Any) -> ContextMeter:
    meter = ContextMeter(CC, **kwargs)
    for entry in entries:
        meter.add(entry)
    return meter


# --- the meter ------------------------------------------------------------------------------------

def test_anchor_is_last_call_plus_estimate_after_it() -> None:
    entries = session()
    meter = meter_over(entries)
    assert meter.anchored
    prompt = 2 + 3_000 + 20_003
    own = estimate_entry_tokens(entries[4], CC)  # output recorded as 40: the estimate is larger
    after = estimate_entry_tokens(entries[5], CC)
    assert meter.context_tokens == prompt + max(40, own) + after
    assert meter.since_anchor == after


def test_streamed_lines_count_once_with_largest_snapshot() -> None:
    lines = [assistant([{"type": "text", "text": "x"}], msg_id="msg_9",
                       usage=usage(10, 1_000, 50_000, n)) for n in (1, 900, 400)]
    meter = meter_over([user("go"), *lines])
    assert meter.anchor is not None
    assert meter.anchor.prompt_tokens == 51_010
    assert meter.anchor.output_tokens == 900
    assert meter.context_tokens == 51_010 + 900  # not three times the usage, not three outputs


def test_same_message_id_with_another_request_is_another_call() -> None:
    first = assistant("a", msg_id="msg_1", request_id="req_1", usage=usage(10, 0, 1_000, 5))
    retry = assistant("a", msg_id="msg_1", request_id="req_2", usage=usage(10, 0, 2_000, 5))
    meter = meter_over([first, retry])
    assert meter.anchor is not None and meter.anchor.prompt_tokens == 2_010


def test_synthetic_messages_are_never_an_anchor() -> None:
    real = assistant("ok", msg_id="msg_1", usage=usage(5, 0, 30_000, 10))
    synthetic = assistant("API Error: overloaded", msg_id="msg_2", model="<synthetic>",
                          usage=usage(0, 0, 0, 0))
    meter = meter_over([real, synthetic])
    assert meter.anchor is not None and meter.anchor.key[0] == "msg_1"
    assert meter.since_anchor == estimate_entry_tokens(synthetic, CC)
    assert usage_of(synthetic, CC) is None


def test_without_usage_it_is_heuristic_plus_system_tokens() -> None:
    entries = [user(PROSE), assistant("fine", msg_id="m")]
    heuristic = sum(estimate_entry_tokens(e, CC) for e in entries)
    assert meter_over(entries).context_tokens == DEFAULT_SYSTEM_TOKENS + heuristic
    assert meter_over(entries, system_tokens=0).context_tokens == heuristic
    openai = [{"role": "system", "content": "be brief"}, {"role": "user", "content": PROSE}]
    meter = ContextMeter("openai", system_tokens=100)
    for entry in openai:
        meter.add(entry)
    assert not meter.anchored
    assert meter.context_tokens == 100 + sum(estimate_entry_tokens(e, "openai") for e in openai)


def test_compact_boundary_starts_over() -> None:
    summary = compact_summary("Summary of the work so far. " * 50)
    meter = meter_over([*session(), compact_boundary(), summary], system_tokens=1_000)
    assert not meter.anchored
    assert meter.context_tokens == 1_000 + estimate_entry_tokens(summary, CC)


def test_microcompact_boundary_subtracts_saved_tokens_from_the_anchor() -> None:
    before = meter_over(session()).context_tokens
    after = meter_over([*session(), microcompact_boundary(10_000)]).context_tokens
    assert after == before - 10_000
    # with no anchor before it, there is no recorded count to correct
    assert (meter_over([user("hi"), microcompact_boundary(10_000)]).context_tokens
            == meter_over([user("hi")]).context_tokens)


def test_side_chain_entries_are_not_in_the_main_context() -> None:
    side = {**tool_result("toolu_x", CODE * 5), "isSidechain": True}
    side_call = {**assistant("sub", msg_id="msg_side", usage=usage(1, 0, 90_000, 5)),
                 "isSidechain": True}
    base = meter_over(session()).context_tokens
    assert meter_over([*session(), side, side_call]).context_tokens == base
    # a subagent file is all side chain: then it is the context
    assert meter_over([side_call]).anchored


def calls(*prompts: int) -> list[dict[str, Any]]:
    """A user message, then one call per prompt size, each answered by a tool result."""
    entries: list[dict[str, Any]] = [user(PROSE)]
    for n, prompt in enumerate(prompts):
        entries += [assistant([tool_use(f"t{n}", "Bash", command="ls")], msg_id=f"msg_{n}",
                              usage=usage(5, 0, prompt - 5, 10)),
                    tool_result(f"t{n}", CODE)]
    return entries


def content_before_last_call(entries: list[dict[str, Any]]) -> int:
    last = max(i for i, e in enumerate(entries) if e["type"] == "assistant")
    return sum(estimate_entry_tokens(e, CC) for e in entries[:last])


def test_system_figure_is_the_last_calls_prompt_less_the_messages_it_was_sent() -> None:
    # a continued session: its first call carried 120K tokens the file does not hold; its later
    # calls show the real system prompt (about 20K)
    entries = calls(140_000, 20_300, 20_600)
    figure = 20_600 - content_before_last_call(entries)
    meter = meter_over(entries)
    assert meter.system_tokens == figure
    # what follows a compaction, until the next call, is counted on that figure at most the
    # default (what the end of the file gives too: statusline, sessions); a last call's
    # residual above it held the estimate's error on the messages the compaction took away
    summary = compact_summary("Summary of the work so far. " * 50)
    after = meter_over([*entries, compact_boundary(), summary])
    assert figure < DEFAULT_SYSTEM_TOKENS
    assert after.context_tokens == figure + estimate_entry_tokens(summary, CC)
    big = meter_over([*calls(140_000, 50_300, 60_600), compact_boundary(), summary])
    assert big.context_tokens == DEFAULT_SYSTEM_TOKENS + estimate_entry_tokens(summary, CC)
    # the estimate less that figure is the conversation as ctxtool counts it
    assert meter.context_tokens - meter.system_tokens == sum(
        estimate_entry_tokens(e, CC) for e in entries)
    assert meter_over(entries, system_tokens=7).system_tokens == 7  # given: kept as given


def test_a_clearing_boundary_takes_its_savings_out_of_the_system_figure() -> None:
    # the last call saw 10,000 tokens more than the (cleared) file holds now
    entries = calls(20_300, 30_600)
    plain = meter_over(entries)
    cleared = meter_over([*entries, microcompact_boundary(10_000)])
    assert cleared.system_tokens == plain.system_tokens - 10_000
    assert cleared.context_tokens == plain.context_tokens - 10_000


def test_rendered_attachments_count_as_what_was_sent() -> None:
    # Claude Code 2.1: a file restored after /compact, sent as a reminder in the next call
    text = "<system-reminder>\nResult of calling the Read tool:\n" + CODE * 3
    attachment = {"type": "attachment", "uuid": "att-1", "isSidechain": False,
                  "attachment": {"type": "file", "filename": "/a.py"},
                  "rendered": [{"content": text}], "renderedRole": "user"}
    base = meter_over([user("hi")], system_tokens=0).context_tokens
    with_file = meter_over([user("hi"), attachment], system_tokens=0).context_tokens
    assert with_file == base + estimate_text_tokens(text)
    silent = {**attachment, "rendered": None}  # snapshots and the like: nothing sent
    assert meter_over([user("hi"), silent], system_tokens=0).context_tokens == base


def test_without_usage_option_estimates_everything() -> None:
    entries = session()
    meter = meter_over(entries, use_usage=False, system_tokens=500)
    assert not meter.anchored
    assert meter.context_tokens == 500 + sum(estimate_entry_tokens(e, CC) for e in entries)
    report = estimate(entries, fmt=CC, use_usage=False)
    assert report.method == "heuristic" and report.anchor is None
    big = [assistant("x", msg_id="m", usage=usage(5, 0, 250_000, 5))]
    assert estimate(big, fmt=CC, use_usage=False).limits.window == 1_000_000


def test_kept_segment_is_followed_through_progress_lines() -> None:
    """The estimator passes over progress lines (no content), but a compaction's kept chain
    runs through them: their uuid and parent are still noted."""
    first = user(PROSE, parentUuid=None)
    hook = {"type": "progress", "uuid": "p-1", "parentUuid": first["uuid"],
            "isSidechain": False, "data": {"type": "hook_progress"}}
    last = assistant("Done.", msg_id="m1", parentUuid="p-1")
    boundary = compact_boundary()
    boundary["compactMetadata"]["preservedSegment"] = {"headUuid": first["uuid"],
                                                      "tailUuid": last["uuid"]}
    report = estimate([first, hook, last, boundary], fmt=CC, system_tokens=1_000)
    kept = estimate_entry_tokens(first, CC) + estimate_entry_tokens(last, CC)
    assert report.context_tokens == 1_000 + kept


def test_a_progress_line_with_a_message_still_names_its_model() -> None:
    line = {"type": "progress", "uuid": "p-2", "isSidechain": False,
            "message": {"model": "claude-opus-4-5"}}
    assert estimate([user("hi"), line], fmt=CC).model == "claude-opus-4-5"


def test_invalid_entries_are_ignored() -> None:
    bad = Entry({}, raw=b"{not json\n", invalid=True)
    assert meter_over([bad]).context_tokens == DEFAULT_SYSTEM_TOKENS


# --- the report -----------------------------------------------------------------------------------

def test_report_breakdown_and_offenders() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QQ=="}}
    entries = [*session(), user([{"type": "text", "text": "see"}, image])]  # type: ignore[arg-type]
    report = estimate(entries, fmt=CC, top=1)
    b = report.breakdown
    assert b["images"] == IMAGE_TOKENS
    assert b["thinking"] > 0 and b["tool_inputs"] > 0 and b["user_text"] > 0
    assert report.tool_results_by_tool["Read"] > report.tool_results_by_tool["Bash"] > 0
    assert sum(b.values()) == report.context_tokens
    assert b["system_and_tools"] == report.context_tokens - sum(
        v for k, v in b.items() if k != "system_and_tools")
    [top] = report.top
    assert (top.tool, top.target, top.tool_use_id) == ("Read", "/repo/app.py", "toolu_1")
    assert report.method == "usage" and report.model == "claude-sonnet-4-5-20250929"
    assert report.as_dict()["anchor"]["prompt_tokens"] == 23_005


def test_images_inside_tool_results_count_as_images() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QQ=="}}
    entries = [assistant([tool_use("t1", "Read", file_path="/a.png")], msg_id="m1"),
               tool_result("t1", [{"type": "text", "text": "the image"}, image])]
    parts = entry_breakdown(entries[1], CC)
    assert parts["images"] == IMAGE_TOKENS and 0 < parts["tool_results"] < 200
    report = estimate(entries, fmt=CC)
    assert report.top[0].tokens == parts["tool_results"] - 4  # framing goes to the message
    # the image counts in the context too, not only in the breakdown
    alone = estimate(entries, fmt=CC, use_usage=False)
    assert alone.context_tokens == DEFAULT_SYSTEM_TOKENS + sum(
        estimate_entry_tokens(e, CC) for e in entries)
    assert alone.breakdown["images"] == IMAGE_TOKENS


def test_total_includes_what_compaction_removed() -> None:
    entries = [*session(), compact_boundary(), compact_summary("summary " * 100)]
    report = estimate(entries, fmt=CC)
    pre = sum(estimate_entry_tokens(e, CC) for e in session())
    assert report.total_tokens == report.context_tokens + pre
    assert report.compact_boundaries == 1
    assert report.breakdown["compact_summaries"] > 0 and report.breakdown["tool_results"] == 0
    assert report.top == [] and report.method == "heuristic"


def test_thresholds_follow_model_options_and_env() -> None:
    entries = session()
    assert estimate(entries, fmt=CC).limits.auto_compact == 167_000
    assert estimate(entries, fmt=CC, model="claude-sonnet-4-5[1m]").limits.window == 1_000_000
    assert estimate(entries, fmt=CC, context_window=50_000).limits.window == 50_000
    env = {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000",
           "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE": "150000", "DISABLE_AUTO_COMPACT": "1"}
    limits = estimate(entries, fmt=CC, env=env).limits
    assert limits.effective == 192_000 and limits.auto_compact == 96_000
    assert limits.blocking == 150_000 and not limits.auto_compact_enabled


def test_window_is_inferred_from_a_prompt_above_200k() -> None:
    report = estimate([assistant("x", msg_id="m", usage=usage(5, 0, 250_000, 5))], fmt=CC)
    assert report.limits.window == 1_000_000
    assert report.as_dict()["thresholds"]["window_source"] == "usage"


@pytest.mark.parametrize(("used", "status"), [(10_000, "ok"), (150_000, "warning"),
                                              (170_000, "auto_compact"), (198_000, "blocking")])
def test_status(used: int, status: str) -> None:
    entries = [assistant("x", msg_id="m", usage=usage(0, 0, used, 0))]
    assert estimate(entries, fmt=CC).status == status


def test_tool_target() -> None:
    assert tool_target({"command": "ls\n  -la", "description": "list"}) == "ls -la"
    assert tool_target({"pattern": "foo", "path": "/src"}) == "/src"
    assert tool_target({"x": 1}) is None and tool_target("text") is None
    assert len(tool_target({"command": "x" * 500}) or "") == 120


# --- per entry and the API view -------------------------------------------------------------------

def test_annotate_adds_one_key_and_leaves_the_rest() -> None:
    entries = session()
    bad = Entry({}, raw=b"garbage\n", invalid=True)
    out = list(annotate([*entries, bad], fmt=CC))
    assert out[-1] is bad
    for original, annotated in zip(entries, out):
        rest = {k: v for k, v in annotated.items() if k != "ctxtool"}
        assert rest == original
        assert annotated["ctxtool"]["tokens"] == estimate_entry_tokens(original, CC)
    assert out[3]["ctxtool"]["category"] == "tool_results"
    assert out[1]["ctxtool"]["category"] == "thinking"
    assert out[-2]["ctxtool"]["context_tokens"] == meter_over(entries).context_tokens
    assert "ctxtool" not in entries[0]  # copy, not mutation


def test_api_view_is_after_the_last_boundary_and_alternates() -> None:
    entries = [*session(), compact_boundary(), compact_summary("summary"), *session()[:4]]
    messages = api_view(entries, CC)
    assert messages[0]["role"] == "user"
    assert messages[0]["content"][0] == {"type": "text", "text": "summary"}
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in zip(roles, roles[1:]))
    kinds = [b["type"] for m in messages if isinstance(m["content"], list) for b in m["content"]]
    assert "thinking" not in kinds and kinds.count("tool_use") == kinds.count("tool_result") == 1


# --- corpus ---------------------------------------------------------------------------------------

@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_corpus_files_estimate_sanely(path: Path) -> None:
    with path.open("rb") as handle:
        fmt, entries = detect_format(iter_entries(handle, path.name, on_invalid="skip"),
                                     "claude-code" if "ccusage" in str(path) else None)
        entries = list(entries)
    report = estimate(entries, fmt=fmt)
    data = report.as_dict()
    assert 0 < report.context_tokens <= report.total_tokens
    assert sum(data["breakdown"].values()) >= report.context_tokens
    if not adapter_for(fmt).reads_whole_session:  # a Gemini CLI session is replayed whole
        anchored = ContextMeter(fmt)
        for entry in entries:
            anchored.add(entry)
        assert (report.method == "usage") == anchored.anchored
    has_usage = any(usage_of(e, fmt) is not None for e in entries)
    if has_usage and report.compact_boundaries == 0 and not any(
            e.get("isSidechain") for e in entries[:1]):
        assert report.method == "usage"
    if report.method == "usage":
        assert report.anchor is not None
        assert report.context_tokens >= report.anchor.prompt_tokens
