"""`ctxtool estimate` through click's runner and the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.cli.estimate import GRID_COLUMNS, GRID_ROWS
from ctxtool.core.sizing.estimate import estimate
from ctxtool.errors import ExitCode
from tests.conftest import FIXTURES, ROOT, corpus_params, run_ctxtool
from tests.estimate_builders import compact_boundary, compact_summary, session, tool_result

SESSION = FIXTURES / "estimate-session.jsonl"
SCHEMA = json.loads((ROOT / "schemas" / "estimate-report.schema.json").read_text())
# corpus files that are not transcripts: usage-only lines with neither "type" nor "role" (see
# the corpus MANIFEST)
NOT_TRANSCRIPTS = ("session-alpha__chat.jsonl",)
# an older Gemini CLI session: one pretty-printed JSON document, read whole
GEMINI_DOCUMENT = "12__cbfeaa512b__0__full.jsonl"


def write_jsonl(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    return path


def reports(stdout: str) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in stdout.splitlines()]
    for report in found:
        jsonschema.validate(report, SCHEMA)
    return found


def test_table_by_default(runner) -> None:
    result = runner.invoke(cli, ["estimate", str(SESSION)])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    out = result.stdout
    assert f"{SESSION}: " in out and "tokens in context" in out
    for label in ("context now", "auto-compact at", "tool results", "Read", "/repo/app.py"):
        assert label in out
    assert "last API call's usage" in out


def test_json_matches_schema_and_core(runner) -> None:
    result = runner.invoke(cli, ["estimate", "--json", str(SESSION)])
    assert result.exit_code == 0, result.stderr
    [report] = reports(result.stdout)
    core = estimate(session(), fmt="claude-code", env={}, source=str(SESSION)).as_dict()
    assert report["context_tokens"] == core["context_tokens"]
    assert report["breakdown"] == core["breakdown"]
    assert report["method"] == "usage" and report["anchor"]["message_id"] == "msg_2"
    assert report["top"][0]["location"] == f"{SESSION}:4"


def test_one_report_per_file(runner, tmp_path: Path) -> None:
    compacted = write_jsonl(tmp_path / "b.jsonl",
                            [*session(), compact_boundary(), compact_summary("summary " * 50)])
    result = runner.invoke(cli, ["estimate", "--json", str(SESSION), str(compacted)])
    assert result.exit_code == 0, result.stderr
    first, second = reports(result.stdout)
    assert (first["source"], second["source"]) == (str(SESSION), str(compacted))
    assert second["method"] == "heuristic" and second["compact_boundaries"] == 1
    assert second["total_tokens"] > second["context_tokens"]
    table = runner.invoke(cli, ["estimate", str(SESSION), str(compacted)])
    assert table.stdout.count("tokens in context") == 2


def test_options_move_the_window_and_system_tokens(runner, tmp_path: Path) -> None:
    plain = write_jsonl(tmp_path / "a.jsonl", [{"role": "user", "content": "hello there"}])
    result = runner.invoke(cli, ["estimate", "--json", "--system-tokens", "0",
                                 "--model", "claude-opus-4-6[1m]", str(plain)])
    [report] = reports(result.stdout)
    assert report["format"] == "anthropic" and report["method"] == "heuristic"
    assert report["context_tokens"] < 20 and report["thresholds"]["window"] == 1_000_000
    result = runner.invoke(cli, ["estimate", "--json", "--context-window", "100000", str(plain)],
                           env={"CTXTOOL_SYSTEM_TOKENS": "5000",
                                "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50",
                                "DISABLE_AUTO_COMPACT": "true"})
    [report] = reports(result.stdout)
    assert report["system_tokens"] == 5000 and report["thresholds"]["window"] == 100_000
    assert report["thresholds"]["auto_compact"] == 40_000
    assert report["thresholds"]["auto_compact_enabled"] is False


def test_no_usage_sees_content_changed_after_the_calls(runner, tmp_path: Path) -> None:
    entries = session()
    entries[3] = tool_result("toolu_1", "[Old tool result content cleared]")  # as a transform would
    changed = write_jsonl(tmp_path / "changed.jsonl", entries)
    anchored, = reports(runner.invoke(cli, ["estimate", "--json", str(changed)]).stdout)
    # the session's first call saw 20,003 tokens before any message: its system prompt
    fresh, = reports(runner.invoke(cli, ["estimate", "--json", "--no-usage",
                                         "--system-tokens", "20000", str(changed)]).stdout)
    assert anchored["method"] == "usage" and fresh["method"] == "heuristic"
    assert fresh["context_tokens"] < anchored["context_tokens"]


def test_grid_has_a_stable_shape(runner, tmp_path: Path) -> None:
    tiny = write_jsonl(tmp_path / "tiny.jsonl", [{"role": "user", "content": "hi"}])
    shapes = []
    for path in (SESSION, tiny):
        result = runner.invoke(cli, ["estimate", "--grid", str(path)])
        assert result.exit_code == 0, result.stderr
        rows = result.stdout.splitlines()[1:1 + GRID_ROWS]
        assert all(len(r) == 2 + GRID_COLUMNS for r in rows)
        cells = "".join(rows).strip()
        assert set(cells) <= set("SUATIRMCY.~ ")
        assert cells.endswith("~") and "." in cells
        shapes.append([len(r) for r in rows])
        assert "auto-compact buffer" in result.stdout and "free" in result.stdout
    assert shapes[0] == shapes[1]


def test_per_entry_annotates_every_line(runner) -> None:
    result = runner.invoke(cli, ["estimate", "--per-entry", str(SESSION)])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    originals = [orjson.loads(line) for line in SESSION.read_bytes().splitlines()]
    assert len(lines) == len(originals)
    for line, original in zip(lines, originals):
        annotated = orjson.loads(line)
        info = annotated.pop("ctxtool")
        assert annotated == original
        assert set(info) == {"tokens", "category", "context_tokens"}
    assert orjson.loads(lines[3])["ctxtool"]["category"] == "tool_results"


@pytest.mark.parametrize("args", [["--per-entry", "--json"], ["--per-entry", "--grid"],
                                  ["--in-place"]])
def test_usage_errors(runner, args: list[str]) -> None:
    result = runner.invoke(cli, ["estimate", *args, str(SESSION)])
    assert result.exit_code == ExitCode.USAGE
    assert result.stdout == "" and result.stderr.startswith("ctxtool: error: ")


def test_exact_without_a_key_fails_in_one_line() -> None:
    proc = run_ctxtool("estimate", "--exact", str(SESSION))
    assert proc.returncode == ExitCode.LLM
    assert proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [
        "ctxtool: error: --exact needs an Anthropic API key — set ANTHROPIC_API_KEY, "
        "or leave out --exact for the offline estimate"]


@pytest.fixture
def count_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A fake Messages API on 127.0.0.1 answering count_tokens with 1234 tokens."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            body = self.rfile.read(int(self.headers["Content-Length"]))
            seen.append({"path": self.path, "body": json.loads(body)})
            reply = b'{"input_tokens": 1234}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()
    server.server_close()


def test_exact_counts_the_view_with_the_api(count_server) -> None:
    url, seen = count_server
    proc = run_ctxtool("estimate", "--exact", "--json", "--system-tokens", "1000", str(SESSION),
                       env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": url})
    assert proc.returncode == 0, proc.stderr
    [report] = reports(proc.stdout.decode())
    assert report["method"] == "exact" and report["context_tokens"] == 1234 + 1000
    [request] = seen
    assert request["path"].startswith("/v1/messages/count_tokens")
    body = request["body"]
    assert body["model"] == "claude-sonnet-4-5-20250929"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant",
                                                     "user"]


def test_real_entry_point_on_stdin() -> None:
    proc = run_ctxtool("estimate", "--json", input=SESSION.read_bytes())
    assert proc.returncode == 0, proc.stderr
    [report] = reports(proc.stdout.decode())
    assert report["source"] == "<stdin>" and report["context_tokens"] > 23_000
    assert proc.stderr == b""


def test_output_file(runner, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    result = runner.invoke(cli, ["estimate", "--json", "-o", str(target), str(SESSION)])
    assert result.exit_code == 0 and result.stdout == ""
    reports(target.read_text())


PROBE = """
import sys
sys.argv = {argv!r}
from ctxtool.cli import main
try:
    main()
