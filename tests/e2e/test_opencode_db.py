"""The real OpenCode (1.18.33) and its own database: ctxtool reads the sessions OpenCode wrote,
writes them back with --in-place, and OpenCode sends what ctxtool wrote on its next turn.

OpenCode runs headless (``opencode run``) with a fresh HOME and XDG folders, against the fake
Messages server (:mod:`tests.e2e.fake_messages`) through a provider in its config. Two sessions:

* ``work``: a ``read`` tool call and two more turns; then microcompact, restore and summarize
  --in-place, each followed by ``opencode run --session`` and a look at what OpenCode sent.
* ``full``: turns whose usage puts the session at 191,014 then 193,014 tokens, with the model's
  output limit at 8,000 in the config (so OpenCode's usable window is 200,000 - 8,000 =
  192,000): OpenCode compacts only after the second, and ``estimate`` says so on both sides.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_messages import FakeMessages, say, tool
from tests.e2e.opencode_cli import OpenCode, opencode_in
from tests.opencode_builders import PRUNE_ON
from tests.opencode_db_builder import snapshot

CLEARED = "[Old tool result content cleared]"
TEMPLATE = ["## Objective", "## Important Details", "## Work State", "### Completed", "### Active",
            "### Blocked", "## Next Move", "## Relevant Files"]
FILE_TEXT = "the secret word is pelican"


@pytest.fixture(scope="module")
def opencode(opencode_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenCode]:
    root = tmp_path_factory.mktemp("opencode")
    with FakeMessages() as api:
        found = opencode_in(opencode_bin, root, api)
        # long enough that a summary of the session is smaller than it (summarize never grows one)
        (found.project / "notes.txt").write_text(FILE_TEXT + "\n" + "".join(
            f"filler line {n} of the notes\n" for n in range(1, 400)))
        yield found


@dataclass
class Work:
    """The ``work`` session after its three turns, and its export then."""

    id: str
    export: bytes


@pytest.fixture(scope="module")
def work(opencode: OpenCode) -> Work:
    opencode.api.push(tool("read", {"filePath": str(opencode.project / "notes.txt")}),
                      say("It says pelican."))
    opencode.prompt("What does notes.txt say?")
    session = opencode.newest_session()
    opencode.api.push(say("Noted."), say("Sure."))
    opencode.prompt("Remember that.", session)
    opencode.prompt("And now?", session)
    return Work(session, opencode.export(session))


def tool_results(body: dict[str, Any]) -> list[Any]:
    return [block.get("content") for message in body["messages"]
            if isinstance(message.get("content"), list)
            for block in message["content"] if block.get("type") == "tool_result"]


def ctxtool_ok(*args: str, env: dict[str, str] | None = None) -> bytes:
    proc = run_ctxtool(*args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def test_reading_the_database_equals_reading_the_export(opencode: OpenCode, work: Work,
                                                        tmp_path: Path) -> None:
    export = tmp_path / "export.json"
    export.write_bytes(work.export)
    from_export = ctxtool_ok("convert", str(export))
    assert ctxtool_ok("convert", str(opencode.db), "--session", work.id) == from_export
    assert ctxtool_ok("convert", str(opencode.db.parent)) == from_export  # the newest session
    by_db = json.loads(ctxtool_ok("estimate", "--json", str(opencode.db), "--session", work.id))
    (tmp_path / "export.jsonl").write_bytes(from_export)
    by_export = json.loads(ctxtool_ok("estimate", "--json", str(tmp_path / "export.jsonl")))
    assert {**by_db, "source": "", "top": []} == {**by_export, "source": "", "top": []}
    assert [t["tokens"] for t in by_db["top"]] == [t["tokens"] for t in by_export["top"]]
    # the anchor is OpenCode's recorded count of the last finished message, nothing added
    last = json.loads(from_export.splitlines()[-1])["info"]["tokens"]
    assert by_db["opencode"]["count"] == last["input"] + last["output"]


def test_microcompact_with_opencodes_default_config_prunes_nothing(opencode: OpenCode,
                                                                    work: Work) -> None:
    """1.18.33 prunes only with compaction.prune: true; its config here leaves it unset, so
    microcompact (reading that config) leaves the database alone and OpenCode, resumed, sends
    the tool output whole."""
    proc = run_ctxtool("microcompact", "--strategy", "opencode", "--force", "--target", "0",
                       "--in-place", str(opencode.db), "--session", work.id, env=opencode.env)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"OpenCode 1.18.33 prunes only with compaction.prune: true" in proc.stderr
    assert not list(opencode.db.parent.glob("opencode.db.ctxtool-backup-*"))
    assert opencode.export(work.id) == work.export
    opencode.api.push(say("Still there."))
    turns = [b for b in opencode.prompt("still?", work.id) if b.get("tools")]
    assert len(tool_results(turns[-1])) == 1 and FILE_TEXT in str(tool_results(turns[-1])[0])
    work.export = opencode.export(work.id)  # the turn just added: the tests below start here


def test_microcompact_restore_and_the_backup(opencode: OpenCode, work: Work,
                                             tmp_path: Path) -> None:
    ctxtool_ok("microcompact", "--strategy", "opencode", "--force", "--target", "0",
               "--in-place", str(opencode.db), "--session", work.id,
               env={**opencode.env, **PRUNE_ON})  # OpenCode's config, compaction.prune on
    (backup,) = opencode.db.parent.glob("opencode.db.ctxtool-backup-*.jsonl")
    # the backup holds the one tool part microcompact replaced, not the database
    assert backup.stat().st_size < 2 * len(work.export)
    compacted = snapshot(opencode.db, tmp_path / "compacted")  # OpenCode is not running
    ctxtool_ok("restore", str(backup))
    assert opencode.export(work.id) == work.export  # as before microcompact, byte for byte
    _put(compacted, opencode.db)
    opencode.api.push(say("Cleared."))
    turns = [b for b in opencode.prompt("continue", work.id) if b.get("tools")]
    assert tool_results(turns[-1]) == [CLEARED]
    assert json.loads(opencode.export(work.id))["info"]["id"] == work.id  # export still works

    ctxtool_ok("restore", "--in-place", str(opencode.db), "--session", work.id)
    opencode.api.push(say("Back."))
    turns = [b for b in opencode.prompt("and again", work.id) if b.get("tools")]
    assert len(tool_results(turns[-1])) == 1 and FILE_TEXT in str(tool_results(turns[-1])[0])


def _put(saved: Path, db: Path) -> None:
    """The database files :func:`snapshot` saved, back in place (OpenCode not running)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
        if Path(f"{saved}{suffix}").exists():
            shutil.copyfile(f"{saved}{suffix}", f"{db}{suffix}")


