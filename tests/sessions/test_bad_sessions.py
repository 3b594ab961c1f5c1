"""`sessions` and `statusline` over every kind of bad transcript of the robustness matrix: no
traceback, exit 0 with a row or a line (or exit 3 with one error line for statusline)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from ctxtool.errors import ExitCode
from ctxtool.storage.paths import project_slug
from tests.conftest import run_ctxtool
from tests.robustness.test_matrix import CASES

APP = "/w/app"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("claude")
    folder = root / "projects" / project_slug(APP)
    folder.mkdir(parents=True)
    for case, data in CASES.items():
        (folder / f"{case.replace('_', '-')}.jsonl").write_bytes(data)
    return root


def test_sessions_lists_every_bad_file(config: Path) -> None:
    proc = run_ctxtool("sessions", "--json", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    # nested_1000 reads as JSON but is too deep to walk: left out, with a warning naming it
    assert sorted(r["id"] for r in rows) == sorted(c.replace("_", "-") for c in CASES
                                                   if c != "nested_1000")
    assert proc.stderr.decode().splitlines() == [
        f"ctxtool: warning: {next(config.glob('projects/*/nested-1000.jsonl'))}: left out: "
        "a line nested too deeply to process"]
    assert all(r["compactions"] == 0 for r in rows)


@pytest.mark.parametrize("case", list(CASES))
def test_statusline_on_a_bad_transcript(config: Path, case: str) -> None:
    path = next(config.glob(f"projects/*/{case.replace('_', '-')}.jsonl"))
    status = orjson.dumps({"transcript_path": str(path), "model": {"id": "claude-sonnet-4-5"}})
    proc = run_ctxtool("statusline", "--format", "{context_tokens} {status}", input=status)
    stderr = proc.stderr.decode()
    assert "Traceback" not in stderr
    if proc.returncode == 0:
        tokens, status_word = proc.stdout.decode().split()
        assert int(tokens) >= 0 and status_word in ("ok", "warning", "auto_compact", "blocking")
    else:  # walking a line nested too deeply: one error line, exit 3
        assert proc.returncode == ExitCode.INVALID_INPUT, stderr
        assert len(stderr.splitlines()) == 1 and stderr.startswith("ctxtool: error:")
