"""What ``ctxtool vacuum`` may take out of an agent's sessions: the adapters' side of it.

``vacuum`` reclaims bytes a session holds twice, or holds but the agent provably never reads
again. *What* can go is a fact about one agent (how its loader reads its own files), so each
adapter answers it (DESIGN §2); the transform (:mod:`ctxtool.core.vacuuming`) only applies the
answer, keeps everything it takes out in ctxtool's store first, and writes the recipe
``restore`` rebuilds the original from, byte for byte.

Two hooks, both on :class:`ctxtool.formats.adapter.FormatAdapter`:

* :meth:`~ctxtool.formats.adapter.FormatAdapter.vacuum_lines` - for an agent that keeps a
  session in a file of lines (Claude Code, Codex). It is given the file's lines (an iterable
  it reads once, in order; files of many GB pass through it, so hold what you need of them,
  not the lines) and returns one :class:`LineEdit` per line that changes. The default returns
  none: nothing to vacuum.
* :meth:`~ctxtool.formats.adapter.FormatAdapter.vacuum_database` - for an agent that keeps its
  sessions in a database (OpenCode): a :class:`DatabaseVacuum` the sweep calls, or None.

Rules for :class:`LineEdit` (the transform checks them and refuses an edit that breaks one):

* ``index`` counts the file's lines from 0 (each line with its ``\\n``; the last may lack it).
  Edits come in ``index`` order, at most one per line.
* A line without its final newline is never edited (the agent may be writing it).
* ``copy_of``: the line is byte for byte the same as the line ``copy_of`` (earlier, left
  unchanged): it goes, and nothing is stored, since the file still holds those bytes.
* Otherwise the line's bytes go to the store first, under their SHA-256 (so the same bytes in
  any number of lines or runs are stored once), and the line is replaced by ``new`` (bytes,
  ending in ``\\n``), or left out when ``new`` is None. ``payloads`` names byte ranges of the
  original line (``(start, end)``, increasing, not overlapping) stored each under its own hash:
  a base64 image that 300 records repeat is then stored once, not once per record; the bytes
  between them are kept in the recipe itself. ``inline``: the whole line is kept in the recipe
  as text instead (a short line: a file of its own in the store would take more room than the
  line it saves), when it is UTF-8.
* ``reason`` is a few words for the plan and ``--json`` ("repeated entry"), the same for every
  edit of one kind: the plan counts edits by reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol


class LineEdit(NamedTuple):
    """One line of a session file that ``vacuum`` takes out or replaces (see the module
    docstring for the rules)."""

    index: int
    reason: str
    copy_of: int | None = None
    new: bytes | None = None
    payloads: tuple[tuple[int, int], ...] = ()
    inline: bool = False


class BlobKeeper(Protocol):
    """Where a :class:`DatabaseVacuum` keeps what it removes (ctxtool's store): bytes under
    their SHA-256, stored once however often they are given."""

    def keep(self, data: bytes) -> str:
        """Store ``data`` (on disk, synced, when this returns); its SHA-256 in hex."""
        ...

    def load(self, digest: str) -> bytes | None:
        """The bytes stored under ``digest``, or None."""
        ...

    def save_recipe(self, recipe: dict[str, Any]) -> str:
        """Keep ``recipe`` (a JSON object naming what was kept; ``recipe["vacuumed"]["sha256"]``
        names it) beside the bytes; its path."""
        ...

    def recipes(self) -> list[dict[str, Any]]:
        """Every recipe kept here."""
        ...


class SessionSize(NamedTuple):
    """One session of a database, before and after a vacuum (or its plan)."""

    session: str  # the agent's session id
    title: str  # what the agent shows for it (or the id)
    bytes_now: int
    bytes_after: int
    removed: Mapping[str, int]  # reason -> how many rows/records go


class DatabaseVacuum(Protocol):
    """An agent's database-level vacuum (OpenCode: ``opencode.db``).

    ``plan`` only reads. ``apply`` keeps what it removes with ``keeper`` before removing it,
    leaves the database as it was when it fails or is killed at any point (one transaction,
    then the file-level compaction), refuses (raises :class:`ctxtool.errors.StoreError`) while
    the agent holds the database, and returns the same figures as the plan, as done.
    ``restore`` puts back what ``apply`` removed, row for row."""

    def databases(self, env: Mapping[str, str]) -> list[Path]:
        """The agent's databases on this machine (the sweep's ``--all``)."""
        ...

    def plan(self, path: Path) -> list[SessionSize]:
        ...

    def apply(self, path: Path, keeper: BlobKeeper) -> list[SessionSize]:
        ...

    def restore(self, path: Path, keeper: BlobKeeper) -> int:
        """Put back what :meth:`apply` removed; the number of rows put back."""
        ...


__all__ = ["BlobKeeper", "DatabaseVacuum", "LineEdit", "SessionSize"]
