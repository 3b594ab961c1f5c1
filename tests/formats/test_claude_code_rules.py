"""Claude Code's rules by version (formats/claude_code/rules.py): thresholds, settings and
environment with Claude Code's precedence, idle compaction, its characters / 4 count."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ctxtool.formats.claude_code import rules
from ctxtool.formats.claude_code.rules import Settings, idle_compaction, settings_from, thresholds
from ctxtool.storage.claude_settings import read_settings

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("version, name", [
    ("2.0.76", "2.0.76-2.1.20"), ("2.1.20", "2.0.76-2.1.20"), ("1.0.3", "2.0.76-2.1.20"),
    ("2.1.21", "2.1.21-2.1.285"), ("2.1.285", "2.1.21-2.1.285"), ("2.1.290", "2.1.286-2.1.298"),
    ("2.1.299", "2.1.299-2.1.310"), ("2.1.332", "2.1.311+"), ("3.0.0", "2.1.311+"),
    (None, "2.1.311+"), ("[trimmed for fixture]", "2.1.311+")])
def test_the_transcripts_version_chooses_the_row(version: str | None, name: str) -> None:
    assert rules.rule_for(version).name == name


def test_versions_up_to_2_1_20_reserve_32000_and_later_ones_20000() -> None:
    old, new = thresholds(version="2.1.20"), thresholds(version="2.1.21")
    assert (old.auto_compact, old.warning, old.window) == (155_000, 135_000, 200_000)
    assert (new.auto_compact, new.warning) == (167_000, 147_000)
    assert old.rule == "2.0.76-2.1.20" and old.version == "2.1.20"


def test_a_smaller_max_output_reserves_less_under_either_rule() -> None:
    assert thresholds(version="2.1.20", max_output=8_000).auto_compact == 179_000
    env = {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "16000"}
    limits = thresholds(version="2.1.332", env=env)
    assert limits.auto_compact == 171_000 and "max output 16000" in limits.applied


def test_auto_compact_window_in_settings_moves_the_point_below_it() -> None:
    settings = settings_from([("user", {"autoCompactWindow": 150_000})])
    limits = thresholds(version="2.1.332", settings=settings)
    assert limits.auto_compact == 150_000 - 20_000 - 13_000 < 150_000
    assert limits.warning == limits.auto_compact - 20_000
    assert limits.applied == ("autoCompactWindow=150000",)
    # not read by the versions before 2.1.311
    assert thresholds(version="2.1.310", settings=settings).auto_compact == 167_000


def test_window_precedence_env_then_per_model_then_top_level() -> None:
    settings = settings_from([("user", {"autoCompactWindow": 150_000, "modelSettings": {
        "claude-opus-4-8": {"autoCompactWindow": 120_000}}})])
    model = "claude-opus-4-8-20261101"
    assert thresholds(version="2.1.332", model=model, settings=settings).auto_compact == 87_000
    assert thresholds(version="2.1.332", model="claude-sonnet-5", settings=settings
                      ).auto_compact == 117_000
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "130k"}
    limits = thresholds(version="2.1.332", model=model, settings=settings, env=env)
    assert limits.auto_compact == 97_000
    assert limits.applied == ("CLAUDE_CODE_AUTO_COMPACT_WINDOW=130000",)


def test_a_later_top_level_window_replaces_earlier_per_model_ones() -> None:
    settings = settings_from([
        ("user", {"modelSettings": {"claude-opus-4-8": {"autoCompactWindow": 120_000}}}),
        ("project", {"autoCompactWindow": 180_000})])
    assert settings.per_model == {}
    assert thresholds(version="2.1.332", model="claude-opus-4-8", settings=settings
                      ).auto_compact == 147_000


@pytest.mark.parametrize("value, tokens", [
    (150_000, 150_000), ("150k", 150_000), ("150", 150_000), ("1m", 1_000_000),
    (50_000, 100_000), ("auto", None), ("lots", None), (True, None), (-5, None)])
def test_window_values_as_claude_code_reads_them(value: object, tokens: int | None) -> None:
    assert rules.parse_window(value) == tokens


def test_a_window_above_the_models_changes_nothing() -> None:
    settings = settings_from([("user", {"autoCompactWindow": 500_000})])
    assert thresholds(version="2.1.332", settings=settings).auto_compact == 167_000


def test_disable_compact_turns_auto_compact_off_and_measures_the_warning_from_the_window() -> None:
    limits = thresholds(version="2.1.332", env={"DISABLE_COMPACT": "1"})
    assert not limits.auto_compact_enabled and not limits.compaction_enabled
    assert limits.warning == 200_000 - 20_000 - 20_000
    auto_off = thresholds(version="2.1.332", env={"DISABLE_AUTO_COMPACT": "true"})
    assert not auto_off.auto_compact_enabled and auto_off.compaction_enabled
    setting = thresholds(version="2.1.332",
                         settings=settings_from([("u", {"autoCompactEnabled": False})]))
    assert not setting.auto_compact_enabled and setting.warning == 160_000


def test_auto_compact_off_ignores_the_auto_compact_window() -> None:
    settings = settings_from([("user", {"autoCompactWindow": 150_000})])
    limits = thresholds(version="2.1.332", settings=settings, env={"DISABLE_AUTO_COMPACT": "1"})
    assert limits.warning == 160_000 and limits.applied == ("DISABLE_AUTO_COMPACT",)


def test_disable_1m_context_holds_a_1m_model_to_200k() -> None:
    env = {"CLAUDE_CODE_DISABLE_1M_CONTEXT": "1"}
    limits = thresholds(version="2.1.332", model="claude-opus-4-8[1m]", env=env)
    assert limits.window == 1_000_000 and limits.auto_compact == 167_000
    assert thresholds(version="2.1.332", model="claude-opus-4-8[1m]").auto_compact == 967_000


def test_pct_override_lowers_but_never_raises() -> None:
    assert thresholds(version="2.1.332", env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}
                      ).auto_compact == 90_000
    assert thresholds(version="2.1.332", env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "99"}
                      ).auto_compact == 167_000


def test_the_settings_env_block_is_applied_over_the_shell() -> None:
    settings = settings_from([("user", {"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}})])
    limits = thresholds(version="2.1.332", settings=settings,
                        env={"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "80"})
    assert limits.auto_compact == 90_000


# --- idle compaction -----------------------------------------------------------------------

def test_idle_compaction_fires_54_minutes_after_the_last_reply() -> None:
    idle = idle_compaction(version="2.1.332", last_reply=NOW, context_tokens=250_000)
    assert idle.enabled and idle.fires_at == NOW + timedelta(minutes=54)
    assert idle.as_dict()["fires_at"] == "2026-11-27T12:54:00Z"


@pytest.mark.parametrize("version, env, settings, tokens, reason", [
    ("2.1.285", {}, None, 250_000, "not in Claude Code"),
    ("2.1.290", {}, None, 250_000, "opt-in"),
    ("2.1.332", {}, Settings(idle_compaction=False), 250_000, "idleCompaction is off"),
    ("2.1.332", {"DISABLE_COMPACT": "1"}, None, 250_000, "auto-compact is off"),
    ("2.1.332", {}, None, 150_000, "context under 200,000"),
    ("2.1.332", {"CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "50000"}, None, 90_000,
     "context under 100,000"),
])
def test_idle_compaction_does_not_fire(version: str, env: dict[str, str],
                                       settings: Settings | None, tokens: int,
                                       reason: str) -> None:
    idle = idle_compaction(version=version, env=env, settings=settings, last_reply=NOW,
                           context_tokens=tokens)
    assert idle.fires_at is None and reason in idle.reason


def test_idle_compaction_opted_in_before_2_1_299() -> None:
    idle = idle_compaction(version="2.1.290", settings=Settings(idle_compaction=True),
                           last_reply=NOW, context_tokens=210_000)
    assert idle.fires_at == NOW + timedelta(minutes=54)


def test_idle_minimum_follows_the_environment() -> None:
    env = {"CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS": "120000"}
    idle = idle_compaction(version="2.1.332", env=env, last_reply=NOW, context_tokens=130_000)
    assert idle.min_tokens == 120_000 and idle.fires_at is not None


# --- Claude Code's counting ----------------------------------------------------------------

@pytest.mark.parametrize("text, tokens", [
    ("", 0), ("abcd", 1), ("abcdef", 2), ("abcdefghij", 3), ("x" * 4001, 1000),
    ("\U0001F600\U0001F600", 1), ("日本語の文", 1)])
def test_rough_tokens_counts_utf16_units_over_four_rounded_half_up(text: str, tokens: int) -> None:
    assert rules.rough_tokens(text) == tokens


def test_result_tokens_counts_text_blocks_and_images() -> None:
    content = [{"type": "text", "text": "a" * 400}, {"type": "image", "source": {}}, "bbbb"]
    assert rules.result_tokens(content) == 100 + 2_000 + 1
    assert rules.result_tokens(None) == 0


# --- the settings files ---------------------------------------------------------------------

def test_read_settings_merges_user_project_and_local(tmp_path: Path) -> None:
    config, project = tmp_path / "config", tmp_path / "project"
    (config).mkdir()
    (project / ".claude").mkdir(parents=True)
    (config / "settings.json").write_text(json.dumps(
        {"autoCompactWindow": 150_000, "idleCompaction": False}))
    (project / ".claude" / "settings.json").write_text("{not json")
    (project / ".claude" / "settings.local.json").write_text(json.dumps(
        {"modelSettings": {"claude-opus-4-8": {"autoCompactWindow": 120_000}}}))
    settings = read_settings({"CLAUDE_CONFIG_DIR": str(config)}, project=str(project))
    assert settings.auto_compact_window == 150_000 and settings.idle_compaction is False
    assert settings.per_model == {"claude-opus-4-8": 120_000}
    assert len(settings.files) == 2
    assert read_settings({"CLAUDE_CONFIG_DIR": str(config), "CTXTOOL_CLAUDE_SETTINGS": "0"},
                         project=str(project)) == Settings()


def test_the_rules_module_imports_neither_click_nor_orjson() -> None:
    """statusline imports it on its fast path: the module and what it imports (the packages'
    __init__ files aside) pull in the standard library only."""
    packages = {name: str(ROOT / name.replace(".", "/")) for name in
                ("ctxtool", "ctxtool.formats", "ctxtool.formats.claude_code")}
    code = (f"import sys, types\n"
            f"for name, path in {packages!r}.items():\n"
            f"    sys.modules[name] = module = types.ModuleType(name); module.__path__ = [path]\n"
            f"from ctxtool.formats.claude_code import rules\n"
            f"print(rules.thresholds(version='2.1.20').auto_compact)\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'orjson')))\n"
            f"print(sorted(m for m in sys.modules if m.startswith('ctxtool.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT.parent).stdout.split("\n")
    assert out[0] == "155000" and out[1] == "[]"
    assert out[2] == str(["ctxtool.formats", "ctxtool.formats.claude_code",
                          "ctxtool.formats.claude_code.rules", "ctxtool.formats.limits"])
