"""Every command gives the same output whatever kind of path its input comes through: a file,
``< FILE`` (a seekable stdin), ``<(cat FILE)`` (a pipe given as a path) and a named FIFO.

Commands that read their input twice (snip, microcompact, filter-compacted, persist --budget
auto) must copy a pipe or FIFO path once instead of opening it again: a second open of a drained
pipe reads nothing, and of a FIFO blocks until a new writer comes. Runs go through bash, which is
what makes ``<(...)`` a real /dev/fd path.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ctxtool_executable
from tests.robustness.strategies import cc_entry, compact, tool_result_message, tool_use_message

NOW = "2026-01-02T00:00:00Z"
SESSION = "5f0c4c4e-0000-4000-8000-000000000001"


def transcript() -> bytes:
    """A session where every command has something to do: two reads of one file (snip), big
    results (persist, microcompact), a usage record (estimate)."""
    lines = [compact(cc_entry("user", "u0", None, {"role": "user", "content": "read x.py twice"}))]
    parent = "u0"
    for turn in range(1, 4):
        use = tool_use_message(f"msg_{turn}", f"toolu_{turn}", "Read", {"file_path": "/w/app/x.py"})
        use["usage"] = {"input_tokens": 900 * turn, "output_tokens": 10}
        lines.append(compact(cc_entry("assistant", f"a{turn}", parent, use, second=2 * turn)))
        lines.append(compact(cc_entry("user", f"r{turn}", f"a{turn}", tool_result_message(
            f"toolu_{turn}", f"line {turn}\n" * 400), second=2 * turn + 1)))
        parent = f"r{turn}"
    return b"".join(lines)


# (arguments, whether the output is the -o file); {store} and {out} are filled in per run
COMMANDS: dict[str, list[str]] = {
    "estimate": ["estimate", "--json"],
    "validate": ["validate", "--json"],
    "persist": ["persist", "--max-chars", "500", "--store", "{store}", "--now", NOW],
    "persist-auto": ["persist", "--budget", "auto", "--max-chars", "500", "--store", "{store}",
                     "--now", NOW],
    "restore": ["restore"],
    "snip": ["snip", "--min-usage", "0", "--keep", "0", "--store", "{store}", "--now", NOW],
    "microcompact": ["microcompact", "--force", "--keep", "0", "--store", "{store}",
                     "--now", NOW],
    "summarize": ["summarize", "--llm", "offline", "--store", "{store}", "--now", NOW,
                  "-o", "{out}"],
    "filter-compacted": ["filter-compacted", "--view", "model"],
    "convert": ["convert", "--to", "anthropic"],
}
KINDS = ("file", "stdin", "process-substitution", "fifo")


def run(kind: str, argv: list[str], data: Path, tmp: Path) -> tuple[int, bytes, str]:
    """One run through bash; returns (exit code, stdout, the name the input was given as)."""
    command = shlex.join([*ctxtool_executable(), *argv])
    if kind == "file":
        script, name = f"{command} {shlex.quote(str(data))}", str(data)
    elif kind == "stdin":
        script, name = f"{command} < {shlex.quote(str(data))}", "<stdin>"
    elif kind == "process-substitution":
        script, name = f"{command} <(cat {shlex.quote(str(data))})", "/dev/fd/"
    else:
        fifo = tmp / "input.fifo"
        script = (f"mkfifo {shlex.quote(str(fifo))} && (cat {shlex.quote(str(data))} > "
                  f"{shlex.quote(str(fifo))} &) && {command} {shlex.quote(str(fifo))}")
        name = str(fifo)
    proc = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60, cwd=tmp,
                          check=False)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, proc.stdout, name


def normalized(output: bytes, names: list[str]) -> bytes:
    """The output with the input's own name (which each kind spells differently) blanked."""
    for name in sorted(names, key=len, reverse=True):
        if name == "/dev/fd/":
            import re

            output = re.sub(rb"/dev/fd/\d+", b"INPUT", output)
        else:
            output = output.replace(name.encode(), b"INPUT")
    # summarize's boundary measures the summary, whose length follows the name it gives
    import re

    return re.sub(rb'"(postTokens|cumulativeDroppedTokens)":\d+', rb'"\1":N', output)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("kinds")
    plain = folder / "session.jsonl"
    plain.write_bytes(transcript())
    store = folder / "persisted-store"
    persisted = folder / "persisted.jsonl"
    proc = subprocess.run([*ctxtool_executable(), "persist", "--max-chars", "500", "--store",
                           str(store), str(plain), "-o", str(persisted)], capture_output=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return {"plain": plain, "persisted": persisted}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_same_output_for_every_kind_of_input(command: str, inputs: dict[str, Path],
                                             tmp_path: Path) -> None:
    data = inputs["persisted" if command == "restore" else "plain"]
    outputs: dict[str, bytes] = {}
    for kind in KINDS:
        folder = tmp_path / kind
        folder.mkdir()
        out = tmp_path / "out.jsonl"
        out.unlink(missing_ok=True)
        argv = [a.format(store=tmp_path / "store", out=out) for a in COMMANDS[command]]
        code, stdout, name = run(kind, argv, data, folder)
        assert code == 0, (kind, code)
        if "{out}" in COMMANDS[command]:
            stdout = out.read_bytes()
        assert stdout.strip() or command == "validate", (kind, "empty output")  # valid: silent
        if command == "summarize":  # the summary names a file to re-read: never a drained pipe
            assert b"/dev/fd/" not in stdout and b".fifo" not in stdout
        outputs[kind] = normalized(stdout, [name, str(data.resolve()), str(out)])
    assert outputs["stdin"] == outputs["file"]
    assert outputs["process-substitution"] == outputs["file"]
    assert outputs["fifo"] == outputs["file"]


@pytest.mark.parametrize("command", ["persist", "snip", "filter-compacted", "convert", "restore",
                                     "summarize"])
def test_an_output_file_gets_the_mode_of_its_input(command: str, inputs: dict[str, Path],
                                                  tmp_path: Path) -> None:
    """A private (0600) session gives a private -o file, not a 0644 one; from stdin, an output
    in a store or a Claude Code folder is 0600."""
    source = tmp_path / "private.jsonl"
    source.write_bytes(inputs["plain"].read_bytes())
    source.chmod(0o600)
    argv = [a.format(store=tmp_path / "store", out="-") for a in COMMANDS[command]]
    argv = [a for a in argv if a not in ("-o", "-")]
    out = tmp_path / "out.jsonl"
    old_umask = os.umask(0o022)
    try:
        proc = subprocess.run([*ctxtool_executable(), *argv, str(source), "-o", str(out)],
                              capture_output=True, cwd=tmp_path, check=False)
        assert proc.returncode == 0, proc.stderr
        assert out.stat().st_mode & 0o777 == 0o600
        source.chmod(0o640)
        out.unlink()
        proc = subprocess.run([*ctxtool_executable(), *argv, str(source), "-o", str(out)],
                              capture_output=True, cwd=tmp_path, check=False)
        assert out.stat().st_mode & 0o777 == 0o640
        claude = tmp_path / "home" / ".claude" / "projects" / "-w-app"
        claude.mkdir(parents=True)
        inside = claude / "out.jsonl"
        proc = subprocess.run([*ctxtool_executable(), *argv, "-o", str(inside)],
                              input=source.read_bytes(), capture_output=True, cwd=tmp_path,
                              env={**os.environ, "HOME": str(tmp_path / "home")}, check=False)
        assert proc.returncode == 0, proc.stderr
        assert inside.stat().st_mode & 0o777 == 0o600
        elsewhere = tmp_path / "elsewhere.jsonl"
        proc = subprocess.run([*ctxtool_executable(), *argv, "-o", str(elsewhere)],
                              input=source.read_bytes(), capture_output=True, cwd=tmp_path,
                              check=False)
        assert elsewhere.stat().st_mode & 0o777 == 0o644  # the umask, as before
    finally:
        os.umask(old_umask)
