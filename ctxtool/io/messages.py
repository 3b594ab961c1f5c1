"""Every human-readable line goes through here, to stderr. stdout carries data only."""

from __future__ import annotations

import sys

from ctxtool.io.terminal import visible

_state = {"quiet": False, "bar_active": False}


def set_quiet(quiet: bool) -> None:
    _state["quiet"] = quiet


def set_bar_active(active: bool) -> None:
    _state["bar_active"] = active


def _emit(line: str) -> None:
    if sys.stderr is None:  # started with stderr closed (`2>&-`): nowhere to say it
        return
    line = visible(line, lines=True)  # a path or text from a transcript may hold escapes
    if _state["bar_active"]:
        # only imported when a bar is on screen; tqdm ships no type hints
        from tqdm import tqdm  # type: ignore[import-untyped]

        tqdm.write(line, file=sys.stderr)
    else:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def info(message: str) -> None:
    """A note for the user (what ran, what changed); silenced by --quiet."""
    if not _state["quiet"]:
        _emit(f"ctxtool: {message}")


def warn(message: str) -> None:
    """Something the user should know about; silenced by --quiet."""
    if not _state["quiet"]:
        _emit(f"ctxtool: warning: {message}")


def error(message: str) -> None:
    """Always shown: the one line explaining why the command failed."""
    _emit(f"ctxtool: error: {message}")


def summary(command: str, text: str) -> None:
    """The one line every transforming command ends with: ``ctxtool: COMMAND: what it did``."""
    info(f"{command}: {text}")


def count(number: int, word: str, plural: str | None = None) -> str:
    """``1 entry``, ``69,159 entries``: a number with separators and its noun agreeing."""
    return f"{number:,} {word if number == 1 else plural or word + 's'}"


def token_change(before: int, after: int) -> str:
    """``28,196 -> 2,310 tokens (-92%)``: the figure a summary line leads with."""
    change = f" ({(after - before) / before:+.0%})" if before else ""
    return f"{before:,} -> {after:,} tokens{change}"
