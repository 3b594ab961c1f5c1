#!/usr/bin/env python3
"""Measure (and refit) ctxtool's token heuristic against real usage in Claude Code transcripts.

Truth comes from the API itself. Inside a tool loop Claude Code calls the API, runs the tools,
and calls it again with the results appended, so for two consecutive calls A and B

    truth = prompt(B) - prompt(A) - output(A)

is what the entries between them (the tool results) cost, where prompt = input_tokens +
cache_creation_input_tokens + cache_read_input_tokens. A step counts when only tool_result
messages lie between A and B (no user text, no compaction), the results hold at least
--min-chars visible characters, and no image is involved. Streamed lines of one response share
message.id and are merged (largest snapshot). Recent Claude Code versions record output_tokens
from the first stream event only (1-10 tokens), so the estimate of a step is

    estimate = estimate(tool results) + max(0, estimate(A's content) - output(A))

- the same rule ``ctxtool estimate`` applies to its usage anchor. Baselines (chars/4, Claude
Code's chars/3, a flat chars/2.7) follow the same rule with their own constant.

Files whose crc32(relative path) % 3 == 0 are held out: --fit tunes on the others only, and
every figure is printed for the tuned files, the held-out files and all of them, and for the
"recorded" steps, whose output_tokens covers A's content (there the estimate is that of the tool
results alone).

    python scripts/token_accuracy.py                  # figures for the current heuristic
    python scripts/token_accuracy.py --fit            # refit WEIGHTS and overheads, print them
    python scripts/token_accuracy.py --json > acc.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtool.core.messages.blocks import block_text, content_blocks
from ctxtool.core.sizing import tokens
from ctxtool.core.sizing.meter import Usage, usage_of
from ctxtool.formats.claude_code.chain import is_compact_boundary, is_microcompact_boundary
from ctxtool.formats.jsonl import iter_entries
from ctxtool.types import CLAUDE_CODE

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = Path(os.environ.get("CTXTOOL_SHARED", ROOT.parent / "shared")) / "corpus"
Block = dict[str, Any]


@dataclass
class Call:
    usage: Usage
    lines: list[dict[str, Any]] = field(default_factory=list)  # its streamed assistant lines
    between: list[dict[str, Any]] = field(default_factory=list)  # entries up to the next call


@dataclass
class Step:
    file: str
    held_out: bool
    truth: int
    output: int
    entries: list[dict[str, Any]]  # the user entries holding the tool results
    own_lines: list[dict[str, Any]]  # the assistant lines of call A (its output)

    @property
    def results(self) -> list[Block]:
        return [b for e in self.entries for b in content_blocks(e, CLAUDE_CODE)]

    @property
    def own(self) -> list[Block]:
        return [b for e in self.own_lines for b in content_blocks(e, CLAUDE_CODE)]

    @property
    def visible_chars(self) -> int:
        return sum(len(block_text(b)) for b in self.results)


def iter_calls(path: Path) -> Iterator[Call]:
    """API calls of the main chain in file order, streamed lines merged by message.id."""
    chain: bool | None = None
    call: Call | None = None
    with path.open("rb") as handle:
        for entry in iter_entries(handle, str(path), on_invalid="skip"):
            flag = entry.get("isSidechain")
            if isinstance(flag, bool):
                chain = flag if chain is None else chain
                if flag != chain:
                    continue
            usage = usage_of(entry, CLAUDE_CODE)
            if usage is not None and call is not None and usage.key == call.usage.key:
                call.usage = call.usage.merged(usage)
                call.lines.append(entry)
            elif usage is not None:
                if call is not None:
                    yield call
                call = Call(usage, [entry])
            elif call is not None:
                call.between.append(entry)
    if call is not None:
        yield call


def tool_result_entries(call: Call) -> list[dict[str, Any]] | None:
    """The user entries after ``call`` when all they hold is tool results, else None (user text,
    a compaction or anything else reached the model)."""
    results: list[dict[str, Any]] = []
    for entry in call.between:
        if is_compact_boundary(entry) or is_microcompact_boundary(entry):
            return None
        if entry.get("type") == "assistant":
            return None
        if entry.get("type") != "user":
            continue
        blocks = content_blocks(entry, CLAUDE_CODE)
        if not blocks or any(b.get("type") != "tool_result" for b in blocks):
            return None
        results.append(entry)
    return results


def has_image(blocks: list[Block]) -> bool:
    return any(isinstance(c, dict) and c.get("type") == "image"
               for b in blocks if isinstance(b.get("content"), list) for c in b["content"])


def collect_steps(corpus: Path, min_chars: int) -> list[Step]:
    steps: list[Step] = []
    for path in sorted(corpus.rglob("*.jsonl")):
        rel = path.relative_to(corpus).as_posix()
        held = zlib.crc32(rel.encode()) % 3 == 0
        calls = list(iter_calls(path))
        for a, b in zip(calls, calls[1:]):
            entries = tool_result_entries(a)
            if not entries:
                continue
            step = Step(rel, held, b.usage.prompt_tokens - a.usage.prompt_tokens
                        - a.usage.output_tokens, a.usage.output_tokens, entries, a.lines)
            if (step.truth > 0 and step.visible_chars >= min_chars
                    and not has_image(step.results)):
                steps.append(step)
    return steps


# --- estimators ------------------------------------------------------------------------------------

EntryEstimator = Callable[[dict[str, Any]], float]


def flat(chars_per_token: float) -> EntryEstimator:
    """A constant chars-per-token rule over the visible text (images excluded by the filter)."""
    return lambda entry: sum(len(block_text(b))
                             for b in content_blocks(entry, CLAUDE_CODE)) / chars_per_token


def ctxtool_entry(entry: dict[str, Any]) -> float:
    return tokens.estimate_entry_tokens(entry, CLAUDE_CODE)


def step_estimate(step: Step, estimator: EntryEstimator) -> float:
    """Tool results, plus what A produced beyond its recorded output (the anchor rule)."""
    unrecorded = max(0.0, sum(estimator(e) for e in step.own_lines) - step.output)
    return sum(estimator(e) for e in step.entries) + unrecorded


def figures(steps: list[Step], estimator: EntryEstimator) -> dict[str, float]:
    if not steps:
        return {"steps": 0}
    estimates = [step_estimate(s, estimator) for s in steps]
    errors = sorted(abs(e - s.truth) / s.truth for e, s in zip(estimates, steps))
    p90 = errors[min(len(errors) - 1, int(round(0.9 * (len(errors) - 1))))]
    return {"steps": len(steps), "median_abs_error": round(statistics.median(errors), 4),
            "p90_abs_error": round(p90, 4),
            "sum_ratio": round(sum(estimates) / sum(s.truth for s in steps), 4)}


ESTIMATORS: dict[str, EntryEstimator] = {
    "ctxtool": ctxtool_entry, "chars/4": flat(4), "chars/3": flat(3), "chars/2.7": flat(2.7)}


# --- fitting ---------------------------------------------------------------------------------------

def solve(rows: list[list[float]], targets: list[float], weights: list[float]) -> list[float]:
    """Weighted least squares by the normal equations (a dozen features: no numpy needed)."""
    k = len(rows[0])
    a = [[sum(w * r[i] * r[j] for r, w in zip(rows, weights)) for j in range(k)] for i in range(k)]
    b = [sum(w * r[i] * t for r, t, w in zip(rows, targets, weights)) for i in range(k)]
    for col in range(k):  # Gauss-Jordan with partial pivoting
        pivot = max(range(col, k), key=lambda r: abs(a[r][col]))
        a[col], a[pivot], b[col], b[pivot] = a[pivot], a[col], b[pivot], b[col]
        if abs(a[col][col]) < 1e-9:
            continue
        for r in range(k):
            if r != col and a[r][col]:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] if abs(a[i][i]) > 1e-9 else 0.0 for i in range(k)]


def solve_nonnegative(rows: list[list[float]], targets: list[float],
                      weights: list[float]) -> list[float]:
    """Least squares with every coefficient >= 0 (a token count never shrinks as text grows):
    drop the most negative feature and solve again until none is negative."""
    active = list(range(len(rows[0])))
    while True:
        coef = solve([[r[i] for i in active] for r in rows], targets, weights)
        worst = min(range(len(active)), key=lambda i: coef[i])
        if coef[worst] >= 0:
            full = [0.0] * len(rows[0])
            for i, c in zip(active, coef):
                full[i] = c
            return full
        del active[worst]


def text_row(texts: list[str]) -> list[float]:
    row = [0.0] * len(tokens.FEATURES)
    for text in texts:
        for i, c in enumerate(tokens.text_features(text)[0]):
            row[i] += c
    return row


def result_texts(block: Block) -> list[str]:
    content = block.get("content")
    if isinstance(content, list):
        return [block_text(c) for c in content if isinstance(c, dict)]
    return [block_text(block)]


def own_parts(step: Step) -> tuple[float, float, int]:
    """A's output as (plain tokens, thinking text tokens, tool uses) by the current heuristic."""
    plain = thinking = 0.0
    uses = 0
    for block in step.own:
        kind = block.get("type")
        if kind == "thinking":
            thinking += tokens.estimate_text_tokens(block_text(block))
        elif kind == "tool_use":
            uses += 1
            plain += (tokens.estimate_text_tokens(str(block.get("name") or ""))
                      + tokens.estimate_json_tokens(block.get("input")))
        else:
            plain += tokens.estimate_text_tokens(block_text(block))
    return plain, thinking, uses


