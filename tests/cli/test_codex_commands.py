"""Every command on rollouts the real Codex CLI 0.171.0 wrote (tests/fixtures/codex-0.171.0),
through the real entry point: estimate against Codex's own token_count, persist/microcompact
undone by restore byte for byte, filter-compacted at Codex's compacted records, summarize
appending a compaction, validate with the schema."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import orjson
import pytest

from tests.conftest import FIXTURES, ROOT, run_ctxtool

FOLDER = FIXTURES / "codex-0.171.0"
TOOLS, COMPACTED = FOLDER / "tools.jsonl", FOLDER / "compacted.jsonl"


def lines(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines()]


def outputs(data: bytes) -> dict[str, str]:
    return {e["payload"]["call_id"]: e["payload"]["output"] for e in lines(data)
            if e["type"] == "response_item" and e["payload"]["type"] == "function_call_output"}


def ok(*args: str, data: bytes | None = None) -> bytes:
    proc = run_ctxtool(*args, input=data)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def last_usage(path: Path) -> dict:
    counts = [e for e in lines(path.read_bytes()) if e["type"] == "event_msg"
              and e["payload"]["type"] == "token_count" and e["payload"]["info"]]
    return counts[-1]["payload"]["info"]


@pytest.mark.parametrize("path", [TOOLS, COMPACTED], ids=["tools", "compacted"])
def test_estimate_is_within_ten_percent_of_codex_own_count(path: Path) -> None:
    report = orjson.loads(ok("estimate", "--json", str(path)))
    codex = last_usage(path)["last_token_usage"]["total_tokens"]
    assert report["format"] == "codex" and report["model"] == "gpt-5-codex"  # its turn_context
    assert abs(report["context_tokens"] - codex) <= 0.10 * codex, (report["context_tokens"], codex)


@pytest.mark.parametrize("path", [TOOLS, COMPACTED], ids=["tools", "compacted"])
def test_estimate_json_of_a_rollout_is_valid_by_the_report_schema(path: Path) -> None:
    schema = orjson.loads((ROOT / "schemas" / "estimate-report.schema.json").read_bytes())
    jsonschema.validate(orjson.loads(ok("estimate", "--json", str(path))), schema)


def test_estimate_reports_where_codex_compacts() -> None:
    """Codex compacts at 90% of the model's window, of which model_context_window is 95%: the
    fixture's 40,000-token window (config.toml) is recorded as 38,000 and compacts at 36,000
    (Claude Code's thresholds would warn at a negative size for such a window)."""
    report = orjson.loads(ok("estimate", "--json", str(COMPACTED)))
    last = last_usage(COMPACTED)
    assert report["codex"] == {"window": 38_000, "model_window": 40_000, "usable": 36_000,
                               "count": last["last_token_usage"]["total_tokens"],
                               "overflow": False}
    assert report["status"] == "ok" and report["percent"]["auto_compact"] == round(
        100 * report["context_tokens"] / 36_000, 1)
    text = ok("estimate", str(TOOLS)).decode()
    assert "compacts at      244,800  (Codex: 90% of the model's 272,000" in text
    assert "Codex check      last turn 13,936 tokens, no compaction due" in text


def test_estimate_past_codex_own_limit_is_auto_compact(tmp_path: Path) -> None:
    """The same rollout recorded with a 14,000-token window: its last turn (13,936 tokens) is
    past 90% of the model's 14,736, so Codex compacts before its next turn (and at 98% of the
    window it is past the blocking line too)."""
    small = tmp_path / "small.jsonl"
    small.write_bytes(TOOLS.read_bytes().replace(b'"model_context_window":258400',
                                                 b'"model_context_window":14000'))
    report = orjson.loads(ok("estimate", "--json", str(small)))
    assert report["codex"]["usable"] == 13_262 and report["codex"]["overflow"] is True
    assert report["status"] == "blocking"
    assert "compacts before its next turn" in ok("estimate", str(small)).decode()


def test_summarize_auto_compacts_by_codex_rule(tmp_path: Path) -> None:
    assert ok("summarize", "--auto", str(TOOLS)) == TOOLS.read_bytes()  # 13,936 < 244,800
    small = tmp_path / "small.jsonl"
    small.write_bytes(TOOLS.read_bytes().replace(b'"model_context_window":258400',
                                                 b'"model_context_window":14000'))
    compacted = lines(ok("summarize", "--auto", str(small)))
    assert [e["type"] for e in compacted].count("compacted") == 1


def test_estimate_with_another_window_uses_ctxtool_thresholds() -> None:
    report = orjson.loads(ok("estimate", "--json", "--context-window", "100000", str(TOOLS)))
    assert "codex" not in report and report["thresholds"]["window"] == 100_000


def test_estimate_after_a_compaction_counts_what_it_kept(tmp_path: Path) -> None:
    """Up to a compacted record (no usage after it): the kept history and the summary plus the
    system figure the session's calls showed - far below the count before it."""
    entries = lines(COMPACTED.read_bytes())
    at = max(i for i, e in enumerate(entries) if e["type"] == "compacted")
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries[:at + 1]))
    report = orjson.loads(ok("estimate", "--json", str(cut)))
    before = max(e["payload"]["info"]["last_token_usage"]["total_tokens"] for e in entries[:at]
                 if e["type"] == "event_msg" and e["payload"]["type"] == "token_count"
                 and e["payload"]["info"])
    assert report["method"] == "heuristic" and report["context_tokens"] < before


