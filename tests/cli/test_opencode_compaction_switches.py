"""OpenCode's own switches, read from its config: ``compaction.prune: false`` makes microcompact
pass the session through, ``compaction.auto: false`` does the same for ``summarize --auto``
(as Claude Code's DISABLE_MICROCOMPACT / DISABLE_COMPACT do)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.opencode_sessions import NOW, fixture_entries, prune_session, write


def _env(tmp_path: Path, compaction: dict[str, bool] | None, how: str = "xdg") -> dict[str, str]:
    """A fresh HOME whose global OpenCode config (or the file $OPENCODE_CONFIG names) holds
    ``compaction``."""
    home = tmp_path / "home"
    config = home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    body = json.dumps({"$schema": "https://opencode.ai/config.json",
                       **({"compaction": compaction} if compaction is not None else {})})
    if how == "xdg":
        (config / "opencode.json").write_text(body)
    else:
        (tmp_path / "custom.jsonc").write_text("// mine\n" + body)
        env["OPENCODE_CONFIG"] = str(tmp_path / "custom.jsonc")
    return env


@pytest.mark.parametrize("how", ["xdg", "env"])
def test_prune_false_passes_microcompact_through(tmp_path: Path, how: str) -> None:
    path = write(tmp_path / "s.jsonl", prune_session())
    on = run_ctxtool("microcompact", "--now", NOW, str(path),
                     env=_env(tmp_path, {"prune": True}, how))
    assert on.returncode == 0 and on.stdout != path.read_bytes()  # it would prune
    off = run_ctxtool("microcompact", "--now", NOW, str(path),
                      env=_env(tmp_path, {"prune": False, "auto": True}, how))
    assert off.returncode == 0, off.stderr
    assert off.stdout == path.read_bytes()
    notice = off.stderr.decode()
    assert "compaction.prune: false: input passed through unchanged" in notice
    assert notice.count("\n") == 1


def _long_session(tmp_path: Path) -> Path:
    entries = fixture_entries()
    entries[12]["parts"][0]["text"] += " and some context" * 2000
    return write(tmp_path / "long.jsonl", entries)


@pytest.mark.parametrize("how", ["xdg", "env"])
def test_auto_false_passes_summarize_auto_through(tmp_path: Path, how: str) -> None:
    session = _long_session(tmp_path)
    args = ("summarize", "--llm", "offline", "--auto", "--context-window", "20000", "--now", NOW,
            str(session))
    on = run_ctxtool(*args, env=_env(tmp_path, {"prune": False}, how))
    assert on.returncode == 0 and len(on.stdout) > session.stat().st_size  # over the threshold
    off = run_ctxtool(*args, env=_env(tmp_path, {"auto": False}, how))
    assert off.returncode == 0, off.stderr
    assert off.stdout == session.read_bytes()
    notice = off.stderr.decode()
    assert "compaction.auto: false; input passed through unchanged" in notice
    assert notice.count("\n") == 1
    manual = run_ctxtool(*args[:3], *args[4:], env=_env(tmp_path, {"auto": False}, how))
    assert len(manual.stdout) > session.stat().st_size  # /compact still works: not --auto


def test_opencodes_disable_flags(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", prune_session())
    env = {**_env(tmp_path, None), "OPENCODE_DISABLE_PRUNE": "1"}
    off = run_ctxtool("microcompact", "--now", NOW, str(path), env=env)
    assert off.stdout == path.read_bytes() and "OPENCODE_DISABLE_PRUNE is set" in off.stderr.decode()
    session = _long_session(tmp_path)
    env = {**_env(tmp_path, None), "OPENCODE_DISABLE_AUTOCOMPACT": "true"}
    off = run_ctxtool("summarize", "--llm", "offline", "--auto", "--context-window", "20000",
                      str(session), env=env)
    assert off.stdout == session.read_bytes()
    assert "OPENCODE_DISABLE_AUTOCOMPACT is set" in off.stderr.decode()
