"""The second pass shared by ``snip`` and ``microcompact``: replace chosen tool results.

Only ``tool_result`` content changes (and, when asked, the ``input`` of the matching
``tool_use``); every other block, the entry order, ids and the uuid chain stay as they are, and an
entry with nothing to clear is passed through as the same object (written back byte-identical).

Before a content leaves the transcript it is saved to the injected store, and the placeholder
names the saved file in a form ``restore`` recognizes. When a changed line's bytes were not
orjson's compact form, the original bytes are kept too (``save_line``), so ``restore`` gives the
input back byte for byte. Without a store (``--no-save``) the content is dropped: explicit loss.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxtool.core.clearing.restore import LineKeeper
from ctxtool.core.clearing.twopass import (ToolRecord, cleared_input, is_clearable, is_cleared_input,
                                  line_key, result_tokens)
from ctxtool.formats.jsonl import dumps_changed, dumps_entry, dumps_json
from ctxtool.formats.registry import adapter_for
from ctxtool.types import Entry, ResultStore

# Replacement texts exactly as Claude Code (and seed 001) write them.
CLEARED = "[Old tool result content cleared]"
SNIPPED = "[Content snipped - re-read if needed]"

Placeholder = Callable[[str | None], str]  # saved path (None when not saved) -> text


def microcompact_placeholder(path: str | None) -> str:
    """Claude Code's microcompact replacement: the saved file, or the bare notice."""
    if path is None:
        return CLEARED
    return f"<persisted-output>Tool result saved to: {path}\n\nUse Read to view</persisted-output>"


def snip_placeholder(path: str | None) -> str:
    return SNIPPED if path is None else f"{SNIPPED}\nTool result saved to: {path}"


@dataclass
class ToolStats:
    cleared: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    inputs_cleared: int = 0


@dataclass
class ClearReport:
    """What a clearing run did; filled while the second pass streams."""

    entries: int = 0  # set from the first pass (the second may see blocks, not entries)
    entries_changed: int = 0
    results_cleared: int = 0
    inputs_cleared: int = 0
    tokens_before: int = 0  # of the cleared results
    tokens_after: int = 0  # of their placeholders
    files_saved: int = 0
    lines_kept: int = 0  # original line bytes kept for an exact restore
    per_tool: dict[str, ToolStats] = field(default_factory=dict)
    cleared_ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries, "entries_changed": self.entries_changed,
            "results_cleared": self.results_cleared, "inputs_cleared": self.inputs_cleared,
            "cleared_tokens_before": self.tokens_before, "cleared_tokens_after": self.tokens_after,
            "files_saved": self.files_saved, "original_lines_kept": self.lines_kept,
            "per_tool": {name: vars(stats) for name, stats in sorted(self.per_tool.items())},
        }


@dataclass
class Clearing:
    """Which results (and tool inputs) to clear, and how."""

    results: Mapping[str, ToolRecord]  # tool_use_id -> record of a result to clear
    placeholder: Placeholder
    store: ResultStore | None = None  # None: --no-save, the content is dropped
    inputs: frozenset[str] = frozenset()  # tool_use ids whose input is blanked too
    report: ClearReport = field(default_factory=ClearReport)
    # the session a line belongs to (names the store folder): set by iter_cleared from the
    # format's adapter
    session_of: Callable[[dict[str, Any]], str | None] = lambda entry: None
    # the agent's own text for a result saved at a path (adapter.cleared_text), or None
    own_text: Callable[[Any, str], str | None] = lambda content, path: None

    def __post_init__(self) -> None:
        # worked out once, not for each result replaced: a store-heavy run replaces thousands,
        # and a runtime-checked Protocol's isinstance costs tens of microseconds
        self.placeholder_tokens = placeholder_cost(self.placeholder, self.store)
        self.line_keeper = self.store if isinstance(self.store, LineKeeper) else None
        # (content, placeholder) of each result replaced in the entry being cleared, (input,
        # None) of each input: emptied for each entry by iter_cleared
        self.changes: list[tuple[Any, str | None]] = []

    # --- the Clearer the format adapters call (ctxtool.formats.adapter.Clearer) ---

    def result(self, tool_id: Any, content: Any, entry: dict[str, Any]) -> str | None:
        """The placeholder for the result of ``tool_id`` when it was chosen, can be cleared
        and would shrink (its content saved first), else None."""
        record = self.results.get(tool_id) if isinstance(tool_id, str) else None
        if record is None or not is_clearable(content) or not _seen_here(record, entry):
            return None
        text = _replace_result(record, content, entry, self)
        if text is not None:
            self.changes.append((content, text))
        return text

    def wants_result(self, tool_id: Any) -> bool:
        return isinstance(tool_id, str) and tool_id in self.results

    def wants_input(self, tool_id: Any) -> bool:
        return tool_id in self.inputs

    def tool_input(self, tool_id: str, name: str, value: Any, saved: str,
                   entry: dict[str, Any]) -> dict[str, Any] | None:
        """The cleared input of ``tool_id`` (``saved``, its text, goes to the store first),
        or None when it was not chosen or there is nothing to clear."""
        if tool_id not in self.inputs or not isinstance(value, Mapping) or not value \
                or is_cleared_input(value):
            return None
        self.changes.append((value, None))
        return _replace_input(tool_id, name, saved, entry, self)

    def text(self, content: Any, path: str | None) -> str:
        """What a result saved at ``path`` (None: not saved) becomes: the agent's own text for
        it, else the placeholder."""
        own = self.own_text(content, path) if path is not None else None
        return own if own is not None else self.placeholder(path)


