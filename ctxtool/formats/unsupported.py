"""Commands that do not handle a format yet refuse it, rather than guess: a transform written
for other agents' lines would leave a Gemini CLI session unchanged while reporting nothing to
do, or write lines Gemini cannot read back.

An adapter may name the commands that handle its sessions (``handled_by``; None, the default:
all of them). The CLI tells which command runs (:func:`running`, from the command group); the
detector (:mod:`ctxtool.formats.detect`) then calls :func:`refuse` with the format it found.
The Python API names no command and is never refused.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ctxtool.errors import UnsupportedFormatError

if TYPE_CHECKING:
    from ctxtool.formats.capabilities.reading import ReadingAdapter

_COMMAND: ContextVar[str | None] = ContextVar("ctxtool_command", default=None)


def running(command: str | None) -> None:
    """Note the command that runs (the CLI group calls it before the command)."""
    _COMMAND.set(command)


def refusal(adapter: ReadingAdapter) -> str | None:
    """Why the running command does not read ``adapter``'s sessions, or None when it does."""
    command = _COMMAND.get()
    handled = adapter.handled_by
    if command is None or handled is None or command in handled:
        return None
    return f"{command} does not handle {adapter.title} sessions yet"


def refuse(adapter: ReadingAdapter, entry: Any) -> None:
    """Raise :class:`UnsupportedFormatError` (exit 3) at ``entry``'s line when the running
    command does not read ``adapter``'s sessions."""
    why = refusal(adapter)
    if why is not None:
        handled = ", ".join(sorted(adapter.handled_by or ()))
        raise UnsupportedFormatError(why, source=getattr(entry, "source", None),
                                     lineno=getattr(entry, "lineno", None),
                                     hint=f"{adapter.title} sessions are read by {handled}")


__all__ = ["refusal", "refuse", "running"]
