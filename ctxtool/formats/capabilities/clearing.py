"""Clearing and restoring: where tool results sit in a line and how they are replaced, marked
or put back, the agent's placeholders and own truncation, which tools may be cleared, and the
records some agents write of a clearing (``persist``, ``snip``, ``microcompact``, ``restore``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from ctxtool.formats.capabilities.reading import ReadingAdapter
from ctxtool.formats.content import Block
from ctxtool.formats.json_text import dumps_json

if TYPE_CHECKING:
    from datetime import timedelta


class Restorer(Protocol):
    """What ``restore`` gives :meth:`FormatAdapter.restored`: each method returns the saved
    value for a placeholder, or the value itself (the same object) when it is not one or its
    file cannot be read (that is counted and reported by the restorer)."""

    def result(self, content: Any, tool_id: str) -> Any:
        """A tool result's content (a string or a block list)."""
        ...

    def tool_input(self, value: Any, tool_id: str) -> Any:
        """A tool call's input object (``{"ctxtool_cleared_input": path}`` when cleared)."""
        ...

    def arguments(self, value: Any, tool_id: str) -> Any:
        """A tool call's input kept as a JSON string (OpenAI ``function.arguments``)."""
        ...

    def unmarked(self, count: int) -> None:
        """Count ``count`` results that were hidden by a mark and are shown again."""
        ...


class Clearer(Protocol):
    """What ``snip``/``microcompact`` give :meth:`FormatAdapter.cleared`: the choice of results
    and inputs to clear, and their replacements (the content is saved and counted first)."""

    def wants_result(self, tool_id: Any) -> bool:
        """True when the result of ``tool_id`` was chosen (a cheap test before reading it)."""
        ...

    def result(self, tool_id: Any, content: Any, entry: dict[str, Any]) -> str | None:
        """The placeholder text for the result of ``tool_id`` holding ``content``, or None
        when it stays as it is."""
        ...

    def wants_input(self, tool_id: Any) -> bool:
        """True when the input of ``tool_id`` was chosen to be cleared too."""
        ...

    def tool_input(self, tool_id: str, name: str, value: Any, saved: str,
                   entry: dict[str, Any]) -> dict[str, Any] | None:
        """The cleared input object for tool call ``tool_id`` (named ``name``) whose input is
        ``value`` (spelled ``saved``, the text that is saved), or None when it stays."""
        ...


class OutputTruncation(Protocol):
    """How an agent cuts a tool output too large for it, saving the whole to a file (see
    :attr:`FormatAdapter.output_truncation`; OpenCode: ``formats/opencode/truncate.py``)."""

    MAX_LINES: int  # its own limits, when the caller gives none
    MAX_BYTES: int

    def over_limits(self, text: str, *, max_lines: int, max_bytes: int) -> bool:
        """True when the agent would cut ``text``."""
        ...

    def truncated_output(self, text: str, path: str, *, max_lines: int, max_bytes: int) -> str:
        """What the agent leaves of ``text`` once it is saved at ``path``."""
        ...

    def persisted_path(self, text: str) -> str | None:
        """The ctxtool store file such a text names, or None when ``text`` is not one."""
        ...

    def looks_persisted(self, text: str) -> bool:
        """True when ``text`` has the look of such a text naming a ctxtool store file, whether
        or not :meth:`persisted_path` can read the path out of it."""
        ...


class PruneResult(Protocol):
    """What :meth:`FormatAdapter.own_prune` gives back."""

    entries: list[dict[str, Any]]  # the session, the pruned results marked
    marked: list[str]  # the tool call ids marked
    total: int  # tokens of the older tool output the rule looked at
    pruned: int  # tokens it would clear


class ResultSlot(NamedTuple):
    """One tool result of an entry with its original content (not a view).

    ``index`` says where it sits, in the adapter's own terms (a block index, a part index, -1
    for a message that is itself the result); :meth:`FormatAdapter.with_result_contents` takes
    the same indexes back.
    """

    index: int
    tool_use_id: str
    content: Any


