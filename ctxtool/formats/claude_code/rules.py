"""Claude Code's context rules, as the version that wrote a transcript applies them.

Pure Python: the standard library and :mod:`ctxtool.formats.limits` only (no click, no
orjson), so ``statusline`` can import it on its fast path. Three things live here:

* :data:`RULES`, the table of rules by version range, and :func:`rule_for` (a transcript's own
  ``version`` chooses its row);
* :func:`thresholds`: where that version warns, auto-compacts and blocks, under the settings
  and environment Claude Code itself reads (:class:`Settings`, :func:`settings_from`);
* :func:`idle_compaction`: when Claude Code compacts an idle session on its own (2.1.286+);

plus Claude Code's own arithmetic for its decisions (:func:`rough_tokens`: characters / 4, as its
microcompact counts ``tokensSaved``). Where each number comes from: docs/estimate.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, NamedTuple

from ctxtool.formats.limits import (DEFAULT_WINDOW, LONG_WINDOW, IdleCompaction, Thresholds,
                                    context_window, tool_result_tokens)

DEFAULT_MAX_OUTPUT = 32_000
AUTOCOMPACT_BUFFER = 13_000  # the summary's own room below the effective window
WARNING_BUFFER = 20_000
BLOCKING_BUFFER = 3_000
MIN_AUTO_COMPACT_WINDOW = 100_000  # autoCompactWindow below this is raised to it
IDLE_CACHE_TTL = timedelta(hours=1)  # idle compaction needs the one-hour prompt cache
IDLE_FRACTION = 0.9  # ... and fires when it is this far through its life
IDLE_MIN_TOKENS = 200_000
IDLE_MIN_TOKENS_FLOOR = 100_000

_TRUE = ("1", "true", "yes", "on")


class Rule(NamedTuple):
    """One row of :data:`RULES`: what Claude Code versions ``first``..``last`` do."""

    name: str
    first: tuple[int, ...] | None  # None: every older version too
    last: tuple[int, ...] | None  # None: every newer version too
    output_reserve: int  # the output room kept off the window: min(max output, this)
    window_setting: bool  # reads autoCompactWindow (settings.json, per model, environment)
    idle: str  # idle compaction: "none", "opt-in" (idleCompaction: true) or "default"
    source: str  # where the numbers come from (docs/estimate.md has the details)

    def covers(self, version: tuple[int, ...]) -> bool:
        return ((self.first is None or version >= self.first)
                and (self.last is None or version <= self.last))


# By version range, oldest first; a version outside every range (older than the first row, a
# string that is not a version) takes the nearest row, a transcript without one the newest.
RULES: tuple[Rule, ...] = (
    Rule("2.0.76-2.1.20", None, (2, 1, 20), 32_000, False, "none",
         "2.1.19 bundle (seed 000): 155,000 / 135,000 on 200K; corpus: 9 auto compactions by "
         "2.0.76-2.1.20 at 155,068-157,925 (one at 176,700)"),
    Rule("2.1.21-2.1.285", (2, 1, 21), (2, 1, 285), 20_000, False, "none",
         "changelog 2.1.21 'auto-compact triggering too early on models with large output "
         "token limits'; corpus: 3 by 2.1.29-2.1.42 at 167,174-170,485"),
    Rule("2.1.286-2.1.298", (2, 1, 286), (2, 1, 298), 20_000, False, "opt-in",
         "idle compaction behind idleCompaction: true (DESIGN 5.1)"),
    Rule("2.1.299-2.1.310", (2, 1, 299), (2, 1, 310), 20_000, False, "default",
         "changelog 2.1.299: idle compaction on by default"),
    Rule("2.1.311+", (2, 1, 311), None, 20_000, True, "default",
         "autoCompactWindow in settings.json (DESIGN 5.1); 2.1.332 bundle: reserve "
         "min(max output, 20,000), buffers 13,000 / 20,000, window floor 100,000"),
)


def parse_version(version: Any) -> tuple[int, ...] | None:
    """``"2.1.20"`` -> ``(2, 1, 20)``; None for anything that is not a dotted version."""
    if not isinstance(version, str):
        return None
    match = re.match(r"\s*(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(part) for part in match.groups()) if match else None


def rule_for(version: Any) -> Rule:
    """The row of :data:`RULES` for a transcript's ``version`` (the newest without one)."""
    parsed = parse_version(version)
    if parsed is None:
        return RULES[-1]
    for rule in RULES:
        if rule.covers(parsed):
            return rule
    return RULES[0] if RULES[0].first is not None and parsed < RULES[0].first else RULES[-1]