except SystemExit:
    pass
loaded = [m for m in ("anthropic", "jsonschema", "tqdm") if m in sys.modules]
sys.stderr.write("LOADED=" + ",".join(loaded) + "\\n")
"""


@pytest.mark.parametrize("argv", [["ctxtool", "estimate"], ["ctxtool", "--help"],
                                  ["ctxtool", "estimate", "--help"]])
def test_startup_imports_no_sdk_schema_or_progress(argv: list[str]) -> None:
    line = b'{"type":"user","uuid":"u1","message":{"role":"user","content":"hello"}}\n'
    proc = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv)], input=line,
                          capture_output=True, timeout=60, check=False)
    marker = [x for x in proc.stderr.decode().splitlines() if x.startswith("LOADED=")]
    assert marker == ["LOADED="], proc.stderr
    if argv == ["ctxtool", "estimate"]:
        assert b"tokens in context" in proc.stdout


@pytest.mark.corpus
@pytest.mark.parametrize("path", corpus_params())
def test_corpus_files(runner, path: Path) -> None:
    result = runner.invoke(cli, ["estimate", "--json", str(path)])
    if path.name.endswith(NOT_TRANSCRIPTS):
        assert result.exit_code == ExitCode.INVALID_INPUT
        assert len(result.stderr.strip().splitlines()) == 1
        assert result.stderr.startswith(f"ctxtool: error: {path}:")
        return
    assert result.exit_code == 0, result.stderr
    [report] = reports(result.stdout)
    assert 0 < report["context_tokens"] <= report["total_tokens"]
    if path.name == GEMINI_DOCUMENT:
        assert report["format"] == "gemini" and report["method"] != "heuristic"


# --- Claude Code's rule by version, its settings and idle compaction (issue 29) ---------------

def _versioned(tmp_path: Path, version: str, stamp: str = "2026-11-27T12:00:00.000Z") -> Path:
    entries = [{**e, "version": version, "timestamp": stamp} for e in session()]
    return write_jsonl(tmp_path / f"s-{version}.jsonl", entries)


def test_the_transcripts_version_chooses_the_rule(tmp_path: Path) -> None:
    old, new = _versioned(tmp_path, "2.1.20"), _versioned(tmp_path, "2.1.332")
    proc = run_ctxtool("estimate", "--json", str(old), str(new))
    first, second = reports(proc.stdout.decode())
    assert (first["thresholds"]["auto_compact"], first["thresholds"]["rule"]) == \
        (155_000, "2.0.76-2.1.20")
    assert (second["thresholds"]["auto_compact"], second["thresholds"]["version"]) == \
        (167_000, "2.1.332")
    table = run_ctxtool("estimate", str(old)).stdout.decode()
    assert "Claude Code 2.0.76-2.1.20 (written by 2.1.20)" in table


def test_auto_compact_window_in_settings_json_moves_the_point_below_it(tmp_path: Path) -> None:
    config = tmp_path / "claude"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"autoCompactWindow": 150_000}))
    path = _versioned(tmp_path, "2.1.332")
    env = {"CLAUDE_CONFIG_DIR": str(config), "CTXTOOL_CLAUDE_SETTINGS": "1"}
    report, = reports(run_ctxtool("estimate", "--json", str(path), env=env).stdout.decode())
    schema = json.loads((ROOT / "schemas" / "estimate-report.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert report["thresholds"]["auto_compact"] == 117_000 < 150_000
    assert report["thresholds"]["settings"] == ["autoCompactWindow=150000"]
    assert report["tokens_until_auto_compact"] == 117_000 - report["context_tokens"]
    table = run_ctxtool("estimate", str(path), env=env).stdout.decode()
    assert "auto-compact at  117,000" in table and "autoCompactWindow=150000" in table
    # and ctxtool's own test default reads no settings file
    assert reports(run_ctxtool("estimate", "--json", str(path)).stdout.decode()
                   )[0]["thresholds"]["auto_compact"] == 167_000


def test_idle_compaction_in_the_report(tmp_path: Path) -> None:
    env = {"CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "100000"}
    small = _versioned(tmp_path, "2.1.332")
    report, = reports(run_ctxtool("estimate", "--json", str(small), env=env).stdout.decode())
    assert report["idle_compaction"]["fires_at"] is None
    assert "under 100,000" in report["idle_compaction"]["reason"]
    entries = [{**e, "version": "2.1.332", "timestamp": "2026-11-27T12:00:00.000Z"}
               for e in session()]
    entries[4]["message"]["usage"]["cache_read_input_tokens"] = 150_000  # a large context
    big = write_jsonl(tmp_path / "big.jsonl", entries)
    report, = reports(run_ctxtool("estimate", "--json", str(big), env=env).stdout.decode())
    assert report["idle_compaction"]["fires_at"] == "2026-11-27T12:54:00Z"
    assert "idle compaction  at 2026-11-27 12:54:00 UTC" in \
        run_ctxtool("estimate", str(big), env=env).stdout.decode()
    plain, = reports(run_ctxtool("estimate", "--json", str(write_jsonl(
        tmp_path / "plain.jsonl", session()))).stdout.decode())
    assert plain["idle_compaction"] is None


def test_summarize_auto_compacts_at_the_point_of_the_sessions_version(tmp_path: Path) -> None:
    """160,000 tokens: over 2.1.20's point (155,000), under 2.1.332's (167,000)."""
    for version, compacts in (("2.1.20", True), ("2.1.332", False)):
        entries = [{**e, "version": version, "sessionId": "s1"} for e in session()]
        entries[4]["message"]["usage"]["cache_read_input_tokens"] = 160_000
        path = write_jsonl(tmp_path / f"auto-{version}.jsonl", entries)
        proc = run_ctxtool("summarize", "--auto", "--llm", "offline", str(path))
        assert proc.returncode == 0, proc.stderr
        assert (proc.stdout != path.read_bytes()) is compacts, proc.stderr
        if not compacts:
            assert b"below the auto-compact threshold (167,000)" in proc.stderr
