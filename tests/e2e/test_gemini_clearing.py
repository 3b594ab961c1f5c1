"""ctxtool's microcompact, persist and restore on a session the real Gemini CLI 0.61.0 wrote,
judged by what the client sends when it resumes the rewritten file.

The session reads two parts of a file (55 KB each, some 14,000 tokens by Gemini's count):
small enough that Gemini's own masking never acts (50,000 tool tokens protected, 30,000 needed;
on resume the four copies it sends come to about 56,000, of which only 14,000 are past the
protection), large enough that persist's 50 KB limit moves both. Each change is made with
``--in-place`` on the session's own file, then the client resumes it. Module-scoped: five client
runs in all (the first, and a resume of the file untouched, microcompacted, restored, persisted).
Each resume starts from a file the client has not resumed yet: a resumed file sends every result
three times, and then the client masks the older copies itself.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, request_chars, say
from tests.e2e.gemini_cli import PROJECT, GeminiCli, Run, function_responses, read_in_parts

SESSION = "9c1e0000-1111-4222-8333-944455556666"
MASK = "<tool_output_masked>"
SAVED = re.compile(r"Full output available at: (\S+)\n</tool_output_masked>$")
ROW = "consectetur adipiscing elit sed do eiusmod "  # 55 KB per part of 1,000 rows


@dataclass
class Story:
    before: Run  # a resume of the file as the client wrote it
    microcompacted: Run  # after `microcompact --in-place`
    restored: Run  # after `restore --in-place` of that
    persisted: Run  # after `persist --in-place` of the original
    original: bytes
    compacted: bytes  # the session file as microcompact left it
    persisted_file: bytes
    round_trip: bytes  # `restore` of the persisted file, to stdout
    outputs: Path  # the session's tool-outputs/session-<id>/ folder
    call_ids: list[str]  # the two read_file calls, oldest first
    restored_after_resume: bytes  # `restore` of the file the microcompacted resume wrote to
    restored_file: bytes  # `restore --in-place` of the microcompacted file


def _ctxtool(*args: str, env: dict[str, str]) -> bytes:
    done = run_ctxtool(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def story(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Story:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path_factory.mktemp("gemini-clear"), api)
        first = read_in_parts(api, gm, SESSION, parts=2, rows=1000, row=ROW)
        path = gm.age(SESSION)
        original = path.read_bytes()
        env = {**os.environ, "HOME": str(gm.home)}

        def resume(prompt: str) -> Run:
            os.utime(path, (time.time() - 7200, time.time() - 7200))  # past --live-window
            api.push(say(f"Answered: {prompt}"))
            run = gm.resume(SESSION, prompt)
            assert run.returncode == 0, run.stderr[-800:]
            return run

        before = resume("What was in the first part?")
        path.write_bytes(original)
        os.utime(path, (time.time() - 7200, time.time() - 7200))
        _ctxtool("microcompact", "--in-place", "--target", "20000", "--clear-at-least", "10000",
                 str(path), env=env)
        compacted = path.read_bytes()
        microcompacted = resume("And now?")
        # the resume wrote the masked history back as a checkpoint: restore finds it there too
        after_resume = _ctxtool("restore", str(path), env=env)
        # (resumed from that, the client would send each result three times and mask the
        # older copies itself: the file as microcompact left it is restored and resumed)
        path.write_bytes(compacted)
        os.utime(path, (time.time() - 7200, time.time() - 7200))
        _ctxtool("restore", "--in-place", str(path), env=env)
        restored_file = path.read_bytes()
        restored = resume("And after the restore?")
        path.write_bytes(original)
        os.utime(path, (time.time() - 7200, time.time() - 7200))
        _ctxtool("persist", "--in-place", str(path), env=env)
        persisted_file = path.read_bytes()
        round_trip = _ctxtool("restore", str(path), env=env)
        persisted = resume("And after persist?")
    ids = [r["id"] for r in function_responses(first.turns[-1])]
    outputs = gm.home / ".gemini" / "tmp" / PROJECT / "tool-outputs" / f"session-{SESSION}"
    return Story(before, microcompacted, restored, persisted, original, compacted,
                 persisted_file, round_trip, outputs, ids, after_resume, restored_file)


def outputs_by_call(run: Run) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for response in function_responses(run.first):
        found.setdefault(response["id"], []).append(response["response"]["output"])
    return found


def test_the_untouched_resume_sends_both_parts_whole_twice(story: Story) -> None:
    """The base: Gemini's own masking left the session alone, each result goes twice."""
    sent = outputs_by_call(story.before)
    assert list(sent) == story.call_ids
    assert all(len(outs) == 2 and not any(MASK in o for o in outs) for outs in sent.values())
    assert all(len(o) > 50_000 and "row 00001:" in sent[story.call_ids[0]][0]
               for outs in sent.values() for o in outs)


