"""persist core: Claude Code's placeholder shape, triggers, budgets, idempotence, failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ctxtool.core.clearing.persist import (PersistOptions, PersistReport, auto_max_chars, choose,
                                  format_size, measure_context, persist, persisted_output,
                                  preview, truncate_text)
from ctxtool.core.clearing.restore import placeholder_path
from ctxtool.errors import StoreError
from ctxtool.storage.store import ToolResultStore
from tests.persist_fixtures import (SESSION, anthropic_results, as_entries, big_text, cc_results,
                                    cc_tool_use, result_contents)


class BrokenStore:
    """A store whose disk is full."""

    def save(self, content: Any, *, tool_use_id: str, session_id: str | None) -> str:
        raise StoreError("cannot write: No space left on device", source="/full/disk")

    def load(self, path: str) -> Any:
        return None


def run(entries: list[dict[str, Any]], store: Any, fmt: str = "claude-code",
        **options: Any) -> tuple[list[dict[str, Any]], PersistReport, list[str]]:
    report, warnings = PersistReport(), []
    out = list(persist(entries, fmt=fmt, store=store, options=PersistOptions(**options),
                       report=report, warn=warnings.append))
    return out, report, warnings


# --- the placeholder -----------------------------------------------------------------------------

def test_format_size_matches_claude_code() -> None:
    # expected values from Claude Code's formatFileSize run under node
    cases = {0: "0 bytes", 950: "950 bytes", 1023: "1023 bytes", 1024: "1KB", 2000: "2KB",
             1075: "1KB", 137933: "134.7KB", 35942: "35.1KB", 1048576: "1MB",
             1572864: "1.5MB", 52428: "51.2KB", 51251: "50KB"}
    assert {n: format_size(n) for n in cases} == cases


def test_preview_cuts_at_last_newline_only_past_half() -> None:
    late = "a" * 1500 + "\n" + "b" * 1000
    assert preview(late, 2000) == ("a" * 1500, True)
    early = "a" * 500 + "\n" + "b" * 3000
    assert preview(early, 2000) == (early[:2000], True)
    assert preview("short\n", 2000) == ("short\n", False)
    exactly = "x" * 2000
    assert preview(exactly, 2000) == (exactly, False)


def test_persisted_output_has_claude_codes_exact_shape() -> None:
    text = ("line\n" * 30000)[:137933]
    block = persisted_output("/p/s/tool-results/toolu_1.txt", text)
    head, _ = preview(text)
    assert block == ("<persisted-output>\nOutput too large (134.7KB). Full output saved to: "
                     "/p/s/tool-results/toolu_1.txt\n\nPreview (first 2KB):\n" + head
                     + "\n...\n</persisted-output>")
    assert placeholder_path(block) == "/p/s/tool-results/toolu_1.txt"
    small = persisted_output("/p/tool-results/t.txt", "tiny")
    assert small.endswith("Preview (first 2KB):\ntiny\n</persisted-output>")


def test_size_label_counts_utf16_units_like_javascript() -> None:
    emoji = "😀" * 600  # 600 code points, 1200 UTF-16 units
    assert "Output too large (1.2KB)" in persisted_output("/t/tool-results/a.txt", emoji)


# --- what gets persisted -------------------------------------------------------------------------

def test_only_results_over_max_chars_are_persisted(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    big, small = big_text(50_001), big_text(50_000)
    out, report, _ = run(as_entries([cc_tool_use("toolu_a"), cc_results(("toolu_a", big),
                                                                        ("toolu_b", small))]),
                         store)
    first, second = result_contents(out[1])
    assert placeholder_path(first) == str(tmp_path / SESSION / "tool-results" / "toolu_a.txt")
    assert second == small
    assert (tmp_path / SESSION / "tool-results" / "toolu_a.txt").read_text() == big
    assert (report.persisted, report.results, report.entries_changed, report.files) == (1, 2, 1, 1)
    assert report.tokens_after < report.tokens_before


def test_block_list_results_are_stored_as_json(tmp_path: Path) -> None:
    blocks = [{"type": "text", "text": big_text(60_000)}]
    out, _, _ = run([cc_results(("toolu_a", blocks))], ToolResultStore(tmp_path))
    path = placeholder_path(result_contents(out[0])[0])
    assert path is not None and path.endswith("toolu_a.json")
    assert orjson.loads(Path(path).read_bytes()) == blocks
    # the preview is of the stored JSON text, as Claude Code does
    assert 'Preview (first 2KB):\n[\n  {\n    "type": "text",' in result_contents(out[0])[0]


def test_images_empty_results_and_placeholders_are_left_alone(tmp_path: Path) -> None:
    image = [{"type": "image", "source": {"type": "base64", "data": "A" * 90_000}},
             {"type": "text", "text": "x"}]
    already = persisted_output("/old/s/tool-results/t.txt", big_text(60_000))
    entries = [cc_results(("i", image), ("e", ""), ("p", already), ("n", None))]
    out, report, _ = run(entries, ToolResultStore(tmp_path), max_chars=10, max_message_chars=10)
    assert out[0] is entries[0] and report.persisted == 0
    assert not any(tmp_path.iterdir())


def test_persist_is_idempotent(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    entries = as_entries([cc_results(("a", big_text(70_000)), ("b", big_text(10)))])
    once, _, _ = run(entries, store)
    twice, report, _ = run(once, store)
    assert twice[0] is once[0] and report.persisted == 0


def test_max_lines_is_an_alternative_trigger(tmp_path: Path) -> None:
    many_lines = "x\n" * 2001
    out, _, _ = run([cc_results(("a", many_lines))], ToolResultStore(tmp_path), max_lines=2000)
    assert placeholder_path(result_contents(out[0])[0])
    out, _, _ = run([cc_results(("a", many_lines))], ToolResultStore(tmp_path))
    assert result_contents(out[0])[0] == many_lines


def test_message_budget_moves_the_largest_first() -> None:
    sizes = {0: (60_000, 1), 1: (90_000, 1), 2: (80_000, 1), 3: (50_000, 1)}
    # none over max_chars=100000; total 280000 > 200000: 90000 goes (190000 left, fits)
    assert choose(sizes, PersistOptions(max_chars=100_000)) == [1]
    assert choose(sizes, PersistOptions(max_chars=100_000, max_message_chars=100_000)) == [1, 2, 0]
    assert choose(sizes, PersistOptions(max_chars=55_000, max_message_chars=None)) == [0, 1, 2]


def test_message_budget_end_to_end(tmp_path: Path) -> None:
    results = [(f"t{i}", big_text(45_000 + i)) for i in range(5)]  # 225010 chars, each < 50000
    out, report, _ = run([cc_results(*results)], ToolResultStore(tmp_path))
    contents = result_contents(out[0])
    persisted = [i for i, c in enumerate(contents) if placeholder_path(c)]
    assert persisted == [4]  # the largest alone brings it to 180006 <= 200000
    assert report.persisted == 1


def test_anthropic_and_openai_formats(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    out, _, _ = run([anthropic_results(("toolu_x", big_text(60_000)))], store, fmt="anthropic")
    assert str(tmp_path / "default" / "tool-results" / "toolu_x.txt") == \
        placeholder_path(result_contents(out[0])[0])
    tool_msg = {"role": "tool", "tool_call_id": "call_1", "content": big_text(60_000)}
    out, _, _ = run([{"role": "user", "content": "hi"}, tool_msg], store, fmt="openai")
    assert placeholder_path(out[1]["content"]).endswith("call_1.txt")
    assert out[0]["content"] == "hi"


def test_input_entries_are_never_mutated(tmp_path: Path) -> None:
    entries = as_entries([cc_results(("a", big_text(60_000)))])
    before = orjson.dumps(entries[0])
    raw = entries[0].raw
    run(entries, ToolResultStore(tmp_path))
    assert orjson.dumps(entries[0]) == before and entries[0].raw == raw


def test_a_failing_store_leaves_results_in_place_and_reports() -> None:
    entries = as_entries([cc_results(("a", big_text(60_000)))])
    out, report, warnings = run(entries, BrokenStore())
    assert out[0] is entries[0]
    assert report.failed == 1 and report.persisted == 0
    assert len(warnings) == 1 and "t.jsonl:1" in warnings[0] and "No space left" in warnings[0]


def test_invalid_entries_pass_through(tmp_path: Path) -> None:
    from ctxtool.types import Entry
    bad = Entry({}, raw=b"{oops\n", invalid=True)
    out, _, _ = run([bad], ToolResultStore(tmp_path), max_chars=1)
    assert out == [bad] and out[0] is bad


# --- --truncate ----------------------------------------------------------------------------------

def test_truncate_keeps_head_and_tail_within_the_limit() -> None:
    text = "".join(f"{i:05d}\n" for i in range(20_000))  # 120000 chars
    cut = truncate_text(text, 50_000)
    assert len(cut) <= 50_000
    assert cut.startswith("00000\n") and cut.endswith("19999\n")
    marker = cut[cut.index("\n\n[..."):cut.index("...]\n\n") + 6]
    removed = len(text) - (len(cut) - len(marker))
    assert marker == f"\n\n[... {removed} chars truncated ...]\n\n"
    assert truncate_text("short", 10) == "short"


def test_truncate_option_writes_no_files(tmp_path: Path) -> None:
    blocks = [{"type": "text", "text": big_text(60_000)}]
    entries = [cc_results(("a", big_text(60_000)), ("b", blocks))]
    out, report, _ = run(entries, None, truncate=True, max_chars=1000)
    first, second = result_contents(out[0])
    assert len(first) <= 1000 and "chars truncated ...]" in first
    assert len(second[0]["text"]) <= 1000
    assert report.truncated == 2 and not any(tmp_path.iterdir())
    again, report2, _ = run(out, None, truncate=True, max_chars=1000)
    assert again[0] is out[0] and report2.truncated == 0


# --- --budget auto -------------------------------------------------------------------------------

def test_auto_tiers() -> None:
    assert auto_max_chars(40_000, 100_000, 50_000) == 50_000  # below half: only the ceiling
    assert auto_max_chars(40_000, 100_000, None) is None
    assert auto_max_chars(50_000, 100_000, 50_000) == 30_000
    assert auto_max_chars(70_000, 100_000, 50_000) == 30_000
    assert auto_max_chars(70_001, 100_000, 50_000) == 15_000
    assert auto_max_chars(90_000, 100_000, 10_000) == 10_000  # --max-chars stays a ceiling


def test_measure_context_uses_the_estimate_rule() -> None:
    entries = [cc_tool_use("t"), cc_results(("t", "x" * 4000))]
    use = measure_context(entries, "claude-code")
    assert use.model == "claude-sonnet-4-5"
    # anchored on the assistant's usage (10 + 5), plus the estimate of what followed
    assert 15 < use.tokens < 15 + 2000