# --- settings and environment -----------------------------------------------------------------

class Settings(NamedTuple):
    """What Claude Code reads from its settings files (merged, later files winning, as it
    merges user, project, local and managed settings): ``autoCompactWindow`` (top level and
    per model under ``modelSettings``), ``autoCompactEnabled``, ``idleCompaction`` and the
    ``env`` block it copies into its environment at start-up."""

    auto_compact_window: Any = None  # top level: a token count or "auto"
    per_model: Mapping[str, Any] = MappingProxyType({})  # modelSettings.<model>
    auto_compact_enabled: bool | None = None
    idle_compaction: bool | None = None
    env: Mapping[str, str] = MappingProxyType({})
    files: tuple[str, ...] = ()  # the files read (for the report)


def settings_from(documents: Iterable[tuple[str, Mapping[str, Any]]]) -> Settings:
    """Merge settings documents, (name, parsed JSON) oldest first, as Claude Code does: a file
    that sets ``autoCompactWindow`` at the top level replaces the earlier per-model values too;
    one that sets only per-model values adds to them."""
    window: Any = None
    per_model: dict[str, Any] = {}
    enabled = idle = None
    env: dict[str, str] = {}
    names: list[str] = []
    for name, doc in documents:
        if not isinstance(doc, Mapping):
            continue
        names.append(name)
        models = {key: value["autoCompactWindow"] for key, value in
                  _mapping(doc.get("modelSettings")).items()
                  if isinstance(value, Mapping) and "autoCompactWindow" in value}
        if "autoCompactWindow" in doc:
            window, per_model = doc["autoCompactWindow"], models
        else:
            per_model.update(models)
        if isinstance(doc.get("autoCompactEnabled"), bool):
            enabled = doc["autoCompactEnabled"]
        if isinstance(doc.get("idleCompaction"), bool):
            idle = doc["idleCompaction"]
        env.update({str(k): str(v) for k, v in _mapping(doc.get("env")).items()
                    if isinstance(v, (str, int, float)) and not isinstance(v, bool)})
    return Settings(window, per_model, enabled, idle, env, tuple(names))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def effective_env(env: Mapping[str, str] | None, settings: Settings | None) -> dict[str, str]:
    """The environment Claude Code runs with: the shell's, then settings.json's ``env`` block
    over it (Claude Code copies that block into its environment at start-up)."""
    return {**(env or {}), **(settings.env if settings is not None else {})}


