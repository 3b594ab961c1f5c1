"""The OpenCode adapter: one ``{"info", "parts"}`` message per line (after a ``{"session"}``
line), content in parts seen as blocks the way OpenCode shows them (:mod:`.view`), usage on the
finished assistant message, a finished summary answering a compaction request that restarts the
context (:mod:`.context`, :mod:`.session`), prune marks instead of placeholders when clearing,
and OpenCode's own truncation notice when a result is persisted (:mod:`.truncate`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from ctxtool.formats.adapter import FormatAdapter, ResultSlot, Usage
from ctxtool.formats.content import Block, tool_result_text
from ctxtool.formats.opencode import view
from ctxtool.formats.opencode.context import context_entries, is_summary, opencode_usage


class OpenCodeAdapter(FormatAdapter):
    name: ClassVar[str] = "opencode"
    schema: ClassVar[str | None] = "opencode-message"
    reads_whole_session: ClassVar[bool] = True
    placeholder_style: ClassVar[str] = "opencode"
    clears_by_marking: ClassVar[bool] = True
    summary_output: ClassVar[str] = "opencode"
    converts_through_messages: ClassVar[bool] = True

    def claims(self, entry: Mapping[str, Any]) -> bool:
        if isinstance(entry.get("info"), dict) and isinstance(entry.get("parts"), list):
            return True
        # the {"session": ...} line ctxtool convert writes before the messages
        return (isinstance(entry.get(view.SESSION_KEY), dict) and "role" not in entry
                and "type" not in entry)

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        """The message's ``info`` (role, id, time, tokens...); its content is in the parts."""
        return entry["info"] if view.is_message(entry) else None

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        message = self.api_message(entry)
        if message is None:
            return None, []
        role = message.get("role")
        return (role if isinstance(role, str) else None), view.message_blocks(entry)

    def with_message_content(self, entry: dict[str, Any], content: Any) -> dict[str, Any]:
        raise ValueError("OpenCode content lives in parts: use with_tool_result_content or "
                         "ctxtool.formats.opencode.session")

    def with_tool_result_content(self, entry: dict[str, Any], tool_use_id: str,
                                 content: Any) -> dict[str, Any]:
        return view.with_tool_output(entry, tool_use_id, content, text_of=tool_result_text)

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        """The result text of each tool part OpenCode still shows (index = the part's)."""
        return [ResultSlot(i, str(part.get("callID") or ""), text)
                for i, part in enumerate(view.parts_of(entry))
                if (text := view.output_text(part)) is not None
                and not view.obj(view.obj(part.get("state")).get("time")).get("compacted")]

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        for index, content in changes.items():
            call_id = str(view.parts_of(entry)[index].get("callID") or "")
            entry = view.with_output_text(entry, call_id, content)
        return entry

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        model = view.obj(entry.get("info")).get("modelID")
        return model if isinstance(model, str) else None

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        return view.session_id(entry)

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        recorded = opencode_usage(entry)
        return None if recorded is None else Usage((recorded[0], ""), *recorded[1:])

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return context_entries(entries)

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        return is_summary(view.obj(entry.get("info")))


__all__ = ["OpenCodeAdapter"]