def test_summarize_in_place_and_opencode_continues_from_it(opencode: OpenCode, work: Work) -> None:
    ctxtool_ok("summarize", "--in-place", str(opencode.db), "--session", work.id)
    entries = [json.loads(line) for line in
               ctxtool_ok("convert", str(opencode.db), "--session", work.id).splitlines()]
    summary = next(e for e in entries[1:] if e["info"].get("summary") is True)
    summary_text = "".join(p.get("text", "") for p in summary["parts"] if p["type"] == "text")
    # offline, in 1.18's template
    assert [line for line in summary_text.splitlines() if line.startswith("#")] == TEMPLATE
    opencode.api.push(say("Continuing."))
    turns = [b for b in opencode.prompt("go on", work.id) if b.get("tools")]
    # what OpenCode sends after its own compaction: "What did we do so far?" answered by the
    # summary, then what came after (here the new prompt)
    sent = [(m["role"], _texts(m)) for m in turns[-1]["messages"]]
    assert sent[:2] == [("user", ["What did we do so far?"]), ("assistant", [summary_text])]
    assert [role for role, _ in sent[2:]] == ["user"] and "go on" in sent[2][1][0]
    assert ctxtool_ok("convert", str(opencode.db), "--session", work.id)


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [
        block.get("text", "") for block in content if block.get("type") == "text"]


def _conversation(text: str) -> str:
    return text.split("<conversation>\n", 1)[1].split("\n</conversation>", 1)[0]


def test_overflow_verdict_on_both_sides_of_the_threshold(opencode: OpenCode,
                                                        tmp_path: Path) -> None:
    # ctxtool finds the model's limits where OpenCode does: in OpenCode's config
    config = {"XDG_CONFIG_HOME": str(opencode.home / "config")}

    def verdict(*source: str) -> dict[str, Any]:
        report = json.loads(ctxtool_ok("estimate", "--json", *source, env=config))
        assert report["thresholds"]["window_source"] == "config"
        return dict(report["opencode"])

    def compactions(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [b for b in sent if "<conversation>" in json.dumps(b["messages"])]

    opencode.api.push(tool("read", {"filePath": str(opencode.project / "notes.txt")}),
                      say("Big.", usage=(191_000, 14)))
    assert not compactions(opencode.prompt("Fill the window."))
    session = opencode.newest_session()
    below = verdict(str(opencode.db), "--session", session)
    assert (below["count"], below["usable"], below["overflow"]) == (191_014, 192_000, False)
    opencode.api.push(say("Bigger.", usage=(193_000, 14)))
    sent = opencode.prompt("One more.", session)
    # the 193,014-token step overflowed: OpenCode compacted before its next call, in that run,
    # with 1.18's summarizer prompt (the conversation serialized into one user message)
    assert len(compactions(sent)) == 1 and not compactions(sent)[0].get("tools")
    exported = opencode.export(session)
    export = tmp_path / "full.json"
    export.write_bytes(exported)
    converted = ctxtool_ok("convert", str(export))
    assert ctxtool_ok("convert", str(opencode.db), "--session", session) == converted
    lines = converted.splitlines(keepends=True)
    step = next(i for i, line in enumerate(lines)
                if json.loads(line).get("info", {}).get("tokens", {}).get("input") == 193_000)
    (tmp_path / "at-step.jsonl").write_bytes(b"".join(lines[:step + 1]))
    above = verdict(str(tmp_path / "at-step.jsonl"))
    assert (above["count"], above["overflow"]) == (193_014, True)
    assert b'"type":"compaction"' in b"".join(lines[step + 1:])

    # ctxtool's summarizer request for the same messages has the shape of OpenCode's own: a
    # system prompt, one user message holding the same serialized conversation, no tools
    theirs = compactions(sent)[0]
    api = {"ANTHROPIC_BASE_URL": opencode.api.url, "ANTHROPIC_API_KEY": "sk-test"}
    before = len(opencode.api.requests)
    out = ctxtool_ok("summarize", "--llm", "anthropic", str(tmp_path / "at-step.jsonl"), env=api)
    (ours,) = [r.body for r in opencode.api.requests[before:]]
    assert not ours.get("tools") and ours["system"] and len(ours["messages"]) == 1
    assert _conversation(_texts(ours["messages"][0])[0]) == \
        _conversation(_texts(theirs["messages"][0])[0])
    assert "[truncated]" in _conversation(_texts(ours["messages"][0])[0])  # the long read
    written = json.loads(out.splitlines()[-1])
    assert written["info"]["summary"] is True and written["parts"][0]["text"].startswith(
        "## Objective")
