"""Error classes, each carrying its exit code.

The core raises these; the CLI maps them to a one-line message and an exit status in one place
(``ctxtool.cli.CtxtoolGroup``), so no command handles errors on its own.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit statuses of every ctxtool command (documented in the README)."""

    OK = 0
    FAILED = 1  # the operation ran but did not fully succeed (e.g. cleanup could not delete a file)
    USAGE = 2  # bad options or arguments (click's own code for usage errors)
    INVALID_INPUT = 3  # input that is not a valid transcript, or validate found problems
    STORAGE = 4  # a file could not be read or written (input, output, store, archive)
    LLM = 5  # the LLM backend failed (auth, circuit breaker, bad reply)
    HANGUP = 129  # SIGHUP (128 + its number, as a shell reports a command the signal ended)
    INTERRUPTED = 130  # SIGINT
    TERMINATED = 143  # SIGTERM (128 + 15)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the command is (cli/__init__.py): it ends the command as
    Ctrl-C does (temp files removed, one line), with exit status 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class CtxtoolError(Exception):
    """Base class: a message, an optional location (``file:line``) and a fix-it hint."""

    exit_code: ExitCode = ExitCode.FAILED

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        lineno: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.lineno = lineno
        self.hint = hint

    @property
    def location(self) -> str | None:
        if self.source is None:
            return None
        return self.source if self.lineno is None else f"{self.source}:{self.lineno}"

    def format(self) -> str:
        """One line: ``FILE:LINE: message — hint`` (without the ``ctxtool: error:`` prefix)."""
        text = self.message if self.location is None else f"{self.location}: {self.message}"
        return text if not self.hint else f"{text} — {self.hint}"

    def __str__(self) -> str:
        return self.format()


class InputError(CtxtoolError):
    """The input is not what the command can work on (bad JSON, wrong format, broken invariants)."""

    exit_code = ExitCode.INVALID_INPUT


class UnsupportedFormatError(InputError):
    """A transcript of a format the running command does not handle yet (a Gemini CLI session
    given to ``summarize``: :mod:`ctxtool.formats.unsupported`): refused, never guessed."""


class StoreError(CtxtoolError):
    """A file could not be read or written: inputs, outputs, the tool-result store, archives."""

    exit_code = ExitCode.STORAGE


class LLMError(CtxtoolError):
    """The LLM backend failed: authentication, repeated API errors, a reply we cannot use."""

    exit_code = ExitCode.LLM


class OperationError(CtxtoolError):
    """The command ran but could not do all it was asked (exit 1)."""

    exit_code = ExitCode.FAILED


class UsageError(CtxtoolError):
    """Options that contradict each other or a value the core cannot accept."""

    exit_code = ExitCode.USAGE
