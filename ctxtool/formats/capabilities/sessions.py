"""Sessions on disk: where the agent keeps its sessions and records (``sessions``, the session
selectors, ``cleanup``, persist's store beside a session), what to reset before a file is
rewritten in place, and what ``vacuum`` may take out of a session."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from ctxtool.formats.capabilities.reading import ReadingAdapter

if TYPE_CHECKING:
    from pathlib import Path  # for types only: see ctxtool/storage/opencode_db_file.py

    from ctxtool.formats.vacuum import DatabaseVacuum, LineEdit


class SessionFile(NamedTuple):
    """One session an agent keeps in a file of its own (see :meth:`FormatAdapter.session_files`)."""

    id: str  # the session id, as the file name gives it
    path: Path
    where: str  # what tells it apart among candidates (Claude Code: its project folder)


class SessionMarks(NamedTuple):
    """Bytes that find an agent's lines in a transcript without parsing it, so a session is
    listed from its ends (``ctxtool sessions``, ``statusline``). Inside a JSON string a quote is
    escaped, so a needle holding quotes meets only the structure; every line a needle hits is
    parsed and checked, so a needle may hit more lines than it means, never fewer."""

    compaction: bytes  # in every line recording a compaction, however it is spaced
    compaction_compact: bytes  # the same, written as compact JSON (longer, found faster)
    usage: bytes  # in every line carrying a usage anchor
    model: bytes | None = None  # in every message naming its model (None: none does)
    title: bytes | None = None  # in every title record (None: the agent writes none)
    view_start: bytes | None = None  # in every line the agent rebuilds its view from (None: none)


class SessionsAdapter(ReadingAdapter):
    """Sessions on disk, in-place rewrites and vacuum."""

    #: True when the agent keeps the tool results it moves out of a session in its own project
    #: folder (Claude Code: ``~/.claude/projects/<project>/<session>/tool-results``): persist
    #: saves there by default, found from :meth:`session_and_cwd` of the first lines.
    results_beside_session: ClassVar[bool] = False
    #: True when :meth:`session_and_cwd` finds a working folder on the first lines (Claude
    #: Code's ``cwd``); False: the session id alone places the store (:meth:`results_folder`).
    names_cwd: ClassVar[bool] = True
    # How a session kept in a file of its own is listed (``ctxtool sessions``) and named (the
    # session selectors); None: the agent keeps none so (OpenCode reads its database apart).
    session_marks: ClassVar[SessionMarks | None] = None

    def results_folder(self, file: str, session_id: str | None) -> Path | None:
        """Where the agent keeps the tool outputs it moves out of the session in ``file``
        (``session_id``: from :meth:`session_and_cwd`), when ctxtool's go there too by default
        (Gemini: the session's ``tool-outputs/session-<id>``); None (the default): ctxtool's
        store rules."""
        return None

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """(session id, working folder) recorded on a line, each None when absent. Persist
        looks at the first lines for them when :attr:`results_beside_session`."""
        return None, None

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        """The folders where the agent keeps its sessions (``cleanup`` and ``sessions`` look
        there); empty when it keeps none on disk."""
        return []

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        """The folder the agent keeps its sessions and records in, found as the agent itself
        finds it (the variables it reads, its default): ``cleanup`` cleans there. None: the
        agent keeps none (an API's message list)."""
        return None

    def session_files(self, env: Mapping[str, str], project: str | None = None, *,
                      archived: bool = False) -> list[SessionFile]:
        """The agent's session files (of the sessions started in directory ``project`` when
        given; ``archived``: those the user archived too), in no particular order."""
        return []

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        """The text of a prompt the user typed, when ``entry`` is one (not a tool result, nor
        text the agent put in a user message itself), as the agent's own session picker shows
        it; else None."""
        return None

    def session_title(self, entries: Iterable[Mapping[str, Any]]) -> str | None:
        """The session's title among ``entries`` (the lines :attr:`session_marks` ``.title``
        finds, or the first lines), or None."""
        return None

    def rewriting(self, path: Path) -> None:
        """Called just before ctxtool replaces a file in place (any command's ``--in-place``),
        for every agent: reset what this agent keeps elsewhere about where the lines of its
        session ``path`` lie (their byte offsets move). Raise
        :class:`ctxtool.errors.StoreError` to leave the file as it was. Default: nothing."""

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterable[LineEdit]:
        """The lines of a session file ``vacuum`` may take out or replace: those the agent
        holds twice or provably never reads again (rules: :mod:`ctxtool.formats.vacuum`).
        Default: none."""
        return ()

    def vacuum_database(self) -> DatabaseVacuum | None:
        """The agent's database-level vacuum (:class:`ctxtool.formats.vacuum.DatabaseVacuum`),
        or None when it keeps no sessions in a database."""
        return None