def test_after_microcompact_the_older_part_goes_as_gemini_masks_it(story: Story) -> None:
    sent = outputs_by_call(story.microcompacted)
    older, newer = story.call_ids
    assert len(sent[older]) == 2 and all(o.startswith(MASK) for o in sent[older])
    assert not any("row 00500:" in o for o in sent[older])  # the middle is out
    assert all(not o.startswith(MASK) and "row 01500:" in o for o in sent[newer])
    before, after = request_chars(story.before.first), request_chars(story.microcompacted.first)
    assert after < before - 100_000, (before, after)


def test_the_placeholder_names_the_file_in_the_sessions_tool_outputs(story: Story) -> None:
    """The file is Gemini's own form of it (the response as indented JSON) in the folder
    Gemini keeps the session's tool outputs in; the snippet previews its head and tail."""
    older = story.call_ids[0]
    snippet = outputs_by_call(story.microcompacted)[older][0]
    saved = Path(SAVED.search(snippet).group(1))  # type: ignore[union-attr]
    assert saved.is_relative_to(story.outputs)
    whole = outputs_by_call(story.before)[older][0]
    text = json.dumps({"output": whole}, indent=2, ensure_ascii=False)
    assert saved.read_text() == text
    assert snippet.startswith(f"{MASK}\n{text[:250]}\n... [TRUNCATED] ...\n{text[-250:]}\n\n")


def test_microcompact_changed_only_the_lines_gemini_loads(story: Story) -> None:
    old, new = story.original.splitlines(), story.compacted.splitlines()
    assert len(old) == len(new)
    changed = [n for n, (a, b) in enumerate(zip(old, new)) if a != b]
    assert len(changed) == 2  # the call's model record and the user record that answered it
    assert all(MASK.encode() in new[n] for n in changed)


def test_after_restore_the_content_is_back(story: Story) -> None:
    assert story.restored_file == story.original
    assert outputs_by_call(story.restored) == outputs_by_call(story.before)


def test_restore_finds_the_snippets_the_client_wrote_back(story: Story) -> None:
    """A resume writes its history, snippets included, as a checkpoint under the ids it had:
    restore puts the content back there too."""
    assert MASK.encode() in story.compacted
    assert MASK.encode() not in story.restored_after_resume
    assert story.restored_after_resume.count(b"row 00500:") >= 4


def test_persist_then_restore_gives_the_file_back_byte_for_byte(story: Story) -> None:
    assert story.round_trip == story.original
    assert len(story.persisted_file) < len(story.original) // 10


def test_after_persist_both_parts_go_as_snippets(story: Story) -> None:
    sent = outputs_by_call(story.persisted)
    assert list(sent) == story.call_ids
    assert all(o.startswith(MASK) and len(o) < 1_500 for outs in sent.values() for o in outs)
    before, after = request_chars(story.before.first), request_chars(story.persisted.first)
    assert after < before - 200_000, (before, after)
