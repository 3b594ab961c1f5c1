#!/usr/bin/env python3
"""Write small Codex CLI rollouts with the real client, for tests/fixtures/.

    python scripts/make_codex_fixture.py [OUT_DIR [NAME...]]   # default tests/fixtures/codex-<version>

NAMEs (tools, compacted, snip) write only those rollouts again, the others left as they are.

Drives the pinned Codex CLI (scripts/install-clients.sh) headless against the fake Responses
server of tests/e2e, with a fresh CODEX_HOME under a temporary folder, and copies two rollouts
to OUT_DIR, the temporary folder's path replaced by ``/home/user``:

- ``tools.jsonl``: two turns (``codex exec``, then ``codex exec resume``) of scripted
  ``exec_command`` calls, one with an output large enough for Codex to truncate it, and the
  ``token_count`` events Codex writes after each model call;
- ``compacted.jsonl``: the same first turn with ``model_auto_compact_token_limit`` low enough that
  Codex compacts by itself mid-turn (twice with 0.169.0, after each of the four calls with
  0.171.0; each time the "CONTEXT CHECKPOINT COMPACTION" request, its reply as an assistant
  item, then a ``compacted`` record followed by copies of the last ``world_state`` and
  ``turn_context`` lines), and goes on after each;
- ``snip.jsonl``: a turn that reads notes.txt whole and in part (``cat``, ``sed -n``), searches it
  four times (``grep``), changes it (``sed -i``) and reads it again: what ``snip`` clears as
  superseded (the reads before the change, the oldest search).
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


SNIP_CALLS = ["cat notes.txt", "sed -n '1,30p' notes.txt", "grep -n alpha notes.txt",
              "grep -n beta notes.txt", "grep -n gamma notes.txt", "grep -n line notes.txt",
              "sed -i 's/alpha/delta/' notes.txt", "cat notes.txt", "wc -l notes.txt"]


def snip_session(api: FakeResponses, cx: CodexCli) -> str:
    """One turn of :data:`SNIP_CALLS` (``exec_command``) on a 40-line notes.txt."""
    (cx.cwd / "notes.txt").write_text("".join(f"line {n}: alpha beta gamma\n" for n in range(1, 41)))
    api.push(*[call("exec_command", {"cmd": cmd}) for cmd in SNIP_CALLS],
             say("notes.txt now says delta where it said alpha."))
    run = cx.ask("Read notes.txt, search it, then replace alpha by delta.")
    assert run.returncode == 0, run.stderr
    return run.thread_id


def rollout(binary: str, tmp: Path, config_extra: str = "", snip: bool = False) -> tuple[bytes, str]:
    """One session written by the real client: (its rollout's bytes, its CODEX_HOME's parent)."""
    with FakeResponses() as api:
        cx = CodexCli(binary, tmp, api, config_extra)
        if snip:
            return cx.session_path(snip_session(api, cx)).read_bytes(), str(cx.home)
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
    only = sys.argv[2:]  # names to write again, the others left as they are
    if out.exists() and not only:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, extra in (("tools", ""), ("compacted", COMPACT_AT), ("snip", "")):
        if only and name not in only:
            continue
        with tempfile.TemporaryDirectory(prefix="cxfix") as tmp:
            data, home = rollout(binary, Path(tmp), extra, snip=name == "snip")
            (out / f"{name}.jsonl").write_bytes(data.replace(home.encode(), NEUTRAL_HOME.encode()))
    print(f"{out}: {', '.join(only) or 'tools, compacted, snip'}.jsonl, Codex CLI {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
