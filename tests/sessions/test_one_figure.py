"""One figure for a compacted session, whole or from its end (issue 27, item 16): estimate,
statusline and sessions agree after a compaction with no call since."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_ctxtool

# the three sessions and one more: compacted by Claude Code, then summarized again
COMPACTED = [CORPUS / "entireio__cli" / name for name in (
    "25__730c662552__0__full.jsonl", "ed__51f6581660__0__full.jsonl",
    "b0__2936744f3b__0__full.jsonl", "fc__99c919b212__0__full.jsonl")
    if (CORPUS / "entireio__cli" / name).is_file()]


@pytest.mark.skipif(not COMPACTED, reason=f"corpus not found at {CORPUS}")
@pytest.mark.parametrize("source", COMPACTED, ids=lambda p: p.name)
def test_after_summarize_estimate_statusline_and_sessions_agree(tmp_path: Path,
                                                                source: Path) -> None:
    """The figure after a compaction with no call since is the same whole or from the end
    of the file: before, estimate took the system figure from the last call before the
    boundary (its prompt less the estimate of its messages: 58,011 on one of these), the end
    of the file the default one."""
    home = tmp_path / "home"
    project = home / "projects" / "-w"
    project.mkdir(parents=True)
    out = project / "0123abcd-0000-4000-8000-000000000000.jsonl"
    proc = run_ctxtool("summarize", str(source), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(run_ctxtool("estimate", "--json", str(out)).stdout)
    shown = run_ctxtool("statusline", str(out), "--format", "{context_tokens}").stdout
    listed = json.loads(run_ctxtool("sessions", "--json", env={
        "CLAUDE_CONFIG_DIR": str(home), "XDG_DATA_HOME": str(tmp_path / "none"),
        "CODEX_HOME": str(tmp_path / "none")}).stdout.splitlines()[0])
    assert report["context_tokens"] == int(shown) == listed["context_tokens"]
    assert report["system_tokens"] == 24_000  # the default: no call since the compaction
