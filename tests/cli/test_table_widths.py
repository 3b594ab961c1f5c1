"""Tables fit the terminal as ``ls -l`` does: at 80, 100 and 160 columns no line of ``sessions``,
``estimate`` (table, grid, timeline) or ``cleanup`` is wider than the terminal; paths and ids are
shortened in the middle, and a cleanup row still shows the session's project."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, ctxtool_executable, run_ctxtool

EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"
COLUMNS = [80, 100, 160]
PROJECT = "/home/dev/work/clients/acme-corporation/billing-api-with-a-long-name"
SLUG = PROJECT.replace("/", "-")
SESSION = "9b2f6c1e-4d7a-4e0b-8f3c-2a61d5e0c7b4"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Claude Code folder: the example session under a long project path, whose first prompt
    is long too, and a short one; both last active in 2026."""
    root = tmp_path_factory.mktemp("claude")
    for slug, sid, cwd in ((SLUG, SESSION, PROJECT), ("-home-dev-lib", "0b28d950-aaaa", "/x")):
        folder = root / "projects" / slug
        folder.mkdir(parents=True)
        lines = EXAMPLE.read_bytes().splitlines(keepends=True)
        out = []
        for raw in lines:
            entry = json.loads(raw)
            if "cwd" in entry:
                entry["cwd"] = cwd
            if "sessionId" in entry:
                entry["sessionId"] = sid
            out.append(json.dumps(entry) + "\n")
        (folder / f"{sid}.jsonl").write_text("".join(out))
        old = 1_780_000_000
        os.utime(folder / f"{sid}.jsonl", (old, old))
    return root


def widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


@pytest.mark.parametrize("columns", COLUMNS)
def test_sessions_rows_fit(config: Path, columns: int) -> None:
    proc = run_ctxtool("sessions", env={"CLAUDE_CONFIG_DIR": str(config), "COLUMNS": str(columns)})
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert widest(text) <= columns, text
    rows = text.splitlines()[1:]
    assert len(rows) == 2 and all(row[14:22] in (SESSION[:8], "0b28d950") for row in rows)
    long = next(row for row in rows if SESSION[:8] in row)
    assert " /ho" in long and "name " in long  # the project: its start and its end
    if columns == 160:
        assert PROJECT in long


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize("view", [[], ["--grid"], ["--timeline"]])
def test_estimate_fits(config: Path, columns: int, view: list[str]) -> None:
    path = next(config.glob(f"projects/{SLUG}/*.jsonl"))
    proc = run_ctxtool("estimate", str(path), *view, env={"COLUMNS": str(columns)})
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    assert widest(text) <= columns, text
    assert text.splitlines()[0].split(":")[0].endswith("b4.jsonl")  # the path's end is kept


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is not installed")
@pytest.mark.parametrize("columns", COLUMNS)
def test_cleanup_table_fits_and_shows_the_project(config: Path, columns: int) -> None:
    command = " ".join(shlex.quote(a) for a in [*ctxtool_executable(), "cleanup",
                                                "--older-than", "1d",
                                                "--now", "2026-08-01T00:00:00Z"])
    proc = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True,
                          env={**os.environ, "CLAUDE_CONFIG_DIR": str(config), "NO_COLOR": "1",
                               "COLUMNS": str(columns)},
                          stdin=subprocess.DEVNULL, timeout=120, check=False)
    text = proc.stdout.decode().replace("\r\n", "\n")
    assert proc.returncode == 0, text
    assert widest(text) <= columns, text
    row = next(line for line in text.splitlines() if SESSION[:8] in line)
    assert "-home-" in row and "long-name" in row  # the project: its start and its end
