"""Transcripts are untrusted input: ids and paths inside them must never decide where ctxtool
writes or what it reads.

* Hostile tool_use ids, session ids and cwd values (HOSTILE: path traversal, absolute paths,
  NUL, 10 KB, Unicode look-alikes of ``.`` and ``/``, newlines, backslashes, ``~``, Windows
  device names, RTL override) through persist, snip, microcompact and summarize, with ``--store``
  and with the default store (Claude Code's own folder under ``$CLAUDE_CONFIG_DIR``): every file
  written lands inside the store, nothing appears where the values point, and ``restore`` still
  gives the input back byte for byte.
* Symlinks in the cleanup tree that point outside it (a project folder, a transcript, a
  session's tool-results folder, side folders, the store's session folder): never followed,
  nothing outside is read into an archive or deleted.
* What the store writes is private: files 0600, folders 0700, whatever the umask.
* ``restore`` reads only ``.txt``/``.json`` regular files in a ``tool-results`` folder: a
  transcript naming ``/etc/passwd``, a secret beside it, a symlink, a FIFO (which would block
  the read forever), a folder or a path with NUL gets nothing back.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tarfile
import uuid as uuidlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from ctxtool.formats.opencode.truncate import truncated_output
from ctxtool.storage.marker import MARKER
from tests.conftest import ctxtool_executable, run_ctxtool
from tests.robustness.strategies import (cc_entry, compact, jsonl, tool_result_message,
                                         tool_use_message)

NOW = "2026-01-02T00:00:00Z"
MARK = f"PWNED-{uuidlib.uuid4().hex[:8]}"  # in every hostile value: easy to look for afterwards
HOSTILE = {
    "parent-traversal": f"../../../../../../../../tmp/{MARK}",
    "absolute": f"/tmp/{MARK}/abs",
    "dot-dot": "..",
    "dot": ".",
    "inner-traversal": f"a/../../{MARK}",
    "nul": f"{MARK}\x00.txt/../../x",
    "10kb": MARK + "x" * 10_240,
    "fullwidth-dots": f"\uff0e\uff0e\uff0f\uff0e\uff0e\uff0f{MARK}",
    "one-dot-leaders": f"\u2024\u2024/\u2024\u2024/{MARK}",
    "division-slash": f"..\u2215..\u2215{MARK}",
    "newlines": f"{MARK}\nsecond line\r\n",
    "backslashes": f"..\\..\\{MARK}",
    "tilde": f"~/{MARK}",
    "device-name": "CON",
    "rtl-override": f"{MARK}\u202etxt.exe",
    "long-utf8": MARK + "é" * 300,  # 600+ bytes: past a file name's 255
}


def hostile_transcript(value: str, *, where: str) -> bytes:
    """A session where ``value`` is the tool ids (``where="tool"``), the session id or the cwd;
    the same file read twice with large results, so persist, snip and microcompact all save."""
    session = value if where == "session" else "5f0c4c4e-0000-4000-8000-000000000001"
    cwd = value if where == "cwd" else "/w/app"
    ids = [f"{value}{n}" if where == "tool" else f"toolu_{n}" for n in range(2)]

    def entry(kind: str, uuid: str, parent: str | None, message: dict[str, Any], second: int
              ) -> dict[str, Any]:
        return cc_entry(kind, uuid, parent, message, session=session, cwd=cwd, second=second)

    entries = [entry("user", "u0", None, {"role": "user", "content": "go"}, 0)]
    parent = "u0"
    for n, tool_id in enumerate(ids):
        entries.append(entry("assistant", f"a{n}", parent, tool_use_message(
            f"msg_{n}", tool_id, "Read", {"file_path": "/w/app/x.py"}), 2 * n + 1))
        entries.append(entry("user", f"r{n}", f"a{n}", tool_result_message(
            tool_id, f"{n}: " + "line of code 中文\n" * 4000), 2 * n + 2))
        parent = f"r{n}"
    entries.append(entry("assistant", "a9", parent, {"id": "msg_9", "role": "assistant",
                                                     "content": [{"type": "text", "text": "ok"}]},
                         9))
    return jsonl(entries)


SAVING = {
    "persist": ["persist"],
    "snip": ["snip", "--keep", "0"],
    "microcompact": ["microcompact", "--force", "--keep", "0", "--target", "0"],
    "summarize": ["summarize", "--llm", "offline", "--now", NOW, "--restore-files", "2"],
}


def snapshot(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


def marks_outside(tmp_path: Path) -> list[Path]:
    """Anything named after MARK where a hostile value could have sent it: next to the test's
    folders, in /tmp, /, $HOME, or in the test's folder outside the stores (store-*, claude-*,
    work/ctxtool-store), where a cwd legitimately becomes a project folder's name."""
    places = [Path("/tmp"), Path("/"), tmp_path.parent, Path.home()]
    found = [p for place in places if place.is_dir() for p in place.iterdir() if MARK in p.name]
    for path in tmp_path.rglob(f"*{MARK}*"):
        top = path.relative_to(tmp_path).parts
        if not (top[0].startswith(("store-", "claude-")) or top[:2] == ("work", "ctxtool-store")):
            found.append(path)
    return found


