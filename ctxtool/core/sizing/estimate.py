"""``estimate``: how much of the context window a transcript occupies, and what fills it.

:func:`estimate` makes one pass over the entries and keeps only small running totals (the
largest tool results in a bounded heap), so it works on transcripts of any size. The context
"now" is everything after the last compact boundary, sized by :class:`ContextMeter` (the usage
anchor of the last API call plus the estimate of what came after it; see ``core/sizing/meter.py``).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from ctxtool.core.sizing.meter import DEFAULT_SYSTEM_TOKENS, ContextMeter, Usage
from ctxtool.core.sizing.status import status_of
from ctxtool.clock import parse_timestamp
from ctxtool.core.sizing.tokens import (
    DEFAULT_WINDOW, IMAGE_TOKENS, LONG_WINDOW, MESSAGE_OVERHEAD, AgentSettings, Thresholds,
    context_window, estimate_block_tokens, estimate_entry_tokens, estimate_text_tokens, thresholds,
)
from ctxtool.formats.adapter import LimitsLookup, OverflowVerdict
from ctxtool.formats.limits import IdleCompaction
from ctxtool.formats.registry import adapter_for
from ctxtool.types import location_of

CATEGORIES = ("system_and_tools", "user_text", "assistant_text", "thinking", "tool_inputs",
              "tool_results", "images", "compact_summaries", "system_messages")
# Input keys that say what a tool worked on, most telling first (Read/Edit/Write, Bash, Grep...).
TARGET_KEYS = ("file_path", "notebook_path", "filePath", "path", "command", "pattern", "url",
               "query", "description", "prompt")  # filePath: OpenCode's read/edit/write
TARGET_WIDTH = 120
DEFAULT_TOP = 10


class Offender(NamedTuple):
    """One large tool result in the current context."""

    tokens: int
    tool: str
    tool_use_id: str
    target: str | None
    location: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "tool": self.tool, "tool_use_id": self.tool_use_id,
                "target": self.target, "location": self.location}


class EstimateReport(NamedTuple):
    """What ``ctxtool estimate`` reports for one transcript (see schemas/estimate-report)."""

    source: str | None
    format: str
    model: str | None
    method: str  # "usage", "heuristic" or "exact"
    context_tokens: int
    total_tokens: int
    system_tokens: int
    anchor: Usage | None
    estimated_after_anchor: int
    entries: int
    messages: int
    compact_boundaries: int
    breakdown: dict[str, int]
    tool_results_by_tool: dict[str, int]
    top: list[Offender]
    limits: Thresholds
    window_source: str  # "option", "model", "usage" (a prompt larger than 200K was seen), "default"
    #: the agent's own overflow rule, when it has one (OpenCode, Codex CLI), see
    #: :meth:`ctxtool.formats.adapter.FormatAdapter.overflow_rule`
    agent_rule: OverflowVerdict | None = None
    #: the agent's own compaction while idle (Claude Code's, for transcripts recording a version)
    idle: IdleCompaction | None = None
    #: the agent's own count, the last one the transcript records (Claude Code's /context):
    #: :meth:`ctxtool.formats.adapter.FormatAdapter.own_context` plus its ``location`` and
    #: ``timestamp``
    agent_context: dict[str, Any] | None = None

    @property
    def compact_at(self) -> int:
        """Where the agent compacts: by its own rule when it has one (OpenCode's usable
        tokens, Codex's 90% of the model's window), else Claude Code's auto-compact threshold."""
        return self.agent_rule.usable if self.agent_rule is not None else self.limits.auto_compact

    @property
    def status(self) -> str:
        """ok / warning / auto_compact / blocking: the highest threshold the context reached."""
        return status_of(self.context_tokens, self.limits, self.compact_at)

    def as_dict(self) -> dict[str, Any]:
        limits, used = self.limits, self.context_tokens
        rule = self.agent_rule
        extra = {} if rule is None else {rule.report_key: rule.as_dict()}
        return {
            "source": self.source, "format": self.format, "model": self.model,
            "method": self.method, "context_tokens": used, "total_tokens": self.total_tokens,
            "system_tokens": self.system_tokens,
            "anchor": None if self.anchor is None else {
                **self.anchor.as_dict(), "estimated_after": self.estimated_after_anchor},
            "entries": self.entries, "messages": self.messages,
            "compact_boundaries": self.compact_boundaries,
            "breakdown": dict(self.breakdown),
            "tool_results_by_tool": dict(self.tool_results_by_tool),
            "top": [o.as_dict() for o in self.top],
            "thresholds": {**limits.as_dict(), "window_source": self.window_source},
            "percent": {"window": _percent(used, limits.window),
                        "effective": _percent(used, limits.effective),
                        "auto_compact": _percent(used, self.compact_at)},
            "tokens_until_auto_compact": max(0, self.compact_at - used),
            "status": self.status,
            "idle_compaction": None if self.idle is None else self.idle.as_dict(), **extra,
            **({"agent_context": self.agent_context} if self.agent_context else {}),
        }

    def with_exact(self, message_tokens: int) -> EstimateReport:
        """The report with the context counted by the API (messages) plus the system tokens."""
        context = message_tokens + self.system_tokens
        rest = sum(v for k, v in self.breakdown.items() if k != "system_and_tools")
        breakdown = {**self.breakdown, "system_and_tools": max(0, context - rest)}
        return self._replace(method="exact", context_tokens=context, breakdown=breakdown,
                             total_tokens=self.total_tokens - self.context_tokens + context)


