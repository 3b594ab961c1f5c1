"""The Claude Code adapter: one transcript line per entry (``type`` user/assistant/system/...),
the API message under ``message``, usage on assistant lines, compact boundaries that restart the
context and tool results kept beside the session in the project folder."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ctxtool.formats.adapter import (
    BOUNDARY, CLEAR_MARK, COMPACT_MARK, ContextMark, FormatAdapter, SessionFile, SessionMarks, Usage,
)
from ctxtool.formats.claude_code import boundary, rules
from ctxtool.formats.claude_code.chain import (COMPACT_BOUNDARY, MICROCOMPACT_BOUNDARY,
                                              is_compact_boundary, is_compact_summary)
from ctxtool.formats.content import Block, as_blocks, block_text

if TYPE_CHECKING:
    from datetime import datetime, timedelta
    from pathlib import Path

    from ctxtool.formats.claude_code.compaction import ClaudeCodeWriter
    from ctxtool.formats.limits import AgentSettings, IdleCompaction, Thresholds
    from ctxtool.formats.vacuum import LineEdit

MESSAGE_TYPES = ("user", "assistant")
KEYS = ("uuid", "parentUuid", "sessionId", "isSidechain", "leafUuid", "messageId")
# line types Claude Code writes (it adds more; its lines also carry KEYS, the sure sign)
LINE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                        "queue-operation", "progress", "attachment", "pr-link", "worktree-state",
                        "custom-title", "ai-title", "agent-name", "last-prompt",
                        "permission-mode"})
# line types that hold no message, usage or boundary (and, without a "message" key, no model)
BARE_TYPES = ("progress", "file-history-snapshot")
SYNTHETIC_MODEL = "<synthetic>"  # local error notices: never a model call
# Title records, by precedence: the user's /rename, then the generated title, then the older
# "summary" lines (first one written wins for those).
TITLE_KEYS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
# User text that is not a prompt: slash-command echoes, command output, reminders, caveats.
NOT_A_PROMPT = ("<command-", "<local-command-", "<system-reminder>", "Caveat:", "<bash-",
                "[Request interrupted")
SESSION_MARKS = SessionMarks(compaction=b'"compact_boundary"',
                             compaction_compact=b'"subtype":"compact_boundary"',
                             usage=b'"usage"', model=b'"model"',
                             title=b'title"')  # custom-title, ai-title


class ClaudeCodeAdapter(FormatAdapter):
    name: ClassVar[str] = "claude-code"
    title: ClassVar[str] = "Claude Code"
    schema: ClassVar[str | None] = "claude-code-entry"
    writes_clearing_boundary: ClassVar[bool] = True
    results_beside_session: ClassVar[bool] = True
    streams_over_lines: ClassVar[bool] = True
    side_chains: ClassVar[bool] = True
    rendered_attachments: ClassVar[bool] = True
    queues_prompts: ClassVar[bool] = True
    compactions: ClassVar[str] = BOUNDARY
    summary_keeps_lines: ClassVar[bool] = True
    compaction_streams: ClassVar[bool] = True

    def claims(self, entry: Mapping[str, Any]) -> bool:
        return "type" in entry and any(k in entry for k in KEYS)

    def claims_weakly(self, entry: Mapping[str, Any]) -> bool:
        # a line of a type Claude Code writes, or one holding an API message: not any typed
        # line (another agent's lines are typed too; an unknown format is an error, not a guess)
        if isinstance(entry.get("role"), str):
            return False
        kind = entry.get("type")
        return kind in LINE_TYPES or (isinstance(kind, str)
                                      and isinstance(entry.get("message"), dict))

    def api_message(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        if entry.get("type") not in MESSAGE_TYPES:
            return None
        message = entry.get("message")
        return message if isinstance(message, dict) else None

    def role_and_blocks(self, entry: Mapping[str, Any]) -> tuple[str | None, list[Block]]:
        message = self.api_message(entry)
        if message is None:
            return None, []
        role = message.get("role")
        if role is None:
            role = entry.get("type")
        return (role if isinstance(role, str) else None), as_blocks(message.get("content"))

    def with_message_content(self, entry: dict[str, Any], content: Any) -> dict[str, Any]:
        message = dict(entry["message"])
        message["content"] = content
        new = dict(entry)
        new["message"] = message
        return new

    def model_of(self, entry: Mapping[str, Any]) -> str | None:
        message = entry.get("message")
        model = message.get("model") if isinstance(message, dict) else None
        return model if isinstance(model, str) and model != SYNTHETIC_MODEL else None

    def context_limits(self, *, model: str | None, window: int | None, max_output: int | None,
                       env: Mapping[str, str] | None, version: str | None = None,
                       settings: AgentSettings = None) -> Thresholds:
        """Claude Code's thresholds under the rule of the version that wrote the transcript
        and the settings and environment it reads (:mod:`.rules`)."""
        return rules.thresholds(version=version, model=model, window=window,
                                max_output=max_output, env=env, settings=settings)

    clearing_count = staticmethod(rules.result_tokens)  # type: ignore[assignment]

    def idle_clearing_after(self, version: str | None) -> timedelta | None:
        """Versions with idle compaction compact the whole session 54 minutes after the last
        reply: clearing meant to beat the expired prompt cache comes no later; older ones 60."""
        return rules.idle_after() if rules.rule_for(version).idle != "none" else None

    def idle_compaction(self, *, version: str | None, env: Mapping[str, str] | None,
                        settings: AgentSettings, last_reply: datetime | None,
                        context_tokens: int) -> IdleCompaction | None:
        if version is None:  # no line says which Claude Code wrote it
            return None
        return rules.idle_compaction(version=version, env=env, settings=settings,
                                     last_reply=last_reply, context_tokens=context_tokens)

    def compaction_threshold(self, entries: Iterable[Mapping[str, Any]], *, window: int,
                             env: Mapping[str, str], settings: AgentSettings = None) -> int | None:
        """The auto-compact point of the Claude Code version that wrote the session (its last
        reply's), for its model, under ``settings`` and ``env``; None when auto-compact is off
        (ctxtool's threshold then says so from the environment)."""
        version = model = None
        for entry in entries:
            if entry.get("type") == "assistant":
                version = self.agent_version(entry) or version
                model = self.model_of(entry) or model
        limits = rules.thresholds(version=version, model=model, window=window, env=env,
                                  settings=settings)
        return limits.auto_compact if limits.auto_compact_enabled else None

    def compaction_switched_off(self, kind: str, entries: Iterable[Mapping[str, Any]], *,
                                env: Mapping[str, str]) -> str | None:
        """Claude Code's own switches (:func:`rules.switched_off`), in its environment and its
        settings files; the transcript's version is read only when it matters (a switch that
        only older versions read is set)."""
        from ctxtool.storage.claude_settings import read_settings  # see test_architecture
        settings = read_settings(env)
        off = rules.switched_off(kind, env=env, settings=settings)
        older = rules.switched_off(kind, env=env, settings=settings, version="0.0.0")
        if off is None and older is not None:  # a switch only older versions read is set
            version = None
            for entry in entries:
                version = self.agent_version(entry) or version
            off = rules.switched_off(kind, env=env, settings=settings, version=version)
        return off

    def agent_version(self, entry: Mapping[str, Any]) -> str | None:
        version = entry.get("version")  # the Claude Code that wrote it chooses its rules
        return version if isinstance(version, str) else None

    def session_id_of(self, entry: Mapping[str, Any]) -> str | None:
        session = entry.get("sessionId")
        return session if isinstance(session, str) else None

    def vacuum_lines(self, lines: Iterable[bytes]) -> Iterable[LineEdit]:
        """Entries written more than once (formats/claude_code/vacuum.py)."""
        from ctxtool.formats.claude_code.vacuum import repeated_entries

        return repeated_entries(lines)

    def session_and_cwd(self, entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        session, cwd = entry.get("sessionId"), entry.get("cwd")
        return (session if isinstance(session, str) else None,
                cwd if isinstance(cwd, str) else None)

    session_marks: ClassVar[SessionMarks | None] = SESSION_MARKS

    def session_roots(self, env: Mapping[str, str]) -> list[Path]:
        # where sessions are: asked by sessions and selectors, not by a run on a file (pathlib)
        from ctxtool.storage.session_dirs import projects_dir

        return [projects_dir(env)]

    def home_folder(self, env: Mapping[str, str]) -> Path | None:
        """``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
        from ctxtool.storage.paths import claude_config_dir  # see session_roots

        return claude_config_dir(env)

    def session_files(self, env: Mapping[str, str], project: str | None = None, *,
                      archived: bool = False) -> list[SessionFile]:
        """``<config>/projects/<slug of cwd>/<id>.jsonl`` (sub-agent files left out)."""
        from ctxtool.storage.session_dirs import claude_session_files  # see session_roots

        return [SessionFile(p.stem, p, p.parent.name) for p in claude_session_files(env, project)]

    def session_prompt(self, entry: Mapping[str, Any]) -> str | None:
        """A user line's text, unless it is a tool result, a compact summary, a meta line or a
        slash-command echo."""
        if entry.get("type") != "user" or entry.get("isMeta") is True \
                or entry.get("isCompactSummary") is True:
            return None
        for block in self.role_and_blocks(entry)[1]:
            if block.get("type") != "text":
                return None  # tool results, images first: not a typed prompt
            text = block_text(block).strip()
            if text and not text.startswith(NOT_A_PROMPT):
                return text
        return None

    def session_title(self, entries: Iterable[Mapping[str, Any]]) -> str | None:
        """Custom title, then generated, then summary lines; for each kind the last one read
        wins, except summaries (the first)."""
        titles: dict[str, str] = {}
        for entry in entries:
            kind = entry.get("type")
            key = TITLE_KEYS.get(kind) if isinstance(kind, str) else None
            value = entry.get(key) if key else None
            if isinstance(value, str) and value.strip() \
                    and not (kind == "summary" and kind in titles):
                titles[str(kind)] = value
        return next((titles[k] for k in TITLE_KEYS if k in titles), None)

    def is_api_error(self, entry: Mapping[str, Any]) -> bool:
        return entry.get("isApiErrorMessage") is True

    def is_own_reply(self, entry: Mapping[str, Any]) -> bool:
        message = entry.get("message")
        return isinstance(message, dict) and message.get("model") == SYNTHETIC_MODEL

    def usage_of(self, entry: Mapping[str, Any]) -> Usage | None:
        if entry.get("type") != "assistant":
            return None
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("model") == SYNTHETIC_MODEL:
            return None
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return None
        try:  # C calls only in the common case: this runs for every assistant line
            counts = _COUNTERS(usage)
            valid = _ONLY_INTS(map(type, counts)) and min(counts) >= 0
        except KeyError:
            valid = False
        if not valid:  # missing, negative or odd counters
            counts = tuple(_int(usage.get(name)) for name in _COUNTER_NAMES)
        if counts[0] + counts[1] + counts[2] <= 0:
            return None
        key = (str(message.get("id") or ""), str(entry.get("requestId") or ""))
        return _new_tuple(Usage, (key, *counts))  # as Usage(key, *counts), without a Python call

    def clearing_record(self, *, last: Mapping[str, Any] | None, ids: list[str], trigger: str,
                        pre_tokens: int, tokens_saved: int, now: Any,
                        after: Mapping[str, Any] | None,
                        estimated_saved: int | None = None) -> dict[str, Any]:
        """A ``microcompact_boundary`` line, as Claude Code appends after clearing."""
        return boundary.clearing_boundary(last=last, ids=ids, trigger=trigger,
                                          pre_tokens=pre_tokens, tokens_saved=tokens_saved,
                                          now=now, after=after, estimated_saved=estimated_saved)

    def without_clearing_records(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        return boundary.without_own_boundaries(entries)

    def cleared_ids_recorded(self, entry: Mapping[str, Any]) -> list[str] | None:
        return boundary.cleared_ids(entry)

    # the chain's own tests, called for every line without a method in between
    is_summary_entry = staticmethod(is_compact_summary)  # type: ignore[assignment]
    is_compaction_record = staticmethod(is_compact_boundary)  # type: ignore[assignment]

    def own_context(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        from ctxtool.formats.claude_code.context_usage import context_usage  # only on such lines

        return context_usage(entry) if entry.get("type") in ("system", "user") else None

    def is_bare_line(self, entry: Mapping[str, Any]) -> bool:
        # a tuple, not a set: a "type" that cannot be hashed (a list...) is simply not one
        return entry.get("type") in BARE_TYPES and "message" not in entry

    def compaction_writer(self) -> ClaudeCodeWriter:
        # imported when summarize runs, not whenever the adapter is loaded (every command)
        from ctxtool.formats.claude_code.compaction import ClaudeCodeWriter
        return ClaudeCodeWriter()

    def context_mark(self, entry: Mapping[str, Any]) -> ContextMark | None:
        if entry.get("type") != "system":  # the boundaries are system entries
            return None
        subtype = entry.get("subtype")
        if subtype == COMPACT_BOUNDARY:
            return compact_mark(entry.get("compactMetadata"))
        if subtype == MICROCOMPACT_BOUNDARY:
            meta = entry.get("microcompactMetadata")
            if not isinstance(meta, dict):
                return ContextMark(CLEAR_MARK, saved=0)
            # ctxtool's own estimate of what left the anchor, when it wrote one; else Claude
            # Code's count (characters / 4)
            estimated = meta.get(boundary.ESTIMATED_SAVED)
            return ContextMark(CLEAR_MARK, saved=_int(meta.get("tokensSaved") if estimated is None
                                                      else estimated))
        return None


def compact_mark(meta: Any) -> ContextMark:
    """A ``compact_boundary``'s ``compactMetadata`` as a :class:`ContextMark`: the dropped
    tokens so far, the messages it keeps by reference (``preservedMessages`` uuids, or the
    ``preservedSegment`` chain from its tail back to its head), its trigger and ``preTokens``."""
    if not isinstance(meta, Mapping):
        return ContextMark(COMPACT_MARK)
    dropped = meta.get("cumulativeDroppedTokens")
    listed, segment = meta.get("preservedMessages"), meta.get("preservedSegment")
    # the ``uuids`` Claude Code 2.1.332 splices back in (``allUuids`` also lists lines it drops)
    uuids = listed.get("uuids") or listed.get("allUuids") if isinstance(listed, dict) else None
    trigger, pre = meta.get("trigger"), meta.get("preTokens")
    return ContextMark(
        COMPACT_MARK, dropped_before=dropped if isinstance(dropped, int) and dropped > 0 else 0,
        kept_ids=uuids if isinstance(uuids, list) else None,
        kept_segment=(segment.get("headUuid"), segment.get("tailUuid"))
        if isinstance(segment, dict) else None,
        trigger=trigger if isinstance(trigger, str) else None,
        pre_tokens=pre if isinstance(pre, int) and not isinstance(pre, bool) else None)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


_new_tuple = tuple.__new__
_COUNTER_NAMES = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                  "output_tokens")
_COUNTERS = operator.itemgetter(*_COUNTER_NAMES)
_ONLY_INTS = frozenset({int}).issuperset

__all__ = ["ClaudeCodeAdapter", "MESSAGE_TYPES", "SYNTHETIC_MODEL"]
