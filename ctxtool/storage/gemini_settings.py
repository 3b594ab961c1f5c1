"""Gemini CLI's settings as Gemini CLI 0.61.0 reads them, for where it compresses a session and
how long it keeps sessions (:mod:`ctxtool.storage.gemini_retention`).

Gemini CLI deep-merges, later files winning (gemini-3HFX2LNT.js's ``loadSettings``,
chunk-2YTYPKEZ.js:16209 ``mergeSettings``): its schema's defaults, the system defaults
(``$GEMINI_CLI_SYSTEM_DEFAULTS_PATH``, else ``system-defaults.json`` beside the system file), the
user's ``~/.gemini/settings.json`` (home: ``$GEMINI_CLI_HOME``, else ``$HOME``), the project's
``<project>/.gemini/settings.json`` - only when the folder is trusted, and never when the project
is the home folder - and last the system settings (``$GEMINI_CLI_SYSTEM_SETTINGS_PATH``, else
``/etc/gemini-cli/settings.json``). The files are JSON with comments.

A folder is trusted (chunk-5FZXKDXH.js:363250 ``checkPathTrust``) when
``GEMINI_CLI_TRUST_WORKSPACE=true``; not when it is ``false`` or ``GEMINI_RESTRICTED_MODE=true``;
always when ``security.folderTrust.enabled`` is false in the other files; else by the longest
rule of ``~/.gemini/trustedFolders.json`` (``$GEMINI_CLI_TRUSTED_FOLDERS_PATH`` when set) that
holds it (``TRUST_FOLDER``, ``TRUST_PARENT`` on a folder inside it, ``DO_NOT_TRUST``); else not.

A session does not record its folder, only ``projectHash``, the SHA-256 of its path: the folder
is the one of ``~/.gemini/projects.json`` (or the current directory) that hashes to it.
A file that cannot be read or parsed is skipped, as a missing one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ctxtool.storage.opencode_config import strip_jsonc

TRUST = ("TRUST_FOLDER", "TRUST_PARENT")


def gemini_dir(env: Mapping[str, str]) -> Path:
    """``~/.gemini``, the home being ``$GEMINI_CLI_HOME`` when set (Gemini's ``homedir()``)."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".gemini"


def _load(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(strip_jsonc(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _merged(layers: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Objects merged key by key, anything else replaced (Gemini's ``customDeepMerge`` for the
    settings read here)."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(out.get(key), dict):
                out[key] = _merged([out[key], value])
            else:
                out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


def system_paths(env: Mapping[str, str]) -> tuple[Path, Path]:
    """(system settings, system defaults) on Linux, as Gemini CLI names them."""
    system = Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json")
    defaults = env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
    return system, Path(defaults) if defaults else system.parent / "system-defaults.json"


def project_folder(project_hash: str | None, env: Mapping[str, str],
                   cwd: str | None = None) -> str | None:
    """The folder whose path hashes to ``project_hash``: the current directory or one that
    ``~/.gemini/projects.json`` lists; None when none does."""
    if not project_hash:
        return None
    known = _load(gemini_dir(env) / "projects.json").get("projects")
    candidates = [cwd or os.getcwd(), *(known if isinstance(known, dict) else ())]
    for folder in candidates:
        if isinstance(folder, str) and hashlib.sha256(folder.encode()).hexdigest() == project_hash:
            return folder
    return None


def _within(folder: str, root: str) -> bool:
    folder, root = os.path.realpath(folder), os.path.realpath(root)
    return folder == root or folder.startswith(root.rstrip(os.sep) + os.sep)


def is_trusted(folder: str, settings: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether Gemini CLI reads ``folder``'s own settings (see the module docstring)."""
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return False
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    trust = settings.get("security", {}).get("folderTrust", {}) \
        if isinstance(settings.get("security"), dict) else {}
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return True
    rules = _load(Path(env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                       or gemini_dir(env) / "trustedFolders.json"))
    best, level = -1, None
    for rule, value in rules.items():
        root = os.path.dirname(rule) if value == "TRUST_PARENT" else rule
        if _within(folder, root) and len(rule) > best:
            best, level = len(rule), value
    return level in TRUST


def settings_files(env: Mapping[str, str],
                   project: str | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """The settings files Gemini CLI reads for a session of folder ``project`` (None: the
    user's and the system's only), each with its settings, in merge order (the last wins)."""
    system_file, defaults_file = system_paths(env)
    user_file = gemini_dir(env) / "settings.json"
    system, defaults, user = _load(system_file), _load(defaults_file), _load(user_file)
    layers = [(defaults_file, defaults), (user_file, user)]
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME")
    if project and not (home and os.path.realpath(project) == os.path.realpath(home)):
        if is_trusted(project, _merged([defaults, user, system]), env):
            workspace_file = Path(project) / ".gemini" / "settings.json"
            layers.append((workspace_file, _load(workspace_file)))
    layers.append((system_file, system))
    return [(path, settings) for path, settings in layers if settings]


def compression_threshold(settings: Mapping[str, Any]) -> float | None:
    """``model.compressionThreshold`` when it is set to a number Gemini uses (a 0 or a
    non-number is not: Gemini then takes its default)."""
    model = settings.get("model")
    value = model.get("compressionThreshold") if isinstance(model, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
        return None
    return float(value)


def compression_setting(env: Mapping[str, str],
                        project: str | None = None) -> tuple[float, Path] | None:
    """``model.compressionThreshold`` as Gemini CLI reads it for ``project``, with the file
    that set it; None when no file does (Gemini's default then applies)."""
    found = None
    for path, settings in settings_files(env, project):
        model = settings.get("model")
        if isinstance(model, dict) and "compressionThreshold" in model:
            value = compression_threshold(settings)
            found = None if value is None else (value, path)
    return found


__all__ = ["compression_setting", "compression_threshold", "gemini_dir", "is_trusted",
           "project_folder", "settings_files", "system_paths"]