@pytest.mark.parametrize("where", ["tool", "session", "cwd"])
@pytest.mark.parametrize("name", list(SAVING))
def test_hostile_values_stay_in_the_store(name: str, where: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    monkeypatch.chdir(work)
    runner = CliRunner()
    for label, value in HOSTILE.items():
        source = work / "in.jsonl"
        data = hostile_transcript(value, where=where)
        source.write_bytes(data)
        claude = tmp_path / f"claude-{label}"  # fresh stores: each value must write anew
        for store, env in [(tmp_path / f"store-{label}", {}),  # --store, then the default one
                           (claude / "projects", {"CLAUDE_CONFIG_DIR": str(claude)})]:
            # a cwd that is not an absolute path sends the default store to ./ctxtool-store
            # (the documented fallback)
            stores = [store, work / "ctxtool-store"] if env else [store]
            shutil.rmtree(work / "ctxtool-store", ignore_errors=True)
            before = snapshot(tmp_path)
            option = ["--store", str(store)] if not env else []
            result = runner.invoke(cli, [*SAVING[name], *option, str(source), "-o",
                                         str(work / "out.jsonl")], env={"HOME": str(home), **env})
            assert result.exit_code == 0, (label, result.stderr, result.exception)
            created = snapshot(tmp_path) - before - {work / "out.jsonl"}
            # it did save something (summarize saves only message lists' originals)
            assert created or name == "summarize", label
            # the store itself and the folders leading to it are created too
            outside = [p for p in created if not any(
                p == s or s in p.parents or p in s.parents for s in stores)]
            assert not outside, (label, outside)
            for path in created:
                assert len(path.name.encode()) <= 255 and "\n" not in path.name, (label, path)
            assert not marks_outside(tmp_path), label
            if name != "summarize":  # lossless: restore gives back the very input
                # restore reads only from stores (the same Claude config as persist's)
                back = runner.invoke(cli, ["restore", str(work / "out.jsonl")],
                                     env={"HOME": str(home), **env})
                assert back.exit_code == 0 and back.stdout_bytes == data, (label, back.stderr)


# --- symlinks in the cleanup tree -----------------------------------------------------------------

OLD = "5f0c4c4e-0000-4000-8000-0000000000aa"  # an old session with symlinks out of it
PLAIN = "5f0c4c4e-0000-4000-8000-0000000000cc"  # an old session without any
OLD_TIME = 1_700_000_000  # 2023-11: old for any --older-than


def old_file(path: Path, data: bytes = b"old\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (OLD_TIME, OLD_TIME))
    return path


def outside_tree(outside: Path) -> dict[str, bytes]:
    """Everything under ``outside``: names and bytes."""
    return {str(p.relative_to(outside)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(outside.rglob("*"))}


def linked_claude_tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A Claude Code folder and a store full of old sessions and of symlinks out of them."""
    root, store, outside = tmp_path / "claude", tmp_path / "ctxtool-store", tmp_path / "outside"
    line = compact(cc_entry("user", "u1", None, {"role": "user", "content": "hi"}, session=OLD))
    old_file(outside / "victim.jsonl", line.replace(b"2026-01-01", b"2023-11-01"))
    old_file(outside / "results" / "secret.txt", b"outside secret\n")
    old_file(outside / "project" / f"{OLD}.jsonl", line.replace(b"2026-01-01", b"2023-11-01"))
    old_file(outside / "fh" / "backup@v1", b"outside backup\n")
    old_file(outside / "todo.json", b"[]\n")
    old_file(outside / "stored" / "tool-results" / "toolu_1.txt", b"outside stored\n")
    project = root / "projects" / "-w-app"
    old_file(project / f"{OLD}.jsonl", line.replace(b"2026-01-01", b"2023-11-01"))
    old_file(project / f"{PLAIN}.jsonl", line.replace(b"2026-01-01", b"2023-11-01"))
    (project / OLD).mkdir()
    (project / OLD / "tool-results").symlink_to(outside / "results")
    (project / "5f0c4c4e-0000-4000-8000-0000000000bb.jsonl").symlink_to(outside / "victim.jsonl")
    (root / "projects" / "-evil").symlink_to(outside / "project")
    (root / "file-history").mkdir()
    (root / "file-history" / OLD).symlink_to(outside / "fh")
    (root / "todos").mkdir()
    (root / "todos" / f"{OLD}-agent-{OLD}.json").symlink_to(outside / "todo.json")
    (root / "debug").mkdir()
    (root / "debug" / f"{OLD}.txt").symlink_to(outside / "victim.jsonl")
    store.mkdir()
    (store / ".ctxtool-store").write_text("")  # a store ctxtool made
    (store / OLD).symlink_to(outside / "stored")
    for link in [p for p in tmp_path.rglob("*") if p.is_symlink()]:
        os.utime(link, (OLD_TIME, OLD_TIME), follow_symlinks=False)
    return root, store, outside


@pytest.mark.parametrize("archive", [False, True])
def test_cleanup_never_follows_symlinks_out(archive: bool, tmp_path: Path) -> None:
    root, store, outside = linked_claude_tree(tmp_path)
    before = outside_tree(outside)
    archives = tmp_path / "archives"
    args = ["cleanup", "--root", str(root), "--store", str(store), "--older-than", "1d",
            "--now", NOW, "--apply", *(["--archive", str(archives)] if archive else [])]
    proc = run_ctxtool(*args, cwd=tmp_path)
    assert b"Traceback" not in proc.stderr
    assert proc.returncode in (0, ExitCode.FAILED), proc.stderr
    assert outside_tree(outside) == before  # nothing outside read-and-removed, nothing changed
    assert not (root / "projects" / "-w-app" / f"{PLAIN}.jsonl").exists()  # it did clean up
    for record in (orjson.loads(line) for line in proc.stdout.splitlines()):
        assert not str(record.get("path", "")).startswith(str(outside))  # the summary has none
    for path in archives.rglob("*.tar.gz") if archive else []:
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                data = tar.extractfile(member) if member.isfile() else None
                assert data is None or b"outside" not in data.read()


# --- symlinked folders inside the store -----------------------------------------------------------

def message_list_session() -> bytes:
    """A message list: summarize keeps its original in <store>/default/transcripts/."""
    return b"".join(compact(m) for m in [
        {"role": "user", "content": "go " * 3000}, {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more"}, {"role": "assistant", "content": "done"}])


STORE_LINKS = {  # what is a link to the outside folder inside the store
    "session folder": "{session}",
    "tool-results folder": "{session}/tool-results",
    "ctxtool-lines folder": "{session}/ctxtool-lines",
    "transcripts folder": "{session}/transcripts",
}
# each command with each folder it writes (summarize: a message list's original)
LINK_CASES = [(name, link) for name in SAVING for link in STORE_LINKS
              if link == "session folder" or (name == "summarize") == (link == "transcripts folder")]


@pytest.mark.parametrize(("name", "link"), LINK_CASES)
def test_symlinked_store_folders_are_never_written_through(name: str, link: str,
                                                           tmp_path: Path) -> None:
    summarize = name == "summarize"
    session = "default" if summarize else "5f0c4c4e-0000-4000-8000-000000000001"
    source = tmp_path / "in.jsonl"
    # spaced JSON: persist also keeps the original line bytes (ctxtool-lines)
    source.write_bytes(message_list_session() if summarize else
                       hostile_transcript("toolu_", where="tool").replace(b'":"', b'": "'))
    store, outside = tmp_path / "store", tmp_path / "outside"
    outside.mkdir()
    where = store / STORE_LINKS[link].format(session=session)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(outside)
    proc = run_ctxtool(*SAVING[name], "--store", str(store), str(source), cwd=tmp_path)
    assert b"Traceback" not in proc.stderr
    assert list(outside.iterdir()) == [], proc.stderr  # nothing written through the link
    assert proc.returncode == ExitCode.STORAGE, proc.stderr
    assert b"symlink" in proc.stderr
    assert where.is_symlink()


# --- private files --------------------------------------------------------------------------------

@pytest.mark.parametrize("umask", [0o000, 0o022])
@pytest.mark.parametrize("name", list(SAVING))
def test_store_files_are_private(name: str, umask: int, tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(hostile_transcript("toolu_", where="tool"))
    if name == "summarize":  # a message list: summarize keeps its original in the store
        source.write_bytes(b"".join(compact(m) for m in [
            {"role": "user", "content": "go " * 3000}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "more"}, {"role": "assistant", "content": "done"}]))
    store = tmp_path / "deep" / "store"

    def with_umask() -> None:
        os.umask(umask)

    proc = subprocess.run([*ctxtool_executable(), *SAVING[name], "--store", str(store),
                           str(source)], capture_output=True, preexec_fn=with_umask, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    paths = [store, *store.rglob("*")]
    assert any(p.is_file() for p in paths)
    for path in paths:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


# --- restore reads only stored tool results -------------------------------------------------------

SECRET = b"the-secret-content 0123"


def crafted_restore_inputs(tmp_path: Path) -> dict[str, str]:
    """Placeholders naming files restore must not read, by what makes each one wrong."""
    secret = tmp_path / "secret"
    secret.mkdir()
    for name in ("id_rsa", "id_rsa.txt", "notes.json"):
        (secret / name).write_bytes(SECRET)
    results = tmp_path / "session" / "tool-results"
    results.mkdir(parents=True)
    (results / "link.txt").symlink_to(secret / "id_rsa.txt")
    os.mkfifo(results / "fifo.txt")
    (results / "folder.txt").mkdir()
    # folders of the store that are links to elsewhere: never read through
    outside = tmp_path / "outside-store" / "s0"
    (outside / "tool-results").mkdir(parents=True)
    (outside / "tool-results" / "toolu_1.txt").write_bytes(SECRET)
    (tmp_path / "session" / "linked-session").symlink_to(outside)
    (tmp_path / "session" / "s1").mkdir()
    (tmp_path / "session" / "s1" / "tool-results").symlink_to(outside / "tool-results")
    return {
        "symlinked tool-results folder": str(tmp_path / "session" / "s1" / "tool-results"
                                             / "toolu_1.txt"),
        "symlinked session folder": str(tmp_path / "session" / "linked-session" / "tool-results"
                                        / "toolu_1.txt"),
        "system file": "/etc/passwd",
        "secret without suffix": str(secret / "id_rsa"),
        "secret .txt outside tool-results": str(secret / "id_rsa.txt"),
        "secret .json outside tool-results": str(secret / "notes.json"),
        "dot-dot after tool-results": f"{results}/../../secret/id_rsa.txt",
        "relative path": "session/tool-results/link.txt",
        "symlink in tool-results": str(results / "link.txt"),
        "fifo in tool-results": str(results / "fifo.txt"),
        "folder in tool-results": str(results / "folder.txt"),
        "nul in path": f"{results}/link.txt\x00.json",
    }


def placeholders(path: str) -> list[str]:
    """The three placeholder shapes restore understands, each naming ``path``."""
    return [f"<persisted-output>\nOutput too large (1.2MB). Full output saved to: {path}\n\n"
            f"Preview (first 2KB):\nabc\n...\n</persisted-output>",
            f"<persisted-output>Tool result saved to: {path}\n\n"
            "Use Read to view</persisted-output>",
            f"[Content snipped - re-read if needed]\nTool result saved to: {path}"]


def test_restore_reads_nothing_outside_tool_results(tmp_path: Path) -> None:
    cases = crafted_restore_inputs(tmp_path)
    lines = []
    for n, (label, path) in enumerate(cases.items()):
        for k, text in enumerate(placeholders(path)):
            lines.append(compact(cc_entry("user", f"u{n}-{k}", None, tool_result_message(
                f"toolu_{n}_{k}", text), cwd=str(tmp_path))))
    source = tmp_path / "crafted.jsonl"
    source.write_bytes(b"".join(lines))
    for extra in ([], ["--store", str(tmp_path / "session")]):
        proc = run_ctxtool("restore", *extra, str(source), cwd=tmp_path, timeout=60)
        assert b"Traceback" not in proc.stderr
        assert proc.stdout == source.read_bytes(), proc.stderr  # every placeholder left as it was
        assert SECRET not in proc.stdout and b"root:" not in proc.stdout
        assert proc.returncode == ExitCode.STORAGE or proc.stderr.count(b"warning") >= len(cases)
        strict = run_ctxtool("restore", "--strict", *extra, str(source), cwd=tmp_path, timeout=60)
        assert strict.returncode == ExitCode.STORAGE and strict.stdout == b""


def test_restore_sees_every_placeholder_form_and_strict_fails_on_look_alikes(
        tmp_path: Path) -> None:
    """OpenCode's truncation whose kept head starts with "[" is restored like any other form; a
    placeholder edited out of every known form is left in place with a warning, and --strict
    then fails with exit 4 and no output."""
    results = tmp_path / "session" / "tool-results"
    results.mkdir(parents=True)
    (results / "toolu_1.txt").write_text("[main 0000000] commit\n 1 file changed\n" * 3000)
    text = truncated_output((results / "toolu_1.txt").read_text(), str(results / "toolu_1.txt"))
    good = compact(cc_entry("user", "u1", None, tool_result_message("toolu_1", text)))
    source = tmp_path / "session.jsonl"  # tmp_path/session/ is its own folder
    source.write_bytes(good)
    proc = run_ctxtool("restore", "--strict", str(source))
    assert proc.returncode == 0 and b"1 file changed" in proc.stdout, proc.stderr
    assert len(proc.stdout) > 3000 * 30
    edited = good.replace(b"...", b"..", 1)
    source.write_bytes(edited)
    lenient = run_ctxtool("restore", str(source))
    assert lenient.returncode == 0 and lenient.stdout == edited
    assert b"looks like a placeholder" in lenient.stderr and b"Traceback" not in lenient.stderr
    strict = run_ctxtool("restore", "--strict", str(source))
    assert strict.returncode == ExitCode.STORAGE and strict.stdout == b""
    assert strict.stderr.count(b"ctxtool: error:") == 1


def test_restore_still_reads_a_real_stored_result(tmp_path: Path) -> None:
    """The control for the test above: the same shapes naming a real stored file work."""
    results = tmp_path / "session" / "tool-results"
    results.mkdir(parents=True)
    (results / "toolu_1.txt").write_text("the original output")
    text = placeholders(str(results / "toolu_1.txt"))[0]
    source = tmp_path / "session.jsonl"  # tmp_path/session/ is its own folder
    source.write_bytes(compact(cc_entry("user", "u1", None, tool_result_message("toolu_1", text))))
    proc = run_ctxtool("restore", str(source))
    assert proc.returncode == 0 and b"the original output" in proc.stdout


def test_restore_reads_only_from_stores_and_the_session_s_own_folder(tmp_path: Path) -> None:
    """A crafted placeholder naming a well-shaped file anywhere else (issue 27 item 6) - an
    unmarked <dir>/<x>/tool-results/, the same through ``..`` - is refused: one warning naming
    FILE:LINE and the path, the placeholder left in place; --strict: exit 4, no output. The
    stores and the session's own folder still restore."""
    elsewhere = tmp_path / "elsewhere" / "x" / "tool-results"
    elsewhere.mkdir(parents=True)
    (elsewhere / "secret.txt").write_bytes(SECRET)
    work = tmp_path / "work"
    (work / "s" / "tool-results").mkdir(parents=True)
    (work / "s" / "tool-results" / "own.txt").write_text("from its own folder")
    store = tmp_path / "store"
    (store / "s1" / "tool-results").mkdir(parents=True)
    (store / MARKER).write_bytes(b"")
    (store / "s1" / "tool-results" / "kept.txt").write_text("from a store")
    crafted = [str(elsewhere / "secret.txt"),
               f"{work}/s/tool-results/../../../elsewhere/x/tool-results/secret.txt"]
    fine = [str(work / "s" / "tool-results" / "own.txt"),
            str(store / "s1" / "tool-results" / "kept.txt")]
    lines = [compact(cc_entry("user", f"u{n}", None, tool_result_message(
        f"toolu_{n}", placeholders(path)[1]))) for n, path in enumerate(crafted + fine)]
    source = work / "s.jsonl"
    source.write_bytes(b"".join(lines))
    proc = run_ctxtool("restore", str(source), cwd=tmp_path)
    assert proc.returncode == 0 and SECRET not in proc.stdout, proc.stderr
    out = proc.stdout.splitlines(keepends=True)
    assert out[:2] == lines[:2]  # left in place
    assert b"from its own folder" in out[2] and b"from a store" in out[3]
    warnings = proc.stderr.decode().splitlines()[:-1]  # the last is the summary
    assert len(warnings) == 2 and all("not read: outside the stores" in w for w in warnings)
    assert warnings[0].startswith(f"ctxtool: warning: {source}:1: tool result toolu_0: ")
    assert f"{source}:2: " in warnings[1]
    strict = run_ctxtool("restore", "--strict", str(source), cwd=tmp_path)
    assert strict.returncode == ExitCode.STORAGE and strict.stdout == b""
