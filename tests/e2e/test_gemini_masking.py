"""Gemini CLI 0.61.0's own tool-output masking, seen from outside: what it sends, what it
stores, where the output goes. Its thresholds are fixed in 0.61.0 (the newest 50,000 tool tokens
and the latest turn protected; acts from 30,000 prunable tokens), so the session reads a large
file in four parts of 2,000 lines (about 134 KB each) in one run: over 1.5 MB on disk, which is
why this is observed here and not kept as a fixture. One client run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini
from tests.e2e.gemini_cli import PROJECT, GeminiCli, Run, function_responses, read_in_parts

SESSION = "7a5c0000-1111-4222-8333-944455556666"
MASK = "<tool_output_masked>"
SAVED = re.compile(r"Full output available at: (\S+)\n</tool_output_masked>$")
ROW = "lorem ipsum dolor sit amet " * 2


@dataclass
class Masked:
    run: Run
    records: list[dict[str, Any]]
    outputs: Path  # the session's tool-outputs/ folder
    path: Path  # the session file


@pytest.fixture(scope="module")
def masked(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Masked:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path_factory.mktemp("gemini-mask"), api)
        run = read_in_parts(api, gm, SESSION, parts=4, rows=2000, row=ROW)
        path = gm.session_path(SESSION)
        records = [json.loads(line) for line in path.read_bytes().splitlines()]
    outputs = gm.home / ".gemini" / "tmp" / PROJECT / "tool-outputs" / f"session-{SESSION}"
    return Masked(run, records, outputs, path)


def outputs_of(body: dict[str, Any]) -> list[str]:
    return [r["response"]["output"] for r in function_responses(body)]


def test_older_results_go_out_masked_the_newest_whole(masked: Masked) -> None:
    turns = masked.run.turns
    assert len(turns) == 5
    assert not any(MASK in out for body in turns[:3] for out in outputs_of(body))
    last = outputs_of(turns[-1])
    assert [out.startswith(MASK) for out in last] == [True, True, False, False]
    assert all(len(out) < 1200 for out in last[:2]) and len(last[-1]) > 100_000


def test_the_full_output_is_in_tool_outputs_as_the_preview_says(masked: Masked) -> None:
    """The file named at the preview's end holds the response pretty-printed (JSON, indent 2),
    which the preview starts with (head and tail around '... [TRUNCATED] ...')."""
    previews = [out for out in outputs_of(masked.run.turns[-1]) if out.startswith(MASK)]
    saved = {Path(SAVED.search(out).group(1)) for out in previews}  # type: ignore[union-attr]
    assert saved == set(masked.outputs.iterdir())
    first = masked.records[7]["content"][0]["functionResponse"]["response"]  # read 1, stored
    text = json.dumps(first, indent=2)
    assert text in {path.read_text() for path in saved}
    assert previews[0].startswith(f"{MASK}\n{text[:250]}\n... [TRUNCATED] ...\n{text[-250:]}")


def test_masking_rewrites_the_history_under_new_ids(masked: Masked) -> None:
    """The masked history is appended record by record under new ids, then checkpointed with
    `$set messages`; the records before (the full outputs, toolCalls) stay as dead bytes."""
    checkpoints = [(n, r["$set"]["messages"]) for n, r in enumerate(masked.records)
                   if isinstance(r.get("$set"), dict) and "messages" in r["$set"]]
    assert len(checkpoints) >= 2  # the start, then each masking
    at, last = checkpoints[-1]
    assert any(MASK in json.dumps(m["content"]) for m in last)
    assert not any(m.get("toolCalls") for m in last)
    first_turn = {r.get("id") for r in masked.records[:checkpoints[1][0]]}
    assert not {m["id"] for m in last} & first_turn
    assert last[0]["content"][0]["text"].startswith("<session_context>")
    stored_whole = [r for r in masked.records[:at] if r.get("toolCalls")]
    assert len(stored_whole) >= 3 and MASK not in json.dumps(stored_whole)


def test_ctxtool_validate_is_quiet_on_a_masked_session(masked: Masked) -> None:
    """The masked calls and results under their new ids pair up as Gemini sends them."""
    proc = run_ctxtool("validate", str(masked.path))
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()
    assert proc.stdout == b""
