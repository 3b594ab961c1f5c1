#!/usr/bin/env python3
"""Write a synthetic Claude Code transcript shaped like the real sessions in the test corpus.

``gen_transcript.py`` writes long lines (11.7 KB on average): tool calls and their results. Real
sessions are mostly short lines - hook and bash progress, assistant text and thinking streamed
one block a line, tool calls - around tool results from a few bytes to hundreds of KB. The
figures below were measured on ../shared/corpus (47 Claude Code JSONL files, 12,230 lines,
36.6 MB, measured 2026-11-24) so that ``scripts/bench.py --shape real-shaped`` gives a figure
that does not depend on the corpus being there:

    line size      p10 585 B, p25 633 B, median 946 B, p75 1.5 KB, p90 4.0 KB, p95 10 KB,
                   p99 43 KB, max 1 MB; mean 3.0 KB
    by kind        share of lines / of bytes / mean line
      progress (hook_progress)        22.9% /  4.8% /   631 B
      assistant tool_use              19.6% /  9.8% /  1.5 KB
      user tool_result                19.6% / 59.2% /  9.0 KB (p10 704 B, p25 1.1 KB,
                                                      median 2.7 KB, p75 8.9 KB, p90 25.5 KB,
                                                      p99 65 KB, max 961 KB)
      assistant text                  10.2% /  3.9% /  1.1 KB
      progress (bash_progress)         8.5% /  2.7% /   966 B
      assistant thinking               8.0% /  6.5% /  2.4 KB
      user prompt                      2.4% /  9.8% / 12.2 KB (mostly short, a few pastes)
      file-history-snapshot            1.9% /  0.5% /   877 B
      progress (agent_progress)        1.3% /  1.9% /  4.3 KB
      system (hooks, durations, ...)   2.1% /  0.5% /   600 B
      other (attachment, queue, ...)   1.9% /  0.5% /   500 B

    non-ASCII      11% of the lines, 46% of the bytes (large results with a box-drawing
                   character or an accent here and there; short lines are mostly ASCII)

The text is cut from an ASCII pool (gen_transcript.py's code and log lines without its CJK
ones: orjson parses an all-ASCII string several times faster, so the mix matters to every
ratio), and a non-ASCII snippet goes into 9% of the short texts and half of those over 4 KB.

One tool call is the unit: its tool_use line, its result, and around them the other kinds in
the ratios above (so per call: 1.17 hook progress lines, 0.52 text, 0.43 bash progress...).

    python scripts/gen_real_shaped.py --size 100MB -o /tmp/real.jsonl
"""

from __future__ import annotations

import bisect
import math
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import gen_transcript
from gen_transcript import CODE_LINES, FILES, LOG_LINES, PROMPTS, Generator

# tool_result line sizes (bytes) at these quantiles of the corpus; sampled log-linearly between
RESULT_QUANTILES = [(0.0, 250), (0.10, 704), (0.25, 1_051), (0.50, 2_660), (0.75, 8_856),
                    (0.90, 25_534), (0.99, 64_933), (0.999, 250_000), (1.0, 961_405)]
# lines of each kind per tool call (the corpus's share of lines / the tool_result share)
PER_CALL = {"hook_progress": 1.17, "text": 0.52, "bash_progress": 0.43, "thinking": 0.41,
            "prompt": 0.12, "snapshot": 0.10, "agent_progress": 0.07, "system": 0.11,
            "other": 0.10}
ENVELOPE = 560  # bytes of a line's keys besides its content (uuid, session, cwd, ...)
LONG_PROMPT = 0.08  # prompts that are a pasted log or file (the corpus's 12 KB mean)
NON_ASCII = ("── ✓ passed → ", "café naïve ", "  # 中文注释 ", "⏺ Read(src/app.py) ")
SHORT_NON_ASCII, LONG_NON_ASCII = 0.09, 0.5  # shares of texts under / over 4 KB given one