def fit(steps: list[Step]) -> dict[str, Any]:
    """Refit the weights, per-block overheads and the thinking factor on ``steps``.

    Model: truth = WEIGHTS . features(tool result texts) + per-result overhead * results
    + [A's output not recorded] * (A's plain text estimate + THINKING_FACTOR * thinking estimate
    + TOOL_USE_OVERHEAD * tool uses). Weighted by 1/sqrt(truth); coefficients kept >= 0. The A
    part uses the current weights, so run --fit, update tokens.py, and repeat until it settles.
    The CJK weight is not fitted: the corpus has no CJK tool output.
    """
    rows, targets, weights = [], [], []
    for step in steps:
        plain, thinking, uses = own_parts(step)
        unrecorded = step.output * 2 < plain + thinking
        texts = [t for b in step.results for t in result_texts(b)]
        rows.append(text_row(texts) + [len(step.results), unrecorded * thinking,
                                       unrecorded * uses])
        targets.append(step.truth - unrecorded * plain)
        weights.append(step.truth ** -0.5)
    coef = solve_nonnegative(rows, targets, weights)
    n = len(tokens.FEATURES)
    return {"WEIGHTS": [round(c, 3) for c in coef[:n]],
            "TOOL_RESULT_OVERHEAD": round(coef[n] - tokens.MESSAGE_OVERHEAD),
            "THINKING_FACTOR": round(coef[n + 1], 2), "TOOL_USE_OVERHEAD": round(coef[n + 2]),
            "steps": len(steps)}


