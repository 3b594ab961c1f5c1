#!/usr/bin/env python3
"""Write a synthetic Claude Code config folder: many sessions over several projects.

Sessions are ``scripts/gen_transcript.py`` transcripts (streamed calls with usage, tool results,
compact boundaries in the larger ones), spread over ``--projects`` project folders with sizes
drawn from a log-normal distribution (most small, a few large) that add up to ``--size``. Each
file's modification time is its last entry's time, as Claude Code leaves it.

``--codex N`` also writes N Codex CLI rollouts (``--codex-size`` in all) under
``<output>/codex/sessions/YYYY/MM/DD/``: the real client's rollout of
``tests/fixtures/codex-0.171.0/tools.jsonl`` (session_meta, two turns of exec_command calls with
token_count events) with its turns repeated, renumbered and re-stamped until each reaches its
size, a ``compacted`` record from ``compacted.jsonl`` (and the lines Codex writes after it)
between some turns. Point ``CODEX_HOME`` at ``<output>/codex``.

    python scripts/gen_sessions.py --sessions 2000 --size 2GB -o /tmp/claude-bench
    CLAUDE_CONFIG_DIR=/tmp/claude-bench ctxtool sessions | head
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson  # noqa: E402
from gen_transcript import Generator, generate, parse_size  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from ctxtool.storage.paths import project_slug  # noqa: E402

MIN_SESSION = 2_000


def session_sizes(count: int, total: int, rng: random.Random) -> list[int]:
    """``count`` sizes, log-normal (sigma 1.2), scaled to add up to about ``total``."""
    raw = [rng.lognormvariate(0, 1.2) for _ in range(count)]
    scale = (total - count * MIN_SESSION) / sum(raw)
    return [MIN_SESSION + int(r * scale) for r in raw]


def final_answer(gen: Generator, rng: random.Random) -> bytes:
    """The assistant's closing reply: a session ends with an answer, not a tool result."""
    entry = gen._base("assistant")
    entry["requestId"] = f"req_011{rng.getrandbits(84):021x}"
    entry["message"] = {
        "model": "claude-sonnet-4-5-20250929", "id": f"msg_01{rng.getrandbits(88):022x}",
        "type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Done: the tests pass now."}],
        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 900,
                  "cache_read_input_tokens": rng.randint(20_000, 160_000), "output_tokens": 40}}
    return orjson.dumps(entry) + b"\n"


def write_config(root: Path, *, sessions: int, size: int, projects: int, seed: int) -> int:
    """The sessions under ``root/projects``; returns the bytes written."""
    rng = random.Random(seed)
    cwds = [f"/home/dev/work/project-{i:03d}" for i in range(projects)]
    generators = {}
    written = 0
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    planned = 0
    for number, share in enumerate(session_sizes(sessions, size, rng)):
        planned += share
        target = max(MIN_SESSION, planned - written)  # a session overshoots by up to a turn
        cwd = cwds[number % projects]
        gen = generators.get(cwd)
        if gen is None:  # one text pool per project: building one costs a few hundred ms
            gen = generators[cwd] = Generator(seed * 1000 + len(generators))
            gen.cwd = cwd
        gen.session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        gen.parent, gen.reads = None, {}
        gen.clock = start + timedelta(minutes=rng.randrange(60 * 24 * 120))
        folder = root / "projects" / project_slug(cwd)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{gen.session}.jsonl"
        with open(path, "wb") as out:
            written += generate(out, target, seed, gen)
            written += out.write(final_answer(gen, rng))
        last = gen.clock.timestamp()
        os.utime(path, (last, last))
    return written


CODEX_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "codex-0.171.0"


def _codex_template() -> tuple[dict, list[dict], list[dict]]:
    """(session_meta, the turn lines after it, a compaction: the record and Codex's lines after
    it) from the real client's rollouts."""
    tools = [orjson.loads(line) for line in (CODEX_FIXTURES / "tools.jsonl").read_bytes().splitlines()]
    compacted = [orjson.loads(line)
                 for line in (CODEX_FIXTURES / "compacted.jsonl").read_bytes().splitlines()]
    at = next(i for i, e in enumerate(compacted) if e["type"] == "compacted")
    return tools[0], tools[1:], compacted[at:at + 5]


def write_codex(root: Path, *, sessions: int, size: int, seed: int, projects: int = 40) -> int:
    """``sessions`` rollouts under ``root/sessions/YYYY/MM/DD``; returns the bytes written."""
    rng = random.Random(seed + 7)
    meta, turns, compaction = _codex_template()
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    written = 0
    for number, share in enumerate(session_sizes(sessions, size, rng)):
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        clock = start + timedelta(minutes=rng.randrange(60 * 24 * 120))
        cwd = f"/home/dev/work/project-{number % projects:03d}"
        folder = root / "sessions" / clock.strftime("%Y/%m/%d")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"rollout-{clock.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
        ordinal = 0

        def line(entry: dict) -> bytes:
            nonlocal ordinal, clock
            clock += timedelta(milliseconds=rng.randrange(50, 4000))
            stamped = {**entry, "timestamp": clock.isoformat(timespec="milliseconds")[:-6] + "Z",
                       "ordinal": ordinal}
            ordinal += 1
            return orjson.dumps(stamped) + b"\n"

        first = {**meta, "payload": {**meta["payload"], "id": sid, "session_id": sid, "cwd": cwd}}
        with open(path, "wb") as out:
            done = out.write(line(first))
            repeat = 0
            while done < share or repeat == 0:
                if repeat and rng.random() < 0.15:  # a compaction between two turns
                    done += sum(out.write(line(e)) for e in compaction)
                done += sum(out.write(line(e)) for e in turns)
                repeat += 1
        written += done
        os.utime(path, (clock.timestamp(), clock.timestamp()))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--size", default="2GB", help="all sessions together (default 2GB)")
    parser.add_argument("--projects", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--codex", type=int, default=0, metavar="N",
                        help="also N Codex CLI rollouts, under OUTPUT/codex (default none)")
    parser.add_argument("--codex-size", default="200MB", help="all rollouts together")
    parser.add_argument("--codex-only", action="store_true",
                        help="write the rollouts only (beside an existing config folder)")
    parser.add_argument("-o", "--output", required=True, help="the config folder to write")
    args = parser.parse_args(argv)
    if not args.codex_only:
        written = write_config(Path(args.output), sessions=args.sessions,
                               size=parse_size(args.size), projects=args.projects,
                               seed=args.seed)
        print(f"{args.sessions} sessions, {written / 1e6:,.0f} MB in {args.output}",
              file=sys.stderr)
    if args.codex:
        written = write_codex(Path(args.output) / "codex", sessions=args.codex,
                              size=parse_size(args.codex_size), seed=args.seed,
                              projects=args.projects)
        print(f"{args.codex} Codex rollouts, {written / 1e6:,.0f} MB in {args.output}/codex",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
