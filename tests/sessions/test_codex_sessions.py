"""`ctxtool sessions` and the session selectors on Codex CLI's rollouts ($CODEX_HOME/sessions),
written by the real Codex CLI 0.171.0 (tests/fixtures/codex-0.171.0): the figures of
`ctxtool estimate` on the same file, read from the file's ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from ctxtool.formats.adapter import SessionFile
from ctxtool.io.session_files import read_session
from tests.conftest import ROOT, run_ctxtool
from tests.sessions.helpers import APP, write_session

FIXTURES = ROOT / "tests" / "fixtures" / "codex-0.171.0"
SCHEMA = json.loads((ROOT / "schemas" / "sessions-report.schema.json").read_text())
TOOLS_ID = "01a21df8-7ffe-7773-8d27-6c78f6d1d0b6"
COMPACTED_ID = "01a21df8-89d6-7a13-ac83-71f4b5acc7ed"
T0 = 1_795_000_000


def rollout(home: Path, lines: list[bytes], *, archived: bool = False,
            mtime: float | None = None) -> Path:
    """``lines`` as Codex names and places a rollout (the id from its session_meta)."""
    meta = json.loads(lines[0])["payload"]
    day = meta["timestamp"][:10].replace("-", "/")
    stamp = meta["timestamp"][:19].replace(":", "-")
    folder = home / ("archived_sessions" if archived else f"sessions/{day}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{stamp}-{meta['id']}.jsonl"
    path.write_bytes(b"".join(lines))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def fixture_lines(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().splitlines(keepends=True)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "codex"
    rollout(home, fixture_lines("tools.jsonl"), mtime=T0)
    rollout(home, fixture_lines("compacted.jsonl"), mtime=T0 + 10)
    return home


def env_of(home: Path, tmp_path: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}


def sessions(env: dict[str, str], *args: str, cwd: Path | None = None) -> list[dict]:
    proc = run_ctxtool("sessions", "--json", *args, env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    for row in rows:
        jsonschema.validate(row, SCHEMA)
    return rows


def estimate_json(path: str | Path, env: dict[str, str] | None = None) -> dict:
    proc = run_ctxtool("estimate", "--json", str(path), env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout)


def figures_of(row: dict) -> tuple:
    return row["context_tokens"], row["compactions"], row["context_window"], row["model"]


def estimate_figures(report: dict) -> tuple:
    return (report["context_tokens"], report["compact_boundaries"],
            report["thresholds"]["window"], report["model"])


def test_each_rollout_is_one_row_with_the_figures_of_estimate(home: Path, tmp_path: Path) -> None:
    rows = sessions(env_of(home, tmp_path))
    assert [r["id"] for r in rows] == [COMPACTED_ID, TOOLS_ID]  # newest first
    for row in rows:
        assert row["agent"] == "codex"
        assert row["project"] == "/home/user/work/proj"  # session_meta's cwd
        # the first prompt typed, not Codex's environment_context message before it
        assert row["first_prompt"] == "What is in this project?"
        assert row["title"] is None
        assert row["size"] == Path(row["path"]).stat().st_size
        assert figures_of(row) == estimate_figures(estimate_json(row["path"]))
    newest, oldest = rows
    # Codex's own last token_count: last_token_usage (input + output) and model_context_window
    assert (newest["context_tokens"], newest["context_window"], newest["compactions"]) \
        == (10_054, 38_000, 4)
    assert (oldest["context_tokens"], oldest["context_window"], oldest["compactions"]) \
        == (13_936, 258_400, 0)
    assert oldest["percent"] == round(100 * 13_936 / 258_400, 1)
    assert oldest["started"] == json.loads(fixture_lines("tools.jsonl")[0])["timestamp"]
    assert oldest["last_activity"] == json.loads(fixture_lines("tools.jsonl")[-1])["timestamp"]


def test_only_the_ends_are_parsed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tail walk parses the last token_count and what follows it, nothing before."""
    import ctxtool.io.tail_read as tail_read

    parsed: list[bytes] = []
    real = tail_read.parse_line

    def counting(line: bytes):
        parsed.append(line)
        return real(line)

    monkeypatch.setattr(tail_read, "parse_line", counting)
    path = next(home.glob(f"sessions/*/*/*/*{TOOLS_ID}.jsonl"))
    row = read_session(SessionFile(TOOLS_ID, path, ""), "codex")
    assert row.context_tokens == 13_936 and row.model == "gpt-5-codex"
    lines = fixture_lines("tools.jsonl")
    # from the token_count of the call before (line 45: where the walk stops) to the end, and
    # the turn_context naming the model: the first one walking back from there
    named = max(i for i, line in enumerate(lines[:45]) if b'"type":"turn_context"' in line)
    assert parsed and set(parsed) <= {*lines[45:], lines[named]}


