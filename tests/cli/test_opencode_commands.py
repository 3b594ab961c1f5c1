"""Every command on OpenCode sessions (ctxtool convert's JSONL), through click's runner and the
real entry point: estimate, microcompact, filter-compacted, summarize, persist, snip, restore,
validate."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import orjson
import pytest

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from ctxtool.formats.opencode.session import CONTINUE_TEXT
from ctxtool.formats.opencode.truncate import HINT_TAIL
from tests.conftest import CORPUS, ROOT, run_ctxtool
from tests.opencode_builders import PRUNE_ON
from tests.opencode_sessions import (EXPORT, NOW, NOW_MS, fixture_entries, jsonl, lines,
                                     persist_session, prune_session, snip_session, tools_of,
                                     write)

REPORT_SCHEMA = json.loads((ROOT / "schemas" / "estimate-report.schema.json").read_text())


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """The export fixture converted: 14 lines, two compactions, a kept tail, pending tools."""
    return write(tmp_path / "session.jsonl", fixture_entries())


@pytest.fixture
def long_session(tmp_path: Path) -> Path:
    """``session`` with a long last prompt: enough for a summary to be smaller than the view."""
    entries = fixture_entries()
    entries[12]["parts"][0]["text"] += " and some context" * 2000
    return write(tmp_path / "long.jsonl", entries)


def view_ids(data: bytes) -> list[str]:
    return [row["info"]["id"][13:16] for row in lines(data) if "info" in row]


# --- estimate --------------------------------------------------------------------------------------

def test_estimate_reports_opencodes_rule(runner, session: Path) -> None:
    result = runner.invoke(cli, ["estimate", "--json", str(session)])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, REPORT_SCHEMA)
    assert (report["format"], report["compact_boundaries"], report["messages"]) == ("opencode", 2, 6)
    # a 1.1.48 session: that release's rule (input + cache read + output > 200K - 32K)
    assert report["opencode"]["usable"] == 168_000 and report["opencode"]["overflow"] is False
    table = runner.invoke(cli, ["estimate", str(session)])
    assert "compacts at      168,000  (OpenCode: window 200,000 - max output 32,000, before " \
           "1.18;" in table.stdout
    assert "OpenCode check   last finished message msg_b5e0a1c2d009QrStUvWxYz0123: 152,500 " \
           "tokens, no overflow" in table.stdout
    assert result.stderr == table.stderr == ""


def test_estimate_through_the_entry_point(session: Path) -> None:
    result = run_ctxtool("estimate", "--json", "--input-limit", "100000", "-",
                         input=session.read_bytes())
    assert result.returncode == 0, result.stderr
    rule = json.loads(result.stdout)["opencode"]
    assert (rule["input_limit"], rule["usable"]) == (100_000, 100_000)  # 1.1.48: no reserve


# --- microcompact ----------------------------------------------------------------------------------

def test_microcompact_marks_parts_on_opencode_input(runner, tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", prune_session())
    result = runner.invoke(cli, ["microcompact", "--now", NOW, "--stats", str(path)], env=PRUNE_ON)
    assert result.exit_code == 0, result.stderr
    parts = tools_of(lines(result.stdout_bytes))
    assert parts["old1"]["state"]["time"]["compacted"] == NOW_MS
    assert parts["old1"]["state"]["output"] == prune_session()[2]["parts"][0]["state"]["output"]
    assert "microcompact: marked 1 tool result(s) compacted" in result.stderr
    assert "the output stays in the file" in result.stderr
    stats = json.loads(result.stderr[result.stderr.index("{"):])
    assert stats["strategy"] == "opencode" and stats["marked_compacted"] is True
    assert not (tmp_path / "ctxtool-store").exists() and not Path("ctxtool-store").exists()
    refused = runner.invoke(cli, ["microcompact", "--clear-tool-inputs", str(path)], env=PRUNE_ON)
    assert refused.exit_code == ExitCode.USAGE and "does not apply to OpenCode" in refused.stderr


def test_microcompact_in_place_and_restore_unmarks(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", prune_session())
    original = path.read_bytes()
    result = run_ctxtool("microcompact", "--strategy", "claude-code", "--force", "--keep", "1",
                         "--now", NOW, "--in-place", str(path), env=PRUNE_ON)
    assert result.returncode == 0, result.stderr
    marked = path.read_bytes()
    assert "compacted" in tools_of(lines(marked))["old1"]["state"]["time"]
    restored = run_ctxtool("restore", str(path))  # the output was kept: only the mark goes
    assert restored.returncode == 0 and restored.stdout == original


# --- filter-compacted ------------------------------------------------------------------------------

def test_filter_compacted_keeps_opencodes_view(runner, session: Path) -> None:
    result = runner.invoke(cli, ["filter-compacted", "--stats", str(session)])
    assert result.exit_code == 0, result.stderr
    rows = lines(result.stdout_bytes)
    assert list(rows[0]) == ["session"]
    assert view_ids(result.stdout_bytes) == ["010", "011", "008", "009", "012", "013"]
    stats = json.loads(result.stderr[result.stderr.index("{"):])["files"][0]
    assert (stats["compactions"], stats["cut"]) == (2, f"{session}:11")
    api = runner.invoke(cli, ["filter-compacted", "--to", "anthropic", str(session)])
    messages = lines(api.stdout_bytes)
    assert messages[0] == {"role": "user", "content": "What did we do so far?"}
    assert messages[-1]["content"][0]["content"] == "[Tool execution was interrupted]"


def test_filter_compacted_to_openai_through_the_entry_point(session: Path) -> None:
    result = run_ctxtool("filter-compacted", "--to", "openai", input=session.read_bytes())
    assert result.returncode == 0, result.stderr
    messages = lines(result.stdout)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user",
                                             "assistant", "tool", "tool"]


# --- summarize -------------------------------------------------------------------------------------

def test_summarize_appends_what_opencode_writes(runner, session: Path, long_session: Path) -> None:
    small = runner.invoke(cli, ["summarize", "--llm", "offline", "--now", NOW, str(session)])
    assert small.stdout_bytes == session.read_bytes()  # a summary would not be smaller
    assert "would not make the context smaller" in small.stderr
    session = long_session
    result = runner.invoke(cli, ["summarize", "--llm", "offline", "--now", NOW, str(session)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout_bytes.startswith(session.read_bytes())  # every line kept
    added = lines(result.stdout_bytes)[14:]
    assert [m["parts"][0]["type"] for m in added] == ["compaction", "text"]
    assert added[0]["parts"][0]["auto"] is False and added[1]["info"]["summary"] is True
    assert "tokens by offline" in result.stderr
    refused = runner.invoke(cli, ["summarize", "--llm", "offline", "--restore-files", "2",
                                  str(session)])
    assert refused.exit_code == ExitCode.USAGE and "OpenCode re-attaches no files" in refused.stderr


def test_summarize_auto_uses_opencodes_rule_through_the_entry_point(long_session: Path) -> None:
    session = long_session
    below = run_ctxtool("summarize", "--llm", "offline", "--auto", str(session))
    assert below.returncode == 0 and below.stdout == session.read_bytes()
    assert "below the auto-compact threshold (168,000)" in below.stderr.decode()
    over = run_ctxtool("summarize", "--llm", "offline", "--auto", "--context-window", "20000",
                       "--now", NOW, str(session))
    assert over.returncode == 0, over.stderr
    added = lines(over.stdout)[14:]
    assert added[0]["parts"][0]["auto"] is True and added[2]["parts"][0]["text"] == CONTINUE_TEXT
    view = run_ctxtool("filter-compacted", input=over.stdout)
    assert [row["info"]["id"] for row in lines(view.stdout)[1:]] == [m["info"]["id"] for m in added]


# --- persist, snip and restore ---------------------------------------------------------------------

def test_persist_truncates_like_opencode_and_restore_gives_the_bytes_back(runner,
                                                                          tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", persist_session())
    store = tmp_path / "store"
    result = runner.invoke(cli, ["persist", "--store", str(store), str(path)])
    assert result.exit_code == 0, result.stderr
    parts = tools_of(lines(result.stdout_bytes))
    assert parts["long"]["state"]["output"].endswith(HINT_TAIL)
    assert (store / "ses_test" / "tool-results" / "long.txt").read_text() == \
        persist_session()[2]["parts"][0]["state"]["output"]
    back = run_ctxtool("restore", "-", input=result.stdout_bytes)
    assert back.returncode == 0 and back.stdout == path.read_bytes()
    claude = runner.invoke(cli, ["persist", "--style", "claude-code", "--store", str(store),
                                 str(path)])
    assert tools_of(lines(claude.stdout_bytes))["wide"]["state"]["output"].startswith(
        "<persisted-output>")
    mixed = runner.invoke(cli, ["persist", "--truncate", "--style", "opencode", str(path)])
    assert mixed.exit_code == ExitCode.USAGE and "choose one" in mixed.stderr


def test_persist_max_lines_and_bytes_through_the_entry_point(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", persist_session())
    result = run_ctxtool("persist", "--store", str(tmp_path / "store"), "--max-lines", "5000",
                         "--max-bytes", "100000", str(path))
    assert result.returncode == 0 and result.stdout == path.read_bytes()  # under both limits


def test_snip_and_restore_on_opencode_input(runner, tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", snip_session())
    result = runner.invoke(cli, ["snip", "--store", str(tmp_path / "store"), str(path)])
    assert result.exit_code == 0, result.stderr
    assert "snip: cleared 1 tool result(s)" in result.stderr
    snipped = tools_of(lines(result.stdout_bytes))["r1"]["state"]["output"]
    assert snipped.startswith("[Content snipped - re-read if needed]\nTool result saved to: ")
    back = run_ctxtool("restore", input=result.stdout_bytes)
    assert back.returncode == 0, back.stderr
    assert back.stdout == path.read_bytes()


# --- validate --------------------------------------------------------------------------------------

def test_validate_accepts_sessions_and_names_broken_invariants(runner, session: Path,
                                                               tmp_path: Path) -> None:
    ok = runner.invoke(cli, ["validate", str(session)])
    assert ok.exit_code == 0 and ok.stdout == "" and "no problems in 1 file" in ok.stderr
    rows = fixture_entries()
    rows[3] = {**rows[3], "info": {**rows[3]["info"], "parentID": "msg_gone"}}
    rows[2] = {**rows[2], "parts": [{**p, "callID": "dup"} if p.get("type") == "tool" else p
                                    for p in rows[2]["parts"]]}
    broken = write(tmp_path / "broken.jsonl", rows)
    result = run_ctxtool("validate", "--json", str(broken))
    assert result.returncode == ExitCode.INVALID_INPUT
    found = [(p["line"], p["code"]) for p in lines(result.stdout)]
    assert found == [(3, "opencode-callid-duplicate"), (3, "opencode-callid-duplicate"),
                     (4, "opencode-parent-missing")]


def test_validate_checks_the_schema_of_opencode_lines(runner, tmp_path: Path) -> None:
    rows = [orjson.loads(line) for line in jsonl(fixture_entries()).splitlines()]
    del rows[2]["parts"][3]["callID"]
    rows[4]["parts"][0]["auto"] = "yes"
    path = tmp_path / "schema.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    result = runner.invoke(cli, ["validate", str(path)])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stdout.splitlines() == [
        f"{path}:3: error: parts[3]: 'callID' is missing [schema]",
        f"{path}:5: error: parts[0].auto: expected boolean, got string [schema]"]


def test_the_export_fixture_still_converts(runner) -> None:
    assert runner.invoke(cli, ["convert", str(EXPORT)]).stdout_bytes == jsonl(fixture_entries())


@pytest.mark.skipif(not (CORPUS / "ggfincke__opencode-to-ccusage").is_dir(), reason="corpus absent")
def test_the_corpus_export_through_every_reading_command(tmp_path: Path) -> None:
    export = CORPUS / "ggfincke__opencode-to-ccusage" / "test__fixtures__sample-export.json"
    converted = run_ctxtool("convert", str(export))
    assert converted.returncode == 0, converted.stderr
    assert run_ctxtool("validate", "-", input=converted.stdout).returncode == 0
    report = json.loads(run_ctxtool("estimate", "--json", input=converted.stdout).stdout)
    assert (report["method"], report["anchor"]["message_id"]) == ("usage", "msg_assistant002")
    assert report["opencode"]["count"] == 950 and report["opencode"]["overflow"] is False
    for args in (["microcompact", "--now", NOW], ["snip", "--store", str(tmp_path)],
                 ["persist", "--store", str(tmp_path)]):
        result = run_ctxtool(*args, input=converted.stdout)
        assert result.returncode == 0 and result.stdout == converted.stdout, (args, result.stderr)
