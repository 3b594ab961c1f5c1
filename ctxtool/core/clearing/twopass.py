"""Look-ahead without buffering: a first pass that records only what a decision needs.

``snip`` and ``microcompact`` must know things that come late in a transcript before they touch an
early entry (which results are the newest, the total of their tokens, whether a file is read
again). Instead of holding every entry, they read the transcript twice:

1. :func:`scan_tools` reads every entry once and keeps, per tool call, a small
   :class:`ToolRecord` (id, tool name, sizes, the file it read, where its lines are) - never the
   content itself;
2. the caller decides which results to clear from those records, then streams the entries a
   second time and changes only those (see :mod:`ctxtool.core.clearing.replace`).

A transcript read twice is an :class:`Iterable` that can be iterated more than once: a list, or a
:class:`LazySource` (the CLI's spooled files), which can also skip parsing the lines the second
pass leaves alone. A one-shot iterator is buffered into a list by :func:`reiterable`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from ctxtool.clock import parse_timestamp
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.core.sizing.tokens import Thresholds, blocks_tokens, estimate_text_tokens, thresholds
from ctxtool.formats.adapter import OutputTruncation
from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.limits import tool_result_tokens
from ctxtool.formats.registry import adapter_for, adapters
from ctxtool.types import Entry

LineKey = tuple[str, int]  # (source, lineno) of an entry read from input
# the model and agent version a transcript names -> its thresholds
Limits = Callable[[str | None, str | None], Thresholds]

# How the placeholders of snip, microcompact, persist and Claude Code itself begin: such a result
# is already cleared, so it is neither counted nor cleared again (what makes the commands
# idempotent). Claude Code tests ``includes("<persisted-output>")``; a prefix test is as good for
# real placeholders and does not mistake a file that mentions the tag for a cleared result.
CLEARED_PREFIXES = ("<persisted-output>", "[Old tool result content cleared]",
                    "[Content snipped - re-read if needed]")

# Tool input keys naming the file a tool read or changed (Claude Code and common agent tools).
PATH_KEYS = ("file_path", "notebook_path", "filePath", "path")  # filePath: OpenCode's tools


@runtime_checkable
class LazySource(Protocol):
    """A transcript that can be read twice; the second read may leave most lines unparsed."""

    def __iter__(self) -> Iterator[Entry]: ...

    def iter_parsing(self, lines: Collection[LineKey]) -> Iterator[Entry]:
        """Every entry again, parsing only the lines in ``lines``; the other bytes come back as
        opaque entries (``invalid=True``: raw bytes of lines, or blocks of them) that transforms
        pass through and writers copy."""
        ...


def reiterable(entries: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    """``entries`` when it can be iterated twice, else the entries buffered into a list."""
    return list(entries) if iter(entries) is entries else entries


def second_pass(entries: Iterable[dict[str, Any]],
                lines: Collection[LineKey]) -> Iterator[dict[str, Any]]:
    """Iterate ``entries`` again, letting a :class:`LazySource` skip lines outside ``lines``."""
    if isinstance(entries, LazySource):
        return entries.iter_parsing(lines)
    return iter(entries)


def default_limits(model: str | None, version: str | None = None) -> Thresholds:
    """Thresholds for the transcript's model and agent version, with no environment
    overrides."""
    return thresholds(model=model, version=version)


def line_key(entry: dict[str, Any]) -> LineKey | None:
    return (entry.source, entry.lineno) if isinstance(entry, Entry) and entry.lineno else None


_TRUNCATIONS: tuple[OutputTruncation, ...] | None = None


def output_truncations() -> tuple[OutputTruncation, ...]:
    """The agents' own truncations of large tool outputs (``persist --style`` writes them into
    a transcript of any format), found once."""
    global _TRUNCATIONS
    if _TRUNCATIONS is None:
        _TRUNCATIONS = tuple(dict.fromkeys(
            a.output_truncation for a in adapters() if a.output_truncation is not None))
    return _TRUNCATIONS


def truncation_path(text: str) -> str | None:
    """The ctxtool store file an agent's truncation text names (``persist --style`` of an
    agent with :attr:`~ctxtool.formats.adapter.FormatAdapter.output_truncation`), or None."""
    for truncation in output_truncations():
        path = truncation.persisted_path(text)
        if path is not None:
            return path
    return None


def is_cleared(content: Any) -> bool:
    """True when a tool result's content is already a placeholder (or a persisted preview)."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        content = content[0].get("text")
    if not isinstance(content, str):
        return False
    # persist --style <agent> leaves the agent's truncation text, naming the saved file
    return content.startswith(CLEARED_PREFIXES) or truncation_path(content) is not None


def has_content(content: Any) -> bool:
    """Non-empty text or blocks (what a result must hold to be worth clearing)."""
    return isinstance(content, (str, list)) and bool(content)


def is_clearable(content: Any) -> bool:
    """A result worth clearing: non-empty text or blocks that are not a placeholder already."""
    return has_content(content) and not is_cleared(content)


