"""Gemini CLI's sessions on disk, judged by the real Gemini CLI 0.61.0 against the fake Gemini
API in a fresh HOME (issue 32): ``ctxtool sessions`` lists the sessions it wrote; ``cleanup``
removes an old one, which the client's own ``--list-sessions`` then no longer shows while the
other still resumes; ``vacuum`` in place leaves a session the client resumes sending the same
request as before, and ``restore`` gives the original bytes back. The vacuum's rules are also
checked against the client's own loader, imported from its bundle, on the real fixtures and on
random logs (tests/gemini_builders.py).

Module-scoped: the client runs seven times in all (a session with a tool call, resumed twice;
another session; a resume of the original and of the vacuumed copy; the last resume after the
cleanup) plus two ``--list-sessions``.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ctxtool.core.vacuuming.lines import FileVacuum, plan_lines
from tests.conftest import run_ctxtool
from tests.e2e.fake_gemini import FakeGemini, say
from tests.e2e.gemini_cli import GeminiCli, Run, age_files, tool_session
from tests.gemini_builders import FIXTURES, random_session

pytestmark = pytest.mark.e2e

OLD = "0a0a0a0a-1111-4222-8333-944455556666"  # with a tool call, resumed twice
NEW = "0b0b0b0b-1111-4222-8333-944455556666"
# retention off for the client: its own start-up cleanup would otherwise take the aged session
SETTINGS = {"general": {"sessionRetention": {"enabled": False}}}
LOADER = """
const { loadConversationRecord, convertSessionToClientHistory } = await import(process.argv[1]);
for (const file of process.argv.slice(2)) {
  const full = await loadConversationRecord(file);
  const meta = await loadConversationRecord(file, { metadataOnly: true });
  console.log(JSON.stringify({ full, meta, history: convertSessionToClientHistory(full.messages) }));
}
"""


@dataclass
class Story:
    gm: GeminiCli
    api: FakeGemini
    old: Path  # the old session's file


@pytest.fixture(scope="module")
def story(gemini_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    with FakeGemini() as api:
        gm = GeminiCli(gemini_bin, tmp_path_factory.mktemp("gemini-disk"), api, SETTINGS)
        tool_session(api, gm, OLD)
        path = gm.age(OLD)
        for prompt in ("Which word comes second?", "And third?"):
            api.push(say(f"Answered: {prompt}"))
            assert gm.resume(OLD, prompt).returncode == 0
        api.push(say("Hello there."))
        run = gm.ask("Say hello", session_id=NEW)
        assert run.returncode == 0, run.stderr[-800:]
        yield Story(gm, api, path)


def ctxtool_env(gm: GeminiCli) -> dict[str, str]:
    return {"HOME": str(gm.home), "CTXTOOL_CACHE_DIR": "off", "COLUMNS": "200"}


def bundle(gemini_bin: str) -> Path:
    """The client's core chunk (docs/gemini-format.md), found by what it exports."""
    folder = Path(os.path.realpath(gemini_bin)).parent
    for chunk in sorted(folder.glob("chunk-*.js")):
        tail = chunk.read_bytes()[-40000:]
        if b"  loadConversationRecord," in tail and b"convertSessionToClientHistory," in tail:
            return chunk
    raise AssertionError(f"no chunk of {folder} exports loadConversationRecord")


