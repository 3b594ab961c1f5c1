"""OpenCode's own switches, read from its config: ``compaction.prune: false`` makes microcompact
pass the session through, ``compaction.auto: false`` does the same for ``summarize --auto``
(as Claude Code's DISABLE_MICROCOMPACT / DISABLE_COMPACT do)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_ctxtool
from tests.opencode_sessions import NOW, fixture_entries, lines, prune_session, tools_of, write


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


def _released_by(version: str | None) -> list[dict]:
    """prune_session() as recorded by OpenCode ``version`` (None: no version recorded)."""
    entries = prune_session()
    entries[0] = {"session": {**entries[0]["session"],
                              **({"version": version} if version else {})}}
    return entries


@pytest.mark.parametrize("version", ["1.3.2", "1.2.27", "1.1.48"])
def test_releases_before_1_4_prune_with_prune_unset(tmp_path: Path, version: str) -> None:
    """OpenCode up to 1.3.2 prunes unless compaction.prune is false (`=== false`)."""
    path = write(tmp_path / "s.jsonl", _released_by(version))
    unset = run_ctxtool("microcompact", "--now", NOW, str(path), env=_env(tmp_path, {}))
    assert unset.returncode == 0, unset.stderr
    assert "compacted" in tools_of(lines(unset.stdout))["old1"]["state"]["time"]
    off = run_ctxtool("microcompact", "--now", NOW, str(path),
                      env=_env(tmp_path, {"prune": False}))
    assert off.stdout == path.read_bytes()


@pytest.mark.parametrize("version", ["1.4.0", "1.14.34", "1.18.33", None])
def test_releases_since_1_4_prune_only_when_asked(tmp_path: Path, version: str | None) -> None:
    """1.14.34 and 1.18.33 prune only when compaction.prune is true (`!prune`); a session
    without a version gets the newest rule."""
    path = write(tmp_path / "s.jsonl", _released_by(version))
    unset = run_ctxtool("microcompact", "--now", NOW, str(path), env=_env(tmp_path, {}))
    assert unset.returncode == 0, unset.stderr
    assert unset.stdout == path.read_bytes()
    shown = version or "of unknown version"
    assert unset.stderr.decode() == (
        f"ctxtool: microcompact: nothing cleared (OpenCode {shown} prunes only with "
        "compaction.prune: true (unset in its config): input passed through unchanged)\n")
    on = run_ctxtool("microcompact", "--now", NOW, str(path),
                     env=_env(tmp_path, {"prune": True}))
    assert "compacted" in tools_of(lines(on.stdout))["old1"]["state"]["time"]


def test_the_version_boundary() -> None:
    from ctxtool.formats.opencode.switches import prunes_by_default, switched_off
    assert [prunes_by_default(v) for v in ("1.3.2", "1.3.99-beta", "1.4.0", "1.18.33", "2.0.0",
                                           None, 1.3, "dev")] == \
        [True, True, False, False, False, False, False, False]
    assert switched_off("auto", setting=None, version="1.18.33", env={}) is None  # auto: on
    assert switched_off("prune", setting=True, version="1.18.33", env={}) is None
    assert switched_off("prune", setting=True, version="1.3.2",
                        env={"OPENCODE_DISABLE_PRUNE": "1"}) == "OPENCODE_DISABLE_PRUNE is set"


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


# --- compaction.reserved and compaction.auto in the overflow rule (OpenCode 1.18.33's binary:
# compaction.auto !== false && (tokens.total || input+output+cache.read+cache.write)
#   >= limit.input - (compaction.reserved ?? min(20000, maxOutput))) --------------------------

def _session_at(tmp_path: Path, count: int) -> Path:
    """A 1.18 session in /w whose last finished answer counted ``count`` tokens (cache write
    included: the 1.18 count adds it)."""
    from tests.opencode_builders import assistant, user
    tokens = {"input": count - 1_000, "output": 500, "reasoning": 0,
              "cache": {"read": 0, "write": 500}}
    header = {"session": {"id": "ses_test", "title": "t", "version": "1.18.33",
                          "directory": str(tmp_path / "w")}}
    return write(tmp_path / "s.jsonl", [header, user(1), assistant(2, 1, tokens=tokens)])


def _limits_env(tmp_path: Path, **compaction: object) -> dict[str, str]:
    env = _env(tmp_path, None)
    config = {"provider": {"anthropic": {"models": {"claude-x": {
        "limit": {"context": 200_000, "input": 150_000, "output": 8_000}}}}}}
    if compaction:
        config["compaction"] = compaction
    (Path(env["XDG_CONFIG_HOME"]) / "opencode" / "opencode.json").write_text(json.dumps(config))
    return env


def _verdict(tmp_path: Path, session: Path, **compaction: object) -> dict:
    proc = run_ctxtool("estimate", "--json", str(session), env=_limits_env(tmp_path, **compaction))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["opencode"]


def test_compaction_reserved_moves_the_usable_tokens(tmp_path: Path) -> None:
    session = _session_at(tmp_path, 145_000)
    default = _verdict(tmp_path, session)  # 150,000 - min(20,000, 8,000 max output)
    assert (default["reserved"], default["usable"], default["overflow"]) == (8_000, 142_000, True)
    reserved = _verdict(tmp_path, session, reserved=5_000)
    assert (reserved["reserved"], reserved["usable"], reserved["overflow"]) == (5_000, 145_000, True)
    assert _verdict(tmp_path, session, reserved=4_999)["overflow"] is False  # >=: one short
    assert _verdict(tmp_path, session, reserved=0)["usable"] == 150_000  # 0 counts (??)


def test_compaction_auto_false_never_overflows(tmp_path: Path) -> None:
    verdict = _verdict(tmp_path, _session_at(tmp_path, 149_000), auto=False)
    assert verdict["overflow"] is False and verdict["context_overflow"] is True
    assert verdict["switched_off"] == "OpenCode's config sets compaction.auto: false"
    text = run_ctxtool("estimate", str(_session_at(tmp_path, 149_000)),
                       env=_limits_env(tmp_path, auto=False)).stdout.decode()
    assert "compaction.auto: false: it never compacts by itself" in text


def test_summarize_auto_follows_the_configured_input_limit_and_reserve(tmp_path: Path) -> None:
    session = _session_at(tmp_path, 144_000)
    args = ("summarize", "--llm", "offline", "--auto", "--now", NOW, str(session))
    # under 150,000 - 8,000: OpenCode compacts; under the window's 168,000 it would not
    over = run_ctxtool(*args, env=_limits_env(tmp_path))
    assert over.returncode == 0, over.stderr
    assert len(over.stdout) > session.stat().st_size
    room = run_ctxtool(*args, env=_limits_env(tmp_path, reserved=1_000))  # usable 149,000
    assert room.returncode == 0 and room.stdout == session.read_bytes()
