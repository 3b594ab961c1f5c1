"""Shell command lines as the offline summary reads them: the commands a line runs, not the text
it carries (a commit message, a heredoc)."""

from __future__ import annotations

import re

_SEPARATOR = re.compile(r"&&|\|\||;|\|")
_REDIRECTION = re.compile(r"\s\d?>&?\d?\S*")


def commands_in(command: str) -> list[str]:
    """The commands of a shell command line, in order: its first line (the lines after it are a
    heredoc's or a quoted message's) split at ``&&``, ``||``, ``;`` and ``|``."""
    return [part.strip() for part in _SEPARATOR.split(command.split("\n", 1)[0])]


def without_redirections(command: str) -> str:
    """``pytest -q 2>&1`` gives ``pytest -q``."""
    return _REDIRECTION.sub("", command)


def command_word(command: str) -> str:
    """The program a shell command runs: ``cd app && FOO=1 pytest -q`` gives ``pytest``."""
    for part in _SEPARATOR.split(command):
        words = [w for w in part.split() if "=" not in w and w != "sudo"]
        if words and words[0] != "cd" and not words[0].startswith("#"):  # a comment line
            return words[0][:30]
    return ""
