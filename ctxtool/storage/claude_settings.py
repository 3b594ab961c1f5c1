"""Claude Code's settings files, read as Claude Code reads them (standard library only: the
statusline's fast path uses this too).

Merged oldest first, later files winning (:func:`ctxtool.formats.claude_code.rules.settings_from`):
the user's ``<config>/settings.json`` (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), the project's
``.claude/settings.json`` and ``.claude/settings.local.json`` under ``project`` (the directory
Claude Code would be started in; ctxtool's working directory by default), then the managed
``/etc/claude-code/managed-settings.json``. A missing, unreadable or malformed file is skipped,
as Claude Code skips it; ``CTXTOOL_CLAUDE_SETTINGS=0`` reads none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ctxtool.formats.claude_code.rules import Settings, settings_from

MANAGED = "/etc/claude-code/managed-settings.json"
MAX_BYTES = 1 << 20  # a settings file is a few KB; nothing larger is read


def settings_files(env: Mapping[str, str], project: str | None = None) -> list[str]:
    """The settings files Claude Code would read, oldest (weakest) first."""
    configured = (env.get("CLAUDE_CONFIG_DIR") or "").strip()
    home = env.get("HOME") or os.path.expanduser("~")
    config = os.path.expanduser(configured) if configured else os.path.join(home, ".claude")
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
    return settings_from(documents)


def _read(path: str) -> Mapping[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_BYTES:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


__all__ = ["MANAGED", "read_settings", "settings_files"]
