"""persist, snip, microcompact and restore on Gemini CLI sessions (formats/gemini/clearing.py):
results cleared in both places Gemini keeps them, as its own ``<tool_output_masked>`` snippet,
only in the lines Gemini loads, and given back byte for byte.

The sessions are the real client's (tests/fixtures/gemini-cli-0.61.0/), their one small tool
output made large where a test needs it to be moved (:func:`enlarged`: the same lines, the
output's text repeated), and small ones built here in the client's shapes (:func:`session`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool

FIXTURES = Path(__file__).parent.parent / "fixtures" / "gemini-cli-0.61.0"
REAL = sorted(FIXTURES.glob("*.jsonl"))
MASK = b"<tool_output_masked>"
NOTES = b"line 1: alpha beta gamma\\n" + b"".join(
    b"line %d: alpha beta gamma\\n" % n for n in range(2, 11))
SESSION_ID = "5e551011-0000-4000-8000-0000000000aa"


def enlarged(path: Path, rows: int = 3000) -> bytes:
    """The real session with its read_file output ``rows`` lines long (some with non-ASCII
    characters the client escapes), in every line that holds it."""
    data = path.read_bytes()
    assert NOTES in data
    big = b"".join(b"line %d: alpha beta gamma \\u00e9\\u2028 delta\\n" % n
                   for n in range(1, rows + 1))
    return data.replace(NOTES, big)


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def session(calls: list[tuple[str, dict[str, Any], str]], *, string_result: bool = False) -> bytes:
    """A session as the client writes one: metadata, the start checkpoint, a prompt, then per
    call (name, args, output) the model record without then with its toolCalls and the user
    record with the response; a last answer. ``string_result``: toolCalls[].result a string."""
    lines = [dumps({"sessionId": SESSION_ID, "projectHash": "ab" * 32,
                    "startTime": "2026-11-27T16:00:00.000Z",
                    "lastUpdated": "2026-11-27T16:00:00.000Z", "kind": "main"}),
             dumps({"$set": {"messages": [{
                 "id": "ctx", "timestamp": "2026-11-27T16:00:00.000Z", "type": "user",
                 "content": [{"text": "<session_context>\nhi\n</session_context>"}]}]}}),
             dumps({"id": "u0", "timestamp": "2026-11-27T16:00:01.000Z", "type": "user",
                    "content": [{"text": "Read the files."}]})]
    for n, (name, args, output) in enumerate(calls):
        call_id = f"{name}_{n}"
        response = {"functionResponse": {"id": call_id, "name": name,
                                         "response": {"output": output}}}
        turn = {"id": f"m{n}", "timestamp": f"2026-11-27T16:01:{n:02d}.000Z", "type": "gemini",
                "content": "", "thoughts": [], "model": "gemini-3.8-flash",
                "tokens": {"input": 1000 * (n + 1), "output": 10, "cached": 0, "thoughts": 0,
                           "tool": 0, "total": 1000 * (n + 1) + 10}}
        lines.append(dumps(turn))
        lines.append(dumps({**turn, "toolCalls": [{
            "id": call_id, "name": name, "args": args,
            "result": output if string_result else [response], "status": "success"}]}))
        lines.append(dumps({"id": f"r{n}", "timestamp": f"2026-11-27T16:01:{n:02d}.500Z",
                            "type": "user", "content": [response]}))
    lines.append(dumps({"id": "end", "timestamp": "2026-11-27T16:02:00.000Z", "type": "gemini",
                        "content": "Done.", "model": "gemini-3.8-flash"}))
    return b"".join(lines)


def rows(count: int, word: str = "row") -> str:
    return "".join(f"{word} {n:05d}: lorem ipsum dolor sit amet\n" for n in range(count))


def ctxtool(*args: str, data: bytes | None = None, cwd: Path | None = None) -> bytes:
    done = run_ctxtool(*args, input=data, cwd=cwd)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout  # type: ignore[no-any-return]


def records(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines()]


# --- persist and restore -------------------------------------------------------------------------

@pytest.mark.parametrize("path", REAL, ids=lambda p: p.stem)
def test_persist_then_restore_is_the_real_session_byte_for_byte(path: Path,
                                                                tmp_path: Path) -> None:
    """As the client wrote it (small results: nothing moves) and with its output enlarged
    (every line that holds it changes: persist moves dead copies too)."""
    for name, data in (("as-is", path.read_bytes()), ("enlarged", enlarged(path))):
        source = tmp_path / f"{path.stem}-{name}.jsonl"
        source.write_bytes(data)
        persisted = ctxtool("persist", "--store", str(tmp_path / "store"), str(source))
        assert (MASK in persisted) == (name == "enlarged")
        assert ctxtool("restore", "--store", str(tmp_path / "store"), data=persisted) == data


def test_persist_masks_the_result_in_both_places_as_gemini_does(tmp_path: Path) -> None:
    source = tmp_path / "new.jsonl"
    source.write_bytes(enlarged(FIXTURES / "new.jsonl"))
    out = records(ctxtool("persist", "--store", str(tmp_path / "store"), str(source)))
    call = out[6]["toolCalls"][0]["result"][0]["functionResponse"]
    answer = out[7]["content"][0]["functionResponse"]
    assert call == answer  # the same snippet, one file
    snippet = call["response"]["output"]
    assert set(call["response"]) == {"output"}
    saved = Path(snippet.rsplit("available at: ", 1)[1].split("\n")[0])
    text = saved.read_text()
    original = records(source.read_bytes())[7]["content"][0]["functionResponse"]["response"]
    assert text == json.dumps(original, indent=2, ensure_ascii=False)  # Gemini's own file text
    assert snippet == (f"<tool_output_masked>\n{text[:250]}\n... [TRUNCATED] ...\n"
                       f"{text[-250:]}\n\nOutput too large. Full output available at: {saved}\n"
                       "</tool_output_masked>")
    assert saved.parent.name == "tool-results"


def test_persist_keeps_a_string_result_a_string(tmp_path: Path) -> None:
    data = session([("run_shell_command", {"command": "seq"}, rows(2000))], string_result=True)
    persisted = ctxtool("persist", "--store", str(tmp_path / "s"), data=data)
    result = records(persisted)[4]["toolCalls"][0]["result"]
    assert isinstance(result, str) and result.startswith("<tool_output_masked>")
    assert ctxtool("restore", "--store", str(tmp_path / "s"), data=persisted) == data


def test_persist_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    data = session([("read_file", {"file_path": "a"}, rows(2000))])
    once = ctxtool("persist", "--store", str(tmp_path / "s"), data=data)
    assert ctxtool("persist", "--store", str(tmp_path / "s"), data=once) == once


def test_persist_leaves_results_a_snippet_would_not_shrink(tmp_path: Path) -> None:
    data = session([("read_file", {"file_path": "a"}, rows(10))])
    assert ctxtool("persist", "--max-bytes", "100", "--store", str(tmp_path), data=data) == data


def test_a_session_in_geminis_chats_folder_saves_beside_it_in_tool_outputs(
        tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    path = chats / "session-2026-11-27T16-00-5e551011.jsonl"
    original = session([("read_file", {"file_path": "a"}, rows(2000))])
    path.write_bytes(original)
    folder = tmp_path / ".gemini" / "tmp" / "proj" / "tool-outputs" / f"session-{SESSION_ID}"
    folder.mkdir(parents=True)  # Gemini masked some output of this session already
    (folder / "read_file_1_abc.txt").write_text("Gemini's own")
    out = ctxtool("persist", str(path))
    saved = [p for p in folder.rglob("*.txt") if p.parent.name == "tool-results"]
    assert len(saved) == 1 and str(saved[0]).encode() in out
    path.write_bytes(out)
    assert ctxtool("restore", str(path), cwd=tmp_path) == original


def test_geminis_own_masked_output_is_left_alone(tmp_path: Path) -> None:
    """A snippet Gemini wrote names its own file (not a ctxtool store file): restore does not
    read it, microcompact does not mask it again."""
    own = ("<tool_output_masked>\n{\n  \"output\": \"row\"\n}\n\nOutput too large. Full output "
           "available at: /home/u/.gemini/tmp/proj/tool-outputs/session-x/read_file_1_abc.txt\n"
           "</tool_output_masked>")
    data = session([("read_file", {"file_path": "a"}, own), ("read_file", {"file_path": "b"},
                                                             rows(3000))])
    assert ctxtool("restore", "--store", str(tmp_path), data=data) == data
    out = ctxtool("microcompact", "--force", "--target", "0", "--store", str(tmp_path), data=data)
    assert out.count(own.encode().replace(b"\n", b"\\n").replace(b'"', b'\\"')) == 2


def test_an_edited_snippet_fails_restore_strict(tmp_path: Path) -> None:
    data = session([("read_file", {"file_path": "a"}, rows(2000))])
    persisted = ctxtool("persist", "--store", str(tmp_path), data=data)
    edited = persisted.replace(b"Output too large. Full output available at: ",
                               b"Output too large. It is at: ")
    done = run_ctxtool("restore", "--strict", "--store", str(tmp_path), input=edited)
    assert done.returncode != 0 and done.stdout == b""
    assert b"placeholder" in done.stderr and b"Traceback" not in done.stderr


# --- microcompact: Gemini's masking rule -------------------------------------------------------

def test_microcompact_follows_geminis_masking_thresholds(tmp_path: Path) -> None:
    """Default strategy gemini: the newest 50,000 tool tokens (Gemini's count: JSON / 4) kept;
    the result that goes past them and the older ones masked, when they hold 30,000."""
    big = rows(3000)
    tokens = len(json.dumps({"output": big}, separators=(",", ":"))) // 4  # 29,253
    three = session([("read_file", {"file_path": n}, big) for n in "abc"])
    out = records(ctxtool("microcompact", "--store", str(tmp_path), data=three))
    masked = [r["id"] for r in out if MASK.decode() in json.dumps(r)]
    # newest c kept; b goes past 50,000: b and a (58,506 >= 30,000) masked, both places each
    assert masked == ["m0", "r0", "m1", "r1"]
    two = session([("read_file", {"file_path": n}, big) for n in "ab"])
    skipped = run_ctxtool("microcompact", "--stats", "--store", str(tmp_path), input=two)
    assert skipped.stdout == two  # a goes past 50,000, but its 29,253 are under 30,000
    assert json.loads(skipped.stderr[skipped.stderr.index(b"{"):])["skipped"] == (
        f"masking would remove {tokens:,} tokens, less than --clear-at-least 30,000")


def test_microcompact_skips_geminis_exempt_tools_and_honours_options(tmp_path: Path) -> None:
    data = session([("ask_user", {}, rows(3000)), ("read_file", {"file_path": "a"}, rows(3000)),
                    ("read_file", {"file_path": "b"}, rows(100))])
    out = records(ctxtool("microcompact", "--target", "1000", "--clear-at-least", "0",
                          "--store", str(tmp_path), data=data))
    assert [r["id"] for r in out if MASK.decode() in json.dumps(r)] == ["m1", "r1"]


def test_microcompact_changes_only_the_lines_gemini_loads(tmp_path: Path) -> None:
    """resumed.jsonl: its one result is in four copies in the live checkpoint (line 19) and in
    dead lines (7, 8, 13); only line 19 changes, every copy in it."""
    data = enlarged(FIXTURES / "resumed.jsonl")
    source = tmp_path / "resumed.jsonl"
    source.write_bytes(data)
    out = ctxtool("microcompact", "--target", "0", "--clear-at-least", "0", "--store",
                  str(tmp_path / "s"), str(source))
    changed = [n for n, (a, b) in enumerate(zip(data.splitlines(), out.splitlines()), 1)
               if a != b]
    assert changed == [19]
    assert out.splitlines()[18].count(MASK) == 4
    assert ctxtool("restore", "--store", str(tmp_path / "s"), data=out) == data


def test_microcompact_twice_changes_nothing_the_second_time(tmp_path: Path) -> None:
    data = enlarged(FIXTURES / "same-minute.jsonl")
    args = ("microcompact", "--target", "0", "--clear-at-least", "0", "--store", str(tmp_path))
    once = ctxtool(*args, data=data)
    assert MASK in once and ctxtool(*args, data=once) == once


# --- snip ---------------------------------------------------------------------------------------

def test_snip_clears_a_read_of_lines_read_again(tmp_path: Path) -> None:
    """Gemini's read_file of start_line..end_line, read again whole later: the older masked."""
    data = session([("read_file", {"file_path": "a.txt", "start_line": 1, "end_line": 500},
                     rows(500)), ("read_file", {"file_path": "a.txt"}, rows(3000)),
                    ("read_file", {"file_path": "z"}, "x"), ("read_file", {"file_path": "y"}, "x"),
                    ("read_file", {"file_path": "w"}, "x")])
    out = ctxtool("snip", "--store", str(tmp_path), data=data)
    masked = [r["id"] for r in records(out) if MASK.decode() in json.dumps(r)]
    assert masked == ["m0", "r0"]
    assert ctxtool("restore", "--store", str(tmp_path), data=out) == data


# --- bad input ------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["persist", "microcompact", "snip", "restore"])
def test_a_broken_line_is_one_line_error(command: str, tmp_path: Path) -> None:
    lines = session([("read_file", {"file_path": "a"}, rows(2000))]).splitlines(keepends=True)
    lines.insert(4, b'{"id":"m9","type":"gemini","content":\n')
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    done = run_ctxtool(command, "--store", str(tmp_path / "store"), str(path))
    assert done.returncode == 3, done.stderr
    # snip and microcompact read it all first; persist and restore stream (as for every
    # agent): some of the lines before the broken one, unchanged
    assert b"".join(lines[:4]).startswith(done.stdout)
    message = done.stderr.decode().strip().splitlines()
    assert len(message) == 1 and message[0].startswith(f"ctxtool: error: {path}:5:")


def test_odd_shapes_pass_through(tmp_path: Path) -> None:
    """Records the client would not write (a response that is a string, toolCalls not a list,
    a part that is not an object) are passed on as they are, with no error."""
    odd = [{"sessionId": SESSION_ID, "projectHash": "ab" * 32},
           {"id": "a", "timestamp": "t", "type": "gemini", "content": "x", "toolCalls": "none"},
           {"id": "b", "timestamp": "t", "type": "user", "content": [
               "text", 3, {"functionResponse": {"id": "c", "name": "n", "response": "y" * 90000}},
               {"functionResponse": "no"}]},
           {"$set": {"messages": "not a list"}}]
    data = b"".join(dumps(r) for r in odd)
    for command in ("persist", "microcompact", "snip", "restore"):
        assert ctxtool(command, "--store", str(tmp_path), data=data).count(b"\n") == 4
