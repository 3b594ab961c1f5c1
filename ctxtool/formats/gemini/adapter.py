"""The Gemini CLI adapter: a session file is a log of records (:mod:`.records` replays it into
the conversation Gemini loads), a message's content is a list of Gemini parts seen as blocks
(:mod:`.parts`), and what is sent is that conversation turned into Gemini's history, tool
results twice or three times over (:mod:`.history`). The usage anchor is the last model
record's ``tokens.input``: the whole prompt of that call (docs/gemini-format.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ctxtool.formats.adapter import (AGENT_RULE, COMPACT_MARK, Clearer, ContextMark,
                                     FormatAdapter, LimitsLookup, OutputTruncation, Restorer,
                                     ResultSlot, SessionFile, SessionMarks, Usage)
from ctxtool.formats.content import Block
from ctxtool.formats.gemini import clearing, compaction, rule
from ctxtool.formats.gemini.history import SentView, ViewRecord, sent_parts, sent_records
from ctxtool.formats.gemini.parts import model_blocks, parts_blocks
from ctxtool.formats.gemini.records import MESSAGE_TYPES, checkpoint_list, every_record, replay
from ctxtool.formats.gemini.tools import as_claude_code_tool
from ctxtool.formats.gemini.validate import GeminiChecks
from ctxtool.formats.limits import AgentSettings, Thresholds
from ctxtool.types import Entry

if TYPE_CHECKING:  # pathlib and the folders only where sessions are looked for
    from pathlib import Path

    from ctxtool.formats.gemini.compaction import GeminiWriter
    from ctxtool.formats.vacuum import LineEdit

#: How ``ctxtool sessions`` finds Gemini's lines from a file's ends: a compression's snapshot,
#: the model records' tokens and model, the title the client's summary service writes, the
#: checkpoints (``statusline`` reads from the last one)
SESSION_MARKS = SessionMarks(compaction=b"<state_snapshot>", compaction_compact=b"<state_snapshot>",
                             usage=b'"tokens"', model=b'"model"', title=b'"summary"',
                             view_start=b'"messages"')

METADATA_LINE = "its metadata line"
#: What a Gemini record's ``type`` is as a message role (info, error and warning are the CLI's
#: own notices: never sent)
ROLES = {"user": "user", "gemini": "assistant"}


def gemini_line(entry: Mapping[str, Any]) -> str | None:
    """What makes ``entry`` a line of a Gemini CLI session (named for messages), or None: the
    metadata line (``sessionId`` and ``projectHash``: no other agent writes ``projectHash``), a
    one-key ``$set``/``$rewindTo`` line, or a message record ``{id, timestamp, type, content}``
    of a Gemini type without Claude Code's ``uuid``/``message`` or a ``role``."""
    if isinstance(entry.get("sessionId"), str) and isinstance(entry.get("projectHash"), str):
        return METADATA_LINE
    if len(entry) == 1 and (isinstance(entry.get("$set"), dict)
                            or isinstance(entry.get("$rewindTo"), str)):
        return f"a {next(iter(entry))!r} record"
    kind = entry.get("type")
    if (isinstance(kind, str) and kind in MESSAGE_TYPES and isinstance(entry.get("id"), str)
            and isinstance(entry.get("timestamp"), str) and "content" in entry
            and not any(key in entry for key in ("uuid", "message", "role"))):
        return f"a {kind!r} message record"
    return None


