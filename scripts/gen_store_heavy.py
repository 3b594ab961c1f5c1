#!/usr/bin/env python3
"""Write gen_transcript.py's synthetic transcript without its compactions: the store-heavy input.

``snip`` and ``microcompact`` look only after a transcript's last compaction, which
gen_transcript.py puts at 40% and 80% of the file; without them the whole file is theirs, and
on 200 MB ``snip`` moves about a quarter of the bytes (the same ten files read again and again,
old searches) into some 3,000 store files - the case where writing many files, and making them
durable with ``-o``, is what costs.

    python scripts/gen_store_heavy.py --size 200MB -o /tmp/store-heavy.jsonl
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import gen_transcript
from gen_transcript import Generator


class StoreHeavy(Generator):
    """gen_transcript.py's sessions, never compacted."""

    def compaction(self, pre_tokens: int) -> Iterator[dict[str, Any]]:
        return iter(())


def generate(out: BinaryIO, size: int, seed: int) -> int:
    """Write entries until ``size`` bytes are written; returns the bytes written."""
    return gen_transcript.generate(out, size, seed, StoreHeavy(seed))


def main(argv: list[str] | None = None) -> int:
    return gen_transcript.main(argv, doc=__doc__, write=generate)


if __name__ == "__main__":
    sys.exit(main())