def _flag(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() in _TRUE


def compaction_disabled(env: Mapping[str, str]) -> bool:
    """``DISABLE_COMPACT``: Claude Code compacts and clears nothing, neither automatically nor
    on request."""
    return _flag(env, "DISABLE_COMPACT")


# The last version whose bundle reads DISABLE_MICROCOMPACT: the npm bundles 2.1.19 (seed 000)
# to 2.1.63 do; 2.1.64's, 2.1.80's, 2.1.112's and 2.1.332's never name it.
MICROCOMPACT_SWITCH_LAST = (2, 1, 63)


def switched_off(kind: str, *, env: Mapping[str, str] | None, settings: Settings | None,
                 version: Any = None) -> str | None:
    """Which of Claude Code's own switches turns ``kind`` off ("auto": its automatic
    compaction; "prune": its microcompact) for a transcript of ``version``, named for the
    notice; None when it is on. 2.1.332 reads them so: DISABLE_COMPACT (every compaction),
    DISABLE_AUTO_COMPACT, then ``autoCompactEnabled`` (the settings files, strongest first,
    then ``~/.claude.json``); versions up to 2.1.63 also read DISABLE_MICROCOMPACT."""
    env = effective_env(env, settings)
    if compaction_disabled(env):
        return "DISABLE_COMPACT is set"
    if kind == "auto":
        if _flag(env, "DISABLE_AUTO_COMPACT"):
            return "DISABLE_AUTO_COMPACT is set"
        if settings is not None and settings.auto_compact_enabled is False:
            return "autoCompactEnabled is false"
    parsed = parse_version(version)
    if (kind == "prune" and _flag(env, "DISABLE_MICROCOMPACT") and parsed is not None
            and parsed <= MICROCOMPACT_SWITCH_LAST):
        return "DISABLE_MICROCOMPACT is set"
    return None


def _number(env: Mapping[str, str], name: str) -> float | None:
    try:
        value = float(env.get(name, "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_window(value: Any) -> int | None:
    """An ``autoCompactWindow`` value in tokens (``150000``, ``"150k"``, ``"1m"``, a bare
    ``"150"`` meaning thousands), raised to the 100,000 floor; None for ``"auto"`` or
    nonsense."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        tokens = float(value)
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", value)
        if not match:
            return None
        tokens = float(match.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[
            match.group(2).lower()]
        if not match.group(2) and tokens < 1_000:
            tokens *= 1_000
    else:
        return None
    if not math.isfinite(tokens) or tokens <= 0:
        return None
    return max(MIN_AUTO_COMPACT_WINDOW, int(tokens))


def model_key(model: str | None) -> str | None:
    """A model name as ``modelSettings`` keys it: no ``[1m]`` suffix, no date."""
    if not model:
        return None
    key = re.sub(r"\[1m\]\s*$", "", model.strip(), flags=re.IGNORECASE)
    return re.sub(r"-\d{8}$", "", key)


def auto_compact_window(model: str | None, env: Mapping[str, str],
                        settings: Settings | None) -> tuple[int | None, str | None]:
    """The ``autoCompactWindow`` in force and where it came from, by Claude Code's precedence:
    ``CLAUDE_CODE_AUTO_COMPACT_WINDOW``, then ``modelSettings.<model>``, then the top level."""
    from_env = parse_window(env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "").strip() or None)
    if from_env is not None:
        return from_env, "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
    if settings is None:
        return None, None
    key = model_key(model)
    for name, value in settings.per_model.items():
        if model and (name == model or model_key(name) == key):
            return parse_window(value), f"modelSettings.{name}.autoCompactWindow"
    window = parse_window(settings.auto_compact_window)
    return (window, "autoCompactWindow") if window is not None else (None, None)


# --- thresholds -------------------------------------------------------------------------------

def thresholds(*, version: Any = None, model: str | None = None, window: int | None = None,
               max_output: int | None = None, env: Mapping[str, str] | None = None,
               settings: Settings | None = None) -> Thresholds:
    """Claude Code's thresholds for ``model`` under the rule of ``version`` (see
    :data:`RULES`), the environment ``env`` and the settings files' :class:`Settings`.

    auto-compact = the compaction window - min(max output, the rule's reserve) - 13,000, lowered
    by ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (a percent of window - reserve, never raised); the
    compaction window is the model's, or ``autoCompactWindow`` below it (2.1.311+), or 200K
    for a 1M model under ``CLAUDE_CODE_DISABLE_1M_CONTEXT``. The warning sits 20,000 below the
    auto-compact point, or below the model's effective window when auto-compact is off
    (``DISABLE_COMPACT``, ``DISABLE_AUTO_COMPACT``, ``autoCompactEnabled: false``)."""
    rule = rule_for(version)
    env = effective_env(env, settings)
    applied: list[str] = []
    model_window = context_window(model, window)
    out = max_output or _int_env(env, "CLAUDE_CODE_MAX_OUTPUT_TOKENS") or DEFAULT_MAX_OUTPUT
    reserve = min(out, rule.output_reserve)
    disabled = compaction_disabled(env)
    enabled = not disabled and not _flag(env, "DISABLE_AUTO_COMPACT")
    for name in ("DISABLE_COMPACT", "DISABLE_AUTO_COMPACT"):
        if _flag(env, name):
            applied.append(name)
    if enabled and settings is not None and settings.auto_compact_enabled is False:
        enabled = False
        applied.append("autoCompactEnabled: false")
    compaction_window = model_window
    if _flag(env, "CLAUDE_CODE_DISABLE_1M_CONTEXT") and model_window > DEFAULT_WINDOW:
        compaction_window = DEFAULT_WINDOW
        applied.append("CLAUDE_CODE_DISABLE_1M_CONTEXT")
    if rule.window_setting and enabled:
        configured, origin = auto_compact_window(model, env, settings)
        if configured is not None and origin is not None:
            compaction_window = min(compaction_window, configured)
            applied.append(f"{origin}={configured}")
    if max_output or "CLAUDE_CODE_MAX_OUTPUT_TOKENS" in env:
        applied.append(f"max output {out}")
    effective = compaction_window - reserve
    auto = effective - AUTOCOMPACT_BUFFER
    pct = _number(env, "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    if pct is not None and 0 < pct <= 100:
        auto = min(auto, math.floor(effective * pct / 100))
        applied.append(f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={env['CLAUDE_AUTOCOMPACT_PCT_OVERRIDE']}")
    blocking = _int_env(env, "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE") or model_window - BLOCKING_BUFFER
    warning = (auto if enabled else model_window - reserve) - WARNING_BUFFER
    return Thresholds(window=model_window, max_output=out, effective=effective,
                      auto_compact=auto, warning=warning, blocking=blocking,
                      auto_compact_enabled=enabled, rule=rule.name,
                      version=version if isinstance(version, str) else None,
                      applied=tuple(applied), compaction_enabled=not disabled)


def _int_env(env: Mapping[str, str], name: str) -> int | None:
    value = _number(env, name)
    return int(value) if value is not None and value > 0 else None


# --- idle compaction ----------------------------------------------------------------------------

def idle_after() -> timedelta:
    """How long after the last reply idle compaction fires (54 minutes)."""
    return IDLE_CACHE_TTL * IDLE_FRACTION


def idle_compaction(*, version: Any = None, env: Mapping[str, str] | None = None,
                    settings: Settings | None = None, last_reply: datetime | None = None,
                    context_tokens: int = 0) -> IdleCompaction:
    """Claude Code's idle compaction for a session written by ``version`` whose last assistant
    reply is at ``last_reply`` and whose context holds ``context_tokens``."""
    rule = rule_for(version)
    env = effective_env(env, settings)
    minimum = max(IDLE_MIN_TOKENS_FLOOR,
                  _int_env(env, "CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS") or IDLE_MIN_TOKENS)
    setting = settings.idle_compaction if settings is not None else None
    enabled, reason = _idle_enabled(rule, env, setting, settings)
    if not enabled:
        return IdleCompaction(False, reason, minimum)
    if context_tokens < minimum:
        return IdleCompaction(True, f"context under {minimum:,} tokens", minimum)
    if last_reply is None:
        return IdleCompaction(True, "no assistant reply with a time", minimum)
    return IdleCompaction(True, "if the session stays open and idle on the one-hour prompt "
                                "cache", minimum, last_reply + idle_after())


def _idle_enabled(rule: Rule, env: Mapping[str, str], setting: bool | None,
                  settings: Settings | None) -> tuple[bool, str]:
    if rule.idle == "none":
        return False, f"not in Claude Code {rule.name}"
    if compaction_disabled(env) or _flag(env, "DISABLE_AUTO_COMPACT") or (
            settings is not None and settings.auto_compact_enabled is False):
        return False, "auto-compact is off"
    if setting is False or (rule.idle == "opt-in" and setting is not True):
        return False, "idleCompaction is off" if setting is False else \
            f"opt-in in {rule.name} (idleCompaction: true)"
    if _flag(env, "FORCE_PROMPT_CACHING_5M"):
        return False, "the prompt cache lives 5 minutes (FORCE_PROMPT_CACHING_5M)"
    return True, "on"


# --- Claude Code's own counting (microcompact) -------------------------------------------------

def rough_tokens(text: str) -> int:
    """Claude Code's rough count: UTF-16 code units / 4, rounded half up (``Math.round``)."""
    units = len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2
    return math.floor(units / 4 + 0.5)


def result_tokens(content: Any) -> int:
    """A tool result's tokens as Claude Code's microcompact counts them: its text (or text
    blocks) by :func:`rough_tokens`, 2,000 per image."""
    return tool_result_tokens(content, rough_tokens)


__all__ = ["IDLE_FRACTION", "IDLE_MIN_TOKENS", "RULES",
           "IdleCompaction", "Rule", "Settings", "Thresholds", "auto_compact_window",
           "compaction_disabled", "effective_env", "idle_after",
           "idle_compaction", "model_key", "parse_version", "parse_window", "result_tokens",
           "rough_tokens", "rule_for", "settings_from", "switched_off", "thresholds"]