@pytest.mark.parametrize("args", [["persist", "--max-chars", "2000"],
                                  ["microcompact", "--force", "--keep", "0", "--target", "0"]],
                         ids=["persist", "microcompact"])
def test_clearing_then_restore_is_byte_identical(args: list[str], tmp_path: Path) -> None:
    original = TOOLS.read_bytes()
    store = str(tmp_path / "store")
    changed = ok(*args, "--store", store, str(TOOLS))
    before, after = outputs(original), outputs(changed)
    cleared = [cid for cid in before if after[cid] != before[cid]]
    assert cleared and all("<persisted-output>" in after[cid] for cid in cleared)
    untouched = [a for a, b in zip(original.splitlines(), changed.splitlines())
                 if b"function_call_output" not in a]
    assert untouched == [b for b in changed.splitlines() if b"function_call_output" not in b]
    assert ok("restore", "--store", store, data=changed) == original


def test_filter_compacted_cuts_at_the_last_compacted_record() -> None:
    entries = lines(COMPACTED.read_bytes())
    last = max(i for i, e in enumerate(entries) if e["type"] == "compacted")
    view = lines(ok("filter-compacted", str(COMPACTED)))
    instructions = [e for e in entries[:last] if e["type"] == "session_meta" or (
        e["type"] == "response_item" and e["payload"].get("role") == "developer")]
    assert view == [*instructions, *entries[last:]]  # what stays in front, then the record on
    model = lines(ok("filter-compacted", "--view", "model", str(COMPACTED)))
    assert entries[last] in model and not any(
        e["payload"].get("type") == "function_call_output" for e in model[:model.index(entries[last])])
    assert ok("filter-compacted", str(TOOLS)) == TOOLS.read_bytes()  # no compaction: as is


def test_summarize_appends_a_compaction_and_keeps_every_line(tmp_path: Path) -> None:
    original = TOOLS.read_bytes()
    out = ok("summarize", str(TOOLS))
    assert out.startswith(original)
    added = lines(out[len(original):])
    assert [e["type"] for e in added] == ["compacted", "world_state", "turn_context"]
    payload = added[0]["payload"]
    assert payload["message"].startswith("Another language model started to solve this problem")
    assert payload["replacement_history"][-1]["content"][0]["text"] == payload["message"]
    assert not any(i["type"] == "function_call_output" for i in payload["replacement_history"])
    before = orjson.loads(ok("estimate", "--json", str(TOOLS)))["context_tokens"]
    after = orjson.loads(ok("estimate", "--json", data=out))["context_tokens"]
    assert after < before
    path = tmp_path / "summarized.jsonl"
    path.write_bytes(out)
    assert run_ctxtool("validate", "--strict", str(path)).returncode == 0


@pytest.mark.parametrize("path", [TOOLS, COMPACTED], ids=["tools", "compacted"])
def test_validate_finds_nothing_wrong(path: Path) -> None:
    proc = run_ctxtool("validate", "--strict", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_validate_names_a_broken_line(tmp_path: Path) -> None:
    entries = lines(TOOLS.read_bytes())
    at = next(i for i, e in enumerate(entries) if e["payload"].get("type") == "function_call_output")
    del entries[at]["payload"]["call_id"]
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    proc = run_ctxtool("validate", str(path))
    assert proc.returncode == 3 and f"broken.jsonl:{at + 1}".encode() in proc.stdout
    assert b"call_id" in proc.stdout
