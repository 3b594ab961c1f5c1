"""The Codex CLI adapter: what transforms ask of a rollout, answered by the modules beside it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from ctxtool.formats.adapter import (Clearer, FormatAdapter, LimitsLookup, Restorer, ResultSlot,
                                    SessionFile, SessionMarks, Usage)
from ctxtool.formats.codex.compaction import CodexWriter, CompactionTracker, context_entries
from ctxtool.formats.codex.rollout import (NAME, SCHEMA, base_instructions, claims, is_compacted,
                                           is_instruction, item_of, item_role_and_blocks,
                                           model_of, role_and_blocks, session_id_of,
                                           summary_of, tool_output, with_tool_output)
from ctxtool.formats.codex.rules import (COMPACTABLE_TOOLS, UNRECORDED_SYSTEM_TOKENS,
                                         CodexLimits, codex_limits)
from ctxtool.formats.codex.sessions import (SESSION_MARKS, codex_home, prompt_of, rollout_id,
                                            rollouts, session_roots)
from ctxtool.formats.codex.tools import snip_view, summary_view
from ctxtool.formats.codex.usage import context_window_of, usage_counts
from ctxtool.formats.codex.vacuum import superseded_compactions
from ctxtool.formats.content import Block
from ctxtool.formats.limits import AgentSettings
from ctxtool.formats.vacuum import LineEdit


class CodexAdapter(FormatAdapter):
    """Codex CLI rollouts (the package's docstring). A tool output is its own line, as OpenAI chat's
    ``role: "tool"`` messages are; the context is what follows the last ``compacted`` record."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = "Codex CLI"
    schema: ClassVar[str | None] = SCHEMA
    reads_whole_session: ClassVar[bool] = True  # a compacted record decides what is sent
    compactable_tools: ClassVar[frozenset[str]] = COMPACTABLE_TOOLS
    names_tools_its_way: ClassVar[bool] = True
    summary_keeps_lines: ClassVar[bool] = True

    def claims(self, entry: Mapping[str, Any]) -> bool:
        return claims(entry)

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        item = item_of(entry)
        if item is not None:
            return item if item_role_and_blocks(item)[0] is not None else None
        return dict(entry["payload"]) if is_compacted(entry) else None

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        return role_and_blocks(entry)

    def with_message_content(self, entry: dict[str, Any], content: Any) -> dict[str, Any]:
        raise ValueError("a Codex line holds one item: use with_tool_result_content")

    def with_tool_result_content(self, entry: dict[str, Any], tool_use_id: str,
                                 content: Any) -> dict[str, Any]:
        found = tool_output(entry)
        if found is None or found[0] != tool_use_id:
            return entry
        return with_tool_output(entry, content)

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        found = tool_output(entry)
        return [] if found is None else [ResultSlot(-1, found[0], found[1])]

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        return with_tool_output(entry, changes[-1])

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        found = tool_output(entry)
        if found is None or not clearer.wants_result(found[0]):
            return entry
        text = clearer.result(found[0], found[1], entry)
        return entry if text is None else with_tool_output(entry, text)

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        found = tool_output(entry)
        if found is None:
            return entry
        content = restorer.result(found[1], found[0])
        return entry if content is found[1] else with_tool_output(entry, content)

    def compaction_tracker(self) -> CompactionTracker:
        return CompactionTracker()

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        return summary_of(entry) if is_compacted(entry) else None

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        return model_of(entry)

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        return session_id_of(entry)

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        if entry.get("type") != "session_meta":
            return None, None
        cwd = entry["payload"].get("cwd")
        return session_id_of(entry), cwd if isinstance(cwd, str) else None

    def is_instruction(self, entry: Mapping[str, Any]) -> bool:
        # session_meta holds the base instructions Codex sends in front of every request (and
        # names the session: a cut transcript still resumes)
        return is_instruction(entry) or entry.get("type") == "session_meta"

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        counts = usage_counts(entry)
        if counts is None:
            return None
        key, uncached, cached, output = counts
        return Usage((key, ""), uncached, 0, cached, output)

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return context_entries(entries)

    def system_sent(self, entries: Iterable[Mapping[str, Any]]) -> tuple[str, int] | None:
        # the base instructions session_meta records go in front of every request, with the
        # tool definitions no line records
        meta = next((e for e in entries if e.get("type") == "session_meta"), None)
        text = base_instructions(meta) if meta is not None else ""
        return (text, UNRECORDED_SYSTEM_TOKENS) if text else None

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        return is_compacted(entry)

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        return is_compacted(entry)

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        return session_roots(env)

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        return codex_home(env)

    def snip_view(self, block: Block) -> Block:
        return snip_view(block)

    def claude_code_tool(self, block: Block) -> Block:
        return summary_view(block)

    def compaction_writer(self) -> CodexWriter:
        return CodexWriter()

    def configured_limits(self, view: list[dict[str, Any]],
                          lookup: LimitsLookup | None = None) -> Mapping[str, int]:
        """The window Codex itself measures against: the last ``token_count``'s
        ``model_context_window`` (its model's window less the share it keeps in reserve)."""
        window = next((w for e in reversed(view) if (w := context_window_of(e))), None)
        return {"context": window} if window else {}

    def overflow_rule(self, view: list[dict[str, Any]], *, window: int, context: int,
                      input_limit: int | None, output_limit: int | None,
                      env: Mapping[str, str] | None) -> CodexLimits | None:
        """Codex's own rule, measured against the window its token counts record (none
        recorded, e.g. ``--context-window`` on a rollout that has none: ctxtool's thresholds)."""
        recorded = self.configured_limits(view).get("context")
        return codex_limits(view, recorded) if recorded and recorded == window else None

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        """Where Codex compacts (``summarize --auto``): by the window its last token count
        records; none recorded, ctxtool's thresholds for ``window``."""
        recorded = None
        for entry in entries:
            recorded = context_window_of(entry) or recorded
        return codex_limits((), recorded).usable if recorded else None

    session_marks: ClassVar[SessionMarks | None] = SESSION_MARKS

    def session_files(self, env: Mapping[str, str], project: str | None = None, *,
                      archived: bool = False) -> list[SessionFile]:
        return rollouts(env, project, archived=archived)

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        return prompt_of(entry)

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterable[LineEdit]:
        return superseded_compactions(lines)

    def rewriting(self, path: Path) -> None:
        """A rollout's turns are indexed by byte offset in Codex's history database: the
        thread's rows go, so Codex indexes the rewritten file afresh (storage/codex_history)."""
        thread = rollout_id(path.name)
        if thread is None:
            return
        from ctxtool.storage.codex_history import forget_thread, history_database

        database = history_database(path)
        if database is not None:
            forget_thread(database, thread)
