"""Validating: a format's own rules for ``validate``, besides its JSON Schema (:attr:`schema`)
and the generic tool pairing and uuid chain checks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ctxtool.formats.capabilities.reading import ReadingAdapter

Finding = tuple[int, str, str, str]  # (line, severity "error"/"warning", code, message)


class TranscriptChecks(Protocol):
    """A format's own validation rules (see :meth:`FormatAdapter.own_checks`)."""

    def add(self, entry: dict[str, Any], line: int) -> None:
        """Look at one valid entry (``line``: its 1-based line)."""
        ...

    def finish(self) -> Iterable[Finding]:
        """The problems found, once every entry was added."""
        ...


class ValidatingAdapter(ReadingAdapter):
    """The format's own checks."""

    def own_checks(self) -> TranscriptChecks | None:
        """Fresh checks for one transcript when the agent's lines follow rules of their own
        (OpenCode: a call and its result share one part), used instead of the generic tool
        pairing and uuid chain checks; None: the generic checks."""
        return None