class ClearingAdapter(ReadingAdapter):
    """Tool results: slots, clearing, marking, restoring, placeholders, clearing records."""

    #: The placeholder a persisted tool result gets: ``"claude-code"`` (``<persisted-output>``
    #: with a preview) or ``"opencode"`` (OpenCode's truncation notice). See core persist.
    placeholder_style: ClassVar[str] = "claude-code"
    #: The agent's own truncation of a tool output too large for it (``persist --style`` with
    #: this adapter's :attr:`placeholder_style` writes it), or None: ctxtool's
    #: ``<persisted-output>`` (Claude Code's).
    output_truncation: ClassVar[OutputTruncation | None] = None
    #: True when clearing marks tool outputs as compacted in place (the agent hides them itself;
    #: nothing is saved) instead of replacing them with a placeholder (OpenCode's prune marks).
    clears_by_marking: ClassVar[bool] = False
    #: What the agent shows the model in place of a tool result it cleared itself (listed in a
    #: clearing record, or marked): Claude Code's and OpenCode's text.
    cleared_result_text: ClassVar[str] = "[Old tool result content cleared]"
    #: The ``microcompact`` strategy that does what the agent itself does (its default there).
    clearing_strategy: ClassVar[str] = "claude-code"
    #: What :attr:`clearing_strategy` takes when the options are not given (``target``,
    #: ``clear_at_least``, ``protect``: Gemini's masking thresholds and exempt tools); empty:
    #: the options' own defaults.
    clearing_defaults: ClassVar[Mapping[str, Any]] = {}
    #: The tools whose results ``microcompact`` may clear when ``--tools`` is not given: by
    #: default Claude Code's compactable tools (gW2 in v2.1.19), whose names the message lists
    #: of Claude-Code-like agents use too.
    compactable_tools: ClassVar[frozenset[str]] = frozenset({
        "Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write"})
    #: How the agent itself counts a tool result when it decides what to clear (Claude Code:
    #: characters / 4, :func:`ctxtool.formats.claude_code.rules.result_tokens`); None: by
    #: ctxtool's estimate. ``microcompact``'s trigger, target, minimum and recorded savings use
    #: it; "how full" (``estimate``) stays ctxtool's estimate.
    clearing_count: ClassVar[Callable[[Any], int] | None] = None
    #: When the agent names its tools its own way (OpenCode: ``read``, ``edit`` in lower case,
    #: camelCase inputs): its own tools per kind (``read_tools``, ``write_tools``,
    #: ``search_tools``), added to ``snip``'s sets (which then match lower-case names too), and
    #: the summarizer reads its calls through :meth:`claude_code_tool`. None: Claude Code's names.
    own_tool_names: ClassVar[Mapping[str, frozenset[str]] | None] = None
    #: True when clearing appends a boundary line recording what it saved, as the agent writes
    #: one itself (Claude Code's ``microcompact_boundary``), so its usage anchor stays right.
    writes_clearing_boundary: ClassVar[bool] = False

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        """The tool results of an entry with their original content, in order (empty when it
        holds none). What persist and restore rewrite."""
        message = self.api_message(entry)
        content = message.get("content") if message is not None else None
        if not isinstance(content, list):
            return []
        return [ResultSlot(i, str(block.get("tool_use_id") or ""), block.get("content"))
                for i, block in enumerate(content)
                if isinstance(block, dict) and block.get("type") == "tool_result"]

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        """A new entry whose results at the given :class:`ResultSlot` indexes hold the new
        content (copy-on-write)."""
        message = self.api_message(entry)
        assert message is not None
        blocks = list(message["content"])
        for index, content in changes.items():
            blocks[index] = {**blocks[index], "content": content}
        return self.with_message_content(entry, blocks)

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        """The entry with the tool results (and inputs) ``clearer`` chose replaced by what it
        gives, copy-on-write; ``entry`` itself when nothing changed."""
        message = self.api_message(entry)
        content = message.get("content") if message is not None else None
        if not isinstance(content, list):
            return entry
        blocks: list[Any] | None = None
        for i, block in enumerate(content):
            replaced = _cleared_block(block, entry, clearer) if isinstance(block, dict) else None
            if replaced is not None:
                blocks = blocks if blocks is not None else list(content)
                blocks[i] = replaced
        return entry if blocks is None else self.with_message_content(entry, blocks)

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        """The entry with every placeholder of a tool result or a tool input put back through
        ``restorer`` (and any mark that hides a result removed), copy-on-write; ``entry`` itself
        when nothing changed."""
        message = self.api_message(entry)
        blocks = message.get("content") if message is not None else None
        if not isinstance(blocks, list):
            return entry
        new_blocks = [_restored_block(block, restorer) for block in blocks]
        if all(new is old for new, old in zip(new_blocks, blocks)):
            return entry
        return self.with_message_content(entry, new_blocks)

    def marked_cleared(self, entries: list[dict[str, Any]], ids: Iterable[str], *,
                       now_ms: int) -> tuple[list[dict[str, Any]], list[str]]:
        """For :attr:`clears_by_marking` agents: the session with the results of the tool calls
        ``ids`` marked cleared as the agent marks them (stamped ``now_ms``), and the ids marked;
        changed entries are new objects."""
        raise NotImplementedError(f"{self.name} clears by placeholders, not marks")

    def own_prune(self, entries: list[dict[str, Any]], *, now_ms: int, protect: int,
                  minimum: int, protected_tools: set[str], protect_turns: int) -> PruneResult:
        """For :attr:`clears_by_marking` agents: the agent's own rule for clearing old tool
        output (OpenCode's prune), applied by marks: keep the newest ``protect`` tokens of
        output and the newest ``protect_turns`` user turns, never touch ``protected_tools``,
        and mark nothing unless at least ``minimum`` tokens go (-1: any)."""
        raise NotImplementedError(f"{self.name} has no prune of its own")

    def results_named(self, entry: Mapping[str, Any]) -> Iterator[tuple[str | None, str, str]]:
        """For :attr:`clears_by_marking` agents: (tool call id or None, tool name, result text)
        of each tool result the entry holds, marked or not (what clearing is accounted from)."""
        raise NotImplementedError(f"{self.name} clears by placeholders, not marks")

    def clearing_record(self, *, last: Mapping[str, Any] | None, ids: list[str], trigger: str,
                        pre_tokens: int, tokens_saved: int, now: Any,
                        after: Mapping[str, Any] | None,
                        estimated_saved: int | None = None) -> dict[str, Any]:
        """For :attr:`writes_clearing_boundary` agents: the line appended after clearing the
        results of ``ids`` (``tokens_saved`` of them before the last usage anchor, as the agent
        counts them; ``estimated_saved``: by ctxtool's estimate, what ``estimate`` takes off
        that anchor, when it differs), recognizable by :meth:`without_clearing_records`. ``last``: the session's last line the agent chains
        lines on (None: none); ``after``: the line it follows; ``now``: a datetime."""
        raise NotImplementedError(f"{self.name} writes no clearing record")

    def without_clearing_records(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """``entries`` less the records :meth:`clearing_record` wrote (``restore`` undoes the
        clearing they describe); the agent's own records stay. Streaming."""
        return iter(entries)

    def cleared_ids_recorded(self, entry: Mapping[str, Any]) -> list[str] | None:
        """The tool call ids a clearing record lists (the agent shows their results as
        :attr:`cleared_result_text`), or None when ``entry`` is not such a record."""
        return None

    def cleared_text(self, content: Any, path: str) -> str | None:
        """The agent's own text for a tool result ``snip``/``microcompact`` saved at ``path``
        (``content``: what was saved), when it has a form of its own (Gemini's
        ``<tool_output_masked>`` snippet, which :attr:`output_truncation` recognizes for
        ``restore``); None (the default): ctxtool's placeholders."""
        return None

    def clearing_view(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The messages ``microcompact`` chooses among when they are not the lines themselves
        (Gemini: the records it sends, each an entry naming the line it lives in, which is the
        line that changes); None (the default): the lines."""
        return None

    def snip_view(self, block: Block) -> Block:
        """A ``tool_use`` block as ``snip``'s rules read it (a view): the tool under the names
        of snip's sets (Claude Code's: ``Read``, ``Edit``, ``Write``, ``Grep``, ``Glob``,
        ``LS``...) and the file it reads or changes as ``file_path`` (with ``offset``/``limit``
        for part of it), for agents whose calls say that another way (Codex CLI's shell
        commands); the block itself when it says it Claude Code's way (the default)."""
        return block

    def idle_clearing_after(self, version: str | None) -> timedelta | None:
        """How long a session must sit idle before ``microcompact --strategy idle`` clears it
        by the agent's own rule (Claude Code's, by ``version``); None: ctxtool's 60 minutes."""
        return None


def _cleared_block(block: dict[str, Any], entry: dict[str, Any],
                   clearer: Clearer) -> dict[str, Any] | None:
    """The replacement of one block, or None when it stays."""
    kind = block.get("type")
    if kind == "tool_result":
        text = clearer.result(block.get("tool_use_id"), block.get("content"), entry)
        return None if text is None else {**block, "content": text}
    if kind == "tool_use" and clearer.wants_input(block.get("id")):
        tool_input = block.get("input")
        saved = dumps_json(tool_input).decode() if tool_input else ""
        new = clearer.tool_input(block["id"], str(block.get("name") or ""), tool_input, saved,
                                 entry)
        return None if new is None else {**block, "input": new}
    return None


def _restored_block(block: Any, restorer: Restorer) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "tool_result" and "content" in block:
        content = restorer.result(block["content"], str(block.get("tool_use_id") or ""))
        return block if content is block["content"] else {**block, "content": content}
    if block.get("type") == "tool_use" and "input" in block:
        value = restorer.tool_input(block["input"], str(block.get("id") or ""))
        return block if value is block["input"] else {**block, "input": value}
    return block
