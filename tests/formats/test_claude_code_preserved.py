"""The kept messages of a compaction in the form the transcript's Claude Code version writes
(npm bundles, bisected: preservedSegment from 2.1.76, preservedMessages beside it from 2.1.141;
2.1.332 writes both) - what ``summarize --keep-last`` puts in its boundary."""

from __future__ import annotations

import orjson
import pytest

from ctxtool.formats.claude_code.compaction import keeps_messages, preserved_metadata
from tests.conftest import CLAUDE_CODE_FIXTURE, run_ctxtool
from tests.summarize_builder import coding_session

SEGMENT = ["head", "tool-result", "attachment", "tail"]  # every kept entry, head first
MESSAGES = ["head", "tool-result", "tail"]  # those sent to the model


@pytest.mark.parametrize("version, keys", [
    ("2.1.14", {"preservedSegment"}), ("2.1.75", {"preservedSegment"}),
    ("2.1.76", {"preservedSegment"}), ("2.1.140", {"preservedSegment"}),
    ("2.1.141", {"preservedSegment", "preservedMessages"}),
    ("2.1.332", {"preservedSegment", "preservedMessages"}),
    (None, {"preservedSegment", "preservedMessages"}),  # no version: the newest form
])
def test_the_form_follows_the_version(version: str | None, keys: set[str]) -> None:
    meta = preserved_metadata(SEGMENT, MESSAGES, "summary", version)
    assert set(meta) == keys
    assert meta["preservedSegment"] == {"headUuid": "head", "anchorUuid": "summary",
                                        "tailUuid": "tail"}
    if "preservedMessages" in keys:
        assert meta["preservedMessages"] == {"anchorUuid": "summary", "uuids": MESSAGES,
                                             "allUuids": SEGMENT}
    assert keeps_messages(version) is (version not in ("2.1.14", "2.1.75"))


def test_as_2_1_332_the_segment_spans_the_messages_only() -> None:
    # its Fho: segment head/tail from the messages sent; none of them kept: no segment at all
    meta = preserved_metadata(["a", "m", "z"], ["m"], "s", "2.1.332")
    assert meta["preservedSegment"] == {"headUuid": "m", "anchorUuid": "s", "tailUuid": "m"}
    assert set(preserved_metadata(["a"], [], "s", "2.1.332")) == {"preservedMessages"}
    assert preserved_metadata([], [], "s", "2.1.332") == {}


def test_the_real_2_1_332_boundary_has_our_shape() -> None:
    entries = [orjson.loads(line) for line in CLAUDE_CODE_FIXTURE.read_bytes().splitlines()]
    meta = next(e for e in entries if e.get("subtype") == "compact_boundary")["compactMetadata"]
    listed = meta["preservedMessages"]
    ours = preserved_metadata(listed["allUuids"], listed["uuids"], listed["anchorUuid"], "2.1.332")
    assert ours == {k: meta[k] for k in ("preservedSegment", "preservedMessages")}


@pytest.mark.parametrize("version", ["2.1.14", "2.1.100", "2.1.332"])
def test_summarize_keep_last_writes_the_versions_form(version: str) -> None:
    data = b"".join(orjson.dumps({**e, "version": version} if "version" in e else e) + b"\n"
                    for e in coding_session(history=40).entries)
    proc = run_ctxtool("summarize", "--llm", "offline", "--keep-last", "3", input=data)
    assert proc.returncode == 0, proc.stderr
    boundary = orjson.loads(proc.stdout.splitlines()[-2])
    assert boundary["version"] == version
    meta = boundary["compactMetadata"]
    assert ("preservedMessages" in meta) is (version == "2.1.332")
    assert "preservedSegment" in meta
    note = b"does not keep messages across a compaction (2.1.76 and later do)"
    assert (note in proc.stderr) is (version == "2.1.14")


def test_the_boundary_takes_the_version_of_the_last_line_that_has_one() -> None:
    # 2.1.332 ends a turn with last-prompt / cost-state lines: a sessionId, no version or cwd
    entries = [{**e, "version": "2.1.100"} if "version" in e else e
               for e in coding_session(history=40).entries]
    session = entries[-1]["sessionId"]
    entries += [{"type": "last-prompt", "lastPrompt": "go", "sessionId": session},
                {"type": "cost-state", "sessionId": session}]
    data = b"".join(orjson.dumps(e) + b"\n" for e in entries)
    proc = run_ctxtool("summarize", "--llm", "offline", "--keep-last", "3", input=data)
    assert proc.returncode == 0, proc.stderr
    boundary = orjson.loads(proc.stdout.splitlines()[-2])
    assert boundary["subtype"] == "compact_boundary"
    assert (boundary["version"], boundary["cwd"]) == ("2.1.100", entries[0]["cwd"])
    assert "preservedMessages" not in boundary["compactMetadata"]
