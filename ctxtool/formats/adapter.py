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
only what its agent does differently. The attributes and methods are grouped as the transforms
use them:

* identity and detection - :attr:`name`, :attr:`schema`, :meth:`claims`, :meth:`claims_weakly`;
* lines and messages - :meth:`api_message`, :meth:`role_and_blocks`, :meth:`with_message_content`,
  :meth:`with_tool_result_content`, :meth:`result_slots`, :meth:`with_result_contents`,
  :meth:`model_of`, :meth:`session_id_of`, :meth:`is_instruction`, :meth:`is_api_error`;
* usage anchors and sizing - :meth:`usage_of`, :attr:`reads_whole_session`,
  :meth:`context_entries`, :meth:`is_summary_entry`, :meth:`is_compaction_record`;
* per-transform hooks - :attr:`placeholder_style`, :attr:`clears_by_marking`,
  :attr:`writes_clearing_boundary`, :attr:`summary_output`, :attr:`converts_through_messages`;
* store location - :attr:`results_beside_session`, :meth:`session_and_cwd`,
  :meth:`session_roots`.

Adding an agent = writing a subclass in ``ctxtool/formats/<agent>.py`` (or a package) and
registering one instance with :func:`ctxtool.formats.registry.register`. This module and the
adapters import nothing from ``ctxtool.core`` or ``ctxtool.cli`` (a test keeps that rule): an
adapter describes its format; the transforms decide what to do with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from ctxtool.formats.content import Block, as_blocks


class Usage(NamedTuple):
    """Token usage one model call recorded: the anchor of the context meter.

    ``key`` identifies the call (message id, request id): lines sharing it are snapshots of one
    streamed call, and the largest counters win.
    """

    key: tuple[str, str]
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int

    @property
    def prompt_tokens(self) -> int:
        """What the call was sent: input plus cache writes plus cache reads."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


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
    #: The JSON Schema (``schemas/<schema>.json``) one line is validated against, or None.
    schema: ClassVar[str | None] = None
    #: True when the agent's context can only be known from the whole session (OpenCode: the
    #: last compaction decides what is sent), so transforms buffer it; False: they stream.
    reads_whole_session: ClassVar[bool] = False
    #: The placeholder a persisted tool result gets: ``"claude-code"`` (``<persisted-output>``
    #: with a preview) or ``"opencode"`` (OpenCode's truncation notice). See core persist.
    placeholder_style: ClassVar[str] = "claude-code"
    #: True when clearing marks tool outputs as compacted in place (the agent hides them itself;
    #: nothing is saved) instead of replacing them with a placeholder (OpenCode's prune marks).
    clears_by_marking: ClassVar[bool] = False
    #: True when clearing appends a boundary line recording what it saved, as the agent writes
    #: one itself (Claude Code's ``microcompact_boundary``), so its usage anchor stays right.
    writes_clearing_boundary: ClassVar[bool] = False
    #: True when the agent keeps the tool results it moves out of a session in its own project
    #: folder (Claude Code: ``~/.claude/projects/<project>/<session>/tool-results``): persist
    #: saves there by default, found from :meth:`session_and_cwd` of the first lines.
    results_beside_session: ClassVar[bool] = False
    #: How ``summarize`` writes its result: ``"claude-code"`` (compact boundary + summary
    #: line), ``"opencode"`` (compaction request + summary message), ``"messages"`` (a summary
    #: message replacing the head, for plain message lists).
    summary_output: ClassVar[str] = "messages"
    #: True when ``convert`` reads this format through :meth:`iter_api_messages` (the agent
    #: stores more than messages, e.g. parts or events) rather than entry by entry.
    converts_through_messages: ClassVar[bool] = False

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

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        """The model named on an assistant message (None when it names none)."""
        model = entry.get("model")
        return model if isinstance(model, str) else None

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        """The agent's session id recorded on a line (names the store folder), or None."""
        return None

    def is_instruction(self, entry: Mapping[str, Any]) -> bool:
        """True for a line of standing instructions (a system/developer message) that stays in
        front of the conversation when its head is summarized or cut."""
        return False

    def is_api_error(self, entry: Mapping[str, Any]) -> bool:
        """True for a line recording an API error notice, not a model message (convert drops
        it)."""
        return False

    # --- usage anchors, compactions, sizing ------------------------------------------------

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        """The usage the agent recorded for the model call that wrote ``entry`` (the anchor of
        the context size), or None (no usage, a synthetic line, a format without usage)."""
        return None

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The entries the agent would send to the model now, in the order it sends them (what
        its last compaction left in view). Only called when :attr:`reads_whole_session`."""
        return list(entries)

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        """True for a message holding a compaction summary (counted as ``compact_summaries``)."""
        return False

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        """True for a line that records a compaction and starts the context over (Claude Code's
        ``compact_boundary``)."""
        return False

    # --- store location ---------------------------------------------------------------------

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """(session id, working folder) recorded on a line, each None when absent. Persist
        looks at the first lines for them when :attr:`results_beside_session`."""
        return None, None

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        """The folders where the agent keeps its sessions (``cleanup`` and ``sessions`` look
        there); empty when it keeps none on disk."""
        return []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


__all__ = ["Block", "FormatAdapter", "ResultSlot", "Usage"]
