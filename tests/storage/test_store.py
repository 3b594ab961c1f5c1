"""The tool-result store: exact round trips, safe names, permissions, no overwrites, failures."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ctxtool.errors import StoreError
from ctxtool.storage import safe_fs
from ctxtool.storage.paths import claude_config_dir, claude_project_dir, project_slug, safe_name
from ctxtool.storage.store import (ToolResultStore, resolve_store, store_for_entries)
from tests.persist_fixtures import CWD, SESSION, cc_results


def _inside(root: Path, path: str) -> bool:
    return os.path.commonpath([os.path.realpath(root), os.path.realpath(path)]) == \
        os.path.realpath(root)


# --- round trips ---------------------------------------------------------------------------------

@pytest.mark.parametrize("content", [
    "plain ascii\n", "中文 — emoji 😀 \u2028 and \x00 NUL and \r\n CRLF", "",
    [{"type": "text", "text": "a"}, {"type": "text", "text": "中", "cache_control": {"t": 1.5}}],
    [],
])
def test_save_load_round_trip_is_exact(tmp_path: Path, content: object) -> None:
    store = ToolResultStore(tmp_path / "store")
    path = store.save(content, tool_use_id="toolu_01ABC",  # type: ignore[arg-type]
                      session_id=SESSION)
    assert os.path.isabs(path)
    assert path == str(tmp_path / "store" / SESSION / "tool-results"
                       / ("toolu_01ABC.txt" if isinstance(content, str) else "toolu_01ABC.json"))
    assert store.load(path) == content
    if isinstance(content, str):
        assert Path(path).read_bytes() == content.encode("utf-8")


def test_block_list_is_indented_like_claude_code(tmp_path: Path) -> None:
    path = ToolResultStore(tmp_path).save([{"type": "text", "text": "x"}], tool_use_id="t",
                                           session_id=None)
    assert Path(path).read_text() == '[\n  {\n    "type": "text",\n    "text": "x"\n  }\n]'
    assert Path(path).parent.parent.name == "default"


def test_files_0600_and_new_folders_0700(tmp_path: Path) -> None:
    path = Path(ToolResultStore(tmp_path / "a" / "b").save("x", tool_use_id="t", session_id="s"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (tmp_path / "a", tmp_path / "a" / "b", path.parent.parent, path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert [p.name for p in path.parent.iterdir()] == ["t.txt"]  # no temp files left


def test_files_stay_0600_when_the_umask_changes_between_saves(tmp_path: Path) -> None:
    """A program using the store may narrow its umask after its first save: the next file is
    still 0600 (not 0600 less the owner's write bit)."""
    store = ToolResultStore(tmp_path / "store")
    first = Path(store.save("x", tool_use_id="t1", session_id="s"))
    old = os.umask(0o200)
    try:
        second = Path(store.save("y", tool_use_id="t2", session_id="s"))
    finally:
        os.umask(old)
    assert [stat.S_IMODE(p.stat().st_mode) for p in (first, second)] == [0o600, 0o600]
    assert second.read_text() == "y"


def test_existing_folder_modes_are_left_alone(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    ToolResultStore(tmp_path).save("x", tool_use_id="t", session_id="s")
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_identical_content_is_reused(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    first = store.save("same", tool_use_id="t", session_id="s")
    mtime = os.stat(first).st_mtime_ns
    assert store.save("same", tool_use_id="t", session_id="s") == first
    assert os.stat(first).st_mtime_ns == mtime
    assert (store.files_written, store.files_reused) == (1, 1)


def test_different_content_never_overwrites(tmp_path: Path) -> None:
    notices: list[str] = []
    store = ToolResultStore(tmp_path, notice=notices.append)
    first = store.save("one", tool_use_id="t", session_id="s")
    second = store.save("two", tool_use_id="t", session_id="s")
    assert first != second and Path(first).read_text() == "one"
    assert store.load(second) == "two"
    assert len(notices) == 1 and "holds other content" in notices[0]
    # the alternate name is content-addressed: saving "two" again reuses it, no new notice
    assert store.save("two", tool_use_id="t", session_id="s") == second
    assert len(notices) == 1


# --- untrusted ids -------------------------------------------------------------------------------

HOSTILE = ["../../etc/passwd", "/etc/passwd", "..", ".", "a/../../b", "toolu\x00.txt",
           "x" * 10_000, "\u202eexe.txt", "toolu\uff0f..\uff0fx", "ﬁle", "../" * 50,
           "C:\\Windows\\system32", "~root", "-rf", "a\nb", " "]


@pytest.mark.parametrize("hostile", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_ids_never_leave_the_store(tmp_path: Path, hostile: str) -> None:
    root = tmp_path / "store"
    store = ToolResultStore(root)
    path = store.save("payload", tool_use_id=hostile, session_id=hostile)
    assert _inside(root, path)
    assert Path(path).parent.name == "tool-results"
    assert len(Path(path).name) < 100 and "\x00" not in path
    assert store.load(path) == "payload"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


def test_safe_ids_keep_their_names_and_others_are_stable_hashes() -> None:
    real = "toolu_011FB334YmudsnxzixRg2Kza"
    assert safe_name(real, fallback="r") == real
    assert safe_name("call_abc-123", fallback="r") == "call_abc-123"
    assert safe_name(None, fallback="default") == "default"
    assert safe_name("", fallback="default") == "default"
    hashed = safe_name("../x", fallback="r")
    assert hashed.startswith("x-") and hashed == safe_name("../x", fallback="r")
    assert hashed != safe_name("../y", fallback="r")


# --- reading is restricted to stored results -----------------------------------------------------

def test_load_refuses_paths_that_are_not_stored_results(tmp_path: Path) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("KEY")
    store = ToolResultStore(tmp_path)
    for path in (str(secret), "/etc/passwd", "relative/tool-results/a.txt",
                 str(tmp_path / "tool-results" / "a.sh")):
        with pytest.raises(StoreError, match="not a stored tool result"):
            store.load(path)


def test_load_refuses_symlinks(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("KEY")
    folder = tmp_path / "s" / "tool-results"
    folder.mkdir(parents=True)
    (folder / "t.txt").symlink_to(tmp_path / "secret")
    with pytest.raises(StoreError, match="symlink"):
        ToolResultStore(tmp_path).load(str(folder / "t.txt"))


@pytest.mark.parametrize("fd_calls", [True, False], ids=["dir-fds", "checked-paths"])
@pytest.mark.parametrize("link", ["s", "s/tool-results", "s/ctxtool-lines"])
def test_folders_inside_the_store_are_never_followed(tmp_path: Path, link: str, fd_calls: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A session, tool-results or ctxtool-lines folder that is a link to elsewhere is neither
    written through nor read through; the root itself may be a link (the user chose it). Also
    on platforms without fd-relative calls (checked paths)."""
    monkeypatch.setattr(safe_fs, "FD_SAFE", fd_calls)
    outside, real = tmp_path / "outside", tmp_path / "real-root"
    outside.mkdir()
    real.mkdir()
    root = tmp_path / "root"
    root.symlink_to(real)
    (root / link).parent.mkdir(parents=True, exist_ok=True)
    (root / link).symlink_to(outside)
    store = ToolResultStore(root)
    with pytest.raises(StoreError, match="symlink"):
        if link.endswith("ctxtool-lines"):
            store.save_line(b"{ }", canonical=b"{}", session_id="s")
        else:
            store.save("x", tool_use_id="t", session_id="s")
    assert list(outside.iterdir()) == []
    # read back: a file the link leads to is never read
    (outside / "tool-results").mkdir()
    (outside / "t.txt").write_text("SECRET")
    (outside / "tool-results" / "t.txt").write_text("SECRET")
    if not link.endswith("ctxtool-lines"):
        with pytest.raises(StoreError, match="symlink"):
            store.load(str(root / "s" / "tool-results" / "t.txt"))
        with pytest.raises(StoreError, match="symlink"):  # a moved store, found by --store
            ToolResultStore(root, relocate=True).load(str(tmp_path / "gone" / "s"
                                                          / "tool-results" / "t.txt"))
    else:
        assert store.load_line(b"{}", near=str(root / "s" / "tool-results" / "t.txt")) is None
    # without links the same root works, through its own link
    other = ToolResultStore(root).save("y", tool_use_id="t", session_id="s2")
    assert store.load(other) == "y"


@pytest.mark.parametrize("change", ["removed", "moved", "symlink"])
def test_a_folder_changed_between_two_saves(tmp_path: Path, change: str) -> None:
    """The store keeps its folders open between writes: one removed, moved away or replaced
    by a link after the first save is never written into by the next. The next file lands
    where its returned path says (the folder created again), or the link is refused."""
    import shutil

    store = ToolResultStore(tmp_path / "store", durable=False)
    first = Path(store.save("one", tool_use_id="t1", session_id="s"))
    folder, outside = first.parent, tmp_path / "outside"
    outside.mkdir()
    if change == "removed":
        shutil.rmtree(folder)
    elif change == "moved":
        folder.rename(tmp_path / "moved")
    else:
        folder.rename(outside / "tool-results")
        folder.symlink_to(outside / "tool-results")
    if change == "symlink":
        with pytest.raises(StoreError, match="symlink"):
            store.save("two", tool_use_id="t2", session_id="s")
        assert sorted(p.name for p in (outside / "tool-results").iterdir()) == ["t1.txt"]
        return
    second = Path(store.save("two", tool_use_id="t2", session_id="s"))
    assert second.read_text() == "two" and second.parent == folder
    assert sorted(p.name for p in folder.iterdir()) == ["t2.txt"]
    if change == "moved":
        assert sorted(p.name for p in (tmp_path / "moved").iterdir()) == ["t1.txt"]


def test_a_store_keeps_a_few_folders_open_and_closes_them(tmp_path: Path) -> None:
    """One open folder per session and kind, at most OPEN_FOLDERS, closed by close()."""
    from ctxtool.storage.store import OPEN_FOLDERS

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    if not os.path.isdir("/proc/self/fd") or not safe_fs.FD_SAFE:
        pytest.skip("counts open fds through /proc (Linux)")
    before = open_fds()
    # not durable: storage/durable.py holds an fd per filesystem of its own until a flush
    store = ToolResultStore(tmp_path / "store", durable=False)
    for n in range(3 * OPEN_FOLDERS):
        store.save("x", tool_use_id=f"t{n}", session_id=f"s{n}")
        store.save("y", tool_use_id=f"u{n}", session_id=f"s{n}")
    assert 1 <= open_fds() - before <= OPEN_FOLDERS
    assert len(list((tmp_path / "store").glob("s*/tool-results/*.txt"))) == 6 * OPEN_FOLDERS
    store.close()
    assert open_fds() == before
    del store  # dropped without close(): nothing left open either
    other = ToolResultStore(tmp_path / "store", durable=False)
    other.save("z", tool_use_id="v", session_id="s0")
    del other
    assert open_fds() == before


def test_load_missing_is_none_and_damaged_json_is_an_error(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    assert store.load(str(tmp_path / "s" / "tool-results" / "nope.txt")) is None
    folder = tmp_path / "s" / "tool-results"
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text("[{")
    (folder / "obj.json").write_text('{"a": 1}')
    (folder / "bin.txt").write_bytes(b"\xff\xfe")
    for name in ("bad.json", "obj.json", "bin.txt"):
        with pytest.raises(StoreError):
            store.load(str(folder / name))


def test_relocated_store_finds_moved_files(tmp_path: Path) -> None:
    old = ToolResultStore(tmp_path / "old").save("moved", tool_use_id="t", session_id="s")
    (tmp_path / "old").rename(tmp_path / "new")
    assert ToolResultStore(tmp_path / "x").load(old) is None
    assert ToolResultStore(tmp_path / "new", relocate=True).load(old) == "moved"


def test_save_line_and_load_line(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    near = store.save("x", tool_use_id="t", session_id="s")
    store.save_line(b'{"a": 1}', canonical=b'{"a":1}', session_id="s")
    assert store.load_line(b'{"a":1}', near=near) == b'{"a": 1}'
    assert store.load_line(b'{"a":2}', near=near) is None


# --- failing writes ------------------------------------------------------------------------------

def test_a_file_where_a_folder_should_be_is_a_store_error(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("I am a file")
    for root in (tmp_path / "blocker", tmp_path / "blocker" / "deeper"):
        with pytest.raises(StoreError, match="Not a directory|not a directory"):
            ToolResultStore(root).save("x", tool_use_id="t", session_id="s")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_store_is_a_store_error(tmp_path: Path) -> None:
    store = ToolResultStore(tmp_path)
    store.save("x", tool_use_id="t", session_id="s")
    folder = tmp_path / "s" / "tool-results"
    folder.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="cannot write"):
            store.save("y", tool_use_id="u", session_id="s")
    finally:
        folder.chmod(0o700)


def test_a_folder_in_the_way_of_a_file_gets_another_name(tmp_path: Path) -> None:
    (tmp_path / "s" / "tool-results" / "t.txt").mkdir(parents=True)
    path = ToolResultStore(tmp_path).save("x", tool_use_id="t", session_id="s")
    assert Path(path).name.startswith("t-") and Path(path).read_text() == "x"


# --- where the store is --------------------------------------------------------------------------

def test_project_slug_matches_claude_code() -> None:
    # expected values computed by Claude Code's own function (from its CLI bundle) under node
    assert project_slug("/Users/dain/workspace/claude-code-log-sample") == \
        "-Users-dain-workspace-claude-code-log-sample"
    assert project_slug("/home/me/my_app.v2/src") == "-home-me-my-app-v2-src"
    assert project_slug("C:\\dev\\apex_3.11.0") == "C--dev-apex-3-11-0"
    assert project_slug("/tmp/😀/x") == "-tmp----x"  # an astral character is two UTF-16 units
    assert project_slug("/home/用户/项目") == "-home------"
    long = "/very/" + "deep/" * 50 + "project"
    assert project_slug(long) == project_slug(long)[:200] + "-amsmfj"
    assert len(project_slug(long)) == 207
    assert project_slug("/" + "a" * 300).endswith("-vtkmfl")
    assert project_slug("/" + "é" * 250 + "😀").endswith("------pstb5e")


def test_config_dir_honours_claude_config_dir(tmp_path: Path) -> None:
    assert claude_config_dir({"CLAUDE_CONFIG_DIR": str(tmp_path)}) == tmp_path
    assert claude_config_dir({"HOME": "/home/x"}) == Path("/home/x/.claude")
    assert claude_project_dir("/a/b", {"HOME": "/h"}) == Path("/h/.claude/projects/-a-b")


def test_resolve_store_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"HOME": str(tmp_path / "home"), "CTXTOOL_STORE": str(tmp_path / "env")}
    kw = {"fmt": "claude-code", "session_id": SESSION, "cwd": CWD}
    assert resolve_store("opt", env=env, **kw).root == tmp_path / "opt"
    assert resolve_store(None, env=env, **kw).root == tmp_path / "env"
    del env["CTXTOOL_STORE"]
    # on stdin, Claude Code's own place only for a session this machine has there
    assert resolve_store(None, env=env, **kw).root == tmp_path / "ctxtool-store"
    home_project = tmp_path / "home" / ".claude" / "projects" / "-Users-dev-work-my-app-v2"
    home_project.mkdir(parents=True)
    (home_project / f"{SESSION}.jsonl").write_text("")
    assert resolve_store(None, env=env, **kw).root == home_project
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "cfg")
    assert resolve_store(None, env=env, **kw).root == tmp_path / "ctxtool-store"
    cfg_project = tmp_path / "cfg" / "projects" / "-Users-dev-work-my-app-v2"
    assert resolve_store(None, env=env, source=str(cfg_project / "x.jsonl"), **kw).root == \
        cfg_project  # a file inside the agent's folders: the agent's own place
    copy = tmp_path / "work" / "copy.jsonl"
    assert resolve_store(None, env=env, source=str(copy), **kw).root == \
        tmp_path / "work" / "ctxtool-store"  # a copy elsewhere: its store beside it
    assert resolve_store(None, env=env, fmt="anthropic", session_id=None, cwd=None).root == \
        tmp_path / "ctxtool-store"
    assert resolve_store(None, env=env, fmt="claude-code", session_id=None, cwd=CWD).root == \
        tmp_path / "ctxtool-store"


def test_store_for_entries_looks_ahead_without_losing_entries(tmp_path: Path) -> None:
    entries = [{"type": "summary", "summary": "x"}, cc_results(("t", "x"))]
    project = tmp_path / "projects" / project_slug(CWD)
    project.mkdir(parents=True)
    (project / f"{SESSION}.jsonl").write_text("")  # the session is this machine's
    store, stream = store_for_entries(None, entries, fmt="claude-code",
                                      env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert store.root == project
    assert list(stream) == entries


@pytest.fixture
def named_temps(monkeypatch: pytest.MonkeyPatch) -> None:
    """create_exclusive as where there is no O_TMPFILE: a named temp file linked to its name."""
    monkeypatch.setattr(safe_fs, "UNNAMED", 0)


def test_a_temp_file_an_interrupt_left_is_removed_on_the_way_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named_temps: None) -> None:
    """Ctrl-C inside create_exclusive's cleanup (here: the unlink itself interrupted) leaves its
    temp file; remove_pending, which the CLI calls after an interrupt, takes it away."""
    folder = safe_fs.open_folder(str(tmp_path), ("s", "tool-results"), create=True)
    real_unlink = os.unlink

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "unlink", interrupted)
    with pytest.raises(KeyboardInterrupt):
        safe_fs.create_exclusive(folder, "r.txt", b"data")
    monkeypatch.setattr(os, "unlink", real_unlink)
    names = sorted(os.listdir(folder.path))
    assert names[0].startswith(safe_fs.TEMP_PREFIX) and names[1:] == ["r.txt"]  # the control
    safe_fs.remove_pending()
    assert os.listdir(folder.path) == ["r.txt"]
    assert (Path(folder.path) / "r.txt").read_bytes() == b"data"
    folder.close()


def test_a_temp_name_taken_is_not_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          named_temps: None) -> None:
    """The open failing (the name exists): the file there is not ours and stays."""
    folder = safe_fs.open_folder(str(tmp_path), ("s", "tool-results"), create=True)
    monkeypatch.setattr(safe_fs.secrets, "token_hex", lambda n: "0" * (2 * n))
    other = Path(folder.path) / f"{safe_fs.TEMP_PREFIX}00000000.tmp"
    other.write_bytes(b"someone else's")
    monkeypatch.setattr(safe_fs, "sweep_stale", lambda *a, **k: 0)
    with pytest.raises(FileExistsError):
        safe_fs.create_exclusive(folder, "r.txt", b"data")
    safe_fs.remove_pending()
    assert other.read_bytes() == b"someone else's"
    folder.close()


unnamed_files = pytest.mark.skipif(not safe_fs.UNNAMED or not safe_fs.FD_SAFE
                                   or not os.path.isdir("/proc/self/fd"),
                                   reason="O_TMPFILE and /proc/self/fd are Linux's")


@unnamed_files
def test_a_file_being_written_has_no_name_and_an_interrupt_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With O_TMPFILE the content is written to a file no name leads to, linked once complete:
    while it is written the folder shows nothing new, and a Ctrl-C then leaves nothing to
    remove (no temp file recorded, none in the folder)."""
    folder = safe_fs.open_folder(str(tmp_path), ("s", "tool-results"), create=True)
    seen: list[list[str]] = []
    real_write_all = safe_fs._write_all

    def watched(fd: int, data: bytes) -> None:
        seen.append(os.listdir(folder.path))
        real_write_all(fd, data)
        seen.append(os.listdir(folder.path))
        if data == b"second":
            raise KeyboardInterrupt
    monkeypatch.setattr(safe_fs, "_write_all", watched)
    assert safe_fs.create_exclusive(folder, "r.txt", b"first")
    assert seen == [[], []] and os.listdir(folder.path) == ["r.txt"]
    assert stat.S_IMODE(os.stat(Path(folder.path) / "r.txt").st_mode) == 0o600
    with pytest.raises(KeyboardInterrupt):
        safe_fs.create_exclusive(folder, "s.txt", b"second")
    assert not safe_fs._PENDING
    assert os.listdir(folder.path) == ["r.txt"]
    assert not safe_fs.create_exclusive(folder, "r.txt", b"other")  # the name exists: kept
    assert (Path(folder.path) / "r.txt").read_bytes() == b"first"
    assert os.listdir(folder.path) == ["r.txt"] and folder.unnamed
    folder.close()


@unnamed_files
def test_a_filesystem_without_o_tmpfile_gets_named_temp_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A filesystem that refuses O_TMPFILE (EOPNOTSUPP): the file is written under a temp name
    and linked, and that folder is not asked again; a refusal for another reason (EACCES) is
    an error, not a reason to try another way."""
    import errno

    real_open = os.open
    asked: list[int] = []

    def refusing(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if flags & safe_fs.UNNAMED == safe_fs.UNNAMED:
            asked.append(flags)
            raise OSError(refusal[0], os.strerror(refusal[0]))
        return real_open(path, flags, *args, **kwargs)
    refusal = [errno.EOPNOTSUPP]
    monkeypatch.setattr(os, "open", refusing)
    folder = safe_fs.open_folder(str(tmp_path), ("s", "tool-results"), create=True)
    assert safe_fs.create_exclusive(folder, "r.txt", b"one")
    assert safe_fs.create_exclusive(folder, "s.txt", b"two")
    assert len(asked) == 1 and not folder.unnamed
    assert sorted(os.listdir(folder.path)) == ["r.txt", "s.txt"]
    assert (Path(folder.path) / "s.txt").read_bytes() == b"two"
    folder.close()
    refusal[0] = errno.EACCES
    folder = safe_fs.open_folder(str(tmp_path), ("s", "tool-results"))
    with pytest.raises(PermissionError):
        safe_fs.create_exclusive(folder, "t.txt", b"three")
    assert sorted(os.listdir(folder.path)) == ["r.txt", "s.txt"] and folder.unnamed
    folder.close()


@unnamed_files
def test_the_store_writes_through_unnamed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    """The store's saves take the O_TMPFILE path (no named temp file made), reuse and the
    alternate name included."""
    def no_named(*args: object, **kwargs: object) -> bool:
        raise AssertionError("a named temp file was made")
    monkeypatch.setattr(safe_fs, "_create_named", no_named)
    store = ToolResultStore(tmp_path)
    first = store.save("x" * 10, tool_use_id="t", session_id="s")
    assert store.save("x" * 10, tool_use_id="t", session_id="s") == first
    other = store.save("y" * 10, tool_use_id="t", session_id="s")
    assert Path(other).name.startswith("t-") and Path(other).read_text() == "y" * 10
    assert sorted(os.listdir(Path(first).parent)) == sorted([Path(first).name, Path(other).name])
    store.close()


def test_new_files_are_not_looked_for_first_and_taken_names_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run saving new files does not look for each name before creating it (the link fails
    if it exists); a re-run over saved content starts looking again after the first taken name,
    so it writes nothing more; other content under a name still gets the alternate name."""
    from ctxtool.storage import store as store_module

    looks: list[str] = []
    creates: list[str] = []
    real_holds, real_create = store_module._holds, store_module.create_exclusive

    def holds(folder: safe_fs.Folder, name: str, data: bytes) -> bool | None:
        looks.append(name)
        return real_holds(folder, name, data)

    def create(folder: safe_fs.Folder, name: str, data: bytes) -> bool:
        creates.append(name)
        return real_create(folder, name, data)
    monkeypatch.setattr(store_module, "_holds", holds)
    monkeypatch.setattr(store_module, "create_exclusive", create)
    store = ToolResultStore(tmp_path)
    paths = [store.save(f"result {n}", tool_use_id=f"t{n}", session_id="s") for n in range(20)]
    assert len(creates) == 20 and looks == ["t0.txt"]  # only the first save looks
    store.close()
    looks.clear()
    creates.clear()
    again = ToolResultStore(tmp_path)
    again._look_first = False  # as after a run of new files
    assert [again.save(f"result {n}", tool_use_id=f"t{n}", session_id="s")
            for n in range(20)] == paths
    assert creates == ["t0.txt"] and len(looks) == 20  # one wasted create, then looks
    assert again.files_written == 0 and again.files_reused == 20
    other = again.save("other content", tool_use_id="t3", session_id="s")
    assert Path(other).name.startswith("t3-") and Path(other).read_text() == "other content"
    again.close()


def test_a_store_that_cannot_be_written_still_reuses_what_it_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a look first, a create that fails (a store we may only read) is retried with a
    look: the same content there is reused; a name that is not there is still an error."""
    from ctxtool.storage import store as store_module

    path = ToolResultStore(tmp_path).save("kept", tool_use_id="t", session_id="s")

    def refused(folder: safe_fs.Folder, name: str, data: bytes) -> bool:
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(store_module, "create_exclusive", refused)
    store = ToolResultStore(tmp_path)
    store._look_first = False
    assert store.save("kept", tool_use_id="t", session_id="s") == path
    store._look_first = False
    with pytest.raises(StoreError, match="Permission denied"):
        store.save("new", tool_use_id="u", session_id="s")
    store.close()