class GeminiAdapter(FormatAdapter):
    name: ClassVar[str] = "gemini"
    title: ClassVar[str] = "Gemini CLI"
    schema: ClassVar[str | None] = "gemini-session-line"
    reads_whole_session: ClassVar[bool] = True
    converts_through_messages: ClassVar[bool] = True
    #: The commands that read Gemini sessions so far; the others refuse them
    #: (:mod:`ctxtool.formats.unsupported`) rather than report nothing to do or write lines
    #: Gemini cannot load.
    handled_by: ClassVar[frozenset[str] | None] = frozenset({
        "estimate", "statusline", "validate", "convert", "persist", "snip", "microcompact",
        "restore", "summarize", "filter-compacted", "vacuum"})
    compactions: ClassVar[str] = AGENT_RULE  # the checkpoint Gemini loads decides what is sent
    summary_keeps_lines: ClassVar[bool] = True  # a compression is appended: every line stays
    restore_files_refusal: ClassVar[tuple[str, str] | None] = (
        "--restore-files does not apply to Gemini CLI sessions",
        "Gemini CLI re-attaches no files after a compression")
    names_tools_its_way: ClassVar[bool] = True  # read_file, replace, run_shell_command...

    def claims(self, entry: Mapping[str, Any]) -> bool:
        return gemini_line(entry) is not None

    def reads_document(self, document: Mapping[str, Any]) -> bool:
        """An older session (``session-*.json``): one indented document, its metadata with its
        ``messages``, which Gemini CLI reads whole (``parseLegacyRecordFallback``) and ctxtool
        as the one-line form of it (a transform writes it back on one line, which Gemini reads
        the same)."""
        return gemini_line(document) == METADATA_LINE and isinstance(document.get("messages"), list)

    # --- lines and messages -----------------------------------------------------------------

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        """The record itself for a user or model record (its content is Gemini parts)."""
        return entry if entry.get("type") in ROLES and isinstance(entry.get("id"), str) \
            else None  # type: ignore[return-value]

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        kind = entry.get("type")
        if kind == "user" and isinstance(entry.get("id"), str):
            return "user", parts_blocks(entry.get("content"))
        if kind == "gemini" and isinstance(entry.get("id"), str):
            return "assistant", model_blocks(entry)
        return None, []

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        model = entry.get("model") if entry.get("type") == "gemini" else None
        return model if isinstance(model, str) else None

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        session = entry.get("sessionId")
        if session is None and isinstance(entry.get("$set"), dict):
            session = entry["$set"].get("sessionId")
        return session if isinstance(session, str) else None

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        from ctxtool.formats.gemini.listing import session_cwd

        return self.session_id_of(entry), session_cwd(entry)

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterable[LineEdit]:
        """Records the loader no longer uses (formats/gemini/vacuum.py)."""
        from ctxtool.formats.gemini.vacuum import gemini_dead_lines

        return gemini_dead_lines(lines)

    # --- sessions on disk (formats/gemini/sessions.py, formats/gemini/listing.py) -------------

    session_marks: ClassVar[SessionMarks | None] = SESSION_MARKS

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        from ctxtool.formats.gemini.sessions import temp_root

        return [temp_root(env)]

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        """``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
        from ctxtool.storage.gemini_settings import gemini_dir

        return gemini_dir(env)

    def session_files(self, env: Mapping[str, str], project: str | None = None, *,
                      archived: bool = False) -> list[SessionFile]:
        from ctxtool.formats.gemini.sessions import session_files

        return session_files(env, project)

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        from ctxtool.formats.gemini.listing import session_prompt

        return session_prompt(entry)

    def session_title(self, entries: Iterable[Mapping[str, Any]]) -> str | None:
        from ctxtool.formats.gemini.listing import session_title

        return session_title(entries)

    # --- usage and sizing -------------------------------------------------------------------

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        """A model record's ``tokens``: ``input`` is the whole prompt of its call (the cached
        part included: Gemini's ``promptTokenCount``), ``output`` its reply."""
        tokens = entry.get("tokens")
        if entry.get("type") != "gemini" or not isinstance(tokens, dict):
            return None
        prompt, cached, output = (_count(tokens.get(k)) for k in ("input", "cached", "output"))
        if not prompt:
            return None
        cached = min(cached, prompt)
        return Usage((str(entry.get("id")), ""), prompt - cached, 0, cached, output)

    def results_after_usage(self, entry: Mapping[str, Any],
                            estimate: Callable[[Block], int]) -> int | None:
        """What a resume sends beyond the anchor's prompt besides what follows it: the results
        its call was sent once fewer (:func:`.history.sent_records`). The call's own output is
        its recorded ``tokens.output``."""
        resent = entry.resent if isinstance(entry, ViewRecord) else []
        return sum(estimate(block) for block in parts_blocks(resent))

    def entries_sent(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records Gemini CLI sends when it resumes the session, in its order
        (:mod:`.history`): built from the lines, not the lines themselves."""
        entries = list(entries)
        return sent_records(replay(entries), entries)

    def iter_api_messages(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The messages Gemini sends on resume, each tool result once: the copies Gemini
        sends again (``toolCalls[].result`` beside the user record, the ``<id>_response``
        records) hold nothing the first does not. Each names its line."""
        answered: set[Any] = set()
        for record in self.entries_sent(entries):
            role, blocks = self.role_and_blocks(record)
            if role == "user":
                blocks = [b for b in blocks if b.get("type") != "tool_result"
                          or _first_answer(b.get("tool_use_id"), answered)]
            if role is not None and blocks:
                yield Entry({"role": role, "content": blocks}, None,
                            getattr(record, "source", "<input>"), getattr(record, "lineno", 0))

    def context_entries(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return self.entries_sent(entries)

    def dropped_messages(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The last record of every message the session held that Gemini no longer loads
        (compressed, masked under new ids, rewound), once each: the file keeps every earlier
        write as dead bytes, which are no content of their own."""
        entries = list(entries)
        live = {message.id for message in replay(entries).messages}
        return [record for message_id, record in every_record(entries).items()
                if message_id not in live]

    def is_view_start(self, entry: Mapping[str, Any]) -> bool:
        """A checkpoint (a ``$set`` of the message list, written when a session starts, resumes
        or compresses): the list replaces every message before it."""
        return checkpoint_list(entry) is not None

    def own_checks(self) -> GeminiChecks:
        return GeminiChecks()

    # --- compressions and summaries (:mod:`.compaction`) -----------------------------------

    def context_mark(self, entry: Mapping[str, Any]) -> ContextMark | None:
        """A compression restarts the context (what it records: no trigger, no size)."""
        return ContextMark(COMPACT_MARK) if compaction.is_compression_line(entry) else None

    def is_compaction_record(self, entry: Mapping[str, Any]) -> bool:
        """A checkpoint holding a ``<state_snapshot>``: the context starts over there (a resume
        writes the same one again; :meth:`count_compactions` counts it once)."""
        return compaction.is_compression_line(entry)

    def compaction_starts(self, entries: Iterable[dict[str, Any]]) -> Iterator[tuple[int, str | None]]:
        """The lines where a ``<state_snapshot>`` (Gemini's or ctxtool's) first appears."""
        return compaction.compression_starts(entries)

    def count_compactions(self, entries: Iterable[dict[str, Any]]) -> int:
        return compaction.count_compressions(entries)

    def is_summary_entry(self, entry: Mapping[str, Any]) -> bool:
        return compaction.is_snapshot(entry)

    def summary_text(self, entry: Mapping[str, Any]) -> str | None:
        return compaction.snapshot_text(entry)

    def is_compaction_request(self, entry: Mapping[str, Any]) -> bool:
        """Gemini's "Got it. Thanks for the additional context!" after a snapshot: its own
        words, not the model's."""
        return compaction.is_acknowledgement(entry)

    def typed_text(self, entry: Mapping[str, Any]) -> str | None:
        """Nothing for the ``<session_context>`` (and hook context) Gemini writes itself."""
        return "" if compaction.is_agent_context(entry) else None

    def claude_code_tool(self, block: Block) -> Block:
        return as_claude_code_tool(block)

    def compaction_writer(self) -> GeminiWriter:
        return compaction.GeminiWriter(lambda entries: [m.record for m in replay(entries).messages])

    # --- clearing and restoring (formats/gemini/clearing.py) -----------------------------------

    placeholder_style: ClassVar[str] = "gemini"
    output_truncation: ClassVar[OutputTruncation | None] = clearing  # type: ignore[assignment]
    clearing_strategy: ClassVar[str] = "gemini"
    clearing_defaults: ClassVar[Mapping[str, Any]] = {
        "target": clearing.PROTECTED_TOOL_TOKENS, "clear_at_least": clearing.MIN_PRUNABLE_TOKENS,
        "protect": clearing.EXEMPT_TOOLS}
    compactable_tools: ClassVar[frozenset[str]] = clearing.COMPACTABLE_TOOLS
    clearing_count: ClassVar[Callable[[Any], int] | None] = staticmethod(clearing.part_tokens)
    own_tool_names: ClassVar[Mapping[str, frozenset[str]] | None] = clearing.SNIP_TOOLS
    results_beside_session: ClassVar[bool] = True
    names_cwd: ClassVar[bool] = False

    def snip_view(self, block: Block) -> Block:
        return clearing.snip_view(block)

    def result_slots(self, entry: Mapping[str, Any]) -> list[ResultSlot]:
        return clearing.result_slots(entry)

    def with_result_contents(self, entry: dict[str, Any],
                             changes: Mapping[int, Any]) -> dict[str, Any]:
        return clearing.with_result_contents(entry, changes)

    def cleared(self, entry: dict[str, Any], clearer: Clearer) -> dict[str, Any]:
        return clearing.cleared(entry, clearer)

    def restored(self, entry: dict[str, Any], restorer: Restorer) -> dict[str, Any]:
        return clearing.restored(entry, restorer)

    def cleared_text(self, content: Any, path: str) -> str | None:
        return clearing.masked_snippet(content, path) if isinstance(content, str) else None

    def clearing_view(self, entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | None:
        return self.entries_sent(entries)

    def results_folder(self, file: str, session_id: str | None) -> Path | None:
        return clearing.results_folder(file, session_id)

    # --- Gemini's window and compression ----------------------------------------------------

    def configured_limits(self, view: list[dict[str, Any]],
                          lookup: LimitsLookup | None) -> Mapping[str, int]:
        """The window Gemini CLI measures the session's model in (:func:`.rule.token_limit`)."""
        return {"context": rule.token_limit(_last_model(view))}

    def context_limits(self, *, model: str | None, window: int | None, max_output: int | None,
                       env: Mapping[str, str] | None, version: str | None = None,
                       settings: AgentSettings = None) -> Thresholds:
        return rule.thresholds(model=model, window=window)

    def overflow_rule(self, view: list[dict[str, Any]], *, window: int, context: int,
                      input_limit: int | None, output_limit: int | None,
                      env: Mapping[str, str] | None) -> rule.GeminiCompression:
        """Gemini's compression point under the settings files it reads for the session's
        folder (none read when ``env`` is None), and its verdict on the last prompt."""
        threshold, source = _threshold(view, env)
        last = next((usage.prompt_tokens for entry in reversed(view)
                     if (usage := self.usage_of(entry)) is not None), None)
        history = rule.gemini_estimate(part for entry in view for part in sent_parts(entry))
        return rule.GeminiCompression(window, threshold, source, last, history)

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        view = self.entries_sent(entries)  # type: ignore[arg-type]
        return rule.compress_at(window, _threshold(view, env)[0])


def _last_model(view: Iterable[Mapping[str, Any]]) -> str | None:
    models = [entry.get("model") for entry in view if entry.get("type") == "gemini"]
    return next((m for m in reversed(models) if isinstance(m, str)), None)


def _threshold(view: list[dict[str, Any]], env: Mapping[str, str] | None) -> tuple[float, str]:
    """``model.compressionThreshold`` and the file that sets it, else Gemini's default."""
    if env is not None:
        from ctxtool.storage.gemini_settings import compression_setting, project_folder

        metadata = view.metadata if isinstance(view, SentView) else {}
        project = project_folder(metadata.get("projectHash"), env)
        found = compression_setting(env, project)
        if found is not None:
            return found[0], str(found[1])
    return rule.DEFAULT_THRESHOLD, "default"


def _first_answer(call_id: Any, answered: set[Any]) -> bool:
    if call_id in answered:
        return False
    answered.add(call_id)
    return True


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


__all__ = ["GeminiAdapter", "gemini_line"]
