"""The real Gemini CLI 0.61.0 resumes what ``ctxtool summarize`` wrote, and the request it then
sends is checked (issue 32).

A session is written by the client against the fake Gemini API: a first run reads a large file
with ``read_file``, a resume asks a second question and reads another. Then each variant is
resumed once with "continue": the session untouched (the size before), ctxtool's offline summary
(the whole history summarized), and the summary with the latest turn kept verbatim
(``--keep-last 4``). After a summary the request starts from the ``<state_snapshot>`` ctxtool
wrote, still carries the user's requests and not the history it summarized, and ``ctxtool
filter-compacted`` shows what the client sent. Module-scoped: five client runs in all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, call, request_chars, say
from tests.e2e.gemini_cli import GeminiCli, Run, function_responses

SESSION = "5a3e9d12-7777-4888-8999-aaabbbcccddd"
FIRST = "What is in notes.txt?"
SECOND = "Now summarize todo.txt for me."
NOTES = "".join(f"line {n}: alpha beta gamma delta epsilon\n" for n in range(1, 1201))
TODO = "".join(f"task {n}: write the report section {n}\n" for n in range(1, 301))
SNAPSHOT = "<state_snapshot>"
ACK = "Got it. Thanks for the additional context!"


@dataclass
class Written:
    data: bytes  # the session file the client wrote (two runs)
    root: Path


@dataclass
class Resumed:
    data: bytes  # the session file the client was given
    run: Run
    after: bytes  # the file once the resume wrote to it

    @property
    def contents(self) -> list[dict[str, Any]]:
        return self.run.first["contents"]


@pytest.fixture(scope="module")
def written(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Written:
    root = tmp_path_factory.mktemp("gemini-summarize")
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, root / "first", api)
        (gm.cwd / "notes.txt").write_text(NOTES)
        (gm.cwd / "todo.txt").write_text(TODO)
        api.push(call("read_file", {"file_path": "notes.txt"}, text="Let me read it."),
                 say("notes.txt has 1200 lines of alpha beta gamma delta epsilon."))
        first = gm.ask(FIRST, session_id=SESSION)
        assert first.returncode == 0, first.stderr[-800:]
        gm.age(SESSION)
        api.push(call("read_file", {"file_path": "todo.txt"}),
                 say("todo.txt lists 300 report sections to write."))
        second = gm.resume(SESSION, SECOND)
        assert second.returncode == 0, second.stderr[-800:]
        data = gm.session_path(SESSION).read_bytes()
    return Written(data, root)


def ctxtool(*args: str, data: bytes) -> bytes:
    proc = run_ctxtool(*args, input=data)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


VARIANTS: dict[str, list[str]] = {
    "untouched": [],
    "summarize": ["summarize", "--now", "2026-11-27T18:00:00Z"],
    "keep": ["summarize", "--keep-last", "4", "--now", "2026-11-27T18:00:00Z"],
}


@pytest.fixture(scope="module")
def resumed(gemini_bin: str, written: Written) -> Callable[[str], Resumed]:
    done: dict[str, Resumed] = {}

    def get(name: str) -> Resumed:
        if name not in done:
            args = VARIANTS[name]
            data = ctxtool(*args, data=written.data) if args else written.data
            with FakeGemini() as api:
                gm = GeminiCli(gemini_bin, written.root / name, api)
                path = gm.place(data, SESSION)
                api.push(say("Resumed."))
                run = gm.resume(SESSION, "continue")
                assert run.returncode == 0, run.stderr[-800:]
                done[name] = Resumed(data, run, path.read_bytes())
        return done[name]

    return get


def texts(content: dict[str, Any]) -> list[str]:
    return [part["text"] for part in content["parts"] if "text" in part]


def written_snapshot(data: bytes) -> str:
    """The snapshot text of the checkpoint ctxtool appended (its last line)."""
    checkpoint = json.loads(data.splitlines()[-1])["$set"]["messages"]
    [snapshot] = [m for m in checkpoint if SNAPSHOT in json.dumps(m)]
    return snapshot["content"][0]["text"]


def test_summarize_appends_one_checkpoint_and_keeps_every_line(written: Written,
                                                               resumed: Callable[[str], Resumed]) -> None:
    data = resumed("summarize").data
    assert data.startswith(written.data)  # every line the client wrote, byte for byte
    [added] = data[len(written.data):].splitlines()
    update = json.loads(added)["$set"]
    assert set(update) == {"messages", "lastUpdated"}
    kinds = [(m["type"], m["content"][0]["text"][:16]) for m in update["messages"]]
    assert kinds == [("user", "<session_context"), ("user", SNAPSHOT), ("gemini", ACK[:16])]


def test_the_resumed_request_starts_from_the_snapshot(resumed: Callable[[str], Resumed]) -> None:
    got = resumed("summarize")
    opening, thanks, prompt = got.contents  # nothing else: the history is gone
    assert texts(opening)[0].startswith("<session_context>")  # Gemini's own, sent fresh
    assert texts(opening)[1] == written_snapshot(got.data)
    assert texts(thanks) == [ACK]
    assert texts(prompt) == ["continue"]


def test_the_user_requests_survive_and_the_history_does_not(resumed: Callable[[str], Resumed]) -> None:
    got = resumed("summarize")
    snapshot = written_snapshot(got.data)
    assert FIRST in snapshot and SECOND in snapshot  # quoted verbatim (sections 1 and 6)
    sent = json.dumps(got.contents)
    assert not function_responses(got.run.first)
    assert "functionCall" not in sent
    assert "line 700: alpha" not in sent and "task 200: write" not in sent


def test_the_request_is_smaller_than_the_untouched_resume(resumed: Callable[[str], Resumed]) -> None:
    before = request_chars(resumed("untouched").run.first)
    after = request_chars(resumed("summarize").run.first)
    kept = request_chars(resumed("keep").run.first)
    assert after < before / 3, (before, after)
    assert after < kept < before, (before, kept, after)


@pytest.mark.parametrize("name", ["summarize", "keep"])
def test_estimate_of_the_written_session_is_within_15_percent_of_the_request(
        resumed: Callable[[str], Resumed], name: str) -> None:
    """What the client then sends, by the fake's count (characters / 4, the tokens.input it
    reports) against ctxtool's estimate of the file it was given (the new prompt aside)."""
    got = resumed(name)
    sent = request_chars(got.run.first) // 4
    estimated = json.loads(ctxtool("estimate", "--json", data=got.data))["context_tokens"]
    assert abs(estimated - sent) <= 0.15 * sent, (estimated, sent)


