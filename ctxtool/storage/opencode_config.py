"""The model limits an OpenCode config gives (``provider.<id>.models.<id>.limit``).

OpenCode merges its config files, later ones winning: the global one
(``$XDG_CONFIG_HOME/opencode/`` ``config.json``, ``opencode.json``, ``opencode.jsonc``), the file
``$OPENCODE_CONFIG`` names, the project's ``opencode.json``/``opencode.jsonc`` (from the session's
folder up to its git root), then the JSON in ``$OPENCODE_CONFIG_CONTENT``. ctxtool reads the same
places for two things only: the ``context``, ``input`` and ``output`` limits of the session's
model, which OpenCode's overflow rule uses, the ``compaction.auto``/``compaction.prune``
switches and ``compaction.reserved`` (the tokens its overflow rule keeps free below the model's
input limit). Models that come from models.dev (no config entry)
are not known offline; their limits stay unknown. A config file that cannot be read or parsed is
skipped: it changes only the verdict's numbers, which then fall back to the defaults.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

NAMES = ("config.json", "opencode.json", "opencode.jsonc")
PROJECT_NAMES = ("opencode.json", "opencode.jsonc")
LIMITS = ("context", "input", "output")


def strip_jsonc(text: str) -> str:
    """JSON with comments (``//``, ``/* */``) and trailing commas made plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
        elif ch in "}]":
            while out and out[-1].isspace():
                out.pop()
            if out and out[-1] == ",":
                out.pop()
            out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _load(text: str) -> Any:
    try:
        return json.loads(strip_jsonc(text))
    except ValueError:
        return None


def _file(path: Path) -> Any:
    try:
        return _load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def _project_files(directory: str | None) -> list[Path]:
    """Project configs from the git root down to ``directory`` (the nearest one wins)."""
    if not directory:
        return []
    found: list[Path] = []
    for folder in [Path(directory), *Path(directory).parents]:
        found[:0] = [folder / name for name in PROJECT_NAMES if (folder / name).is_file()]
        if (folder / ".git").exists():
            break
    return found


def _configs(env: Mapping[str, str], directory: str | None) -> Iterator[Any]:
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or "~", ".config")
    home = Path(os.path.expanduser(base)) / "opencode"
    for name in NAMES:
        yield _file(home / name)
    if env.get("OPENCODE_CONFIG"):
        yield _file(Path(env["OPENCODE_CONFIG"]))
    for path in _project_files(directory):
        yield _file(path)
    if env.get("OPENCODE_CONFIG_CONTENT"):
        yield _load(env["OPENCODE_CONFIG_CONTENT"])


def model_limits(provider: str | None, model: str | None, *, env: Mapping[str, str],
                 directory: str | None = None) -> dict[str, int]:
    """``{"context": ..., "input": ..., "output": ...}`` (those given) for a provider's model."""
    limits: dict[str, int] = {}
    if not provider or not model:
        return limits
    for config in _configs(env, directory):
        entry = _dig(config, "provider", provider, "models", model, "limit")
        if isinstance(entry, dict):
            limits.update((k, v) for k, v in entry.items()
                          if k in LIMITS and isinstance(v, int) and not isinstance(v, bool) and v > 0)
    return limits


def compaction_setting(key: str, *, env: Mapping[str, str],
                       directory: str | None = None) -> bool | None:
    """The merged config's ``compaction.<key>`` ("auto", "prune") when a boolean, else None."""
    value = _compaction_value(key, env, directory, lambda v: isinstance(v, bool))
    return value if isinstance(value, bool) else None


def compaction_reserved(*, env: Mapping[str, str], directory: str | None = None) -> int | None:
    """The merged config's ``compaction.reserved`` when a whole number of tokens (0 included:
    OpenCode takes it with ``??``), else None (OpenCode then reserves min(20,000, max
    output))."""
    value = _compaction_value("reserved", env, directory, lambda v: isinstance(v, int)
                              and not isinstance(v, bool) and v >= 0)
    return value if isinstance(value, int) else None


def _compaction_value(key: str, env: Mapping[str, str], directory: str | None,
                      valid: Callable[[Any], bool]) -> Any:
    """The last config's valid ``compaction.<key>`` (later configs win), else None."""
    found: Any = None
    for config in _configs(env, directory):
        value = _dig(config, "compaction", key)
        if valid(value):
            found = value
    return found


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


__all__ = ["compaction_reserved", "compaction_setting", "model_limits", "strip_jsonc"]
