"""Converting: how ``convert`` reads the format (entry by entry, or through its messages) and
what it keeps when the format is the target."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from ctxtool.formats.capabilities.reading import ReadingAdapter


class ConvertingAdapter(ReadingAdapter):
    """``convert``'s source and target rules."""

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

    def iter_api_messages(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """For :attr:`converts_through_messages`: ``{"role", "content": [blocks]}`` for each
        message the agent sends the model, in its order and split as it splits them."""
        raise NotImplementedError(f"{self.name} converts entry by entry")
