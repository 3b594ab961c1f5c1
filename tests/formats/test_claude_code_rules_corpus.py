"""Claude Code's rules judged against its own numbers in the corpus (skipped without it).

* every ``compact_boundary`` with ``trigger: auto``: the rule of the version that wrote it puts
  its ``preTokens`` at or over the auto-compact point;
* every ``microcompact_boundary``: ctxtool's claude-code rule, applied to the history before it,
  chooses the calls Claude Code listed, with its ``preTokens`` and ``tokensSaved`` (within 1%);
* no call a ``microcompact_boundary`` lists is cleared or counted again by ``microcompact``.

Only files the corpus manifest calls ``real`` count (fixtures were edited by hand). The
publisher of some real files replaced secrets by ``REDACTED``; a boundary whose chosen results
hold such a replacement was measured on the longer original: there ctxtool's count may only be
lower, never higher.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ctxtool.core.clearing.choosing import MicrocompactOptions, select
from ctxtool.core.clearing.microcompact import MicrocompactReport, microcompact
from ctxtool.core.clearing.twopass import default_limits, scan_tools
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.formats.claude_code.rules import context_window, rule_for, thresholds
from ctxtool.formats.limits import LONG_WINDOW
from tests.conftest import CORPUS

NOW = datetime(2026, 11, 27, tzinfo=timezone.utc)
FMT = "claude-code"


@cache
def real_files() -> list[Path]:
    """The corpus files its manifest calls real Claude Code transcripts."""
    manifest = CORPUS / "MANIFEST.md"
    if not manifest.is_file():
        return []
    rows = re.findall(r"^\| \d+ \| `([^`]+\.jsonl)` \| real \|", manifest.read_text(), re.M)
    return [CORPUS / row for row in rows if (CORPUS / row).is_file()]


def entries_of(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def boundaries(subtype: str) -> list[Any]:
    params = [pytest.param(path, i, id=f"{path.name[-36:]}:{i + 1}")
              for path in real_files() for i, entry in enumerate(entries_of(path))
              if entry.get("type") == "system" and entry.get("subtype") == subtype
              and (subtype != "compact_boundary"
                   or (entry.get("compactMetadata") or {}).get("trigger") == "auto")]
    return params or [pytest.param(None, 0, marks=pytest.mark.skip(
        reason=f"no {subtype} in a real corpus transcript (corpus at {CORPUS})"))]


# --- auto compactions -------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "index"), boundaries("compact_boundary"))
def test_auto_compactions_happen_over_the_versions_point(path: Path, index: int) -> None:
    entries = entries_of(path)
    boundary = entries[index]
    model, peak = None, 0
    for entry in entries[:index]:
        message = entry.get("message") if entry.get("type") == "assistant" else None
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            model = message.get("model") or model
            usage = message["usage"]
            peak = max(peak, sum(usage.get(k) or 0 for k in (
                "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")))
    window = LONG_WINDOW if peak > 200_000 else context_window(model)
    version = boundary.get("version")
    limits = thresholds(version=version, model=model, window=window)
    pre = boundary["compactMetadata"]["preTokens"]
    assert pre >= limits.auto_compact, (version, rule_for(version).name, pre, limits.auto_compact)
    # ... and the older single rule (167,000 for every version) would not say so for all
    assert limits.rule == rule_for(version).name


def test_the_rule_table_explains_every_real_auto_compaction() -> None:
    """Every real auto compaction happened at or over its version's point, and within 10,000
    tokens past it but for one after a large tool result (176,700 on 2.1.20)."""
    found = []
    for path in real_files():
        entries = entries_of(path)
        for i, entry in enumerate(entries):
            meta = entry.get("compactMetadata") or {}
            if entry.get("subtype") == "compact_boundary" and meta.get("trigger") == "auto":
                point = thresholds(version=entry.get("version")).auto_compact
                found.append(meta["preTokens"] - point)
    if not found:
        pytest.skip(f"no real auto compaction in the corpus at {CORPUS}")
    assert all(over >= 0 for over in found)
    assert sum(over < 10_000 for over in found) >= len(found) - 1


# --- microcompact ------------------------------------------------------------------------------

def _history(path: Path, index: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    entries = entries_of(path)
    return entries[:index], entries[index]["microcompactMetadata"]


def _stretch_uses(history: list[dict[str, Any]]) -> set[str]:
    """Tool calls since the last compaction in ``history``."""
    uses: set[str] = set()
    for entry in history:
        if entry.get("type") == "system" and entry.get("subtype") == "compact_boundary":
            uses = set()
        content = (entry.get("message") or {}).get("content") \
            if entry.get("type") == "assistant" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                uses.add(block.get("id"))
    return uses


@pytest.mark.parametrize(("path", "index"), boundaries("microcompact_boundary"))
def test_microcompact_chooses_what_claude_code_chose(path: Path, index: int) -> None:
    history, meta = _history(path, index)
    listed = meta["compactedToolIds"]
    missing = [i for i in listed if i not in _stretch_uses(history)]
    if missing:  # the file starts mid-session: the history Claude Code saw is not all here
        pytest.skip(f"{len(missing)} of the {len(listed)} calls it lists are not in the file")
    scan = scan_tools(history, fmt=FMT, meter=ContextMeter(FMT))
    selection = select(scan, MicrocompactOptions(force=True), now=NOW, limits=default_limits)
    assert [r.id for r in selection.counted] == listed
    assert selection.tokens_saved >= 20_000  # the minimum, in Claude Code's count
    # its trigger: the context was over the warning threshold of the version that wrote it
    entry = entries_of(path)[index]
    assert (scan.context_tokens or 0) >= thresholds(version=entry.get("version")).warning
    redacted = any("REDACTED" in json.dumps(e) for e in history
                   if any(i in json.dumps(e) for i in listed) and e.get("type") == "user")
    for ours, theirs in ((selection.tokens_saved, meta["tokensSaved"]),
                         (selection.tokens_before, meta["preTokens"])):
        if redacted:  # secrets replaced by the publisher: the text Claude Code counted was longer
            assert ours <= theirs * 1.01
        else:
            assert abs(ours - theirs) <= 0.01 * theirs, (ours, theirs)


@pytest.mark.parametrize(("path", "index"), boundaries("microcompact_boundary"))
def test_results_claude_code_cleared_are_not_cleared_or_counted_again(path: Path,
                                                                      index: int) -> None:
    history, meta = _history(path, index)
    entries = entries_of(path)[:index + 1]  # the history and the boundary Claude Code wrote
    listed = set(meta["compactedToolIds"])
    report = MicrocompactReport()
    out = list(microcompact(entries, fmt=FMT, store=None, now=NOW,
                            options=MicrocompactOptions(force=True, target=0), report=report))
    assert not listed & set(report.clear.cleared_ids)
    assert not listed & {r.id for r in report.selection.counted}
    kept = [e for e in out[:len(history)] if e is not None]
    assert [json.dumps(a) for a, b in zip(kept, history)
            if any(i in json.dumps(b) for i in listed) and b.get("type") == "user"] == \
        [json.dumps(b) for b in history
         if any(i in json.dumps(b) for i in listed) and b.get("type") == "user"]


def test_the_corpus_has_microcompact_boundaries_to_judge() -> None:
    if not real_files():
        pytest.skip(f"corpus not found at {CORPUS}")
    count = sum(1 for path in real_files() for e in entries_of(path)
                if e.get("subtype") == "microcompact_boundary")
    assert count >= 1