# --- the records ----------------------------------------------------------------------------------

@dataclass(slots=True)
class ToolRecord:
    """What the first pass remembers about one tool call (its content is never kept)."""

    id: str
    name: str = ""
    use_seq: int = -1  # position among tool uses (-1: no tool_use seen)
    result_seq: int = -1  # position among tool results (-1: no result seen)
    tokens: int = 0  # estimated tokens of the result content
    agent_tokens: int = 0  # the result as the agent counts it (adapter.clearing_count)
    clearable: bool = False  # non-empty content that is not a placeholder yet
    cleared: bool = False  # already a placeholder
    epoch: int = 0  # compact boundaries seen before the call (only the last epoch is in context)
    turn: int = 0  # real user messages seen (in its epoch) before the result
    path: str | None = None  # the file the tool read or changed
    span: tuple[int, float] | None = None  # lines [start, end) a read covered
    digest: tuple[int, int] | None = None  # identity of the content (only when asked for)
    input_clearable: bool = False  # the tool_use has a non-empty input
    lines: tuple[LineKey, ...] = ()  # where its tool_use and tool_result(s) are
    result_lines: tuple[LineKey, ...] = ()  # where its tool_result(s) are (what clearing changes)


@dataclass
class ToolScan:
    """The first pass over a transcript: tool records plus the few facts about the whole."""

    fmt: str
    records: dict[str, ToolRecord] = field(default_factory=dict)
    entries: int = 0
    uses: int = 0
    results: int = 0
    epoch: int = 0  # compact boundaries seen; records of this epoch are in context
    turns: int = 0  # real user messages in the current epoch
    last_uuid: str | None = None
    last_entry: dict[str, Any] | None = None  # the last entry with a uuid (one entry held)
    last_assistant_stamp: Any = None  # timestamp of the last assistant entry, as written
    model: str | None = None
    version: str | None = None  # of the agent that wrote the last reply, when it records one
    context_tokens: int | None = None  # measured only when a meter was given
    #: tool calls the agent's own clearing records list in the current epoch (it cleared
    #: them itself, their content still in the file): neither cleared nor counted again
    agent_cleared: set[str] = field(default_factory=set)

    @property
    def last_assistant_time(self) -> datetime | None:
        return parse_timestamp(self.last_assistant_stamp)

    def in_context(self) -> list[ToolRecord]:
        """Results after the last compaction (earlier ones are not in the model's context), in
        result order: oldest first."""
        current = [r for r in self.records.values() if r.epoch == self.epoch and r.result_seq >= 0]
        return sorted(current, key=lambda r: r.result_seq)

    def by_use(self) -> list[ToolRecord]:
        """Tool calls after the last compaction in tool_use order (Claude Code's order), less
        those the agent cleared itself (:attr:`agent_cleared`)."""
        current = [r for r in self.records.values() if r.epoch == self.epoch and r.use_seq >= 0
                   and r.id not in self.agent_cleared]
        return sorted(current, key=lambda r: r.use_seq)