def test_a_kept_tail_starts_at_the_latest_prompt_with_its_result_once(
        resumed: Callable[[str], Resumed]) -> None:
    got = resumed("keep")
    contents = got.contents
    assert texts(contents[0])[1] == written_snapshot(got.data)
    assert texts(contents[1]) == [ACK]
    assert texts(contents[2]) == [SECOND]  # the latest request, verbatim, as Gemini keeps it
    outputs = [r["response"]["output"] for r in function_responses(got.run.first)]
    assert outputs == [TODO]  # the kept result once (the untouched resume sends it three times)
    untouched = function_responses(resumed("untouched").run.first)
    assert [r["response"]["output"] for r in untouched].count(TODO) == 2
    assert texts(contents[-1]) == ["continue"]
    assert "line 700: alpha" not in json.dumps(contents)


def model_view(data: bytes) -> list[dict[str, Any]]:
    out = ctxtool("filter-compacted", "--view", "model", data=data)
    return [json.loads(line) for line in out.splitlines()]


def without_ids(part: dict[str, Any]) -> dict[str, Any]:
    """A part with its call id left out: the client sends a stored ``read_file__read_file_N``
    as ``read_file_N``."""
    for key in ("functionCall", "functionResponse"):
        if key in part:
            return {key: {k: v for k, v in part[key].items() if k != "id"}}
    return part


def parts_sent(contents: list[dict[str, Any]]) -> list[Any]:
    """The parts of a request after Gemini's fresh <session_context>, before the new prompt."""
    parts = [without_ids(part) for content in contents for part in content["parts"]]
    return parts[1:-1]