def _percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole > 0 else 0.0


# --- one entry: tokens by category ----------------------------------------------------------------

_KIND_CATEGORY: dict[Any, str] = {
    "image": "images", "tool_result": "tool_results", "web_search_tool_result": "tool_results",
    "tool_use": "tool_inputs", "server_tool_use": "tool_inputs", "thinking": "thinking",
    "redacted_thinking": "thinking"}
_TEXT_CATEGORY: dict[str | None, str] = {  # other roles: user_text
    "assistant": "assistant_text", "system": "system_messages", "developer": "system_messages"}


def block_category(block: dict[str, Any], role: str | None) -> str:
    kind = block.get("type")
    text = _TEXT_CATEGORY.get(role, "user_text")
    return _KIND_CATEGORY.get(kind, text) if isinstance(kind, str) else text


def _images_in(block: dict[str, Any]) -> int:
    content = block.get("content")
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")


def entry_breakdown(entry: dict[str, Any], fmt: str) -> dict[str, int]:
    """Estimated tokens of one entry by category; the values add up to
    :func:`ctxtool.core.sizing.tokens.estimate_entry_tokens`. Images inside tool results count as
    images."""
    parts: dict[str, int] = {}
    _Segment(0, fmt).add(entry, parts)
    return parts


def main_category(parts: Mapping[str, int]) -> str | None:
    return max(parts, key=lambda k: parts[k]) if parts else None


# --- tool targets and offenders -------------------------------------------------------------------

def tool_target(tool_input: Any) -> str | None:
    """What a tool call worked on: a file path, command, pattern, URL... (shortened)."""
    if not isinstance(tool_input, dict):
        return None
    for key in TARGET_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text if len(text) <= TARGET_WIDTH else text[:TARGET_WIDTH - 1] + "…"
    return None


def _count(breakdown: dict[str, int], category: str, tokens: int,
           parts: dict[str, int] | None) -> None:
    breakdown[category] = breakdown.get(category, 0) + tokens
    if parts is not None:  # the entry's own breakdown (annotate, entry_breakdown)
        parts[category] = parts.get(category, 0) + tokens