def scan_tools(entries: Iterable[dict[str, Any]], *, fmt: str, meter: ContextMeter | None = None,
               digests: bool = False,
               tool_view: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> ToolScan:
    """First pass: one :class:`ToolRecord` per tool call. Streaming; keeps no entry.

    Only the chain being measured counts (the first entry's ``isSidechain``, as
    :meth:`ContextMeter.in_context`): the side chains older Claude Code versions stored in the
    main file are a subagent's context, never sent with the main one, so clearing them would
    save nothing there (and their calls would take the place of the newest main-chain ones).
    ``tool_view``: how a tool call is read (snip: its adapter's ``snip_view``)."""
    scan = ToolScan(fmt)
    chain = meter if meter is not None else ContextMeter(fmt)
    adapter = adapter_for(fmt)
    # This loop runs for every line of the transcript, most of them without a tool block
    # (progress, hooks, text): the adapter's hooks are bound once and the per-entry notes
    # are inline.
    in_context, role_and_blocks = chain.in_context, adapter.role_and_blocks
    is_compaction, is_summary = adapter.is_compaction_record, adapter.is_summary_entry
    timestamp_of, model_of = adapter.timestamp_of, adapter.model_of
    recorded, agent_count = adapter.cleared_ids_recorded, adapter.clearing_count
    count = 0
    for entry in entries:
        count += 1
        if getattr(entry, "invalid", False) or not in_context(entry):
            continue
        role, blocks = role_and_blocks(entry)  # once per entry
        if meter is not None:
            meter.account(entry, blocks_tokens(blocks))
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            scan.last_uuid, scan.last_entry = uuid, entry
        if is_compaction(entry):
            scan.epoch += 1
            scan.turns = 0
            scan.agent_cleared = set()
        elif role == "assistant":
            stamp = timestamp_of(entry)
            if stamp is not None:
                scan.last_assistant_stamp = stamp
            model = model_of(entry)  # None for a line the agent wrote without a model call
            if model is not None:
                scan.model = model
                scan.version = adapter.agent_version(entry) or scan.version
        elif role is None and (ids := recorded(entry)) is not None:
            scan.agent_cleared.update(ids)
        elif role == "user" and _is_user_turn(entry, blocks, is_summary):
            scan.turns += 1
        where = line_key(entry) if blocks else None
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_use" and isinstance(block.get("id"), str):
                _note_use(scan, block if tool_view is None else tool_view(block), where)
            elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
                _note_result(scan, block, where, digests, agent_count)
    scan.entries = count
    if meter is not None:
        scan.context_tokens = meter.context_tokens
    return scan


def _is_user_turn(entry: dict[str, Any], blocks: list[dict[str, Any]],
                  is_summary: Callable[[dict[str, Any]], bool]) -> bool:
    """A message the user typed (not only tool results, not a meta line or a summary)."""
    if entry.get("isMeta") is True or is_summary(entry):
        return False
    return any(b.get("type") != "tool_result" for b in blocks)


def _record(scan: ToolScan, tool_id: str, where: LineKey | None) -> ToolRecord:
    record = scan.records.get(tool_id)
    if record is None:
        record = scan.records[tool_id] = ToolRecord(tool_id, epoch=scan.epoch)
    if where is not None and where not in record.lines:
        record.lines += (where,)
    return record


def _note_use(scan: ToolScan, block: dict[str, Any], where: LineKey | None) -> None:
    record = _record(scan, block["id"], where)
    record.name = str(block.get("name") or "")
    record.use_seq, scan.uses = scan.uses, scan.uses + 1
    record.epoch = scan.epoch
    tool_input = block.get("input")
    if isinstance(tool_input, Mapping):
        record.input_clearable = bool(tool_input) and not is_cleared_input(tool_input)
        record.path, record.span = _target(tool_input)


def _note_result(scan: ToolScan, block: dict[str, Any], where: LineKey | None,
                 digests: bool, agent_count: Callable[[Any], int] | None = None) -> None:
    record = _record(scan, block["tool_use_id"], where)
    if where is not None and where not in record.result_lines:
        record.result_lines += (where,)
    content = block.get("content")
    record.result_seq, scan.results = scan.results, scan.results + 1
    record.epoch = scan.epoch
    record.turn = scan.turns
    record.tokens = result_tokens(content)
    record.agent_tokens = record.tokens if agent_count is None else agent_count(content)
    record.cleared = is_cleared(content)
    record.clearable = has_content(content) and not record.cleared  # is_clearable, tested once
    if digests and record.clearable:
        record.digest = _digest(content)


def result_tokens(content: Any) -> int:
    """Tokens of a tool result's content by ctxtool's estimate, counted the way Claude Code's
    microcompact counts them: the text (text blocks of a list), 2000 per image, nothing for
    the block around it (it stays)."""
    return tool_result_tokens(content, estimate_text_tokens)


def _digest(content: Any) -> tuple[int, int]:
    """Identity of a result's content within one run: its length and Python's own hash (no
    encoding or copying of the text; both must match, and only equal results compare)."""
    data: str | bytes = content if isinstance(content, str) else dumps_json(content)
    return len(data), hash(data)


def _target(tool_input: Mapping[str, Any]) -> tuple[str | None, tuple[int, float] | None]:
    """The file a tool input names and the lines [start, end) a read of it covers."""
    path = next((tool_input[k] for k in PATH_KEYS if isinstance(tool_input.get(k), str)), None)
    if path is None:
        return None, None
    offset, limit = tool_input.get("offset"), tool_input.get("limit")
    start = offset if isinstance(offset, int) and offset > 1 else 1
    end: float = start + limit if isinstance(limit, int) and limit > 0 else float("inf")
    return path, (start, end)


# --- cleared tool inputs (--clear-tool-inputs) ----------------------------------------------------

CLEARED_INPUT_KEY = "ctxtool_cleared_input"


def cleared_input(path: str | None) -> dict[str, Any]:
    """What a cleared tool_use input becomes: the saved file's path, or ``{}`` when not saved."""
    return {CLEARED_INPUT_KEY: path} if path else {}


def is_cleared_input(tool_input: Any) -> bool:
    return isinstance(tool_input, Mapping) and set(tool_input) == {CLEARED_INPUT_KEY}


def cleared_input_path(tool_input: Any) -> str | None:
    """The saved file a cleared tool input names, or None."""
    if is_cleared_input(tool_input) and isinstance(tool_input[CLEARED_INPUT_KEY], str):
        return tool_input[CLEARED_INPUT_KEY]  # type: ignore[no-any-return]
    return None


__all__ = ["CLEARED_INPUT_KEY", "LazySource", "output_truncations", "truncation_path", "Limits", "LineKey", "ToolRecord", "ToolScan",
           "cleared_input", "cleared_input_path", "default_limits", "is_clearable", "is_cleared",
           "is_cleared_input", "line_key", "reiterable", "result_tokens", "scan_tools",
           "second_pass"]