class RealShaped(Generator):
    """Entries of one session with the corpus's line-size and kind mix."""

    CODE = [line for line in CODE_LINES if line.isascii()]
    LOGS = [line for line in LOG_LINES if line.isascii()]

    def text(self, size: int) -> str:
        text = super().text(size)
        if self.rng.random() < (LONG_NON_ASCII if size > 4_000 else SHORT_NON_ASCII):
            at = self.rng.randrange(len(text) + 1)
            text = text[:at] + self.rng.choice(NON_ASCII) + text[at:]
        return text

    def result_line_size(self) -> int:
        roll = self.rng.random()
        index = max(1, bisect.bisect_left([q for q, _ in RESULT_QUANTILES], roll))
        (q0, s0), (q1, s1) = RESULT_QUANTILES[index - 1], RESULT_QUANTILES[index]
        share = (roll - q0) / (q1 - q0) if q1 > q0 else 0.0
        return int(math.exp(math.log(s0) + share * (math.log(s1) - math.log(s0))))

    def _count(self, mean: float) -> int:
        whole = int(mean)
        return whole + (self.rng.random() < mean - whole)

    def progress(self, kind: str, tool_id: str) -> dict[str, Any]:
        entry = self._base("progress")
        data: dict[str, Any] = {"type": kind}
        if kind == "hook_progress":
            data.update({"hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash",
                         "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/format.sh"})
        elif kind == "bash_progress":
            data.update({"output": self.text(self.rng.randint(50, 500)), "elapsedTimeSeconds": 3,
                         "totalLines": 12})
        else:
            data.update({"message": {"type": "assistant", "message": {
                "role": "assistant", "content": [{"type": "text",
                                                  "text": self.text(self.rng.randint(1_500,
                                                                                     5_000))}]}},
                "prompt": self.rng.choice(PROMPTS), "agentId": self._uuid().hex[:8]})
        entry.update({"data": data, "toolUseID": tool_id, "parentToolUseID": tool_id})
        return entry

    def streamed(self, block: dict[str, Any], message_id: str, context: int) -> dict[str, Any]:
        entry = self._base("assistant")
        entry["requestId"] = f"req_011{self._uuid().hex[:21]}"
        usage = {"input_tokens": self.rng.randint(1, 9), "cache_creation_input_tokens": 800,
                 "cache_read_input_tokens": context, "output_tokens": self.rng.randint(1, 90),
                 "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
                 "service_tier": "standard", "cache_creation": {
                     "ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 800}}
        entry["message"] = {"model": "claude-sonnet-4-5-20250929", "id": message_id,
                            "type": "message", "role": "assistant", "content": [block],
                            "stop_reason": None, "stop_sequence": None, "usage": usage}
        return entry

    def user_prompt(self) -> dict[str, Any]:
        entry = self.prompt()
        if self.rng.random() < LONG_PROMPT:
            entry["message"]["content"] += "\n\n" + self.text(self.rng.randint(20_000, 200_000))
        return entry

    def side_line(self, kind: str) -> dict[str, Any]:
        if kind == "snapshot":
            return {"type": "file-history-snapshot", "messageId": str(self._uuid()),
                    "snapshot": {"messageId": str(self._uuid()), "trackedFileBackups": {
                        path: {"backupFileName": f"{self._uuid().hex[:16]}@v2", "version": 2}
                        for path in FILES[:self.rng.randint(1, 4)]},
                        "timestamp": "2026-01-24T06:00:00.000Z"}, "isSnapshotUpdate": False}
        if kind == "system":
            entry = self._base("system")
            entry.update({"subtype": self.rng.choice(["stop_hook_summary", "turn_duration"]),
                          "durationMs": self.rng.randint(1_000, 90_000), "isMeta": False,
                          "level": "info"})
            return entry
        entry = self._base("attachment")
        entry["attachment"] = {"type": "todo_reminder", "content": [], "itemCount": 0}
        return entry

    def turn(self, context: int) -> tuple[list[dict[str, Any]], int]:
        return list(self.call(context)), min(context + self.rng.randint(200, 3_000), 170_000)

    def call(self, context: int) -> Iterator[dict[str, Any]]:
        """One tool call with the lines that come around it in a real session."""
        if self.rng.random() < PER_CALL["prompt"]:
            yield self.user_prompt()
        message_id = f"msg_01{self._uuid().hex[:22]}"
        for _ in range(self._count(PER_CALL["thinking"])):
            yield self.streamed({"type": "thinking", "signature": "Eu8B" * 60,
                                 "thinking": self.text(self.rng.randint(200, 3_000))},
                                message_id, context)
        for _ in range(self._count(PER_CALL["text"])):
            yield self.streamed({"type": "text", "text": self.text(self.rng.randint(30, 900))},
                                message_id, context)
        tool = self._tool_use()
        tool["input"]["description"] = self.text(self.rng.randint(100, 900))
        yield self.streamed(tool, message_id, context)
        for _ in range(self._count(PER_CALL["bash_progress"])):
            yield self.progress("bash_progress", tool["id"])
        for _ in range(self._count(PER_CALL["agent_progress"])):
            yield self.progress("agent_progress", tool["id"])
        yield self.sized_result(tool)
        for _ in range(self._count(PER_CALL["hook_progress"])):
            yield self.progress("hook_progress", tool["id"])
        for kind in ("snapshot", "system", "other"):
            for _ in range(self._count(PER_CALL[kind])):
                yield self.side_line(kind)

    def sized_result(self, tool: dict[str, Any]) -> dict[str, Any]:
        """A tool result whose line has a size drawn from the corpus's; the content is written
        twice (``message`` and the ``toolUseResult`` copy), as Claude Code writes it."""
        content = self.text(max(5, (self.result_line_size() - ENVELOPE) // 2))
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": [
            {"tool_use_id": tool["id"], "type": "tool_result", "content": content,
             "is_error": False}]}
        entry["toolUseResult"] = {"stdout": content, "stderr": "", "interrupted": False,
                                  "isImage": False}
        return entry


def generate(out: BinaryIO, size: int, seed: int) -> int:
    """Write entries until ``size`` bytes are written; returns the bytes written."""
    return gen_transcript.generate(out, size, seed, RealShaped(seed))


def main(argv: list[str] | None = None) -> int:
    return gen_transcript.main(argv, doc=__doc__, write=generate)


if __name__ == "__main__":
    sys.exit(main())
