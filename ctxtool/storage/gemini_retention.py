"""Gemini CLI's own session retention, ``general.sessionRetention``, read as Gemini CLI 0.61.0
reads it: ``cleanup``'s default for Gemini's sessions when ``--older-than`` is not given, so a
cron run changes how they go, not when.

The settings are merged as the client merges them (``mergeSettings``), later winning: the
schema's defaults (``enabled: true``, ``maxAge: "30d"``, ``minRetention: "1d"``, no
``maxCount``), the system defaults (``$GEMINI_CLI_SYSTEM_DEFAULTS_PATH``, else
``system-defaults.json`` beside the system settings), the user's ``~/.gemini/settings.json``
(``$GEMINI_CLI_HOME``), the project's own ``<project>/.gemini/settings.json`` when Gemini trusts
the folder, then the system settings (``$GEMINI_CLI_SYSTEM_SETTINGS_PATH``, else
``/etc/gemini-cli/settings.json``), read by :mod:`ctxtool.storage.gemini_settings`. The client
cleans at start-up only the sessions of the project it starts in, with that project's merged
settings (gemini-3HFX2LNT.js:17473, chunk-2YTYPKEZ.js:10283 ``cleanupExpiredSessions``): so a
project whose own file sets ``sessionRetention`` has its own rule (:func:`project_retention`).

The client applies no retention when it is disabled or its settings are invalid
(``validateRetentionConfig``: a ``maxAge`` that is not ``<n>h|d|w|m`` with n > 0, or shorter
than ``minRetention``; a ``maxCount`` under 1; neither given); nor does this default then.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from ctxtool.storage.gemini_settings import settings_files
from ctxtool.storage.retention import Retention

KEY = "general.sessionRetention"
DEFAULTS = {"enabled": True, "maxAge": "30d", "minRetention": "1d"}  # the 0.61.0 schema's
_PERIOD = re.compile(r"^(\d+)([dhwm])$")
_UNIT_HOURS = {"h": 1, "d": 24, "w": 7 * 24, "m": 30 * 24}  # the client's "m" is 30 days


def read_retention(env: Mapping[str, str], project: str | None = None) -> Retention:
    """Gemini CLI's retention on this machine, for the sessions of folder ``project`` (None:
    the user's and the system's settings only; see the module docstring)."""
    return _merged_retention(settings_files(env, project))


def project_retention(env: Mapping[str, str], project: str) -> Retention | None:
    """The rule for the sessions of folder ``project`` when its own ``.gemini/settings.json``
    sets ``sessionRetention`` and Gemini CLI reads that file (a trusted folder, not the home
    folder); None: the machine's rule (:func:`read_retention`) applies to them."""
    files = settings_files(env, project)  # read once: whether the project sets it, and the rule
    own = Path(project) / ".gemini" / "settings.json"
    if not any(path == own and _retention_in(settings) is not None for path, settings in files):
        return None
    return _merged_retention(files)


def _merged_retention(files: list[tuple[Path, dict[str, Any]]]) -> Retention:
    """The rule of settings ``files`` merged in their order, named by the last that sets it."""
    merged: dict[str, Any] = dict(DEFAULTS)
    origin = "Gemini CLI's default"
    for path, settings in files:
        value = _retention_in(settings)
        if value is not None:
            merged.update(value)
            origin = f"{KEY} in {path}"
    return retention_of(merged, origin)


def _retention_in(settings: Mapping[str, Any]) -> Mapping[str, Any] | None:
    general = settings.get("general")
    value = general.get("sessionRetention") if isinstance(general, dict) else None
    return value if isinstance(value, Mapping) else None


def retention_of(settings: Mapping[str, Any], origin: str) -> Retention:
    """The rule the client applies for merged ``sessionRetention`` settings."""
    if not settings.get("enabled"):
        return Retention(None, None, f"{origin} (disabled)")
    max_age, min_age = settings.get("maxAge"), settings.get("minRetention") or "1d"
    count = settings.get("maxCount")
    age = _period(max_age) if max_age else None
    problem = None
    if max_age and age is None:
        problem = f"maxAge {max_age!r} is not <number><h|d|w|m>"
    elif age is not None and age < (_period(min_age) or timedelta(days=1)):
        problem = f"maxAge {max_age} is shorter than minRetention {min_age}"
    elif count is not None and (isinstance(count, bool) or not isinstance(count, (int, float))
                                or count < 1):
        problem = f"maxCount {count!r} is not at least 1"
    elif not max_age and count is None:
        problem = "neither maxAge nor maxCount is given"
    if problem:
        return Retention(None, None, origin,
                         f"{origin}: {problem}; Gemini CLI removes no session then, nor does "
                         "cleanup by default")
    return Retention(age, int(count) if count is not None else None, origin)


def _period(value: object) -> timedelta | None:
    found = _PERIOD.match(value) if isinstance(value, str) else None
    if found is None or int(found.group(1)) == 0:
        return None
    return timedelta(hours=int(found.group(1)) * _UNIT_HOURS[found.group(2)])


__all__ = ["DEFAULTS", "KEY", "project_retention", "read_retention", "retention_of"]
