"""A session the real Claude Code 2.1.332 wrote (scripts/make_claude_fixture.py: tool calls, a
Bash output it persisted to tool-results/, its own /compact keeping a message by reference, one
more turn): the schemas, validate, estimate and filter-compacted read the newest format."""

from __future__ import annotations

import orjson

from ctxtool.core.clearing.restore import placeholder_path
from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from tests.conftest import CLAUDE_CODE_FIXTURE, run_ctxtool

SESSION = CLAUDE_CODE_FIXTURE
FOLDER = SESSION.parent
ENTRIES = [orjson.loads(line) for line in SESSION.read_bytes().splitlines()]
BOUNDARY = next(e for e in ENTRIES if e.get("subtype") == "compact_boundary")


def test_written_by_2_1_332_with_its_own_compaction_fields() -> None:
    assert {e.get("version") for e in ENTRIES if "version" in e} == {"2.1.332"}
    meta = BOUNDARY["compactMetadata"]
    assert {"preTokens", "postTokens", "cumulativeDroppedTokens", "durationMs",
            "preservedSegment", "preservedMessages"} <= set(meta)
    for key in ("cwd", "version", "userType", "gitBranch", "slug", "entrypoint"):
        assert key in BOUNDARY


def test_validate_finds_nothing_wrong() -> None:
    proc = run_ctxtool("validate", "--strict", str(SESSION))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_filter_compacted_splices_the_kept_message_after_the_summary() -> None:
    plan = plan_cut(ENTRIES, "claude-code")
    assert plan.problem is None and plan.preserved
    view = list(filter_compacted(ENTRIES, plan, view="model"))
    assert view[0]["isCompactSummary"] is True
    kept = BOUNDARY["compactMetadata"]["preservedMessages"]["uuids"]
    assert [e["uuid"] for e in view[1:1 + len(kept)]] == kept
    assert not any(e["uuid"] == BOUNDARY["logicalParentUuid"] for e in view[1 + len(kept):])


def test_estimate_anchors_on_the_last_call_and_counts_the_compaction() -> None:
    proc = run_ctxtool("estimate", "--json", str(SESSION))
    assert proc.returncode == 0, proc.stderr
    report = orjson.loads(proc.stdout)
    last = [e for e in ENTRIES if e.get("type") == "assistant"][-1]["message"]["usage"]
    assert report["method"] == "usage" and report["compact_boundaries"] == 1
    assert report["context_tokens"] >= last["input_tokens"]
    assert report["total_tokens"] > report["context_tokens"]


def test_the_persisted_output_names_its_file_in_the_session_folder() -> None:
    results = [b for e in ENTRIES if e.get("type") == "user"
               and isinstance(e["message"]["content"], list) for b in e["message"]["content"]
               if b.get("type") == "tool_result"]
    paths = [placeholder_path(b["content"]) for b in results]
    saved = [p for p in paths if p]
    assert len(saved) == 1
    name = saved[0].rsplit("/", 1)[-1]
    assert (FOLDER / SESSION.stem / "tool-results" / name).is_file()
