"""Bring back tool results that were moved to files: the inverse of ``persist``.

A tool result is restored when its whole content is a placeholder that names a saved file
(:func:`placeholder_path`): ctxtool's or Claude Code's own ``<persisted-output>`` block, Claude
Code's microcompact ``<persisted-output>Tool result saved to: ...`` form, or a snip/microcompact
placeholder followed by a ``saved to:`` line. The content comes back exactly as it was - a
string, or a block list - through the injected store (the core never touches the filesystem).

When ``persist`` changed a line whose bytes were not orjson's compact form, it also kept the
original bytes (``save_line``); once every placeholder of that entry is restored, the entry is
given those bytes back, so ``persist | restore`` reproduces its input byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import orjson

from ctxtool.core.clearing.twopass import cleared_input_path, output_truncations, truncation_path
from ctxtool.errors import StoreError
from ctxtool.formats.jsonl import dumps_json, loads_json
from ctxtool.formats.adapter import ResultSlot
from ctxtool.formats.registry import adapter_for
from ctxtool.types import Entry, ResultStore, location_of

PERSISTED_OPEN = "<persisted-output>"
PERSISTED_CLOSE = "</persisted-output>"
_PATH = r"(?P<path>[^\n]+?)"

# Each pattern must match a tool result's whole text and name the saved file in group "path".
# Other transforms that save content before clearing it add their placeholder shape here.
PLACEHOLDER_PATTERNS: list[re.Pattern[str]] = [
    # ctxtool persist and Claude Code's tool-result persistence
    re.compile(r"<persisted-output>\nOutput too large \([^)\n]*\)\. Full output saved to: "
               + _PATH + r"\n\n.*</persisted-output>", re.DOTALL),
    # Claude Code's microcompact after saving the result
    re.compile(r"<persisted-output>Tool result saved to: " + _PATH
               + r"\n\nUse Read to view</persisted-output>"),
    # snip / microcompact placeholders followed by the saved file
    re.compile(r"\[(?:Content snipped - re-read if needed|Old tool result content cleared)\]"
               r"\s*\n(?:[^\n]*\n)*?[^\n]*?[Ss]aved to:? " + _PATH + r"\s*", re.DOTALL),
]
_CLEARED = ("[Content snipped", "[Old tool result content cleared]")
_SAVED_TO = re.compile(r"[Ss]aved to\b")


def placeholder_text(content: Any) -> str | None:
    """The text of a tool result that could be a placeholder: a string, or a list holding one
    text block; None otherwise."""
    if isinstance(content, str):
        return content
    if (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
            and content[0].get("type") == "text" and isinstance(content[0].get("text"), str)):
        return content[0]["text"]  # type: ignore[no-any-return]
    return None


def placeholder_path(content: Any) -> str | None:
    """The saved file a placeholder names, or None when ``content`` is not such a placeholder.

    Every form is tried for every text: OpenCode's truncation keeps the output's first lines,
    which may start with anything (``[INFO] ...``, ``[main 0a1b2c3] commit``, a JSON array)."""
    text = placeholder_text(content)
    if text is None:
        return None
    for pattern in PLACEHOLDER_PATTERNS:
        match = pattern.fullmatch(text)
        if match:
            return match.group("path")
    return truncation_path(text)  # persist --style <agent>: the agent's truncation text


def looks_like_placeholder(content: Any) -> bool:
    """Whether ``content`` has the look of a placeholder naming a saved file - a
    ``<persisted-output>`` block, a snip/microcompact placeholder with a ``saved to`` line, or
    an agent's truncation hint naming a ``tool-results`` file (OpenCode's) - whether or not
    :func:`placeholder_path` can read a path out of it (``restore --strict`` fails on those it
    cannot). A bare ``[Old tool result content cleared]`` saved nothing: not one of these."""
    text = placeholder_text(content)
    if text is None:
        return False
    if text.startswith(PERSISTED_OPEN):
        return True
    if text.startswith(_CLEARED):
        return _SAVED_TO.search(text) is not None
    return any(t.looks_persisted(text) for t in output_truncations())


# --- tool result slots (shared with persist) -----------------------------------------------------

def result_slots(entry: dict[str, Any], fmt: str) -> list[ResultSlot]:
    """The tool results of an entry with their original content (not a view); see
    :meth:`ctxtool.formats.adapter.FormatAdapter.result_slots`."""
    return adapter_for(fmt).result_slots(entry)


def with_result_contents(entry: dict[str, Any], fmt: str,
                         changes: dict[int, Any]) -> dict[str, Any]:
    """A new entry whose tool results at the given slots hold new content (copy-on-write)."""
    return adapter_for(fmt).with_result_contents(entry, changes)


# --- restore -------------------------------------------------------------------------------------

@runtime_checkable
class LineKeeper(Protocol):
    """A store that can also keep and give back the original bytes of a changed line."""

    def save_line(self, raw: bytes, *, canonical: bytes, session_id: str | None) -> str: ...

    def load_line(self, canonical: bytes, *, near: str) -> bytes | None: ...


@dataclass
class RestoreReport:
    entries: int = 0
    entries_changed: int = 0
    placeholders: int = 0
    restored: int = 0
    missing: int = 0
    failed: int = 0
    unrecognized: int = 0  # texts that look like a placeholder but name no file we can read
    exact_lines: int = 0

    @property
    def not_restored(self) -> int:
        """Placeholders left in place: missing or unreadable files, unrecognized forms."""
        return self.missing + self.failed + self.unrecognized

    def as_dict(self) -> dict[str, Any]:
        return {"entries": self.entries, "entries_changed": self.entries_changed,
                "placeholders": self.placeholders, "restored": self.restored,
                "missing": self.missing, "failed": self.failed,
                "unrecognized": self.unrecognized, "original_lines_restored": self.exact_lines}


Warn = Callable[[str], None]


def _ignore(_: str) -> None:
    pass


def restore(entries: Iterable[dict[str, Any]], *, fmt: str, store: ResultStore,
            report: RestoreReport | None = None, warn: Warn = _ignore) -> Iterator[dict[str, Any]]:
    """Put saved tool results (and tool inputs cleared with their file saved) back in place of
    their placeholders. Streaming: one entry at a time. A placeholder whose file is missing or
    unreadable stays as it is, with a warning (``warn``) and a count in ``report``."""
    report = report if report is not None else RestoreReport()
    adapter = adapter_for(fmt)
    # the clearing records ctxtool appended (microcompact's) go, undone with their clearing
    for entry in adapter.without_clearing_records(entries):
        report.entries += 1
        if getattr(entry, "invalid", False):
            yield entry
            continue
        loader = _Loader(store, report, warn, location_of(entry) or "<entry>")
        new = adapter.restored(entry, loader)
        if new is not entry and not loader.pending and isinstance(store, LineKeeper):
            new = _original_line(new, entry, loader.paths, store, report)
        report.entries_changed += new is not entry
        yield new


@dataclass
class _Loader:
    """Loads the files named by one entry's placeholders, counting and reporting problems."""

    store: ResultStore
    report: RestoreReport
    warn: Warn
    where: str
    pending: int = 0  # placeholders of this entry left in place
    paths: list[str] = field(default_factory=list)

    def result(self, content: Any, tool_id: str) -> Any:
        """The saved content for a tool result, or ``content`` itself when it is not a
        placeholder or its file cannot be read."""
        path = placeholder_path(content)
        if path is None:
            if looks_like_placeholder(content):
                self.report.placeholders += 1
                self.report.unrecognized += 1
                self._fail(f"tool result {tool_id} looks like a placeholder, but its form is not "
                           "one restore knows (edited?); left in place")
            return content
        loaded = self._load(path, f"tool result {tool_id}")
        return content if loaded is None else loaded

    def tool_input(self, value: Any, tool_id: str) -> Any:
        """The saved input of a cleared tool_use (``{"ctxtool_cleared_input": path}``)."""
        path = cleared_input_path(value)
        if path is None:
            return value
        text = self._load(path, f"tool input {tool_id}")
        if not isinstance(text, str):
            return value
        try:
            return loads_json(text.encode("utf-8"))
        except orjson.JSONDecodeError:
            self._fail(f"tool input {tool_id}: saved file {path} is not JSON")
            return value

    def arguments(self, value: Any, tool_id: str) -> Any:
        """OpenAI ``function.arguments``: the saved string itself."""
        try:
            parsed = orjson.loads(value) if isinstance(value, str) else None
        except orjson.JSONDecodeError:
            return value
        path = cleared_input_path(parsed)
        if path is None:
            return value
        text = self._load(path, f"tool input {tool_id}")
        return text if isinstance(text, str) else value

    def unmarked(self, count: int) -> None:
        """``count`` results hidden by a mark (not replaced) were shown again."""
        self.report.restored += count

    def _load(self, path: str, what: str) -> Any:
        self.report.placeholders += 1
        try:
            content = self.store.load(path)
        except StoreError as exc:
            self.report.failed += 1
            self._fail(f"{what}: {exc.format()}")
            return None
        if content is None:
            self.report.missing += 1
            self._fail(f"{what}: saved file {path} is missing; placeholder left in place")
            return None
        self.report.restored += 1
        self.paths.append(path)
        return content

    def _fail(self, message: str) -> None:
        self.pending += 1
        self.warn(f"{self.where}: {message}")


def _original_line(new: dict[str, Any], old: dict[str, Any], paths: list[str], store: LineKeeper,
                   report: RestoreReport) -> dict[str, Any]:
    """``new`` with the exact bytes persist kept for it, when there are such bytes and they
    parse to exactly ``new``; otherwise ``new`` itself (written in orjson's compact form)."""
    canonical = dumps_json(new)
    for path in dict.fromkeys(paths):
        raw = store.load_line(canonical, near=path)
        if raw is None:
            continue
        try:
            parsed = loads_json(raw.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            continue
        if parsed == new:
            report.exact_lines += 1
            return Entry(new, raw=raw, source=getattr(old, "source", "<input>"),
                         lineno=getattr(old, "lineno", 0))
    return new


__all__ = ["PERSISTED_CLOSE", "PERSISTED_OPEN", "PLACEHOLDER_PATTERNS", "LineKeeper",
           "RestoreReport", "ResultSlot", "looks_like_placeholder", "placeholder_path", "placeholder_text", "restore",
           "result_slots", "with_result_contents"]