class _Segment:
    """Totals for the entries after the last compact boundary (the context now)."""

    def __init__(self, top: int, fmt: str) -> None:
        self.top = top
        adapter = adapter_for(fmt)  # its hooks looked up once, not for every line
        self._role_and_blocks = adapter.role_and_blocks
        self._is_summary = adapter.is_summary_entry
        self.breakdown: dict[str, int] = {}
        self.by_tool: dict[str, int] = {}
        self.tokens = 0
        self.tools: dict[str, tuple[str, Any]] = {}  # tool_use id -> (name, input)
        self._heap: list[tuple[int, int, Offender]] = []
        self._seq = itertools.count()

    def add(self, entry: dict[str, Any],
            parts: dict[str, int] | None = None) -> tuple[str | None, int]:
        """Count one entry: returns its role and its tokens (0: no message content), and adds
        them by category to the segment's breakdown (and to ``parts`` when given). The message
        framing counts with the first block; images in tool results count as images. (One pass
        over the blocks, no intermediate lists: this runs for every line of the transcript.)"""
        role, blocks = self._role_and_blocks(entry)
        if not blocks:
            return role, 0
        summary = self._is_summary(entry)
        text_category = "compact_summaries" if summary else _TEXT_CATEGORY.get(role, "user_text")
        breakdown, total, framing = self.breakdown, 0, MESSAGE_OVERHEAD
        for block in blocks:
            kind = block.get("type")
            tokens = estimate_block_tokens(block)
            try:
                category = text_category if summary else _KIND_CATEGORY.get(kind, text_category)
            except TypeError:  # an unhashable "type" (a list...): plain text, as the API would
                category = text_category
            if kind == "tool_result":
                images = _images_in(block) * IMAGE_TOKENS
                if images:  # counted apart from the text
                    tokens -= images
                    total += images
                    _count(breakdown, "images", images, parts)
                self._add_result(block, entry, tokens)
            elif kind == "tool_use" and isinstance(block.get("id"), str):
                self.tools[block["id"]] = (str(block.get("name") or "?"), block.get("input"))
            tokens += framing
            framing = 0
            total += tokens
            _count(breakdown, category, tokens, parts)
        self.tokens += total
        return role, total

    def _add_result(self, block: dict[str, Any], entry: dict[str, Any], tokens: int) -> None:
        tool_id = str(block.get("tool_use_id") or "")
        name, tool_input = self.tools.pop(tool_id, ("?", None))
        self.by_tool[name] = self.by_tool.get(name, 0) + tokens
        heap = self._heap
        if self.top <= 0 or (len(heap) >= self.top and tokens <= heap[0][0]):
            return  # not among the largest: no Offender (nor its target) built
        item = (tokens, next(self._seq),
                Offender(tokens, name, tool_id, tool_target(tool_input), location_of(entry)))
        if len(heap) < self.top:
            heapq.heappush(heap, item)
        else:
            heapq.heapreplace(heap, item)

    def offenders(self) -> list[Offender]:
        return [o for _, _, o in sorted(self._heap, key=lambda i: (-i[0], i[1]))]


