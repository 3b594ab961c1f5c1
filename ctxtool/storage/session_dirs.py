"""Where Claude Code's session transcripts are: ``<config>/projects/<slug of cwd>/<id>.jsonl``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ctxtool.storage.paths import claude_config_dir, project_slug


def projects_dir(env: Mapping[str, str]) -> Path:
    return claude_config_dir(env) / "projects"


def project_folder(project: str, env: Mapping[str, str]) -> Path:
    """The folder of the sessions started in ``project`` (a directory, ``.`` = here)."""
    return projects_dir(env) / project_slug(os.path.abspath(os.path.expanduser(project)))


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
