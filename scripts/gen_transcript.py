#!/usr/bin/env python3
"""Write a synthetic Claude Code transcript of a given size, deterministic by seed.

The mix follows real sessions: user prompts (some in Chinese), assistant responses streamed as
several lines sharing ``message.id`` with repeated ``usage``, thinking/text/tool_use blocks, tool
results from a few bytes to 500 KB (with the ``toolUseResult`` copy Claude Code writes), the same
file read again and again, block-list results, and a compact boundary with its summary every
~40% of the file.

    python scripts/gen_transcript.py --size 200MB --seed 7 -o /tmp/big.jsonl
    python scripts/gen_transcript.py --size 5MB | ctxtool estimate
"""

from __future__ import annotations

import argparse
import random
import sys
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, BinaryIO

import orjson

SESSION_CWD = "/Users/dev/work/shop-api"
FILES = [f"/Users/dev/work/shop-api/src/{name}.py" for name in (
    "app", "models", "routes", "db", "auth", "cache", "billing", "search", "tasks", "utils")]
PROMPTS = [
    "Fix the failing test in tests/test_billing.py and explain the cause.",
    "请帮我重构 src/db.py 中的连接池代码，并保持接口不变。",
    "Add pagination to the /orders endpoint; keep the response shape.",
    "运行全部测试，然后总结失败的原因。",
    "Why is the search endpoint slow? Profile it and propose a fix.",
    "Update the README with the new environment variables.",
]
CODE_LINES = [
    "def handler(request):", "    return Response(status=200)", "import os, sys",
    "class Order(Base):", "    __tablename__ = 'orders'",
    "    id = Column(Integer, primary_key=True)", "# TODO: remove after the migration",
    "for item in items:", "    total += item.price * item.qty",
    "logger.info('processed %d rows', count)", "raise ValueError(f'bad value: {value!r}')",
    "    # 中文注释：这里处理缓存失效", "async def fetch(session, url):", "",
]
LOG_LINES = [
    "PASSED tests/test_models.py::test_order_total", "FAILED tests/test_billing.py::test_refund",
    "2026-01-24 06:33:36 INFO worker started pid=4242", "WARNING: deprecated call in utils.py:88",
    "错误：数据库连接超时 (timeout=30s)", "src/search.py:120: 3 matches", "npm WARN deprecated",
]