class Estimator:
    """The running state of :func:`estimate`: feed entries with :meth:`add`, then :meth:`report`.

    Also used entry by entry by :func:`annotate`."""

    def __init__(self, fmt: str, *, system_tokens: int | None = None,
                 top: int = DEFAULT_TOP, use_usage: bool = True) -> None:
        self.fmt = fmt
        self.top = top
        self.meter = ContextMeter(fmt, system_tokens=system_tokens, use_usage=use_usage)
        self.segment = _Segment(top, fmt)
        self.compacted = 0  # estimated tokens of what compactions took out of view
        self.entries = self.messages = self.boundaries = 0
        self.model: str | None = None
        self.version: str | None = None  # the agent's, when its rules depend on it
        self.last_reply: Any = None  # the last assistant message's timestamp, as written
        self.adapter = adapter_for(fmt)
        # the hooks called for every line, looked up once
        self._is_compaction = self.adapter.is_compaction_record
        self._model_of = self.adapter.model_of
        self._is_bare = self.adapter.is_bare_line
        self._own_context = self.adapter.own_context
        self.agent_context: dict[str, Any] | None = None  # the last one recorded
        self.view: list[dict[str, Any]] = []  # OpenCode: the messages in context (add_session)

    def add(self, entry: dict[str, Any], parts: dict[str, int] | None = None) -> None:
        """Account for one entry (and add its tokens by category to ``parts`` when given)."""
        self.entries += 1
        meter = self.meter
        if getattr(entry, "invalid", False) or not meter.in_context(entry) \
                or meter.repeated(entry):
            return
        if self._is_bare(entry):  # progress, snapshots: no hook of the others would act on it
            meter.remember(entry, 0)
            return
        if self._is_compaction(entry):
            self.boundaries += 1
            self.compacted += self.segment.tokens
            self.segment = _Segment(self.top, self.fmt)
        role, tokens = self.segment.add(entry, parts)
        meter.account(entry, tokens)
        if tokens:  # message content (not progress, snapshots, boundaries...)
            self.messages += 1
            if role == "assistant":
                self.note_model(entry)
                self.note_reply(entry)
            elif entry.get("isMeta") is True:  # output of the agent's own commands
                self._note_own_context(entry)
        elif role is None:  # a line of the agent's own naming the model of what follows
            self.note_model(entry)  # (Codex CLI's turn_context)
            self._note_own_context(entry)

    def _note_own_context(self, entry: dict[str, Any]) -> None:
        """The agent's own count of its context, when this line records one."""
        found = self._own_context(entry)
        if found is not None:
            stamp = entry.get("timestamp")
            self.agent_context = {**found, "location": location_of(entry),
                                  "timestamp": stamp if isinstance(stamp, str) else None}

    def add_session(self, entries: Iterable[dict[str, Any]]) -> None:
        """A session read whole (OpenCode, as OpenCode reads it): the messages its last
        compaction took out of view count as compacted, the others as with :meth:`add`."""
        entries = list(entries)
        self.view = self.adapter.entries_sent(entries)  # the agent's order, for its own rule
        self._observe_system(entries)
        kept = {id(e) for e in self.view}
        lines = {id(e) for e in entries}
        if not lines.issuperset(kept):  # messages rebuilt from the lines (Gemini CLI's log)
            self._add_built_view(entries)
            return
        for entry in entries:
            if id(entry) in kept:
                self.add(entry)
            else:
                self.entries += 1
                self.compacted += estimate_entry_tokens(entry, self.fmt)
        self.boundaries = self.adapter.count_compactions(entries)

    def _add_built_view(self, entries: list[dict[str, Any]]) -> None:
        """A view the agent builds from its lines rather than picks among them: its messages are
        sized in its order; what no longer reaches the model is the adapter's to say."""
        for entry in self.view:
            self.add(entry)
        self.entries = len(entries)
        self.compacted += sum(estimate_entry_tokens(entry, self.fmt)
                              for entry in self.adapter.dropped_messages(entries))
        self.boundaries = self.adapter.count_compactions(entries)

    def _observe_system(self, entries: list[dict[str, Any]]) -> None:
        """The system figure from the session's first call, in file order: the view starts
        with a kept tail whose usage predates the compaction."""
        probe = ContextMeter(self.fmt)
        for entry in entries:
            probe.add(entry)
            if not probe.observing:
                break
        observed = probe.observed_system
        sent = self.adapter.system_sent(entries) if observed is None else None
        if sent is not None:  # no call recorded: what the agent's lines say it sends
            observed = estimate_text_tokens(sent[0]) + sent[1]
        self.meter.observed_system, self.meter.observing = observed, False

    def note_model(self, entry: dict[str, Any]) -> None:
        """The model that wrote an assistant message (the last one named wins)."""
        model = self._model_of(entry)
        if model != self.model and model:
            self.model = model

    def note_reply(self, entry: dict[str, Any]) -> None:
        """The agent version and time of an assistant message (the last one wins)."""
        version = self.adapter.agent_version(entry)
        if version is not None:
            self.version = version
        stamp = self.adapter.timestamp_of(entry)
        if stamp is not None:
            self.last_reply = stamp

    def limits(self, model: str | None, window: int | None, env: Mapping[str, str] | None,
               settings: AgentSettings = None) -> tuple[Thresholds, str]:
        """Thresholds for the model, under the rule of the agent version that wrote the
        transcript and the settings it reads, and where the window size came from."""
        options = {"model": model, "env": env, "fmt": self.fmt, "version": self.version,
                   "settings": settings}
        if window:
            return thresholds(context_window_override=window, **options), "option"
        if context_window(model) != DEFAULT_WINDOW:
            return thresholds(**options), "model"
        if self.meter.peak_prompt > DEFAULT_WINDOW:  # the API accepted it: a 1M-context session
            return thresholds(context_window_override=LONG_WINDOW, **options), "usage"
        return thresholds(**options), "default"

    def idle(self, env: Mapping[str, str] | None, settings: AgentSettings) -> IdleCompaction | None:
        """The agent's own compaction of an idle session (Claude Code's), when it has one."""
        return self.adapter.idle_compaction(version=self.version, env=env, settings=settings,
                                            last_reply=parse_timestamp(self.last_reply),
                                            context_tokens=self.meter.context_tokens)

    def report(self, *, source: str | None = None, model: str | None = None,
               context_window: int | None = None, env: Mapping[str, str] | None = None,
               input_limit: int | None = None,
               model_limits: LimitsLookup | None = None,
               settings: AgentSettings = None) -> EstimateReport:
        meter, segment = self.meter, self.segment
        model = model or self.model
        limits, window_source = self.limits(model, context_window, env, settings)
        found = self.adapter.configured_limits(self.view, model_limits)
        if not context_window and found.get("context"):
            limits, window_source = self.limits(model, found["context"], env, settings)[0], \
                "config"
        rule = self.adapter.overflow_rule(self.view, window=limits.window,
                                          context=meter.context_tokens,
                                          input_limit=input_limit or found.get("input"),
                                          output_limit=found.get("output"), env=env)
        context = meter.context_tokens
        breakdown = {c: segment.breakdown.get(c, 0) for c in CATEGORIES}
        breakdown["system_and_tools"] = max(0, context - sum(breakdown.values()))
        return EstimateReport(
            source=source, format=self.fmt, model=model,
            method="usage" if meter.anchored else "heuristic", context_tokens=context,
            total_tokens=context + self.compacted, system_tokens=meter.system_tokens,
            anchor=meter.anchor, estimated_after_anchor=meter.since_anchor if meter.anchored else 0,
            entries=self.entries, messages=self.messages, compact_boundaries=self.boundaries,
            breakdown=breakdown,
            tool_results_by_tool=dict(sorted(segment.by_tool.items(), key=lambda kv: -kv[1])),
            top=segment.offenders(), limits=limits, window_source=window_source, agent_rule=rule,
            idle=self.idle(env, settings), agent_context=self.agent_context)


