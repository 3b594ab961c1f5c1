"""Golden cases for snip and microcompact: tests/golden/{snip,microcompact}/<case>/case.json.

A case gives the session (steps built with tool results of an exact token size, so each
numeric rule is hit at its boundary whatever the estimator's calibration), the command line,
and what must come out: the exit code, which results are cleared and with which placeholder,
the boundary entry, and the stderr line. The runner also checks every other output line is the
input line byte for byte, and that a cleared line differs from its input line only in the
cleared content (and, with --clear-tool-inputs, the input).

    {"description": "...", "args": ["microcompact", "--force", "{input}"], "env": {},
     "session": [{"user": "go"}, {"call": "Bash", "tokens": 37001}, {"assistant": "done"}],
     "expect": {"exit_code": 0, "cleared": ["toolu_001"], "placeholder": "cleared",
                "boundary": {"preTokens": 40001, ...} or null, "stderr": "..."}}

A call's result is sized by ``"tokens"`` (ctxtool's estimate) or by ``"chars"`` (Claude Code's
count, characters / 4: what microcompact's claude-code and idle rules decide by). A boundary's
values may be given as ``"N-{after}"`` (N less the placeholders written, when they name a saved
file, whose path depends on where the test runs), ``"{before}-{after}"`` (ctxtool's estimate of
the cleared results, less the placeholders) or ``"{agent}"`` (Claude Code's count of the cleared
results); the stderr line may say ``{before}`` (ctxtool's estimate of the cleared results).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.core.clearing.replace import CLEARED, SNIPPED
from ctxtool.core.clearing.twopass import CLEARED_INPUT_KEY
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.formats.claude_code.rules import rough_tokens
from tests.clearing_helpers import Session, text_with_chars, text_with_tokens

HERE = Path(__file__).parent
CASES = sorted([*HERE.glob("snip/*/case.json"), *HERE.glob("microcompact/*/case.json")])


def build(steps: list[dict[str, Any]]) -> Session:
    session = Session()
    for step in steps:
        if "user" in step:
            session.user(step["user"])
        elif "assistant" in step:
            session.assistant(step["assistant"], usage=step.get("usage"))
        elif "call" in step:
            tag = step.get("tag") or f"result {session.calls + 1} of {step['call']}"
            tool_input = step.get("input") or {"command": f"step {session.calls + 1}"}
            text = text_with_chars(step["chars"], tag) if "chars" in step \
                else text_with_tokens(step["tokens"], tag)
            session.call(step["call"], tool_input, text)
        elif "compact" in step:
            session.compact()
        elif "at" in step:  # the next entry is stamped exactly at this time
            session.clock = datetime.fromisoformat(step["at"].replace("Z", "+00:00")) \
                - timedelta(seconds=30)
        else:
            raise ValueError(f"unknown step {step}")
    return session


def _computed(value: str, numbers: dict[str, int]) -> int:
    """``"N-{after}"``, ``"{before}-{after}"``, ``"{agent}"``: the figure they name."""
    terms = [numbers[t[1:-1]] if t.startswith("{") else int(t) for t in value.split("-")]
    return terms[0] - sum(terms[1:])


def placeholder(kind: str, tool_id: str, store: Path) -> str:
    path = store / "sess-1" / "tool-results" / f"{tool_id}.txt"
    return {"cleared": CLEARED, "snipped": SNIPPED,
            "saved": f"<persisted-output>Tool result saved to: {path}\n\nUse Read to view"
                     "</persisted-output>",
            "snipped-saved": f"{SNIPPED}\nTool result saved to: {path}"}[kind]


def results_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    content = (entry.get("message") or {}).get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if b.get("type") == "tool_result"]


@pytest.mark.parametrize("case", CASES or [None], ids=[f"{c.parent.parent.name}/{c.parent.name}"
                                                      for c in CASES] or ["none"])
def test_golden(runner, tmp_path: Path, case: Path | None) -> None:
    if case is None:
        pytest.skip("no golden cases")
    spec = json.loads(case.read_text())
    expect = spec["expect"]
    session = build(spec["session"])
    source = tmp_path / "input.jsonl"
    source.write_bytes(session.jsonl())
    store = tmp_path / "store"
    args = [a.format(input=source, store=store) for a in spec["args"]]
    result = runner.invoke(cli, args, env=spec.get("env"), catch_exceptions=False)
    assert result.exit_code == expect["exit_code"], result.stderr

    in_lines = source.read_bytes().splitlines(keepends=True)
    out_lines = result.stdout_bytes.splitlines(keepends=True)
    boundary = expect.get("boundary")
    assert len(out_lines) == len(in_lines) + (boundary is not None)
    cleared, cleared_tokens, original_tokens, agent_tokens = [], 0, 0, 0
    for before, after in zip(in_lines, out_lines):
        if before == after:
            continue
        old, new = orjson.loads(before), orjson.loads(after)
        for old_block, new_block in zip(results_of(old), results_of(new)):
            tool_id = old_block["tool_use_id"]
            assert new_block["content"] == placeholder(expect["placeholder"], tool_id, store)
            cleared.append(tool_id)
            cleared_tokens += estimate_text_tokens(new_block["content"])
            original_tokens += estimate_text_tokens(old_block["content"])
            agent_tokens += rough_tokens(old_block["content"])
            old_block["content"] = new_block["content"]
        if expect.get("inputs_cleared"):
            for old_block, new_block in zip(old["message"]["content"], new["message"]["content"]):
                if old_block.get("type") == "tool_use" and old_block != new_block:
                    assert set(new_block["input"]) == {CLEARED_INPUT_KEY}
                    old_block["input"] = new_block["input"]
        assert orjson.dumps(old) + b"\n" == after  # nothing else changed in the line
    assert sorted(set(cleared)) == sorted(expect["cleared"])

    if boundary is not None:
        appended = orjson.loads(out_lines[-1])
        assert appended["subtype"] == "microcompact_boundary"
        assert appended["parentUuid"] == session.entries[-1]["uuid"]
        numbers = {"after": cleared_tokens, "before": original_tokens, "agent": agent_tokens}
        boundary = {k: _computed(v, numbers) if isinstance(v, str) and "{" in v else v
                    for k, v in boundary.items()}
        assert {k: appended["microcompactMetadata"][k] for k in boundary} == boundary
    fields = {"store": store, "after": f"{cleared_tokens:,}", "change": "",
              "before": f"{original_tokens:,}"}
    cleared = re.search(r"([\d,]+|\{before\}) -> \{after\} tokens", expect["stderr"])
    if cleared:  # the summary line's percentage follows from the two figures
        before = original_tokens if cleared.group(1) == "{before}" \
            else int(cleared.group(1).replace(",", ""))
        fields["change"] = f"{(cleared_tokens - before) / before:+.0%}"
    assert result.stderr == expect["stderr"].format(**fields)