def client_loads(gemini_bin: str, files: list[Path]) -> list[str]:
    """What Gemini CLI's own loader makes of each file: the conversation in both its modes
    (a resume's, the session list's) and the history a resume sends."""
    proc = subprocess.run(["node", "--input-type=module", "-e", LOADER, str(bundle(gemini_bin)),
                           *map(str, files)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


def vacuumed_copy(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / source.name
    copy.write_bytes(source.read_bytes())
    result = run_ctxtool("vacuum", "--in-place", "--force", "--store", str(folder / "store"),
                         str(copy))
    assert result.returncode == 0, result.stderr
    return copy


def test_the_clients_loader_reads_every_vacuumed_file_as_the_original(
        gemini_bin: str, tmp_path: Path) -> None:
    pairs = [(path, vacuumed_copy(path, tmp_path / "fixtures" / path.stem))
             for path in sorted(FIXTURES.glob("*.jsonl"))]
    assert len(pairs) == 4 and all(v.stat().st_size < o.stat().st_size for o, v in pairs)
    for seed in range(300):  # vacuumed in-process: the command's path is the fixtures'
        lines = random_session(seed, records=40)
        original, vacuumed = tmp_path / f"{seed}.jsonl", tmp_path / f"{seed}.vacuumed.jsonl"
        original.write_bytes(b"".join(lines))
        plan = plan_lines(lines, "gemini", source=str(original))
        vacuumed.write_bytes(b"".join(FileVacuum(plan, lambda data: "", source="t").write(lines)))
        pairs.append((original, vacuumed))
    loaded = client_loads(gemini_bin, [p for pair in pairs for p in pair])
    assert len(loaded) == 2 * len(pairs)
    different = [str(o) for (o, _), a, b in zip(pairs, loaded[::2], loaded[1::2]) if a != b]
    assert different == []


def test_sessions_lists_the_clients_sessions(story: Story) -> None:
    result = run_ctxtool("sessions", "--json", env=ctxtool_env(story.gm))
    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row for row in map(json.loads, result.stdout.splitlines())}
    assert set(rows) == {OLD, NEW}  # the starts each run writes first are left out, as the client does
    assert rows[OLD]["project"] == str(story.gm.cwd)
    assert rows[OLD]["first_prompt"] == "What is in notes.txt?"
    assert rows[NEW]["first_prompt"] == "Say hello"
    assert rows[OLD]["size"] == story.old.stat().st_size and rows[OLD]["agent"] == "gemini"
    table = run_ctxtool("sessions", env=ctxtool_env(story.gm))
    assert OLD[:8].encode() in table.stdout and b"Say hello" in table.stdout
    named = run_ctxtool("estimate", "--json", OLD[:8], env=ctxtool_env(story.gm))
    assert named.returncode == 0, named.stderr


def resume_request(story: Story, prompt: str) -> dict[str, Any]:
    story.api.push(say("Resumed."))
    run: Run = story.gm.resume(OLD, prompt)
    assert run.returncode == 0, run.stderr[-800:]
    return run.first


def test_vacuum_in_place_the_client_resumes_sending_the_same(story: Story) -> None:
    original = story.old.read_bytes()
    before = resume_request(story, "What was the second word?")
    story.old.write_bytes(original)  # the resume appended to it
    result = run_ctxtool("vacuum", "--in-place", "--force", "--json", str(story.old),
                         env=ctxtool_env(story.gm))
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout.splitlines()[0])
    assert record["bytes_after"] < record["bytes_before"] == len(original)
    vacuumed = story.old.read_bytes()
    # what ctxtool keeps goes beside the session's file, in a store cleanup takes with it
    assert list((story.gm.chats / "ctxtool-store" / OLD / "ctxtool-vacuum").glob("recipe-*"))
    copy = story.old.with_name("copy.jsonl.txt")
    copy.write_bytes(vacuumed)
    back = run_ctxtool("restore", str(story.old), env=ctxtool_env(story.gm))
    assert back.returncode == 0 and back.stdout == original, back.stderr
    after = resume_request(story, "What was the second word?")
    assert after == before
    copy.unlink()
    appended = story.old.read_bytes()[len(vacuumed):]
    back = run_ctxtool("restore", "--in-place", "--force", str(story.old),
                       env=ctxtool_env(story.gm))
    assert back.returncode == 0, back.stderr
    assert story.old.read_bytes() == original + appended  # the resume's lines after it


def list_sessions(story: Story) -> str:
    proc = subprocess.run([story.gm.binary, "--list-sessions"], cwd=story.gm.cwd,
                          env=story.gm.env(), capture_output=True, text=True, timeout=120,
                          check=False, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-800:]
    return proc.stdout


def test_cleanup_removes_the_old_session_the_client_lists_and_resumes_the_other(
        story: Story) -> None:
    listed = list_sessions(story)
    assert OLD in listed and NEW in listed
    age_files(story.gm, OLD, 60)
    project = story.gm.chats.parent
    artifacts = [*project.rglob(f"*{OLD}*"), *story.gm.chats.glob(f"session-*-{OLD[:8]}.jsonl")]
    assert len(artifacts) >= 2  # the session, its start file (and the store vacuum wrote)
    env = {**ctxtool_env(story.gm), "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "/nonexistent"}
    plan = run_ctxtool("cleanup", "--agent", "gemini", "--older-than", "30d", "--json",
                       env=env)
    assert plan.returncode == 0, plan.stderr
    gone = {json.loads(line).get("session") for line in plan.stdout.splitlines()
            if json.loads(line).get("action") == "delete"}
    assert gone == {OLD}, plan.stdout.decode()[-3000:]
    result = run_ctxtool("cleanup", "--agent", "gemini", "--older-than", "30d", "--apply",
                         "--archive", str(story.gm.home.parent / "archive"), env=env)
    assert result.returncode == 0, result.stderr
    assert not story.old.exists() and not [p for p in artifacts if p.exists()]
    listed = list_sessions(story)
    assert OLD not in listed and NEW in listed
    story.api.push(say("Hello again."))
    run = story.gm.resume(NEW, "Again?")
    assert run.returncode == 0, run.stderr[-800:]
    sent = json.dumps(run.first["contents"])
    assert "Say hello" in sent and "Hello there." in sent