def estimate(entries: Iterable[dict[str, Any]], *, fmt: str, model: str | None = None,
             context_window: int | None = None, system_tokens: int | None = None,
             env: Mapping[str, str] | None = None, top: int = DEFAULT_TOP,
             source: str | None = None, use_usage: bool = True,
             input_limit: int | None = None,
             model_limits: LimitsLookup | None = None,
             settings: AgentSettings = None) -> EstimateReport:
    """Size and breakdown of the context a transcript occupies. Streams (nothing buffered),
    except OpenCode sessions, which are read whole to find their last compaction.

    ``model``/``context_window`` choose the window (default: the transcript's own model, 200K,
    or 1M when a recorded prompt was larger than 200K); ``env`` supplies the Claude Code
    variables that move the thresholds (``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE``...).
    ``use_usage=False`` ignores recorded usage and estimates every message. OpenCode sessions
    also get OpenCode's overflow rule (``input_limit``: the model's input limit, if it has one;
    ``model_limits`` looks the session's model up in OpenCode's config: context, input, output).
    Claude Code transcripts get the rule of the version that wrote them and ``settings`` (its
    settings files, :func:`ctxtool.storage.claude_settings.read_settings`), and when its idle
    compaction would fire.
    """
    state = Estimator(fmt, system_tokens=system_tokens, top=top, use_usage=use_usage)
    if state.adapter.reads_whole_session:
        state.add_session(entries)
    else:
        for entry in entries:
            state.add(entry)
    return state.report(source=source, model=model, context_window=context_window, env=env,
                        input_limit=input_limit, model_limits=model_limits, settings=settings)


def annotate(entries: Iterable[dict[str, Any]], *, fmt: str,
             system_tokens: int | None = None,
             use_usage: bool = True) -> Iterator[dict[str, Any]]:
    """Each entry with a ``ctxtool`` key: ``{"tokens", "category", "context_tokens"}`` (its own
    estimate, its main category, the context size after it). Streams. Entries outside the
    context (another side chain) get ``tokens: 0``; unparsed lines pass through untouched."""
    state = Estimator(fmt, system_tokens=system_tokens, top=0, use_usage=use_usage)
    for entry in entries:
        if getattr(entry, "invalid", False):
            yield entry
            continue
        parts: dict[str, int] = {}
        state.add(entry, parts)
        yield {**entry, "ctxtool": {"tokens": sum(parts.values()),
                                    "category": main_category(parts),
                                    "context_tokens": state.meter.context_tokens}}


def api_view(entries: Iterable[dict[str, Any]], fmt: str) -> list[dict[str, Any]]:
    """The messages the model would be sent now, as Anthropic Messages API messages (for
    ``count_tokens``): entries after the last compact boundary, of the main chain, converted by
    :func:`ctxtool.core.messages.convert.to_anthropic` (thinking dropped). Buffers that part."""
    from ctxtool.core.messages.convert import to_anthropic  # only for --exact: kept off start-up
    adapter = adapter_for(fmt)
    if adapter.reads_whole_session:  # in the order the agent sends them (OpenCode: a kept tail
        return list(to_anthropic(adapter.entries_sent(entries), fmt))  # after the summary)
    meter = ContextMeter(fmt)
    view: list[dict[str, Any]] = []
    for entry in entries:
        if getattr(entry, "invalid", False) or not meter.in_context(entry):
            continue
        if adapter.is_compaction_record(entry):
            view = []
        view.append(entry)
    return list(to_anthropic(view, fmt))


__all__ = [
    "CATEGORIES", "DEFAULT_SYSTEM_TOKENS", "ContextMeter", "EstimateReport", "Estimator",
    "Offender", "Usage", "annotate", "api_view", "block_category",
    "entry_breakdown", "estimate", "main_category", "tool_target",
]
