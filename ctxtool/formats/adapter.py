"""The format adapter: everything one agent's transcript format does differently, behind one
interface, so the transforms in :mod:`ctxtool.core` are written once.

A transform never compares format names. It asks the registry (:mod:`ctxtool.formats.registry`)
for the adapter of the format it was given and calls it::

    adapter = adapter_for(fmt)
    role, blocks = adapter.role_and_blocks(entry)

Every format is seen as Anthropic-shaped content blocks (``text``, ``thinking``, ``tool_use``,
``tool_result``, ``image``...): an adapter maps its own lines to such blocks (a view, never
written back) and writes changes back in its own shape (copy-on-write: the input entry is never
mutated; an unchanged entry is returned as the same object so its line stays byte-identical).

:class:`FormatAdapter` is a base class, not only a protocol: its defaults are those of the
Anthropic Messages shape (one ``{"role", "content"}`` object per line), so an adapter overrides
only what its agent does differently. The members, grouped by who uses them:

* identity and detection (``formats/detect.py``) - :attr:`name`, :attr:`title`, :attr:`schema`,
  :meth:`claims`, :meth:`claims_weakly`;
* lines and messages (every transform) - :meth:`api_message`, :meth:`role_and_blocks`,
  :meth:`with_message_content`, :meth:`with_tool_result_content`, :meth:`model_of`,
  :meth:`timestamp_of`, :meth:`agent_version`, :meth:`session_id_of`, :meth:`is_instruction`,
  :meth:`is_api_error`, :meth:`is_own_reply`;
* usage anchors and sizing (``core/sizing``: meter, estimate) - :meth:`usage_of`,
  :meth:`results_after_usage`, :meth:`compaction_tracker`, :attr:`reads_whole_session`,
  :meth:`context_entries`, :meth:`entries_sent`, :meth:`count_compactions`,
  :meth:`configured_limits`, :meth:`context_limits`, :meth:`idle_compaction`, :meth:`overflow_rule`, :meth:`is_summary_entry`,
  :meth:`context_mark` (with :class:`ContextMark`), :meth:`system_sent`;
* compaction records (``filter-compacted``, ``summarize``) - :attr:`compactions`,
  :meth:`is_compaction_record`, :meth:`compaction_starts`, :meth:`summary_text`,
  :meth:`is_compaction_request`, :meth:`compaction_threshold`, and how ``summarize`` writes one:
  :meth:`compaction_writer` (with :mod:`ctxtool.formats.compaction`'s classes),
  :attr:`summary_keeps_lines`, :attr:`compaction_streams`;
* clearing and restoring (``persist``, ``snip``, ``microcompact``, ``restore``) -
  :meth:`result_slots`, :meth:`with_result_contents`, :meth:`cleared`, :meth:`restored`,
  :attr:`placeholder_style`, :attr:`output_truncation`, :attr:`clears_by_marking`,
  :meth:`marked_cleared`, :meth:`own_prune`, :meth:`results_named`, :attr:`cleared_result_text`,
  :attr:`clearing_strategy`, :attr:`compactable_tools`, :attr:`clearing_count`,
  :meth:`idle_clearing_after`, :attr:`writes_clearing_boundary`,
  :meth:`clearing_record`, :meth:`without_clearing_records`, :meth:`cleared_ids_recorded`,
  :attr:`own_tool_names`, :meth:`snip_view`;
* summarizing (``core/summarizing``) - :attr:`side_chains`, :attr:`queues_prompts`,
  :meth:`typed_text`, :meth:`claude_code_tool`, :attr:`restore_files_refusal`,
  :meth:`is_completed_summary`, :meth:`summary_prompt`;
* validating - :meth:`own_checks` (and :attr:`schema`);
* vacuuming (``vacuum``: :mod:`ctxtool.formats.vacuum` says the rules) - :meth:`vacuum_lines`,
  :meth:`vacuum_database`;
* converting - :attr:`converts_through_messages`, :meth:`iter_api_messages`,
  :attr:`streams_over_lines`, :attr:`convert_targets`, and as a target :attr:`blocks_kept`,
  :attr:`system_in_messages`;
* in-place rewrites (``io/live.py``) - :meth:`rewriting`;
* store location (``storage``; ``ctxtool sessions`` and the session selectors) -
  :attr:`results_beside_session`, :meth:`session_and_cwd`, :meth:`session_roots`,
  :meth:`home_folder`,
  :meth:`session_files`, :attr:`session_marks`, :meth:`session_prompt`, :meth:`session_title`.

Adding an agent = writing a subclass in ``ctxtool/formats/<agent>.py`` (or a package), adding
it to :data:`ctxtool.formats.registry.BUILTIN` (detection order; its name becomes a
``--format`` choice, :func:`ctxtool.formats.registry.format_names`). This module and the
adapters import nothing from ``ctxtool.core`` or ``ctxtool.cli`` (a test keeps that rule): an
adapter describes its format; the transforms decide what to do with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from ctxtool.formats.content import Block, as_blocks
from ctxtool.formats.json_text import dumps_json

if TYPE_CHECKING:  # for a type only: the llm package is not loaded with every adapter
    from datetime import datetime, timedelta
    from pathlib import Path  # for types only: see ctxtool/storage/opencode_db_file.py

    from ctxtool.formats.compaction import CompactionWriter
    from ctxtool.formats.limits import AgentSettings, IdleCompaction, Thresholds
    from ctxtool.formats.vacuum import DatabaseVacuum, LineEdit
    from ctxtool.llm.base import AgentPrompt

# What summarize hands an adapter's compaction writer and gets back (CompactionWrite, a frozen
# dataclass of 23 fields, takes about a millisecond to build) is in formats/compaction.py,
# imported by summarize and the writers; still importable from here (__getattr__ at the end).
_COMPACTION = ("CompactionLines", "CompactionWrite", "CompactionWriter")


BOUNDARY = "boundary"
AGENT_RULE = "agent-rule"
MARKER = "marker"


class Usage(NamedTuple):
    """One model call's usage, de-duplicated over its streamed lines. (A named tuple: one is
    built for every assistant line, and a tuple costs a fraction of a frozen dataclass.)"""

    key: tuple[str, str]
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def merged(self, other: Usage) -> Usage:
        """The largest snapshot of each counter (streamed lines repeat or grow them)."""
        if (other.input_tokens <= self.input_tokens
                and other.cache_creation_input_tokens <= self.cache_creation_input_tokens
                and other.cache_read_input_tokens <= self.cache_read_input_tokens
                and other.output_tokens <= self.output_tokens):
            return self  # a repeated snapshot (the common case): nothing to build
        return Usage(self.key, max(self.input_tokens, other.input_tokens),
                     max(self.cache_creation_input_tokens, other.cache_creation_input_tokens),
                     max(self.cache_read_input_tokens, other.cache_read_input_tokens),
                     max(self.output_tokens, other.output_tokens))

    def as_dict(self) -> dict[str, Any]:
        return {"message_id": self.key[0], "request_id": self.key[1] or None,
                "input_tokens": self.input_tokens,
                "cache_creation_input_tokens": self.cache_creation_input_tokens,
                "cache_read_input_tokens": self.cache_read_input_tokens,
                "output_tokens": self.output_tokens, "prompt_tokens": self.prompt_tokens}


class ContextMark(NamedTuple):
    """What a line that is not a message does to the context (see
    :meth:`FormatAdapter.context_mark`): a compaction that restarts it (``kind`` "compact"), or
    a clearing that took ``saved`` tokens out of what the last call saw ("clear")."""

    kind: str  # COMPACT_MARK or CLEAR_MARK
    #: compact: the tokens every compaction so far took out (Claude Code's
    #: ``cumulativeDroppedTokens``), 0 when not recorded
    dropped_before: int = 0
    #: compact: the ids of the messages before it that it keeps by reference (spliced in after
    #: the summary), or None
    kept_ids: list[Any] | None = None
    #: compact: (head id, tail id) of a kept chain of messages, followed back from the tail by
    #: their parent ids, when no list is given; or None
    kept_segment: tuple[Any, Any] | None = None
    trigger: str | None = None  # compact: "auto"/"manual" as recorded
    pre_tokens: int | None = None  # compact: the context size it records before it
    saved: int = 0  # clear: the tokens it records as taken out


COMPACT_MARK = "compact"
CLEAR_MARK = "clear"


#: Looks a model's limits up in the agent's own config: (provider, model, variant) ->
#: ``{"context", "input", "output"}`` (see :meth:`FormatAdapter.configured_limits`).
LimitsLookup = Callable[[str | None, str | None, str | None], Mapping[str, int]]


class OverflowVerdict(Protocol):
    """The agent's own overflow verdict (see :meth:`FormatAdapter.overflow_rule`)."""

    #: the key the estimate report holds it under (``"opencode"``)
    report_key: ClassVar[str]

    @property
    def usable(self) -> int:
        """The context size at which the agent compacts."""
        ...

    def as_dict(self) -> dict[str, Any]:
        ...

    def rows(self, context: int) -> list[tuple[str, str]]:
        """What ``estimate`` shows of it, as (label, text) rows, with ``context`` the context
        size now (the rows replace Claude Code's auto-compact line)."""
        ...


