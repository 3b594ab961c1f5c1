"""The entry type and read-only typed views of the formats ctxtool reads.

An entry is one JSONL line parsed into a dict, with every key kept. Entries read from input are
:class:`Entry` objects that also remember the exact bytes they were read from, so a writer can put
an untouched line back byte-identical. Transforms never mutate an entry: to change one they build a
new plain dict (copy-on-write, see :func:`ctxtool.core.messages.blocks.with_message_content`), and the
writer re-serializes only those.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypedDict

Format = Literal["claude-code", "anthropic", "openai", "opencode", "codex", "gemini"]
CLAUDE_CODE: Format = "claude-code"
ANTHROPIC: Format = "anthropic"
OPENAI: Format = "openai"
OPENCODE: Format = "opencode"
GEMINI: Format = "gemini"


class Entry(dict):  # type: ignore[type-arg]
    """A parsed JSONL line that remembers its raw bytes, source name and line number.

    ``raw`` holds the exact bytes of the line including its terminator (and, for the first line,
    a BOM and any blank lines before it). Any top-level mutation drops ``raw`` so the entry gets
    re-serialized; nested values must not be mutated in place (copy-on-write).
    ``invalid`` marks a line that did not parse and is passed through as-is (``--on-invalid keep``).
    ``glued`` marks the second and later of several objects found on one line.
    ``partial`` marks a truncated last line (no newline, not valid JSON: a session being written,
    or killed mid-write); writers put it at the very end of their output, after anything a
    transform appends, so the writer that is still adding to it completes the right line.
    """

    __slots__ = ("raw", "source", "lineno", "invalid", "glued", "partial")

    # Not keyword-only: the reader builds one Entry per line and passes them by position, which
    # costs a third less than by keyword.
    def __init__(
        self,
        data: dict[str, Any] | None = None,
        raw: bytes | None = None,
        source: str = "<input>",
        lineno: int = 0,
        invalid: bool = False,
    ) -> None:
        dict.__init__(self, data or ())
        self.raw = raw
        self.source = source
        self.lineno = lineno
        self.invalid = invalid
        self.glued = False  # shares its line with the entry before it (see formats.jsonl)
        self.partial = False  # a truncated last line (see above)

    @property
    def location(self) -> str:
        return f"{self.source}:{self.lineno}"

    def _touch(self) -> None:
        self.raw = None

    def __setitem__(self, key: str, value: Any) -> None:
        self._touch()
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._touch()
        super().__delitem__(key)

    def pop(self, *args: Any) -> Any:  # type: ignore[override]
        self._touch()
        return super().pop(*args)

    def popitem(self) -> Any:
        self._touch()
        return super().popitem()

    def setdefault(self, *args: Any) -> Any:  # type: ignore[override]
        self._touch()
        return super().setdefault(*args)

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        self._touch()
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self._touch()
        super().clear()

    def __reduce__(self) -> Any:
        return (_rebuild_entry, (dict(self), self.raw, self.source, self.lineno, self.invalid))


def _rebuild_entry(data: dict[str, Any], raw: bytes | None, source: str, lineno: int,
                   invalid: bool) -> Entry:
    return Entry(data, raw=raw, source=source, lineno=lineno, invalid=invalid)


def location_of(entry: dict[str, Any]) -> str | None:
    """``file:line`` of an entry read from input, None for one a transform built."""
    return entry.location if isinstance(entry, Entry) else None


# --- read-only views (documentation for type checkers; entries stay plain dicts) -----------------


class Usage(TypedDict, total=False):
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


class APIMessage(TypedDict, total=False):
    id: str
    role: str
    model: str
    content: str | list[dict[str, Any]]
    usage: Usage
    stop_reason: str | None


class ClaudeCodeEntry(TypedDict, total=False):
    type: str
    subtype: str
    uuid: str
    parentUuid: str | None
    logicalParentUuid: str | None
    isSidechain: bool
    isMeta: bool
    isCompactSummary: bool
    isVisibleInTranscriptOnly: bool
    sessionId: str
    cwd: str
    timestamp: str
    requestId: str
    message: APIMessage
    toolUseResult: Any
    compactMetadata: dict[str, Any]
    content: str


class ResultStore(Protocol):
    """Where transforms save content before removing it from a transcript (see storage/store.py).

    The core only sees this protocol; the CLI builds the real store from --store/$CTXTOOL_STORE.
    """

    def save(self, content: str | list[Any], *, tool_use_id: str, session_id: str | None) -> str:
        """Write ``content`` (a string as .txt, a block list as .json); return the absolute path.
        Raises StoreError when it cannot be written."""
        ...

    def load(self, path: str) -> str | list[Any] | None:
        """The content saved at ``path`` exactly as it was given to save(), or None if missing."""
        ...

    def path_for(self, content: str | list[Any], *, tool_use_id: str,
                 session_id: str | None) -> str:
        """The path save() gives ``content`` when no other content holds that name (nothing is
        written): a transform checks the placeholder naming it before saving anything."""
        ...
