"""``autoCompactEnabled`` from ``~/.claude.json`` (MBs of per-project history) is cached by the
file's (path, size, mtime_ns): repeated statusline runs do not parse it again, a changed file is
read again, and a cache that is corrupt, unwritable or turned off changes no answer."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ctxtool.storage.claude_settings import GLOBAL_CACHE, read_settings
from tests.conftest import CLAUDE_CODE_FIXTURE, run_ctxtool


def _home(tmp_path: Path, enabled: bool) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    path = home / ".claude.json"
    path.write_text(json.dumps({"projects": {"/p": {"history": ["x" * 500]}},
                                "autoCompactEnabled": enabled}))
    env = {"HOME": str(home), "CTXTOOL_CACHE_DIR": str(tmp_path / "cache")}
    return path, env


def _off(env: dict[str, str]) -> bool:
    return read_settings(env, project=os.devnull).auto_compact_enabled is False


def _rewrite_keeping_identity(path: Path, enabled: bool) -> None:
    """The other answer in a file of the same size and modification time (padded with
    trailing blanks: ``true`` is a byte shorter than ``false``)."""
    stat = path.stat()
    text = path.read_text().replace(json.dumps(not enabled), json.dumps(enabled))
    path.write_text(text.ljust(stat.st_size))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path) -> None:
    path, env = _home(tmp_path, False)
    assert _off(env)
    cache = tmp_path / "cache" / GLOBAL_CACHE
    assert json.loads(cache.read_text())["key"] == [str(path), path.stat().st_size,
                                                    path.stat().st_mtime_ns]
    _rewrite_keeping_identity(path, True)  # same (path, size, mtime_ns): the cache answers
    assert _off(env)
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 1_000))  # touched: read again
    assert not _off(env)
    assert json.loads(cache.read_text())["off"] is False


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path, env = _home(tmp_path, True)
    assert not _off(env)
    path.write_text(json.dumps({"autoCompactEnabled": False}))  # another size
    assert _off(env)
    path.unlink()
    assert not _off(env)


def test_a_corrupt_or_foreign_cache_is_ignored(tmp_path: Path) -> None:
    path, env = _home(tmp_path, False)
    cache = tmp_path / "cache" / GLOBAL_CACHE
    cache.parent.mkdir()
    for junk in (b"{not json", b"[]", b"\xff\xfe", json.dumps(
            {"key": [str(path), path.stat().st_size, path.stat().st_mtime_ns], "off": "no"}
    ).encode(), json.dumps({"key": ["/elsewhere", 1, 2], "off": False}).encode()):
        cache.write_bytes(junk)
        assert _off(env), junk
        assert json.loads(cache.read_text())["off"] is True  # written anew


def test_no_cache_when_turned_off_or_unwritable(tmp_path: Path) -> None:
    _, env = _home(tmp_path, False)
    assert _off({**env, "CTXTOOL_CACHE_DIR": "off"})
    assert not (tmp_path / "cache").exists()
    (tmp_path / "file").write_text("not a folder")
    assert _off({**env, "CTXTOOL_CACHE_DIR": str(tmp_path / "file" / "cache")})


def test_the_statusline_writes_and_uses_the_cache(tmp_path: Path) -> None:
    path, env = _home(tmp_path, False)
    env["CTXTOOL_CLAUDE_SETTINGS"] = "1"  # the test suite turns them off (conftest)
    status = json.dumps({"model": {"id": "claude-sonnet-4-5", "display_name": "S"},
                         "transcript_path": str(CLAUDE_CODE_FIXTURE),
                         "cwd": str(tmp_path)}).encode()
    cache = tmp_path / "cache" / GLOBAL_CACHE

    def statusline() -> dict[str, object]:
        proc = run_ctxtool("statusline", "--color", "never", input=status, env=env, cwd=tmp_path)
        assert proc.returncode == 0 and proc.stdout and not proc.stderr, proc.stderr
        return json.loads(cache.read_text())

    assert statusline()["off"] is True
    written = cache.stat().st_mtime_ns
    _rewrite_keeping_identity(path, True)
    assert statusline()["off"] is True and cache.stat().st_mtime_ns == written  # not read again
    os.utime(path)
    assert statusline()["off"] is False
