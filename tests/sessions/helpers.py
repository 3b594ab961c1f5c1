"""A Claude Code config folder of sessions for the sessions/selector/statusline tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import orjson

from ctxtool.core.sizing.estimate import EstimateReport, estimate
from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import iter_entries
from ctxtool.storage.paths import project_slug
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from gen_transcript import generate  # noqa: E402

APP = "/home/me/app"
LIB = "/home/me/lib"


def write_session(config: Path, cwd: str, session_id: str, entries: list[dict[str, Any]],
                  *, mtime: float | None = None, tail: bytes = b"") -> Path:
    folder = config / "projects" / project_slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_bytes(b"".join(orjson.dumps({**e, "cwd": cwd, "sessionId": session_id}) + b"\n"
                              for e in entries) + tail)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def generated(config: Path, cwd: str, session_id: str, *, size: int, seed: int) -> Path:
    """A synthetic session (scripts/gen_transcript.py) moved into ``cwd``'s project folder."""
    folder = config / "projects" / project_slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    with open(path, "wb") as out:
        generate(out, size, seed)
    return path


def full_estimate(path: Path) -> EstimateReport:
    with open(path, "rb") as handle:
        fmt, entries = detect_format(iter_entries(handle, str(path), on_invalid="skip",
                                                  exact_ints=False))
        # the tail reader never sees the session's first call, so not the system figure that
        # call shows: compare with the default figure it does use
        return estimate(entries, fmt=fmt, source=str(path), system_tokens=DEFAULT_SYSTEM_TOKENS)
