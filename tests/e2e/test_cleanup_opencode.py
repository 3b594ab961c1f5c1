"""``ctxtool cleanup`` over the database the real OpenCode (1.18.33) wrote, against the fake
Messages server (tests/e2e/opencode_cli.py).

Two sessions: ``old`` (a read, a todo list, a bash output OpenCode truncated into
``tool-output/``, a subagent's child session), made 60 days old by moving its rows' times back,
and ``kept`` (yesterday's). The dry run changes no byte; ``--apply --archive --keep-usage``
removes ``old``'s tree from every table and its tool output, the database passes
``integrity_check``, OpenCode exports and continues ``kept``, and ``opencode import`` of the
archive brings ``old`` back as it was exported.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_messages import FakeMessages, say, tool
from tests.e2e.opencode_cli import OpenCode, opencode_in
from tests.opencode_db_builder import keyed_rows

DAY = 86_400_000


@dataclass
class Sessions:
    oc: OpenCode
    old: list[str]  # the root, then its child
    kept: str
    exports: dict[str, bytes]  # session -> its export once aged


@pytest.fixture(scope="module")
def sessions(opencode_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sessions]:
    with FakeMessages() as api:
        oc = opencode_in(opencode_bin, tmp_path_factory.mktemp("cleanup"), api)
        (oc.project / "notes.txt").write_text("pelican\n")
        (oc.project / "big.txt").write_text("".join(f"line {n} of a long file\n"
                                                    for n in range(6000)))
        api.push(tool("read", {"filePath": str(oc.project / "notes.txt")}), say("Pelican."))
        oc.prompt("What does notes.txt say?")
        old = oc.newest_session()
        api.push(tool("todowrite", {"todos": [{"content": "tidy", "status": "pending",
                                                "priority": "high", "id": "1"}]}), say("Noted."))
        oc.prompt("Make a todo.", old)
        api.push(tool("bash", {"command": "cat big.txt", "description": "print it"}),
                 say("Long."))
        oc.prompt("Print big.txt.", old)
        api.push(tool("task", {"description": "look", "prompt": "look at notes.txt",
                               "subagent_type": "general"}), say("seen"), say("Done."))
        oc.prompt("Ask a subagent.", old)
        api.push(say("Hello again."))
        oc.prompt("A new session.")
        kept = oc.newest_session()
        conn = sqlite3.connect(oc.db)
        children = [row[0] for row in conn.execute("SELECT id FROM session WHERE parent_id = ?",
                                                   (old,))]
        conn.close()
        assert len(children) == 1, "OpenCode's task tool made no child session"
        ids = [old, *children]
        oc.age(ids, 60 * DAY)
        exports = {ident: oc.export(ident) for ident in [*ids, kept]}
        # after the exports: OpenCode sweeps week-old tool outputs when it starts
        oc.age_tool_outputs(60 * DAY)
        yield Sessions(oc, ids, kept, exports)


def cleanup(oc: OpenCode, *args: str) -> tuple[int, list[dict[str, Any]], bytes]:
    proc = run_ctxtool("cleanup", "--agent", "opencode", "--older-than", "30d", "--json", *args,
                       env={"HOME": str(oc.home), "XDG_DATA_HOME": oc.env["XDG_DATA_HOME"]})
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def data_files(oc: OpenCode) -> dict[str, bytes]:
    return {str(p.relative_to(oc.data)): p.read_bytes() for p in sorted(oc.data.rglob("*"))
            if p.is_file() and "log" not in p.relative_to(oc.data).parts}


def test_cleanup_of_opencode_sessions_written_by_the_real_client(sessions: Sessions,
                                                                 tmp_path: Path) -> None:
    oc, old, root = sessions.oc, sessions.old, sessions.old[0]
    outputs = sorted((oc.data / "tool-output").iterdir())
    assert outputs, "OpenCode kept no truncated tool output"
    before_rows = {ident: keyed_rows(oc.db, ident) for ident in old}
    assert before_rows[root]["todo"] == 1 and before_rows[root]["event"] > 0

    # the plan: exactly the old tree, no byte changed
    before = data_files(oc)
    code, records, err = cleanup(oc)
    assert code == 0, err
    assert data_files(oc) == before
    planned = {r["session"] for r in records if r.get("action") == "delete"}
    assert planned == {root}

    archive, usage = tmp_path / "archive", tmp_path / "usage"
    code, records, err = cleanup(oc, "--apply", "--archive", str(archive),
                                 "--keep-usage", str(usage))
    assert code == 0, err
    for ident in old:
        assert not any(keyed_rows(oc.db, ident).values()), ident
    assert keyed_rows(oc.db, sessions.kept)["session"] == 1
    assert not any(path.exists() for path in outputs)
    conn = sqlite3.connect(oc.db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    for ident in old:  # the archive is what `opencode export` printed, byte for byte
        assert (archive / f"{ident}.json").read_bytes() == sessions.exports[ident]
    lines = [json.loads(line) for line in (usage / "opencode" / f"{root}.jsonl").read_bytes()
             .splitlines()]
    assert lines and {line["sessionID"] for line in lines} == set(old)
    assert all("tokens" in line and "cost" in line for line in lines)

    # the kept session: exported as before, and OpenCode goes on with it
    assert oc.export(sessions.kept) == sessions.exports[sessions.kept]
    oc.api.push(say("Still here."))
    sent = oc.prompt("Continue.", sessions.kept)
    assert any("A new session." in json.dumps(body["messages"]) for body in sent)

    # the archive brings the old tree back through OpenCode's own import
    for ident in old:
        assert f"Imported session: {ident}" in oc.import_file(archive / f"{ident}.json")
        assert json.loads(oc.export(ident)) == json.loads(sessions.exports[ident])
