"""Where the agents keep their sessions: Claude Code's transcripts
(``<config>/projects/<slug of cwd>/<id>.jsonl``) and OpenCode's database."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ctxtool.storage.paths import claude_config_dir, project_slug


def projects_dir(env: Mapping[str, str]) -> Path:
    return claude_config_dir(env) / "projects"


def opencode_data_dir(env: Mapping[str, str]) -> Path:
    """OpenCode's data folder: ``$XDG_DATA_HOME/opencode``, by default ``~/.local/share/opencode``
    (OpenCode 1.18.33's binary: ``XDG_DATA_HOME || join(homedir, ".local/share")``, then
    ``opencode``). It may not exist."""
    base = (env.get("XDG_DATA_HOME") or "").strip()
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(base or Path(home) / ".local" / "share") / "opencode"


def opencode_database(env: Mapping[str, str]) -> Path:
    """OpenCode's database: ``opencode.db`` in its data folder (it may not exist)."""
    return opencode_data_dir(env) / "opencode.db"


def project_directory(project: str) -> str:
    """The directory ``--project`` names (``.`` = here), as the agents record it."""
    return os.path.abspath(os.path.expanduser(project))


def project_folder(project: str, env: Mapping[str, str]) -> Path:
    """The folder of the sessions started in ``project`` (a directory, ``.`` = here)."""
    return projects_dir(env) / project_slug(project_directory(project))


def claude_session_files(env: Mapping[str, str], project: str | None = None) -> list[Path]:
    """Every Claude Code session transcript (subagent files left out), of one project or all."""
    folders = [project_folder(project, env)] if project else _folders(projects_dir(env))
    files = []
    for folder in folders:
        try:
            with os.scandir(folder) as found:
                files += [Path(e.path) for e in found if e.name.endswith(".jsonl")
                          and not e.name.startswith("agent-") and e.is_file()]
        except (FileNotFoundError, NotADirectoryError):
            continue
    return files


def _folders(root: Path) -> list[Path]:
    try:
        with os.scandir(root) as found:
            return [Path(e.path) for e in found if e.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
