"""The OpenCode adapter: one ``{"info", "parts"}`` message per line (after a ``{"session"}``
line), content in parts seen as blocks the way OpenCode shows them (:mod:`.view`), usage on the
finished assistant message, a finished summary answering a compaction request that restarts the
context (:mod:`.context`, :mod:`.session`), prune marks instead of placeholders when clearing,
and OpenCode's own truncation notice when a result is persisted (:mod:`.truncate`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ctxtool.formats.adapter import (AGENT_RULE, Clearer, FormatAdapter, OutputTruncation, Restorer,
                                    ResultSlot, Usage)
from ctxtool.formats.content import Block, tool_result_text
from ctxtool.formats.limits import AgentSettings
from ctxtool.formats.opencode import truncate, view
from ctxtool.formats.opencode.context import (CompactionTracker, compaction_request,
                                              completed_compactions, context_entries,
                                              is_finished_summary, is_summary, last_step_split,
                                              opencode_usage)
from ctxtool.formats.opencode.rule import (OpenCodeLimits, opencode_limits, session_model,
                                           session_version, usable_tokens)
from ctxtool.formats.opencode.session import (PruneResult, filter_compacted_opencode,
                                              is_older_session, mark_compacted, prune_marks)
from ctxtool.formats.opencode.switches import switched_off
from ctxtool.formats.opencode.tools import SNIP_TOOLS, as_claude_code_tool
from ctxtool.formats.opencode.validate import OpenCodeChecks
from ctxtool.types import location_of

if TYPE_CHECKING:
    from pathlib import Path

    from ctxtool.formats.vacuum import DatabaseVacuum
    from ctxtool.formats.opencode.compaction import OpenCodeWriter
    from ctxtool.llm.base import AgentPrompt


class OpenCodeAdapter(FormatAdapter):
    name: ClassVar[str] = "opencode"
    title: ClassVar[str] = "OpenCode"
    schema: ClassVar[str | None] = "opencode-message"
    reads_whole_session: ClassVar[bool] = True
    placeholder_style: ClassVar[str] = "opencode"
    output_truncation: ClassVar[OutputTruncation | None] = truncate  # type: ignore[assignment]
    clears_by_marking: ClassVar[bool] = True
    clearing_strategy: ClassVar[str] = "opencode"
    own_tool_names: ClassVar[Mapping[str, frozenset[str]] | None] = SNIP_TOOLS
    names_tools_its_way: ClassVar[bool] = True
    compactions: ClassVar[str] = AGENT_RULE
    converts_through_messages: ClassVar[bool] = True
    convert_targets: ClassVar[tuple[str, ...]] = ("opencode", "opencode-export", "opencode-storage")
    summary_keeps_lines: ClassVar[bool] = True
    restore_files_refusal: ClassVar[tuple[str, str] | None] = (
        "--restore-files does not apply to OpenCode sessions",
        "OpenCode re-attaches no files after a compaction")

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

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        """A tool part's result text (``state.output``, or the error) becomes the placeholder;
        its input, attachments and times stay. Parts OpenCode already shows as cleared
        (``state.time.compacted``) are left alone."""
        new = entry
        for part in view.parts_of(entry):
            call_id = part.get("callID")
            if not clearer.wants_result(call_id):
                continue
            text = view.output_text(part)
            if text is None or view.obj(view.obj(part.get("state")).get("time")).get("compacted"):
                continue
            replaced = clearer.result(call_id, text, entry)
            if replaced is not None:
                new = view.with_output_text(new, call_id, replaced)
        return new

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        """A tool part's result text that is a placeholder gets the saved text back, and a part
        marked ``state.time.compacted`` (microcompact's or OpenCode's own prune) loses the mark:
        it still holds its output, which OpenCode then sends again instead of its placeholder."""
        new = _unmark_compacted(entry, restorer)
        for part in view.parts_of(entry):
            text = view.output_text(part)
            if text is None:
                continue
            call_id = str(part.get("callID") or "")
            content = restorer.result(text, call_id)
            if content is not text:
                new = view.with_output_text(new, call_id, content if isinstance(content, str)
                                            else tool_result_text(content))
        return new

    def marked_cleared(self, entries: list[dict[str, Any]], ids: Iterable[str], *,
                       now_ms: int) -> tuple[list[dict[str, Any]], list[str]]:
        """Tool parts marked ``state.time.compacted``, as OpenCode's prune marks them."""
        return mark_compacted(entries, list(ids), now_ms=now_ms)

    def own_prune(self, entries: list[dict[str, Any]], *, now_ms: int, protect: int,
                  minimum: int, protected_tools: set[str], protect_turns: int) -> PruneResult:
        """``SessionCompaction.prune``, exactly (:func:`.session.prune_marks`)."""
        return prune_marks(entries, now_ms=now_ms, protect=protect, minimum=minimum,
                           protected_tools=protected_tools, protect_turns=protect_turns)

    def results_named(self, entry: Mapping[str, Any]) -> Iterator[tuple[str | None, str, str]]:
        for part in view.parts_of(entry):
            if part.get("type") == "tool":
                yield (view.string(part.get("callID")), str(part.get("tool") or "?"),
                       view.output_text(part) or "")

    def iter_api_messages(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        return view.iter_api_messages(entries)

    def is_compaction_request(self, entry: Mapping[str, Any]) -> bool:
        return compaction_request(entry) is not None

    def typed_text(self, entry: Mapping[str, Any]) -> str | None:
        """Synthetic parts (a file read for an @mention, the "continue" after an automatic
        compaction) and ignored ones are OpenCode's."""
        typed = [str(p.get("text") or "") for p in view.parts_of(entry) if p.get("type") == "text"
                 and not p.get("synthetic") and not p.get("ignored")]
        return "\n".join(typed)

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        """OpenCode's data folder (its database, its tool outputs)."""
        from ctxtool.storage.session_dirs import opencode_data_dir  # only cleanup asks

        return opencode_data_dir(env)

    def vacuum_database(self) -> DatabaseVacuum:
        """The ``event`` rows OpenCode 1.18.33 never reads back, then ``VACUUM``
        (:mod:`ctxtool.storage.opencode_vacuum`; why: docs/vacuum.md)."""
        from ctxtool.storage.opencode_vacuum import OpenCodeVacuum  # sqlite3: when one is asked

        return OpenCodeVacuum()

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        """The first text part of a user message, OpenCode's own parts (``synthetic``,
        ``ignored``) left out."""
        info = entry.get("info")
        if not isinstance(info, dict) or info.get("role") != "user":
            return None
        for part in view.parts_of(entry):
            text = part.get("text")
            if part.get("type") == "text" and not part.get("synthetic") \
                    and not part.get("ignored") and isinstance(text, str) and text.strip():
                return text
        return None

    def claude_code_tool(self, block: Block) -> Block:
        return as_claude_code_tool(block)

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        if not is_summary(view.obj(entry.get("info"))):
            return None
        return "\n".join(str(p.get("text") or "") for p in view.parts_of(entry)
                         if p.get("type") == "text")

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        model = view.obj(entry.get("info")).get("modelID")
        return model if isinstance(model, str) else None

    def timestamp_of(self, entry: Mapping[str, Any]) -> Any:
        """The message info's epoch milliseconds: completed, else created."""
        times = view.obj(entry.get("info")).get("time")
        return (times.get("completed") or times.get("created")) if isinstance(times, dict) else None

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        return view.session_id(entry)

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        recorded = opencode_usage(entry)
        return None if recorded is None else Usage((recorded[0], ""), *recorded[1:])

    def results_after_usage(self, entry: Mapping[str, Any],
                            estimate: Callable[[Block], int]) -> int | None:
        return last_step_split(entry, estimate)[1]

    def compaction_tracker(self) -> CompactionTracker:
        return CompactionTracker()

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return context_entries(entries)

    def entries_sent(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return filter_compacted_opencode(entries)

    def compaction_starts(self, entries: Iterable[dict[str, Any]]) -> Iterator[tuple[int, str | None]]:
        """The compaction requests a finished summary answered (keeps the request ids only)."""
        requests: dict[Any, tuple[int, str | None]] = {}
        for index, entry in enumerate(entries):
            if not view.is_message(entry):
                continue
            info = entry["info"]
            parent = view.string(info.get("parentID"))  # looked up as stored: as a string
            if compaction_request(entry) is not None:
                requests[view.string(info.get("id"))] = (index, location_of(entry))
            elif is_finished_summary(info) and parent in requests:
                yield requests[parent]

    def count_compactions(self, entries: Iterable[dict[str, Any]]) -> int:
        return completed_compactions(entries)

    def configured_limits(self, view: list[dict[str, Any]],
                          lookup: Callable[..., Mapping[str, int]] | None) -> Mapping[str, int]:
        return lookup(*session_model(view)) if lookup else {}

    def overflow_rule(self, view: list[dict[str, Any]], *, window: int, context: int,
                      input_limit: int | None, output_limit: int | None,
                      env: Mapping[str, str] | None) -> OpenCodeLimits:
        reserved = off = None
        if env is not None:  # OpenCode's own config and flags, as it reads them
            reserved = _reserved(view, env)
            off = self.compaction_switched_off("auto", view, env=env)
        return opencode_limits(view, window=window, context=context, input_limit=input_limit,
                               output_limit=output_limit, reserved=reserved, switched_off=off,
                               env=env)

    def own_checks(self) -> OpenCodeChecks:
        return OpenCodeChecks()

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        from ctxtool.storage.opencode_config import model_limits  # see test_architecture
        entries = list(entries)  # a session is read whole anyway (reads_whole_session)
        provider, model, folder = session_model(entries)
        limits = model_limits(provider, model, env=env, directory=folder)
        return usable_tokens(window=window, input_limit=limits.get("input"),
                             output_limit=limits.get("output"), reserved=_reserved(entries, env),
                             env=env, older=is_older_session(session_version(entries)))

    def compaction_switched_off(self, kind: str, entries: Iterable[Mapping[str, Any]], *,
                                env: Mapping[str, str]) -> str | None:
        # OpenCode's config sets these (the project's too: the session's folder), its
        # OPENCODE_DISABLE_* flags force them off, and the session's release reads an unset
        # compaction.prune its own way (:mod:`.switches`)
        from ctxtool.storage.opencode_config import compaction_setting  # see test_architecture
        record = _session_record(entries)
        folder = record.get("directory")
        setting = compaction_setting(kind, env=env,
                                     directory=folder if isinstance(folder, str) else None)
        return switched_off(kind, setting=setting, version=record.get("version"), env=env)

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        return is_summary(view.obj(entry.get("info")))

    def is_completed_summary(self, entry: Mapping[str, Any]) -> bool:
        return is_finished_summary(view.obj(entry.get("info")))

    def summary_prompt(self, head: list[dict[str, Any]], entries: list[dict[str, Any]], *,
                       instructions: str | None) -> AgentPrompt | None:
        # imported when summarize runs, not whenever the adapter is loaded (every command)
        from ctxtool.formats.opencode.compaction import summary_prompt
        return summary_prompt(head, entries, instructions=instructions)

    def compaction_writer(self) -> OpenCodeWriter:
        from ctxtool.formats.opencode.compaction import OpenCodeWriter
        return OpenCodeWriter()


def _reserved(entries: Iterable[Mapping[str, Any]], env: Mapping[str, str]) -> int | None:
    """``compaction.reserved`` of the OpenCode config the session's folder sees."""
    from ctxtool.storage.opencode_config import compaction_reserved  # see test_architecture
    return compaction_reserved(env=env, directory=_session_folder(entries))


def _session_folder(entries: Iterable[Mapping[str, Any]]) -> str | None:
    """The session record's folder."""
    folder = _session_record(entries).get("directory")
    return folder if isinstance(folder, str) else None


def _session_record(entries: Iterable[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The session record (the session line comes first: the read stops there), else {}."""
    lines = iter(entries)
    try:
        for entry in lines:
            if view.is_session_line(entry):
                return view.obj(entry["session"])
        return {}
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()


def _unmark_compacted(entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
    parts = view.parts_of(entry)
    marked = [i for i, part in enumerate(parts)
              if "compacted" in view.obj(view.obj(part.get("state")).get("time"))]
    if not marked:
        return entry
    restorer.unmarked(len(marked))
    new_parts = list(parts)
    for i in marked:
        state = view.obj(parts[i].get("state"))
        when = {k: v for k, v in view.obj(state.get("time")).items() if k != "compacted"}
        new_parts[i] = {**parts[i], "state": {**state, "time": when}}
    return {**entry, "parts": new_parts}


__all__ = ["OpenCodeAdapter"]