def verdict_rows(agent: str, usable: int, context: int, rule: str,
                 check: str) -> list[tuple[str, str]]:
    """:meth:`OverflowVerdict.rows` as every agent's rule shows them: where ``agent`` compacts
    (``rule`` says how it works that out) and how far ``context`` is from it, then ``check``,
    the agent's own verdict on its last count."""
    return [("compacts at", f"{usable:,}  ({agent}: {rule}; {max(0, usable - context):,} to go)"),
            (f"{agent} check", check)]


class SessionFile(NamedTuple):
    """One session an agent keeps in a file of its own (see :meth:`FormatAdapter.session_files`)."""

    id: str  # the session id, as the file name gives it
    path: Path
    where: str  # what tells it apart among candidates (Claude Code: its project folder)


class SessionMarks(NamedTuple):
    """Bytes that find an agent's lines in a transcript without parsing it, so a session is
    listed from its ends (``ctxtool sessions``, ``statusline``). Inside a JSON string a quote is
    escaped, so a needle holding quotes meets only the structure; every line a needle hits is
    parsed and checked, so a needle may hit more lines than it means, never fewer."""

    compaction: bytes  # in every line recording a compaction, however it is spaced
    compaction_compact: bytes  # the same, written as compact JSON (longer, found faster)
    usage: bytes  # in every line carrying a usage anchor
    model: bytes | None = None  # in every message naming its model (None: none does)
    title: bytes | None = None  # in every title record (None: the agent writes none)