# --- report ----------------------------------------------------------------------------------------

def output_recorded(step: Step) -> bool:
    """output_tokens covers A's content (older Claude Code): then the estimate of a step is the
    estimate of the tool results alone, exactly the issue's measure."""
    plain, thinking, _ = own_parts(step)
    return step.output * 2 >= plain + thinking


def report(steps: list[Step]) -> dict[str, Any]:
    groups = {"tuned": [s for s in steps if not s.held_out],
              "held_out": [s for s in steps if s.held_out], "all": steps,
              "recorded": [s for s in steps if output_recorded(s)]}
    return {name: {group: figures(subset, est) for group, subset in groups.items()}
            for name, est in ESTIMATORS.items()}


def print_table(result: dict[str, Any], out: Any = sys.stdout) -> None:
    out.write(f"{'estimator':<10} {'files':<9} {'steps':>5} {'median':>7} {'p90':>7} "
              f"{'sum ratio':>9}\n")
    for name, groups in result.items():
        for group, f in groups.items():
            if not f.get("steps"):
                continue
            out.write(f"{name:<10} {group:<9} {f['steps']:>5} {f['median_abs_error']:>7.1%} "
                      f"{f['p90_abs_error']:>7.1%} {f['sum_ratio']:>9.3f}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--min-chars", type=int, default=4000,
                        help="visible characters of tool output a step needs (default 4000)")
    parser.add_argument("--fit", action="store_true",
                        help="refit the weights on the tuned files and print them")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"corpus not found: {args.corpus}")
    if args.fit:
        fitting = [s for s in collect_steps(args.corpus, 300) if not s.held_out]
        print(json.dumps(fit(fitting), indent=2))
        return 0
    result = report(collect_steps(args.corpus, args.min_chars))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
