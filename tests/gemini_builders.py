"""Gemini CLI session files built in tests: small trees under a fresh ``~/.gemini``, and random
record logs that use every kind of line the client's loader knows (message records, repeated
ids, checkpoints that list an id twice, ``$rewindTo``, ``$set`` of metadata and of the memory
scratchpad, a second metadata line, blank lines), for the vacuum's rules to be checked against
the real loader."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "gemini-cli-0.61.0"
FIXTURE_SESSION = "5e551011-0000-4000-8000-000000000001"
PROJECT_PATH = "/home/user/work/proj"


def write_session(home: Path, name: str, lines: list[bytes] | bytes, *,
                  project: str = "proj", project_path: str = PROJECT_PATH) -> Path:
    """``lines`` as ``<home>/.gemini/tmp/<project>/chats/<name>``, the project registered as
    the client registers it."""
    folder = home / ".gemini" / "tmp" / project
    (folder / "chats").mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text(project_path)
    registry = home / ".gemini" / "projects.json"
    known = json.loads(registry.read_text())["projects"] if registry.exists() else {}
    registry.write_text(json.dumps({"projects": {**known, project_path: project}}))
    path = folder / "chats" / name
    path.write_bytes(lines if isinstance(lines, bytes) else b"".join(lines))
    return path


def metadata(session: str, when: str = "2026-11-01T10:00:00.000Z") -> dict[str, Any]:
    return {"sessionId": session, "projectHash": "ab" * 32, "startTime": when,
            "lastUpdated": when, "kind": "main"}


def dump(record: Any) -> bytes:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


_TEXTS = ["", "  ", "/help", "?", "<session_context>\nctx</session_context>", "hello", "fix it",
          "<hook_context>x</hook_context>", "ünïcode ✓"]


def _content(rng: random.Random, kind: str) -> Any:
    choice = rng.random()
    if kind == "gemini" and choice < 0.3:
        return rng.choice(_TEXTS)
    if choice < 0.2:
        return [{"functionResponse": {"id": "c1", "name": "read_file",
                                      "response": {"output": "x" * rng.randint(0, 40)}}}]
    if choice < 0.25:
        return []
    if choice < 0.3:
        return {"text": rng.choice(_TEXTS)}  # one part, not a list
    if choice < 0.33:
        return [{"text": rng.choice(_TEXTS), "thought": None}]
    return [{"text": rng.choice(_TEXTS)}]


def _record(rng: random.Random, ids: list[str]) -> dict[str, Any]:
    reuse = ids and rng.random() < 0.35
    message_id = rng.choice(ids) if reuse else f"m{len(ids)}"
    if not reuse:
        ids.append(message_id)
    kind = rng.choice(["user", "user", "gemini", "gemini", "info"])
    record: dict[str, Any] = {"id": message_id, "timestamp": "2026-11-01T10:00:01.000Z",
                              "type": kind, "content": _content(rng, kind)}
    if kind == "gemini" and rng.random() < 0.3:
        record["toolCalls"] = [{"id": "c1", "name": "read_file", "args": {},
                                "result": [{"functionResponse": {"id": "c1", "name": "read_file",
                                                                 "response": {"output": "r"}}}]}]
    return record


def random_session(seed: int, *, records: int = 30) -> list[bytes]:
    """A random log of ``records`` lines after the metadata line."""
    rng = random.Random(seed)
    ids: list[str] = []
    lines = [dump(metadata(f"sess-{seed}"))]
    for step in range(records):
        roll = rng.random()
        if roll < 0.45:
            lines.append(dump(_record(rng, ids)))
        elif roll < 0.6:
            lines.append(dump({"$set": {"lastUpdated": f"2026-11-01T10:{step:02d}:00.000Z"}}))
        elif roll < 0.72:
            listed = [_record(rng, ids) for _ in range(rng.randint(0, 4))]
            if listed and rng.random() < 0.4:
                listed.append(dict(listed[0]))  # one id twice, as a resume lists <id>_response
            update: dict[str, Any] = {"messages": listed}
            if rng.random() < 0.8:
                update["lastUpdated"] = f"2026-11-01T11:{step:02d}:00.000Z"
            lines.append(dump({"$set": update}))
        elif roll < 0.78:
            target = rng.choice(ids) if ids and rng.random() < 0.8 else "nowhere"
            lines.append(dump({"$rewindTo": target}))
        elif roll < 0.84:
            lines.append(dump({"$set": {"memoryScratchpad": rng.choice([None, "", "notes"])}}))
        elif roll < 0.89:
            lines.append(dump({"$set": {"summary": f"title {step}"}}))
        elif roll < 0.93:
            lines.append(dump({"$set": {"sessionId": f"sess-{seed}"}}))
        elif roll < 0.96:
            lines.append(dump(metadata(f"sess-{seed}", f"2026-11-02T10:{step:02d}:00.000Z")))
        else:
            lines.append(b"\n")
    return lines
