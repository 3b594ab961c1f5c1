"""Reading: what every adapter answers - which lines are its format's (detection) and what a
line says as an Anthropic-shaped message (role and content blocks, model, time, session id,
standing instructions), and how a changed message is written back in the format's own shape.
Every transform reads through it; each other capability builds on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ctxtool.formats.content import Block, as_blocks


class ReadingAdapter:
    """Identity, detection, lines and messages. Defaults: the Anthropic Messages shape (one
    ``{"role", "content"}`` object per line)."""

    #: The ``--format`` value and the ``format`` field of reports (e.g. ``"claude-code"``).
    name: ClassVar[str] = ""
    #: The agent or format as people write it, for messages (``"OpenCode"``).
    title: ClassVar[str] = ""
    #: The JSON Schema (``schemas/<schema>.json``) one line is validated against, or None.
    schema: ClassVar[str | None] = None
    #: The commands that read this format's sessions, when not all of them do yet (Gemini
    #: CLI's): the others refuse them (:mod:`ctxtool.formats.unsupported`). None: every command.
    handled_by: ClassVar[frozenset[str] | None] = None

    def claims(self, entry: Mapping[str, Any]) -> bool:
        """True when ``entry`` can only be a line of this format (a sure sign, such as Claude
        Code's ``uuid``/``sessionId`` keys). The detector asks every registered adapter in
        registration order and takes the first that claims an entry; claims of different
        adapters must not overlap."""
        return False

    def reads_document(self, document: Mapping[str, Any]) -> bool:
        """True when a file that is this one JSON object, pretty-printed over many lines, is a
        session of this format, read as one entry (Gemini CLI's older one-document sessions).
        Default False: such a file is not JSONL (an InputError at line 1)."""
        return False

    def claims_weakly(self, entry: Mapping[str, Any]) -> bool:
        """True when ``entry`` is likely of this format though no adapter claims it (asked only
        after every adapter's :meth:`claims` said False). Default False."""
        return False

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

    def is_api_error(self, entry: Mapping[str, Any]) -> bool:
        """True for a line recording an API error notice, not a model message (convert drops
        it)."""
        return False

    def is_own_reply(self, entry: Mapping[str, Any]) -> bool:
        """True for an assistant line the agent wrote itself, no model call behind it (Claude
        Code's local error notices): validate does not count it as the model called again."""
        return False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"