def record_parts(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A record's parts as the client sends them: a string content is one text part; a model
    record's ``toolCalls`` follow as calls unless its content holds them."""
    content = record["content"]
    parts = [{"text": content}] if isinstance(content, str) else list(content)
    if not any("functionCall" in p for p in parts):
        parts += [{"functionCall": {"name": c["name"], "args": c["args"]}}
                  for c in record.get("toolCalls") or []]
    return [p for p in parts if p != {"text": ""}]


def view_parts(records: list[dict[str, Any]]) -> list[Any]:
    """The parts of filter-compacted's records (its own <session_context> left out)."""
    parts = [without_ids(part) for record in records for part in record_parts(record)]
    return [p for p in parts if not str(p.get("text", "")).startswith("<session_context>")]


@pytest.mark.parametrize("name", ["summarize", "keep"])
def test_filter_compacted_shows_what_the_client_sent(resumed: Callable[[str], Resumed],
                                                     name: str) -> None:
    got = resumed(name)
    view = model_view(got.data)
    assert view_parts(view) == parts_sent(got.contents)


def test_the_compaction_is_counted_after_the_client_wrote_the_session_again(
        resumed: Callable[[str], Resumed]) -> None:
    """The resume rewrote the conversation as a checkpoint of its own, ctxtool's snapshot in it
    under the same id: still one compaction, and filter-compacted starts from the snapshot."""
    got = resumed("summarize")
    report = json.loads(ctxtool("estimate", "--json", data=got.after))
    assert report["compact_boundaries"] == 1
    view = model_view(got.after)
    assert [r["type"] for r in view] == ["user", "user", "gemini", "user", "gemini"]
    assert texts({"parts": view[1]["content"]}) == [written_snapshot(got.data)]


# --- Gemini's own compression ---------------------------------------------------------------------

OWN_SNAPSHOT = ("<state_snapshot>\n<overall_goal>Know what notes.txt and todo.txt hold."
                "</overall_goal>\n<task_state>Answered.</task_state>\n</state_snapshot>")


@dataclass
class Compressed:
    data: bytes  # the session once Gemini CLI compressed it
    next_request: dict[str, Any]  # what a resume of it then sent


@pytest.fixture(scope="module")
def compressed(gemini_bin: str, written: Written) -> Compressed:
    """The written session resumed with ``model.compressionThreshold`` at 0.005: the resume's
    call makes a second request, before which Gemini compresses (docs/gemini-format.md); then
    resumed once more under the default threshold."""
    with FakeGemini(side_text=OWN_SNAPSHOT) as api:
        gm = GeminiCli(gemini_bin, written.root / "own", api,
                       settings_extra={"model": {"compressionThreshold": 0.005}})
        path = gm.place(written.data, SESSION)
        api.push(call("read_file", {"file_path": "notes.txt", "start_line": 2, "end_line": 2}),
                 say("Line 2 says alpha beta gamma delta epsilon."))
        run = gm.resume(SESSION, "What does line 2 say?")
        assert run.returncode == 0, run.stderr[-800:]
        data = path.read_bytes()
    assert OWN_SNAPSHOT.encode().replace(b"\n", b"\\n") in data, "Gemini CLI did not compress"
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, written.root / "own-resumed", api)
        gm.place(data, SESSION)
        api.push(say("Resumed."))
        again = gm.resume(SESSION, "continue")
        assert again.returncode == 0, again.stderr[-800:]
    return Compressed(data, again.first)


def test_filter_compacted_shows_what_the_client_sent_after_its_own_compression(
        compressed: Compressed) -> None:
    view = model_view(compressed.data)
    assert view[1]["content"] == [{"text": OWN_SNAPSHOT}] and view[2]["content"] == [{"text": ACK}]
    assert view_parts(view) == parts_sent(compressed.next_request["contents"])
    report = json.loads(ctxtool("estimate", "--json", data=compressed.data))
    assert report["compact_boundaries"] == len(snapshot_ids(compressed.data))


def snapshot_ids(data: bytes) -> set[str]:
    """The snapshots the client wrote: it compressed before each request of the resume (the
    history alone was over 0.005 of the window), each snapshot under an id of its own."""
    lines = [json.loads(line) for line in data.splitlines()]
    return {m["id"] for line in lines for m in (line.get("$set") or {}).get("messages") or []
            if m["type"] == "user" and SNAPSHOT in json.dumps(m["content"])}


def test_summarize_after_gemini_own_compression_merges_its_snapshot(
        compressed: Compressed) -> None:
    data = compressed.data + b"".join(json.dumps(r).encode() + b"\n" for r in (
        {"id": "u9", "timestamp": "2026-11-27T18:01:00.000Z", "type": "user",
         "content": [{"text": "Count the deltas."}]},
        {"id": "g9", "timestamp": "2026-11-27T18:01:01.000Z", "type": "gemini",
         "content": "There are 1200 deltas. " * 600}))
    out = ctxtool("summarize", "--now", "2026-11-27T18:02:00Z", data=data)
    snapshot = written_snapshot(out)
    assert "Know what notes.txt and todo.txt hold." in snapshot  # the earlier snapshot, merged
    assert "Count the deltas." in snapshot
    own = len(snapshot_ids(compressed.data))
    assert json.loads(ctxtool("estimate", "--json", data=out))["compact_boundaries"] == own + 1
