"""Naming a session instead of a file: ids, ``--latest``, ``--project``, and hook JSON on stdin.

Every command that reads a transcript takes, in place of a FILE argument:

* a session id, or any unique start of one (``ctxtool estimate 3f2a``): an argument that is not
  an existing path and holds no ``/`` or ``.`` is looked up among the sessions of
  ``ctxtool sessions`` (of ``--project DIR`` when given); no match or several is a usage error
  (exit 2) that lists the candidates;
* ``--latest``: the most recently written session (of ``--project DIR`` when given);
* on stdin, the JSON Claude Code passes to hooks and statusline commands
  (``{"session_id", "transcript_path", "cwd", ...}``): the transcript it names is read, so any
  command can be a hook (``PreCompact``...).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
import orjson

from ctxtool.cli.streams import binary_stdin
from ctxtool.errors import UsageError
from ctxtool.storage.session_dirs import claude_session_files

F = TypeVar("F", bound=Callable[..., Any])
SHOWN = 8  # candidates named in an error
HOOK_PEEK = 1 << 16


def looks_like_id(argument: str) -> bool:
    return bool(argument) and argument != "-" and not any(c in argument for c in "/\\.") \
        and not os.path.exists(argument)


def _describe(paths: Sequence[Path]) -> str:
    ordered = sorted(paths, key=_mtime, reverse=True)
    named = ", ".join(f"{p.stem} ({_project_of(p)})" for p in ordered[:SHOWN])
    more = len(paths) - SHOWN
    return named + (f" and {more} more" if more > 0 else "")


def _project_of(path: Path) -> str:
    return path.parent.name


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def find_session(prefix: str, env: Mapping[str, str], project: str | None = None) -> Path:
    """The one session whose id is ``prefix`` or starts with it; UsageError otherwise."""
    files = claude_session_files(env, project)
    exact = [p for p in files if p.stem == prefix]
    matches = exact or [p for p in files if p.stem.startswith(prefix)]
    where = f" in {project}" if project else ""
    if not matches:
        raise UsageError(f"no file or session named {prefix!r}{where}",
                         hint="`ctxtool sessions` lists the sessions and their ids")
    if len(matches) > 1:
        raise UsageError(f"session id {prefix!r} is ambiguous{where}: {len(matches)} sessions "
                         f"match: {_describe(matches)}", hint="give more of the id")
    return matches[0]


def latest_session(env: Mapping[str, str], project: str | None = None) -> Path:
    """The most recently written session (of ``project``)."""
    files = claude_session_files(env, project)
    if not files:
        where = f" for {project}" if project else ""
        raise UsageError(f"--latest: no sessions{where}",
                         hint="`ctxtool sessions` lists the sessions there are")
    return max(files, key=lambda p: (_mtime(p), p.name))


def hook_transcript(data: bytes) -> str | None:
    """The ``transcript_path`` of Claude Code's hook/statusline JSON, if ``data`` is that."""
    text = data.strip()
    if not text.startswith(b"{") or b'"transcript_path"' not in text:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or "type" in value or "role" in value:
        return None
    path = value.get("transcript_path")
    return os.path.expanduser(path) if isinstance(path, str) and path else None


def peek_stdin(size: int = HOOK_PEEK) -> bytes:
    """The first bytes waiting on stdin, left there to be read."""
    stream: Any = binary_stdin()
    if hasattr(stream, "peek"):
        return bytes(stream.peek(size)[:size])
    if stream.seekable():  # an in-memory stdin (tests)
        at = stream.tell()
        data = stream.read(size)
        stream.seek(at)
        return bytes(data)
    return b""


def stdin_hook() -> str | None:
    """The transcript named by hook JSON waiting on stdin (consumed), else None (stdin left
    untouched for the command to read)."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    path = hook_transcript(peek_stdin())
    if path is not None:
        binary_stdin().read()
    return path


def resolve_inputs(inputs: Sequence[str], *, latest: bool, project: str | None,
                   env: Mapping[str, str]) -> tuple[str, ...]:
    """The files to read: session ids resolved, ``--latest`` expanded, hook JSON on stdin
    followed; other arguments unchanged."""
    if latest:
        if inputs:
            raise UsageError("--latest names the input: give no FILE arguments with it")
        return (str(latest_session(env, project)),)
    resolved = tuple(str(find_session(a, env, project)) if looks_like_id(a) else a
                     for a in inputs)
    if project and not inputs:
        raise UsageError("--project picks among sessions: give --latest or a session id")
    if not resolved or resolved == ("-",):
        hooked = stdin_hook()
        if hooked is not None:
            return (hooked,)
    return resolved


def selector_options(f: F) -> F:
    """--latest and --project DIR, and session ids or hook JSON in place of the command's input
    argument (``inputs``, a tuple, or ``source``, one optional path)."""

    @functools.wraps(f)
    def wrapper(*args: Any, latest: bool, project: str | None, **kwargs: Any) -> Any:
        key = "inputs" if "inputs" in kwargs else "source"
        value = kwargs[key]
        given = value if isinstance(value, tuple) else (() if value is None else (value,))
        found = resolve_inputs(given, latest=latest, project=project, env=os.environ)
        kwargs[key] = found if isinstance(value, tuple) else (found[0] if found else None)
        return f(*args, **kwargs)

    wrapper = click.option(
        "--project", metavar="DIR",
        help="With --latest or a session id: look among the sessions started in DIR "
             "('.' = here).")(wrapper)
    wrapper = click.option(
        "--latest", is_flag=True,
        help="Read the most recent session (Claude Code's, of --project when given) instead "
             "of FILE. FILE may also be a session id or a unique start of one.")(wrapper)
    return wrapper  # type: ignore[return-value]
