"""Naming a session instead of a file: ids, ``--latest``, ``--project``, and hook JSON on stdin.

Every command that reads a transcript takes, in place of a FILE argument:

* a session id, or any unique start of one (``ctxtool estimate 3f2a``): an argument that is not
  an existing path and holds no ``/`` or ``.`` is looked up among the sessions of
  ``ctxtool sessions`` (Claude Code's, Codex CLI's and Gemini CLI's; of ``--project DIR``
  when given); no match or several (of any agents) is a usage error (exit 2) that lists the
  candidates;
* ``--latest``: the newest session, the first ``ctxtool sessions`` lists (the latest last
  activity recorded in it; of ``--project DIR`` when given);
* OpenCode's sessions (in ``$XDG_DATA_HOME/opencode/opencode.db``) are named the same way by
  the commands that read OpenCode's database (those with ``--session``): the input becomes the
  database and ``--session`` the session named;
* on stdin, the JSON Claude Code passes to hooks and statusline commands
  (``{"session_id", "transcript_path", "cwd", ...}``): the transcript it names is read, so any
  command can be a hook (``PreCompact``...).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import click
import orjson

from ctxtool.errors import InputError, StoreError, UsageError
from ctxtool.formats.adapter import SessionFile
from ctxtool.formats.registry import adapters
from ctxtool.io import messages
from ctxtool.io.streams import binary_stdin

F = TypeVar("F", bound=Callable[..., Any])
SHOWN = 8  # candidates named in an error
HOOK_PEEK = 1 << 16


def looks_like_id(argument: str) -> bool:
    return bool(argument) and argument != "-" and not any(c in argument for c in "/\\.") \
        and not os.path.lexists(argument)  # a dangling link or a loop is a file that fails


@dataclass(frozen=True)
class Candidate:
    """A session a selector can name: its id, where it is read from, its project."""

    id: str
    path: str
    where: str  # the project, to tell candidates apart in an error
    session: str | None = None  # OpenCode: the session's id in the database at ``path``
    updated: float | None = None  # OpenCode: its update time; a file's is its mtime
    fmt: str | None = None  # a file's agent, which reads it (--latest)
    found: SessionFile | None = None

    def when(self) -> float:
        if self.updated is not None:
            return self.updated
        try:
            return os.stat(self.path).st_mtime
        except OSError:
            return 0.0


def _candidates(env: Mapping[str, str], project: str | None, *, opencode: bool,
                children: bool) -> list[Candidate]:
    """The agents' session files (Claude Code's, Codex CLI's), and OpenCode's sessions when
    the command reads its database."""
    found = [Candidate(f.id, str(f.path), f.where, fmt=adapter.name, found=f)
             for adapter in adapters() for f in adapter.session_files(env, project)]
    if not opencode:
        return found
    from ctxtool.io.opencode_sessions import opencode_sessions  # only to resolve a selector

    try:
        db, sessions = opencode_sessions(env, project=project, children=children)
    except (InputError, StoreError) as exc:
        messages.warn(f"{exc.source}: OpenCode's sessions not searched: {exc.message}")
        return found
    return found + [Candidate(s.id, str(db), s.directory, session=s.id, updated=s.updated / 1000)
                    for s in sessions]


def _describe(found: Sequence[Candidate]) -> str:
    ordered = sorted(found, key=Candidate.when, reverse=True)
    named = ", ".join(f"{c.id} ({c.where})" for c in ordered[:SHOWN])
    more = len(found) - SHOWN
    return named + (f" and {more} more" if more > 0 else "")


def find_session(prefix: str, env: Mapping[str, str], project: str | None = None, *,
                 opencode: bool = False) -> Candidate:
    """The one session whose id is ``prefix`` or starts with it (OpenCode's too when
    ``opencode``); UsageError otherwise."""
    found = _candidates(env, project, opencode=opencode, children=True)
    exact = [c for c in found if c.id == prefix]
    matches = exact or [c for c in found if c.id.startswith(prefix)]
    where = f" in {project}" if project else ""
    if not matches:
        raise UsageError(f"no file or session named {prefix!r}{where}",
                         hint="`ctxtool sessions` lists the sessions and their ids")
    if len(matches) > 1:
        raise UsageError(f"session id {prefix!r} is ambiguous{where}: {len(matches)} sessions "
                         f"match: {_describe(matches)}", hint="give more of the id")
    return matches[0]


def latest_session(env: Mapping[str, str], project: str | None = None, *,
                   opencode: bool = False) -> Candidate:
    """The newest session, the one ``ctxtool sessions`` lists first: the latest last activity
    (see :func:`ctxtool.io.session_files.last_active`; of ``project``; OpenCode's too when
    ``opencode``, sub-agent sessions left out)."""
    found = _candidates(env, project, opencode=opencode, children=False)
    if not found:
        where = f" for {project}" if project else ""
        raise UsageError(f"--latest: no sessions{where}",
                         hint="`ctxtool sessions` lists the sessions there are")
    from ctxtool.io.session_files import Latest, newest  # reads the sessions' ends

    return found[newest([Latest(c.id, c.found, c.fmt, c.updated) for c in found], env)]


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


class Resolved(NamedTuple):
    inputs: tuple[str, ...]
    session: str | None = None  # the OpenCode session named, to read from its database


def resolve_inputs(inputs: Sequence[str], *, latest: bool, project: str | None,
                   env: Mapping[str, str], opencode: bool = False) -> Resolved:
    """The files to read: session ids resolved, ``--latest`` expanded, hook JSON on stdin
    followed; other arguments unchanged. With ``opencode`` (the command reads OpenCode's
    database) OpenCode's sessions are named too: the input is then the database and
    ``session`` the one to read from it."""
    if latest:
        if inputs:
            raise UsageError("--latest names the input: give no FILE arguments with it")
        chosen = latest_session(env, project, opencode=opencode)
        return Resolved((chosen.path,), chosen.session)
    found = [find_session(a, env, project, opencode=opencode) if looks_like_id(a) else a
             for a in inputs]
    sessions = {c.session for c in found if isinstance(c, Candidate) and c.session}
    if len(sessions) > 1:
        raise UsageError(f"{len(sessions)} OpenCode sessions named "
                         f"({', '.join(sorted(sessions))}): a command reads one session of "
                         "OpenCode's database at a time")
    resolved = tuple(c.path if isinstance(c, Candidate) else c for c in found)
    if project and not inputs:
        raise UsageError("--project picks among sessions: give --latest or a session id")
    if not resolved or resolved == ("-",):
        hooked = stdin_hook()
        if hooked is not None:
            return Resolved((hooked,))
    return Resolved(resolved, next(iter(sessions), None))


def selector_options(f: F) -> F:
    """--latest and --project DIR, and session ids or hook JSON in place of the command's input
    argument (``inputs``, a tuple, or ``source``, one optional path)."""

    @functools.wraps(f)
    def wrapper(*args: Any, latest: bool, project: str | None, **kwargs: Any) -> Any:
        key = "inputs" if "inputs" in kwargs else "source"
        value = kwargs[key]
        given = value if isinstance(value, tuple) else (() if value is None else (value,))
        opencode = "session_id" in kwargs  # the command reads a session of OpenCode's database
        found, session = resolve_inputs(given, latest=latest, project=project, env=os.environ,
                                        opencode=opencode)
        kwargs[key] = found if isinstance(value, tuple) else (found[0] if found else None)
        if session is not None:
            if kwargs["session_id"] not in (None, session):
                raise UsageError(f"--session {kwargs['session_id']} and the session named "
                                 f"({session}) differ: give one of them")
            kwargs["session_id"] = session
        return f(*args, **kwargs)

    wrapper = click.option(
        "--project", metavar="DIR",
        help="With --latest or a session id: look among the sessions started in DIR "
             "('.' = here).")(wrapper)
    wrapper = click.option(
        "--latest", is_flag=True,
        help="Read the newest session, the first `ctxtool sessions` lists (latest activity "
             "recorded in it; Claude Code's, Codex CLI's or Gemini CLI's, or OpenCode's where "
             "the command reads its database; of --project when given) instead of FILE. FILE "
             "may also be a session id or a unique start of one.")(wrapper)
    return wrapper  # type: ignore[return-value]