class CompactionTracker(Protocol):
    """Follows compactions over a session read forward (see
    :meth:`FormatAdapter.compaction_tracker`)."""

    def note(self, entry: Mapping[str, Any], tokens: int) -> int | None:
        """Record one entry (its estimate: ``tokens``); when it completes a compaction, the
        tokens the context restarts from (what the compaction kept plus the summary), else
        None."""
        ...


Finding = tuple[int, str, str, str]  # (line, severity "error"/"warning", code, message)


class TranscriptChecks(Protocol):
    """A format's own validation rules (see :meth:`FormatAdapter.own_checks`)."""

    def add(self, entry: dict[str, Any], line: int) -> None:
        """Look at one valid entry (``line``: its 1-based line)."""
        ...

    def finish(self) -> Iterable[Finding]:
        """The problems found, once every entry was added."""
        ...


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


@dataclass(frozen=True)
class ResultSlot:
    """One tool result of an entry with its original content (not a view).

    ``index`` says where it sits, in the adapter's own terms (a block index, a part index, -1
    for a message that is itself the result); :meth:`FormatAdapter.with_result_contents` takes
    the same indexes back.
    """

    index: int
    tool_use_id: str
    content: Any


class FormatAdapter:
    """One agent's transcript format. Subclass, override what differs, register an instance."""

    #: The ``--format`` value and the ``format`` field of reports (e.g. ``"claude-code"``).
    name: ClassVar[str] = ""
    #: The agent or format as people write it, for messages (``"OpenCode"``).
    title: ClassVar[str] = ""
    #: The JSON Schema (``schemas/<schema>.json``) one line is validated against, or None.
    schema: ClassVar[str | None] = None
    #: True when the agent's context can only be known from the whole session (OpenCode: the
    #: last compaction decides what is sent), so transforms buffer it; False: they stream.
    reads_whole_session: ClassVar[bool] = False
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
    #: True when the summarizer must read the agent's tool calls through
    #: :meth:`claude_code_tool` (its tools, todo or plan tool and shell are not Claude Code's).
    names_tools_its_way: ClassVar[bool] = False
    #: True when ``attachment`` lines record the texts the agent sent for them (``rendered``,
    #: Claude Code 2.1): the meter counts those texts.
    rendered_attachments: ClassVar[bool] = False
    #: True when lines of other threads (subagents' side chains, ``isSidechain``) can sit in a
    #: session file; they are not part of the main conversation.
    side_chains: ClassVar[bool] = False
    #: True when the agent writes what the user typed while it was busy as lines of their own
    #: (Claude Code's ``queue-operation``/``queued_command``); the summarizer reads them.
    queues_prompts: ClassVar[bool] = False
    #: True when clearing appends a boundary line recording what it saved, as the agent writes
    #: one itself (Claude Code's ``microcompact_boundary``), so its usage anchor stays right.
    writes_clearing_boundary: ClassVar[bool] = False
    #: True when the agent keeps the tool results it moves out of a session in its own project
    #: folder (Claude Code: ``~/.claude/projects/<project>/<session>/tool-results``): persist
    #: saves there by default, found from :meth:`session_and_cwd` of the first lines.
    results_beside_session: ClassVar[bool] = False
    #: How the agent records a compaction, which decides how ``filter-compacted`` finds the
    #: context and how ``summarize`` writes one: :data:`BOUNDARY` (Claude Code: a
    #: ``compact_boundary`` line, then the summary), :data:`AGENT_RULE` (OpenCode: messages the
    #: agent's own rule reads, see :meth:`entries_sent`, :meth:`compaction_starts`) or
    #: :data:`MARKER` (plain message lists: a user message starting with ctxtool's summary
    #: marker replaces the head).
    compactions: ClassVar[str] = MARKER
    #: True when the agent's compaction is appended and every input line stays as it was, so
    #: ``summarize`` saves nothing first; False (plain message lists): the output replaces the
    #: input's lines, and the whole input is saved in the store before.
    summary_keeps_lines: ClassVar[bool] = False
    #: True when the :meth:`compaction_writer` needs no more of the input than its ``add`` sees
    #: (``items``/``head``/``main`` None): ``summarize`` may then read a re-readable input twice
    #: instead of holding it, when nothing is kept verbatim (Claude Code).
    compaction_streams: ClassVar[bool] = False
    #: (error, hint) when ``--restore-files`` does not apply to the agent's sessions (it
    #: re-attaches no files after a compaction), None when it does.
    restore_files_refusal: ClassVar[tuple[str, str] | None] = None
    #: True when ``convert`` reads this format through :meth:`iter_api_messages` (the agent
    #: stores more than messages, e.g. parts or events) rather than entry by entry.
    converts_through_messages: ClassVar[bool] = False
    #: ``convert --to`` targets only this format's input can go to (its own documents and
    #: stores; the first is the default target for its input), besides anthropic and openai.
    convert_targets: ClassVar[tuple[str, ...]] = ()
    #: True when one streamed model response is written as several lines sharing a message id
    #: (Claude Code): ``convert`` merges them into one message.
    streams_over_lines: ClassVar[bool] = False
    #: As a ``convert`` target: the block types kept beyond text, tool calls and results and
    #: images (Anthropic: documents and, with ``--thinking keep``, signed thinking).
    blocks_kept: ClassVar[frozenset[str]] = frozenset()
    #: As a ``convert`` target: True when a ``system`` message may sit among the messages
    #: (OpenAI chat); False: it becomes a ``[system]`` user text (Anthropic).
    system_in_messages: ClassVar[bool] = True

    # --- identity and detection ------------------------------------------------------------

    def claims(self, entry: Mapping[str, Any]) -> bool:
        """True when ``entry`` can only be a line of this format (a sure sign, such as Claude
        Code's ``uuid``/``sessionId`` keys). The detector asks every registered adapter in
        registration order and takes the first that claims an entry; claims of different
        adapters must not overlap."""
        return False

    def claims_weakly(self, entry: Mapping[str, Any]) -> bool:
        """True when ``entry`` is likely of this format though no adapter claims it (asked only
        after every adapter's :meth:`claims` said False). Default False."""
        return False

    # --- lines and messages ----------------------------------------------------------------

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``{"role", "content", ...}`` object of a message entry (the entry itself for a
        plain message list), or None for a line that is not a message (metadata, events)."""
        return entry if isinstance(entry.get("role"), str) else None  # type: ignore[return-value]

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        """The message's role (``user``/``assistant``/``system``..., None for a non-message)
        and its content as a list of Anthropic-shaped blocks. The list may be a new one (a
        view); the blocks must not be mutated by the caller."""
        message = self.api_message(entry)
        if message is None:
            return None, []
        role = message.get("role")
        return (role if isinstance(role, str) else None), as_blocks(message.get("content"))

    def with_message_content(self, entry: dict[str, Any], content: Any) -> dict[str, Any]:
        """A new entry whose message content is ``content`` (copy-on-write). Formats whose
        content does not live in one content field raise ValueError."""
        new = dict(entry)
        new["content"] = content
        return new

    def with_tool_result_content(self, entry: dict[str, Any], tool_use_id: str,
                                 content: Any) -> dict[str, Any]:
        """A new entry whose result of tool call ``tool_use_id`` holds ``content`` (a string or
        a block list, converted to what the format can hold); ``entry`` itself, unchanged, when
        it holds no such result."""
        message = self.api_message(entry)
        if message is None or not isinstance(message.get("content"), list):
            return entry
        blocks = list(message["content"])
        changed = False
        for i, block in enumerate(blocks):
            if (isinstance(block, dict) and block.get("type") == "tool_result"
                    and block.get("tool_use_id") == tool_use_id):
                blocks[i] = {**block, "content": content}
                changed = True
        return self.with_message_content(entry, blocks) if changed else entry

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

    def snip_view(self, block: Block) -> Block:
        """A ``tool_use`` block as ``snip``'s rules read it (a view): the tool under the names
        of snip's sets (Claude Code's: ``Read``, ``Edit``, ``Write``, ``Grep``, ``Glob``,
        ``LS``...) and the file it reads or changes as ``file_path`` (with ``offset``/``limit``
        for part of it), for agents whose calls say that another way (Codex CLI's shell
        commands); the block itself when it says it Claude Code's way (the default)."""
        return block

    def iter_api_messages(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """For :attr:`converts_through_messages`: ``{"role", "content": [blocks]}`` for each
        message the agent sends the model, in its order and split as it splits them."""
        raise NotImplementedError(f"{self.name} converts entry by entry")

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        """The model named on an assistant message (None when it names none, or for a line
        the agent wrote itself without a model call)."""
        model = entry.get("model")
        return model if isinstance(model, str) else None

    def agent_version(self, entry: Mapping[str, Any]) -> str | None:
        """The version of the agent that wrote a line, when the agent's rules depend on it and
        the line records it (Claude Code's ``version``); None otherwise."""
        return None

    def timestamp_of(self, entry: Mapping[str, Any]) -> Any:
        """When a message was written, as the agent records it (an ISO 8601 string, epoch
        milliseconds...; ``ctxtool.clock.parse_timestamp`` reads both), or None."""
        return entry.get("timestamp")

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        """The agent's session id recorded on a line (names the store folder), or None."""
        return None

    def is_instruction(self, entry: Mapping[str, Any]) -> bool:
        """True for a line of standing instructions (a system/developer message) that stays in
        front of the conversation when its head is summarized or cut."""
        return False

    def is_compaction_request(self, entry: Mapping[str, Any]) -> bool:
        """True for a message the agent wrote itself to ask for a compaction (OpenCode's
        compaction part): not the user's words."""
        return False

    def typed_text(self, entry: Mapping[str, Any]) -> str | None:
        """For a user message holding parts the agent added itself (OpenCode: synthetic and
        ignored parts), the text the user typed (may be blank); None when the message's text is
        all the user's."""
        return None

    def claude_code_tool(self, block: Block) -> Block:
        """A content block with a tool call under Claude Code's tool name and input keys (a
        view: its todo or plan tool as ``TodoWrite``, its shell as ``Bash``, its file edits as
        ``Edit``/``Write``), for agents with :attr:`names_tools_its_way`; other blocks as they
        are."""
        return block

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        """For :data:`AGENT_RULE` agents: the text of a compaction summary message, else None."""
        return None

    def is_api_error(self, entry: Mapping[str, Any]) -> bool:
        """True for a line recording an API error notice, not a model message (convert drops
        it)."""
        return False

    def is_own_reply(self, entry: Mapping[str, Any]) -> bool:
        """True for an assistant line the agent wrote itself, no model call behind it (Claude
        Code's local error notices): validate does not count it as the model called again."""
        return False

    # --- usage anchors, compactions, sizing ------------------------------------------------

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        """The usage the agent recorded for the model call that wrote ``entry`` (the anchor of
        the context size), or None (no usage, a synthetic line, a format without usage)."""
        return None

    def results_after_usage(self, entry: Mapping[str, Any],
                            estimate: Callable[[Block], int]) -> int | None:
        """For an entry whose :meth:`usage_of` starts a new anchor: the tokens of what the entry
        holds after that model call (OpenCode: its last step's tool results, ``estimate`` sizing
        each block), the call's output being counted exactly by its usage; or None when the
        entry is the call's own output (its estimate counts with the anchor, Claude Code)."""
        return None

    def context_mark(self, entry: Mapping[str, Any]) -> ContextMark | None:
        """For a line that records a change of the context without being a message (Claude
        Code's ``compact_boundary`` and ``microcompact_boundary``): what it records, which the
        meter applies and the timeline marks; None for every other line (the default). Called
        for every line: return early on the common ones."""
        return None

    def own_context(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        """The agent's own count of its context when this line records one (Claude Code's
        ``/context`` output): ``tokens``, ``window``, ``percent``, ``model``, ``categories``
        (name -> tokens) and ``exact``; None (the default) for every other line. Called for
        the lines that are no model message and for the agent's meta user lines."""
        return None

    def is_bare_line(self, entry: Mapping[str, Any]) -> bool:
        """True for a line that holds nothing the context is sized by - no message, usage,
        model, context mark or compaction (Claude Code's progress and snapshot lines, a third
        of a real transcript) - so the estimator only notes its place in the chain of entries.
        Called for every line: a cheap test; False (the default) is always right."""
        return False

    def system_sent(self, entries: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
        """What the agent sends in front of the messages that no message line holds, for a
        session whose lines record no usage to measure it by: (a text its lines record, sized
        like the messages; the tokens of what they do not record, such as tool definitions,
        measured from the agent's requests). None (the default): ctxtool's default figure."""
        return None

    def compaction_tracker(self) -> CompactionTracker | None:
        """A fresh tracker for one pass over a session when a compaction shows as messages (a
        summary answering a request, OpenCode) rather than as one record
        (:meth:`is_compaction_record`); None otherwise."""
        return None

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The entries the agent would send to the model now, in the order it sends them (what
        its last compaction left in view). Only called when :attr:`reads_whole_session`."""
        return list(entries)

    def entries_sent(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The entries the agent sends to the model now, in the order it sends them (OpenCode:
        the kept tail after the summary); lines that are not messages may be left out. Only
        called when :attr:`reads_whole_session`."""
        return list(entries)

    def compaction_starts(self, entries: Iterable[dict[str, Any]]) -> Iterator[tuple[int, str | None]]:
        """For :data:`AGENT_RULE` agents, read forward once: (index, ``file:line``) of the entry
        where each completed compaction's context starts (OpenCode: the compaction request a
        finished summary answered)."""
        return iter(())

    def count_compactions(self, entries: Iterable[dict[str, Any]]) -> int:
        """How many compactions the session went through (for the estimate report). Only called
        when :attr:`reads_whole_session`."""
        return sum(1 for entry in entries if self.is_compaction_record(entry))

    def configured_limits(self, view: list[dict[str, Any]],
                          lookup: LimitsLookup | None) -> Mapping[str, int]:
        """The model's limits (``context``, ``input``, ``output``) from the agent's own config,
        found with ``lookup`` for the model the session (``view``: :meth:`entries_sent`) uses;
        empty when the agent has no such config or ``lookup`` is None."""
        return {}

    def overflow_rule(self, view: list[dict[str, Any]], *, window: int, context: int,
                      input_limit: int | None, output_limit: int | None,
                      env: Mapping[str, str] | None) -> OverflowVerdict | None:
        """The agent's own overflow verdict for the context now (reported beside ctxtool's
        thresholds, under its ``report_key``), or None when ctxtool's thresholds are the
        agent's (Claude Code). ``view``: :meth:`entries_sent`; ``context``: ctxtool's size."""
        return None

    def context_limits(self, *, model: str | None, window: int | None, max_output: int | None,
                       env: Mapping[str, str] | None, version: str | None = None,
                       settings: AgentSettings = None) -> Thresholds:
        """Where the context warns, auto-compacts and blocks for ``model`` (``window``
        overriding its window). ctxtool's default is Claude Code's rule (of ``version``, when
        a Claude Code version is known; its newest otherwise), without Claude Code's own
        settings files; Claude Code's adapter applies ``settings`` too."""
        from ctxtool.formats.claude_code.rules import thresholds  # pure, small: see rules.py

        return thresholds(version=version, model=model, window=window, max_output=max_output,
                          env=env)

    def idle_compaction(self, *, version: str | None, env: Mapping[str, str] | None,
                        settings: AgentSettings, last_reply: datetime | None,
                        context_tokens: int) -> IdleCompaction | None:
        """Whether and when the agent compacts the session on its own while it is idle (Claude
        Code 2.1.286+), for a transcript written by ``version`` whose last reply is at
        ``last_reply``; None for an agent that never does."""
        return None

    def idle_clearing_after(self, version: str | None) -> timedelta | None:
        """How long a session must sit idle before ``microcompact --strategy idle`` clears it
        by the agent's own rule (Claude Code's, by ``version``); None: ctxtool's 60 minutes."""
        return None

    def compaction_switched_off(self, kind: str, entries: Iterable[Mapping[str, Any]], *,
                                env: Mapping[str, str]) -> str | None:
        """The agent's own setting that turns off ``kind`` ("auto": its automatic compaction,
        which ``summarize --auto`` follows; "prune": its clearing of old tool output, which
        ``microcompact`` follows) for the session ``entries``, named for the notice; None when
        it is on (the default: an agent without switches). ``summarize --auto`` and
        ``microcompact`` ask only this: Claude Code's and OpenCode's adapters read their own
        environment variables, settings and config files."""
        return None

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        """The context size at which the agent compacts by its own rule for a ``window``-token
        model (OpenCode's usable tokens, Claude Code's auto-compact point for the version that
        wrote the session under ``settings``; ``summarize --auto`` uses it), or None when
        ctxtool's auto-compact threshold applies (the default reads no entry)."""
        return None

    def compaction_writer(self) -> CompactionWriter:
        """A fresh writer of one compaction in the agent's own lines (``summarize``: fed the
        input's main chain, then asked to write). The default is the plain message list's: the
        standing instructions of the head, a user message starting with ``marker`` holding
        ctxtool's continuation text (and the restored files), then the kept tail - the input
        is saved first (:attr:`summary_keeps_lines` False)."""
        from ctxtool.formats.compaction import MessageListWriter  # see the imports

        return MessageListWriter(self.is_instruction)

    def is_completed_summary(self, entry: Mapping[str, Any]) -> bool:
        """For :data:`AGENT_RULE` agents: True for a summary message the agent starts its
        context from (OpenCode: a finished one); messages after it can be kept verbatim."""
        return self.is_summary_entry(entry)

    def summary_prompt(self, head: list[dict[str, Any]], entries: list[dict[str, Any]], *,
                       instructions: str | None) -> AgentPrompt | None:
        """The request the agent's own compaction sends its summarizer for ``head`` (of the
        session ``entries``), when ``summarize`` should ask the same way (OpenCode 1.18); None:
        ctxtool's nine-section request."""
        return None

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        """True for a message holding a compaction summary (counted as ``compact_summaries``)."""
        return False

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        """True for a line that records a compaction and starts the context over (Claude Code's
        ``compact_boundary``)."""
        return False

    # --- validate ---------------------------------------------------------------------------

    def own_checks(self) -> TranscriptChecks | None:
        """Fresh checks for one transcript when the agent's lines follow rules of their own
        (OpenCode: a call and its result share one part), used instead of the generic tool
        pairing and uuid chain checks; None: the generic checks."""
        return None

    # --- vacuuming ----------------------------------------------------------------------------

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterable[LineEdit]:
        """The lines of a session file ``vacuum`` may take out or replace: those the agent
        holds twice or provably never reads again (rules: :mod:`ctxtool.formats.vacuum`).
        Default: none."""
        return ()

    def vacuum_database(self) -> DatabaseVacuum | None:
        """The agent's database-level vacuum (:class:`ctxtool.formats.vacuum.DatabaseVacuum`),
        or None when it keeps no sessions in a database."""
        return None

    # --- store location ---------------------------------------------------------------------

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """(session id, working folder) recorded on a line, each None when absent. Persist
        looks at the first lines for them when :attr:`results_beside_session`."""
        return None, None

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        """The folders where the agent keeps its sessions (``cleanup`` and ``sessions`` look
        there); empty when it keeps none on disk."""
        return []

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        """The folder the agent keeps its sessions and records in, found as the agent itself
        finds it (the variables it reads, its default): ``cleanup`` cleans there. None: the
        agent keeps none (an API's message list)."""
        return None

    # How a session kept in a file of its own is listed (``ctxtool sessions``) and named (the
    # session selectors); None: the agent keeps none so (OpenCode reads its database apart).
    session_marks: ClassVar[SessionMarks | None] = None

    def rewriting(self, path: Path) -> None:
        """Called just before ctxtool replaces a file in place (any command's ``--in-place``),
        for every agent: reset what this agent keeps elsewhere about where the lines of its
        session ``path`` lie (their byte offsets move). Raise
        :class:`ctxtool.errors.StoreError` to leave the file as it was. Default: nothing."""

    def session_files(self, env: Mapping[str, str], project: str | None = None, *,
                      archived: bool = False) -> list[SessionFile]:
        """The agent's session files (of the sessions started in directory ``project`` when
        given; ``archived``: those the user archived too), in no particular order."""
        return []

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        """The text of a prompt the user typed, when ``entry`` is one (not a tool result, nor
        text the agent put in a user message itself), as the agent's own session picker shows
        it; else None."""
        return None

    def session_title(self, entries: Iterable[Mapping[str, Any]]) -> str | None:
        """The session's title among ``entries`` (the lines :attr:`session_marks` ``.title``
        finds, or the first lines), or None."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


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


__all__ = ["AGENT_RULE", "BOUNDARY", "CLEAR_MARK", "COMPACT_MARK", "MARKER", "Block", "Clearer", "CompactionLines", "CompactionTracker", "CompactionWrite", "CompactionWriter", "ContextMark", "Finding", "FormatAdapter", "LimitsLookup", "OutputTruncation", "OverflowVerdict", "PruneResult", "Restorer", "ResultSlot", "SessionFile", "SessionMarks", "TranscriptChecks", "Usage", "verdict_rows"]


def __getattr__(name: str) -> Any:
    if name in _COMPACTION:  # see the imports
        import ctxtool.formats.compaction as compaction

        return getattr(compaction, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