def test_a_rollout_ending_after_a_compaction_is_read_whole(tmp_path: Path) -> None:
    """No call since the compaction: estimate's figure rests on the system figure the
    session's calls showed, so the row reads the file whole and equals it."""
    home = tmp_path / "codex"
    lines = fixture_lines("compacted.jsonl")[:29]  # up to the record and its copies
    path = rollout(home, lines)
    [row] = sessions(env_of(home, tmp_path))
    report = estimate_json(path)
    assert report["method"] == "heuristic"
    assert figures_of(row) == estimate_figures(report)
    assert row["compactions"] == 1


def test_a_line_being_written_is_passed_over(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    lines = fixture_lines("tools.jsonl")
    path = rollout(home, [*lines, b'{"timestamp":"2026-11-24T01:25:40.000Z","type":"event_ms'])
    [row] = sessions(env_of(home, tmp_path))
    assert figures_of(row)[:3] == (13_936, 0, 258_400)
    assert row["size"] == path.stat().st_size


def test_archived_rollouts_only_with_archived(home: Path, tmp_path: Path) -> None:
    lines = fixture_lines("tools.jsonl")
    meta = json.loads(lines[0])
    other = "0000aaaa-0000-7000-8000-000000000001"
    meta["payload"]["id"] = other
    rollout(home, [json.dumps(meta).encode() + b"\n", *lines[1:]], archived=True)
    env = env_of(home, tmp_path)
    assert other not in [r["id"] for r in sessions(env)]
    assert other in [r["id"] for r in sessions(env, "--archived")]


def test_project_filter_reads_the_cwd_of_each_rollout(home: Path, tmp_path: Path) -> None:
    env = env_of(home, tmp_path)
    assert len(sessions(env, "--project", "/home/user/work/proj")) == 2
    assert sessions(env, "--project", "/home/user/elsewhere") == []


def test_listed_beside_claude_code_sessions_newest_first(home: Path, tmp_path: Path) -> None:
    env = env_of(home, tmp_path)
    write_session(tmp_path / "claude", APP, "cccc0001-claude",
                  [{"type": "user", "message": {"role": "user", "content": "hello"},
                    "timestamp": "2026-11-27T17:05:56.500Z"}])  # between the two rollouts
    rows = sessions(env)
    assert [(r["agent"], r["id"]) for r in rows] == [
        ("codex", COMPACTED_ID), ("claude-code", "cccc0001-claude"), ("codex", TOOLS_ID)]


def test_cached_rows_are_the_same(home: Path, tmp_path: Path) -> None:
    env = {**env_of(home, tmp_path), "CTXTOOL_CACHE_DIR": str(tmp_path / "cache")}
    first = sessions(env)
    assert (tmp_path / "cache" / "sessions.json").is_file()
    assert sessions(env) == first


# --- selectors -------------------------------------------------------------------------------------

def test_an_id_prefix_and_latest_name_codex_rollouts(home: Path, tmp_path: Path) -> None:
    env = env_of(home, tmp_path)
    report = estimate_json("01a21df8-7ffe", env=env)
    assert report["source"].endswith(f"{TOOLS_ID}.jsonl")
    assert report["context_tokens"] == 13_936
    proc = run_ctxtool("estimate", "--json", "--latest", env=env)
    assert json.loads(proc.stdout)["source"].endswith(f"{COMPACTED_ID}.jsonl")
    proc = run_ctxtool("estimate", "--json", "--latest", "--project", "/home/user/work/proj",
                       env=env)
    assert json.loads(proc.stdout)["source"].endswith(f"{COMPACTED_ID}.jsonl")


def test_an_ambiguous_prefix_across_agents_lists_the_candidates(home: Path,
                                                                tmp_path: Path) -> None:
    env = env_of(home, tmp_path)
    write_session(tmp_path / "claude", APP, "01a21df8-claude",
                  [{"type": "user", "message": {"role": "user", "content": "hello"}}])
    proc = run_ctxtool("estimate", "01a21df8", env=env)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert "3 sessions match" in err
    for sid in (TOOLS_ID, COMPACTED_ID, "01a21df8-claude"):
        assert sid in err
    proc = run_ctxtool("estimate", "01a21df8-89", env=env)  # unique again
    assert proc.returncode == 0, proc.stderr.decode()


def test_generated_rollouts_list_with_the_figures_of_estimate(tmp_path: Path) -> None:
    """scripts/gen_sessions.py --codex: the rollouts bench.py times are read as Codex's own."""
    import sys
    sys.path.insert(0, str(ROOT / "scripts"))
    from gen_sessions import write_codex

    home = tmp_path / "codex"
    write_codex(home, sessions=4, size=3_000_000, seed=3)
    rows = sessions(env_of(home, tmp_path))
    assert len(rows) == 4 and {r["agent"] for r in rows} == {"codex"}
    assert any(r["compactions"] for r in rows)
    for row in rows:
        assert figures_of(row) == estimate_figures(estimate_json(row["path"]))
