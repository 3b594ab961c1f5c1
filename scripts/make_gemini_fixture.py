#!/usr/bin/env python3
"""Write small Gemini CLI sessions with the real client, for tests/fixtures/.

    python scripts/make_gemini_fixture.py [OUT_DIR [NAME...]]   # default tests/fixtures/gemini-cli-<version>

NAMEs (new, resumed, compressed) write only those sessions again, the others left as they are.

Drives the pinned Gemini CLI (scripts/install-clients.sh) headless against the fake Gemini API of
tests/e2e, with a fresh HOME under a temporary folder, and copies each session's file to OUT_DIR,
the temporary folder's path replaced by ``/home/user`` (and the project hash, the SHA-256 of the
project's path, by that of ``/home/user/work/proj``):

- ``new.jsonl``: one run (``--session-id``): a ``read_file`` call on notes.txt and an answer. The
  call's record is written twice under one id (without, then with ``toolCalls``), and its result is
  stored twice: in ``toolCalls[].result`` and as a user record of ``functionResponse`` parts;
- ``resumed.jsonl``: the same session resumed twice (``--resume <id>``), each resume writing a
  ``$set`` of the whole message list; the result now also stored as an ``<id>_response`` record;
- ``compressed.jsonl``: the same first run, then a resume with ``model.compressionThreshold``
  low enough (0.005 of the 1,048,576 window) that Gemini CLI compresses before its first request:
  the summary request's ``<state_snapshot>`` reply becomes the history's first user message;
- ``same-minute.jsonl``: the same first run, its file renamed to the UTC minute in which it is
  then resumed, as if resumed within the minute it started: the resume's own new session writes
  its metadata line and ``$set`` into the session's file, before the resume's records.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.fake_gemini import FakeGemini, call, say  # noqa: E402
from tests.e2e.gemini_cli import PROJECT, GeminiCli, tool_session  # noqa: E402

NEUTRAL_HOME = "/home/user"
SESSION = "5e551011-0000-4000-8000-000000000001"
COMPRESS_AT = {"model": {"compressionThreshold": 0.005}}
SNAPSHOT = ("<state_snapshot>\n<overall_goal>Know what notes.txt holds.</overall_goal>\n"
            "<key_knowledge>notes.txt has 10 lines of alpha beta gamma.</key_knowledge>\n"
            "<task_state>Answered.</task_state>\n</state_snapshot>")


def gemini_binary() -> str:
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-clients.sh"), "gemini"],
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip().split("\t", 1)[1]


def resume(api: FakeGemini, gm: GeminiCli, prompt: str, answer: str) -> None:
    api.push(say(answer))
    run = gm.resume(SESSION, prompt)
    assert run.returncode == 0, run.stderr[-800:]


def new(api: FakeGemini, gm: GeminiCli) -> None:
    tool_session(api, gm, SESSION)


def resumed(api: FakeGemini, gm: GeminiCli) -> None:
    tool_session(api, gm, SESSION)
    gm.age(SESSION)
    resume(api, gm, "Which word comes second?", "beta comes second.")
    resume(api, gm, "And third?", "gamma comes third.")


def compressed(api: FakeGemini, gm: GeminiCli) -> None:
    tool_session(api, gm, SESSION)
    gm.age(SESSION)
    before = len(api.requests)
    # a resumed chat knows no prompt size before its first reply: the call makes a second request
    api.push(call("read_file", {"file_path": "notes.txt", "start_line": 2, "end_line": 2}))
    resume(api, gm, "What does line 2 say?", "Line 2 says alpha beta gamma.")
    asked = [r.body for r in api.requests[before:] if r.path.endswith(":generateContent")]
    assert any("<state_snapshot>" in str(body) for body in asked), "Gemini CLI did not compress"


def same_minute(api: FakeGemini, gm: GeminiCli) -> None:
    tool_session(api, gm, SESSION)
    now = datetime.now(timezone.utc)
    if now.second > 40:  # the resume must start its session within this minute
        time.sleep(61 - now.second)
        now = datetime.now(timezone.utc)
    path = gm.session_path(SESSION)
    path.rename(path.with_name(f"session-{now:%Y-%m-%dT%H-%M}-{SESSION[:8]}.jsonl"))
    resume(api, gm, "Which word comes second?", "beta comes second.")
    metadata = [line for line in gm.session_path(SESSION).read_bytes().splitlines()
                if line.startswith(b'{"sessionId"')]
    assert len(metadata) == 2, "the resume did not start within the minute: run again"


SESSIONS: dict[str, tuple[Callable[[FakeGemini, GeminiCli], None], dict[str, object]]] = {
    "new": (new, {}), "resumed": (resumed, {}), "compressed": (compressed, COMPRESS_AT),
    "same-minute": (same_minute, {})}


def session(binary: str, tmp: Path, name: str) -> bytes:
    """One session written by the real client, neutralised (module docstring)."""
    make, extra = SESSIONS[name]
    with FakeGemini(side_text=SNAPSHOT) as api:
        gm = GeminiCli(binary, tmp, api, extra)
        make(api, gm)
        data = gm.session_path(SESSION).read_bytes()
    project, neutral = str(gm.cwd), f"{NEUTRAL_HOME}/work/{PROJECT}"
    for old, new_ in ((hashlib.sha256(project.encode()).hexdigest(),
                       hashlib.sha256(neutral.encode()).hexdigest()),
                      (str(gm.home), NEUTRAL_HOME)):
        data = data.replace(old.encode(), new_.encode())
    return data


def main() -> int:
    binary = gemini_binary()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "fixtures" / f"gemini-cli-{version}"
    only = sys.argv[2:]  # names to write again, the others left as they are
    if out.exists() and not only:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in SESSIONS:
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="gmfix") as tmp:
            (out / f"{name}.jsonl").write_bytes(session(binary, Path(tmp), name))
    print(f"{out}: {', '.join(only or SESSIONS)}.jsonl, Gemini CLI {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
