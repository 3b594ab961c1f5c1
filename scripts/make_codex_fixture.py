#!/usr/bin/env python3
"""Write small Codex CLI rollouts with the real client, for tests/fixtures/.

    python scripts/make_codex_fixture.py [OUT_DIR]     # default tests/fixtures/codex-<version>

Drives the pinned Codex CLI (scripts/install-clients.sh) headless against the fake Responses
server of tests/e2e, with a fresh CODEX_HOME under a temporary folder, and copies two rollouts
to OUT_DIR, the temporary folder's path replaced by ``/home/user``:

- ``tools.jsonl``: two turns (``codex exec``, then ``codex exec resume``) of scripted
  ``exec_command`` calls, one with an output large enough for Codex to truncate it, and the
  ``token_count`` events Codex writes after each model call;
- ``compacted.jsonl``: the same first turn with ``model_auto_compact_token_limit`` low enough that
  Codex compacts by itself mid-turn, twice (each time the "CONTEXT CHECKPOINT COMPACTION"
  request, its reply as an assistant item, then a ``compacted`` record followed by copies of
  the last ``world_state`` and ``turn_context`` lines), and goes on after each.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.codex_cli import CodexCli, tool_session  # noqa: E402
from tests.e2e.fake_responses import FakeResponses, call, say  # noqa: E402

NEUTRAL_HOME = "/home/user"
COMPACT_AT = "model_context_window = 40000\nmodel_auto_compact_token_limit = 10000\n"


def codex_binary() -> str:
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-clients.sh"), "codex"],
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip().split("\t", 1)[1]


def second_turn(api: FakeResponses, cx: CodexCli, session: str) -> None:
    api.push(call("exec_command", {"cmd": "wc -l notes.txt"}), say("notes.txt has 40 lines."))
    run = cx.resume(session, "How many lines does notes.txt have?")
    assert run.returncode == 0, run.stderr


def rollout(binary: str, tmp: Path, config_extra: str = "") -> tuple[bytes, str]:
    """One session written by the real client: (its rollout's bytes, its CODEX_HOME's parent)."""
    with FakeResponses() as api:
        cx = CodexCli(binary, tmp, api, config_extra)
        session = tool_session(api, cx)
        if config_extra:
            assert api.compactions(), "Codex did not compact with " + config_extra
        else:
            second_turn(api, cx, session)
        return cx.session_path(session).read_bytes(), str(cx.home)


def main() -> int:
    binary = codex_binary()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.split()[-1]
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "fixtures" / f"codex-{version}"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name, extra in (("tools", ""), ("compacted", COMPACT_AT)):
        with tempfile.TemporaryDirectory(prefix="cxfix") as tmp:
            data, home = rollout(binary, Path(tmp), extra)
            (out / f"{name}.jsonl").write_bytes(data.replace(home.encode(), NEUTRAL_HOME.encode()))
    print(f"{out}: tools.jsonl, compacted.jsonl, Codex CLI {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