def _seen_here(record: ToolRecord, entry: dict[str, Any]) -> bool:
    """False for a line the first pass did not see the result in: a copy the agent no longer
    reads (Gemini: a record written again later, or before the last checkpoint) stays as it is,
    read once or twice. Entries built in memory (no line number) are never told apart."""
    key = line_key(entry)
    return key is None or not record.result_lines or key in record.result_lines


def iter_cleared(entries: Iterable[dict[str, Any]], *, fmt: str,
                 clearing: Clearing) -> Iterator[dict[str, Any]]:
    """Second pass: each entry with its chosen tool results (and inputs) replaced. Streaming.

    With a store that keeps lines, a changed entry comes as an :class:`Entry` whose ``raw``
    holds the bytes a writer gives it (dumped once: they also told whether the original line
    was orjson's compact form, see :func:`_keep_original_line`)."""
    report = clearing.report
    adapter = adapter_for(fmt)
    clearing.session_of = adapter.session_id_of
    clearing.own_text = adapter.cleared_text
    changes = clearing.changes
    for entry in entries:
        if getattr(entry, "invalid", False):
            yield entry
            continue
        changes.clear()
        new = adapter.cleared(entry, clearing)
        if new is not entry:
            report.entries_changed += 1
            new = _keep_original_line(entry, new, clearing)
        yield new


def placeholder_cost(placeholder: Placeholder, store: ResultStore | None) -> int:
    """Tokens of ``placeholder`` once the result is saved in ``store``: the file's path is
    ``<root>/<session>/tool-results/<tool id>.txt`` (long ids assumed; 240 characters when the
    root is unknown)."""
    if store is None:
        return result_tokens(placeholder(None))
    root = getattr(store, "root", None)
    return result_tokens(placeholder("x" * (len(str(root)) + 120 if root is not None else 240)))


def _replace_result(record: ToolRecord, content: Any, entry: dict[str, Any],
                    clearing: Clearing) -> str | None:
    """The placeholder for a result, or None when it would not be smaller (left as it is,
    nothing saved)."""
    before = record.tokens
    if before <= clearing.placeholder_tokens:
        return None
    # The placeholder naming the file is sized before the file is written: one that would not
    # shrink the result leaves it in place with no store file that nothing references.
    session = clearing.session_of(entry)
    expected = None if clearing.store is None else clearing.store.path_for(
        content, tool_use_id=record.id, session_id=session)
    text = clearing.text(content, expected)
    after = result_tokens(text)
    if after >= before:
        return None
    path = _save(content, record.id, session, clearing)
    if path != expected:  # another content held the name: saved under the longer alternate
        text = clearing.text(content, path)
        after = result_tokens(text)
        if after >= before:  # (rare: a result a few tokens above its placeholder's cost)
            return None
    stats = clearing.report.per_tool.setdefault(record.name or "?", ToolStats())
    stats.cleared += 1
    stats.tokens_before += before
    stats.tokens_after += after
    clearing.report.results_cleared += 1
    clearing.report.cleared_ids.append(record.id)
    clearing.report.tokens_before += before
    clearing.report.tokens_after += after
    return text


def _replace_input(tool_id: str, name: str, saved: str, entry: dict[str, Any],
                   clearing: Clearing) -> dict[str, Any]:
    """The cleared input; ``saved`` (the input as JSON text) goes to ``<tool id>-input.txt``."""
    path = _save(saved, f"{tool_id}-input", clearing.session_of(entry), clearing)
    clearing.report.inputs_cleared += 1
    clearing.report.per_tool.setdefault(name or "?", ToolStats()).inputs_cleared += 1
    return cleared_input(path)


def _save(content: Any, key: str, session: str | None, clearing: Clearing) -> str | None:
    if clearing.store is None:
        return None
    path = clearing.store.save(content, tool_use_id=key, session_id=session)
    clearing.report.files_saved += 1
    return path


def _keep_original_line(entry: dict[str, Any], new: dict[str, Any],
                        clearing: Clearing) -> dict[str, Any]:
    """Keep the exact bytes of a changed line that orjson would not write the same way; returns
    ``new`` with the bytes a writer gives it (an Entry whose ``raw`` they are), dumped here once.

    When one string result was replaced, those bytes also tell whether the original line was
    compact (:func:`dumps_changed`); only otherwise is the original entry dumped, as it must be
    anyway for a line kept (the file is named by its hash), and first, as before, so that an
    entry that cannot be written fails the same way."""
    store = clearing.line_keeper
    raw = entry.raw if isinstance(entry, Entry) else None
    if raw is None or store is None:
        return new
    changes = clearing.changes
    line: bytes | None = None
    compact = False
    if len(changes) == 1 and isinstance(changes[0][0], str) and changes[0][1] is not None:
        line, compact = dumps_changed(new, raw, changes[0][0], changes[0][1])
    if not compact:
        canonical = dumps_json(entry)
        if raw != canonical + b"\n":
            store.save_line(raw, canonical=canonical, session_id=clearing.session_of(entry))
            clearing.report.lines_kept += 1
    if line is None:
        line = dumps_entry(new)
    return Entry(new, line, entry.source, entry.lineno)


__all__ = ["CLEARED", "SNIPPED", "ClearReport", "Clearing", "Placeholder", "ToolStats",
           "iter_cleared", "microcompact_placeholder", "placeholder_cost", "snip_placeholder"]
