"""Model limits from OpenCode's config files, merged in OpenCode's order."""

from __future__ import annotations

import json
from pathlib import Path

from ctxtool.storage.opencode_config import compaction_setting, model_limits, strip_jsonc


def config(context: int | None = None, output: int | None = None) -> dict:
    limit = {k: v for k, v in (("context", context), ("output", output)) if v is not None}
    return {"provider": {"fake": {"models": {"m": {"limit": limit}}}}}


def test_jsonc_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "a": "http://x/*y*/", /* block */ "b": [1, 2,],\n}\n'
    assert json.loads(strip_jsonc(text)) == {"a": "http://x/*y*/", "b": [1, 2]}
    assert json.loads(strip_jsonc('{"q": "say \\"hi\\" // not a comment"}')) == {
        "q": 'say "hi" // not a comment'}


def test_later_configs_win(tmp_path: Path) -> None:
    home = tmp_path / "config" / "opencode"
    home.mkdir(parents=True)
    (home / "opencode.jsonc").write_text("// global\n" + json.dumps(config(100_000, 4_000)))
    project = tmp_path / "repo" / "sub"
    project.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "repo" / "opencode.json").write_text(json.dumps(config(output=6_000)))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert model_limits("fake", "m", env=env) == {"context": 100_000, "output": 4_000}
    assert model_limits("fake", "m", env=env, directory=str(project)) == {
        "context": 100_000, "output": 6_000}
    inline = {**env, "OPENCODE_CONFIG_CONTENT": json.dumps(config(context=50_000))}
    assert model_limits("fake", "m", env=inline, directory=str(project)) == {
        "context": 50_000, "output": 6_000}
    assert model_limits("fake", "other", env=env) == {}
    assert model_limits(None, "m", env=env) == {}


def test_unreadable_configs_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{ not json")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "none"), "OPENCODE_CONFIG": str(tmp_path / "bad.json")}
    assert model_limits("fake", "m", env=env) == {}


def test_compaction_switches_merge_like_the_limits(tmp_path: Path) -> None:
    home = tmp_path / "xdg" / "opencode"
    home.mkdir(parents=True)
    (home / "opencode.json").write_text(json.dumps({"compaction": {"auto": False, "prune": False}}))
    project = tmp_path / "repo" / "sub"
    project.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "repo" / "opencode.jsonc").write_text('{"compaction": {"prune": true,}}')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert compaction_setting("auto", env=env, directory=str(project)) is False
    assert compaction_setting("prune", env=env, directory=str(project)) is True  # project wins
    assert compaction_setting("prune", env=env) is False
    content = {**env, "OPENCODE_CONFIG_CONTENT": '{"compaction": {"auto": true}}'}
    assert compaction_setting("auto", env=content) is True
    assert compaction_setting("auto", env={"XDG_CONFIG_HOME": str(tmp_path / "none")}) is None
