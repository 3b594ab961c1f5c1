"""Small Claude Code sessions with history written twice, as a repeated /compact leaves them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import orjson

SESSION = "5f0c8a52-0c0e-4f39-9a57-2b8d9d8a1c11"
CWD = "/tmp/vacuum-project"


def entry(index: int, *, text: str = "hello " * 40) -> bytes:
    line = {"parentUuid": f"u{index - 1}" if index else None, "isSidechain": False,
            "type": "user" if index % 2 == 0 else "assistant", "uuid": f"u{index}",
            "sessionId": SESSION, "cwd": CWD, "timestamp": f"2026-01-01T00:{index % 60:02d}:00Z",
            "message": {"role": "user" if index % 2 == 0 else "assistant",
                        "content": [{"type": "text", "text": f"{index} {text}"}]}}
    return orjson.dumps(line) + b"\n"


def boundary(index: int) -> bytes:
    return orjson.dumps({"parentUuid": None, "logicalParentUuid": f"u{index - 1}",
                         "type": "system", "subtype": "compact_boundary", "uuid": f"b{index}",
                         "sessionId": SESSION, "cwd": CWD, "content": "Conversation compacted",
                         "timestamp": "2026-01-01T01:00:00Z",
                         "compactMetadata": {"trigger": "manual", "preTokens": 1000}}) + b"\n"


def doubled_session(count: int = 10, repeated: int = 5) -> tuple[bytes, int]:
    """A session of ``count`` entries whose first ``repeated`` are written again after them,
    then a boundary; and the bytes written twice."""
    head = [entry(i) for i in range(count)]
    again = head[:repeated]
    return b"".join(head + again + [boundary(count)]), sum(map(len, again))


def write_session(folder: Path, data: bytes, *, name: str = SESSION, age: float = 7200) -> Path:
    """``data`` as ``<folder>/projects/<slug>/<name>.jsonl``, last modified ``age`` seconds ago
    (outside the live window)."""
    project = folder / "projects" / "-tmp-vacuum-project"
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"{name}.jsonl"
    path.write_bytes(data)
    then = time.time() - age
    os.utime(path, (then, then))
    return path