class Generator:
    """Entries of one synthetic session; ``pool`` is a large text to cut results from, made of
    lines of ``CODE`` and ``LOGS``."""

    CODE, LOGS = CODE_LINES, LOG_LINES

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.session = str(self._uuid())
        self.parent: str | None = None
        self.clock = datetime(2026, 1, 24, 6, 0, tzinfo=timezone.utc)
        self.tool_seq = 0
        self.cwd = SESSION_CWD
        self.reads: dict[str, str] = {}  # file -> content, so re-reads return the same text
        self.pool = self._pool(4_000_000)

    def _uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def _pool(self, size: int) -> str:
        lines: list[str] = []
        total = 0
        while total < size:
            source = self.CODE if self.rng.random() < 0.6 else self.LOGS
            line = self.rng.choice(source)
            if self.rng.random() < 0.3:
                line += f" #{self.rng.randrange(10**6)}"
            lines.append(line)
            total += len(line) + 1
        return "\n".join(lines)

    def text(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.pool) - size - 1) if size < len(self.pool) else 0
        return self.pool[start:start + size]

    def result_size(self) -> int:
        roll = self.rng.random()
        if roll < 0.55:
            return self.rng.randint(5, 2_000)
        if roll < 0.85:
            return self.rng.randint(2_000, 20_000)
        if roll < 0.96:
            return self.rng.randint(20_000, 80_000)
        return self.rng.randint(80_000, 500_000)

    def _base(self, kind: str) -> dict[str, Any]:
        self.clock += timedelta(seconds=self.rng.randint(1, 40))
        entry_id = str(self._uuid())
        entry = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
                 "cwd": self.cwd, "sessionId": self.session, "version": "2.1.19",
                 "gitBranch": "main", "type": kind, "uuid": entry_id,
                 "timestamp": self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        self.parent = entry_id
        return entry

    def prompt(self) -> dict[str, Any]:
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": self.rng.choice(PROMPTS)}
        return entry

    def assistant_turn(self, context: int) -> Iterator[dict[str, Any]]:
        """One API response streamed as several lines; the last block may be a tool_use."""
        message_id = f"msg_01{self._uuid().hex[:22]}"
        request_id = f"req_011{self._uuid().hex[:21]}"
        usage = {"input_tokens": self.rng.randint(1, 9), "cache_creation_input_tokens": 800,
                 "cache_read_input_tokens": context, "output_tokens": self.rng.randint(1, 9),
                 "service_tier": "standard"}
        blocks: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": self.text(self.rng.randint(50, 600)),
             "signature": "Eu8B" * 20},
            {"type": "text", "text": self.rng.choice(["Let me look at that.", "我先查看一下相关文件。",
                                                     "Running the tests now."])}]
        tool = self._tool_use()
        blocks.append(tool)
        for block in blocks:
            entry = self._base("assistant")
            entry["requestId"] = request_id
            entry["message"] = {"model": "claude-sonnet-4-5-20250929", "id": message_id,
                                "type": "message", "role": "assistant", "content": [block],
                                "stop_reason": None, "stop_sequence": None, "usage": usage}
            yield entry
        yield self._tool_result(tool)

    def _tool_use(self) -> dict[str, Any]:
        self.tool_seq += 1
        tool_id = f"toolu_01{self._uuid().hex[:22]}"
        roll = self.rng.random()
        if roll < 0.45:
            return {"type": "tool_use", "id": tool_id, "name": "Read",
                    "input": {"file_path": self.rng.choice(FILES)}}
        if roll < 0.8:
            return {"type": "tool_use", "id": tool_id, "name": "Bash",
                    "input": {"command": "pytest -q", "description": "Run tests"}}
        return {"type": "tool_use", "id": tool_id, "name": "Grep",
                "input": {"pattern": "def ", "path": "src"}}

    def _tool_result(self, tool: dict[str, Any]) -> dict[str, Any]:
        entry = self._base("user")
        if tool["name"] == "Read":
            path = tool["input"]["file_path"]
            content: Any = self.reads.setdefault(path, self.text(self.result_size()))
            extra: Any = {"type": "text", "file": {"filePath": path, "content": content}}
        elif tool["name"] == "Grep" and self.rng.random() < 0.5:
            content = [{"type": "text", "text": self.text(self.result_size())}]
            extra = {"mode": "content", "numFiles": 3}
        else:
            content = self.text(self.result_size())
            extra = {"stdout": content, "stderr": "", "interrupted": False, "isImage": False}
        entry["message"] = {"role": "user", "content": [
            {"tool_use_id": tool["id"], "type": "tool_result", "content": content,
             "is_error": False}]}
        entry["toolUseResult"] = extra
        return entry

    def turn(self, context: int) -> tuple[list[dict[str, Any]], int]:
        """A prompt and the tool calls that answer it; the context size after them."""
        entries: list[dict[str, Any]] = [self.prompt()]
        for _ in range(self.rng.randint(1, 6)):
            entries.extend(self.assistant_turn(context))
            context = min(context + self.rng.randint(500, 6_000), 170_000)
        return entries, context

    def compaction(self, pre_tokens: int) -> Iterator[dict[str, Any]]:
        boundary = self._base("system")
        boundary.update({"parentUuid": None, "logicalParentUuid": boundary["parentUuid"],
                         "subtype": "compact_boundary", "content": "Conversation compacted",
                         "isMeta": False, "level": "info",
                         "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens}})
        yield boundary
        summary = self._base("user")
        summary.update({"message": {"role": "user", "content":
                                    "This session is being continued from a previous conversation."
                                    "\n\nSummary:\n1. Primary Request and Intent: 修复计费测试。"},
                        "isVisibleInTranscriptOnly": True, "isCompactSummary": True})
        yield summary


def generate(out: BinaryIO, size: int, seed: int, gen: Generator | None = None) -> int:
    """Write entries until ``size`` bytes are written; returns the bytes written. ``gen``: go
    on with that generator (its text pool is costly to build) instead of a new one."""
    gen = gen or Generator(seed)
    written, context, next_compact = 0, 20_000, size * 0.4
    while written < size:
        entries, context = gen.turn(context)
        if written >= next_compact:
            entries.extend(gen.compaction(context))
            context, next_compact = 20_000, next_compact + size * 0.4
        for entry in entries:
            line = orjson.dumps(entry) + b"\n"
            out.write(line)
            written += len(line)
    return written


def parse_size(text: str) -> int:
    units = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "K": 10**3, "M": 10**6, "G": 10**9, "B": 1}
    upper = text.strip().upper()
    for unit, factor in units.items():
        if upper.endswith(unit):
            return int(float(upper[:-len(unit)]) * factor)
    return int(upper)


def main(argv: list[str] | None = None, *, doc: str | None = None,
         write: Callable[[BinaryIO, int, int], int] | None = None) -> int:
    """The command line; ``doc`` and ``write`` let the other generators share it."""
    write = write or generate
    parser = argparse.ArgumentParser(description=(doc or __doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", default="10MB",
                        help="target size, e.g. 200MB, 1GB (default 10MB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", help="file to write (default stdout)")
    args = parser.parse_args(argv)
    if args.output:
        with open(args.output, "wb") as out:
            write(out, parse_size(args.size), args.seed)
    else:
        write(sys.stdout.buffer, parse_size(args.size), args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
