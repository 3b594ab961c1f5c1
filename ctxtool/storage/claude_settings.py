"""Claude Code's settings files, read as Claude Code reads them (standard library only: the
statusline's fast path uses this too).

Merged oldest first, later files winning (:func:`ctxtool.formats.claude_code.rules.settings_from`):
the user's ``<config>/settings.json`` (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), the project's
``.claude/settings.json`` and ``.claude/settings.local.json`` under ``project`` (the directory
Claude Code would be started in; ctxtool's working directory by default), then the managed
``/etc/claude-code/managed-settings.json``. ``autoCompactEnabled`` that no settings file sets is
taken from the global config, ``<$CLAUDE_CONFIG_DIR or home>/.claude.json``, where ``/config``
wrote it before settings.json held it (2.1.332 reads it there last; what it says is cached, keyed
by the file's size and modification time). A missing, unreadable or
malformed file is skipped, as Claude Code skips it; ``CTXTOOL_CLAUDE_SETTINGS=0`` reads none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ctxtool.formats.claude_code.rules import Settings, settings_from
from ctxtool.storage.cache_dir import cache_dir

MANAGED = "/etc/claude-code/managed-settings.json"
MAX_BYTES = 1 << 20  # a settings file is a few KB; nothing larger is read
GLOBAL_MAX_BYTES = 64 << 20  # ~/.claude.json keeps per-project history: it grows to MBs
GLOBAL_CACHE = "claude-global-config.json"  # in ctxtool's cache folder (storage.cache_dir)


def settings_files(env: Mapping[str, str], project: str | None = None) -> list[str]:
    """The settings files Claude Code would read, oldest (weakest) first."""
    config = _configured_dir(env) or os.path.join(_home(env), ".claude")
    here = project if project is not None else os.getcwd()
    return [os.path.join(config, "settings.json"),
            os.path.join(here, ".claude", "settings.json"),
            os.path.join(here, ".claude", "settings.local.json"), MANAGED]


def read_settings(env: Mapping[str, str], project: str | None = None) -> Settings:
    """The merged :class:`Settings` of the files Claude Code reads (see the module docstring)."""
    if (env.get("CTXTOOL_CLAUDE_SETTINGS") or "").strip() == "0":
        return Settings()
    documents = []
    for path in dict.fromkeys(settings_files(env, project)):
        doc = _read(path)
        if doc is not None:
            documents.append((path, doc))
    settings = settings_from(documents)
    if settings.auto_compact_enabled is None:
        path = global_config(env)
        if _global_auto_compact_off(path, env):
            settings = settings._replace(auto_compact_enabled=False,
                                         files=(*settings.files, path))
    return settings


def _global_auto_compact_off(path: str, env: Mapping[str, str]) -> bool:
    """True when the global config sets ``autoCompactEnabled: false`` (true is the default).
    The statusline asks on every message and the file grows to MBs, so the answer is cached
    in ctxtool's cache folder under the file's (path, size, mtime_ns): a changed file is read
    again; a cache that is missing, corrupt or cannot be written is ignored."""
    try:
        stat = os.stat(path)
    except OSError:
        return False
    key = [path, stat.st_size, stat.st_mtime_ns]
    folder = cache_dir(env)
    cache = os.path.join(folder, GLOBAL_CACHE) if folder is not None else None
    cached = _read(cache) if cache is not None else None
    if cached is not None and cached.get("key") == key and isinstance(cached.get("off"), bool):
        return bool(cached["off"])
    legacy = _read(path, limit=GLOBAL_MAX_BYTES, needs=b'"autoCompactEnabled"')
    off = legacy is not None and legacy.get("autoCompactEnabled") is False
    if cache is not None:
        _write_cache(cache, {"key": key, "off": off})
    return off


def _write_cache(path: str, value: Mapping[str, Any]) -> None:
    from ctxtool.errors import StoreError  # only when the cache is written, not on every run
    from ctxtool.storage.atomic import write_bytes_atomic

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_bytes_atomic(path, json.dumps(value).encode())
    except (OSError, StoreError):
        pass  # an optimisation only


def global_config(env: Mapping[str, str]) -> str:
    """Claude Code's global config file: ``.claude.json`` in $CLAUDE_CONFIG_DIR, else home."""
    return os.path.join(_configured_dir(env) or _home(env), ".claude.json")


def _configured_dir(env: Mapping[str, str]) -> str | None:
    """``$CLAUDE_CONFIG_DIR`` with ``~`` expanded, or None when unset or blank."""
    configured = (env.get("CLAUDE_CONFIG_DIR") or "").strip()
    return os.path.expanduser(configured) if configured else None


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def _read(path: str, *, limit: int = MAX_BYTES, needs: bytes = b"") -> Mapping[str, Any] | None:
    """The JSON object in ``path``; None when missing, larger than ``limit``, not an object,
    or (parsing skipped) not holding ``needs``."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit or needs not in data:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


__all__ = ["MANAGED", "global_config", "read_settings", "settings_files"]
