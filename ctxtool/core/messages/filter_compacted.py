"""What follows the last completed compaction: the part of a transcript the model still sees.

Summary marker for message lists (the contract with ``summarize``): an Anthropic or OpenAI
message is ctxtool's summary when its text — the string content, or its first text block —
starts with :data:`SUMMARY_MARKER` (``[ctxtool summary]``), after optional leading whitespace.
Claude Code transcripts use Claude Code's own markers (``compact_boundary`` + ``isCompactSummary``).

Where the cut is, per format:

* Claude Code: the last ``system``/``compact_boundary`` entry of the thread. Claude Code writes the
  boundary only once its summary exists, so a boundary is a completed compaction; the view is the
  boundary, its summary and every entry after it in file order (Claude Code restarts the chain at
  the boundary: ``parentUuid: null``). ``type: "summary"`` entries are session titles, not
  compactions. Newer versions keep messages across the boundary and say so in
  ``compactMetadata``: ``preservedMessages.uuids`` (or ``.allUuids``), else the chain from
  ``preservedSegment.tailUuid`` back to ``headUuid``. Those entries, which sit before the boundary
  in the file, are spliced in right after ``anchorUuid`` (the summary, or the boundary itself),
  the head re-pointed at the anchor and the anchor's other children at the tail, and their usage
  zeroed — what Claude Code does when it loads the session. A segment that cannot be resolved
  (uuids missing, broken chain) is left out and reported, as Claude Code falls back then.
* Side chains: entries with ``isSidechain: true`` are another thread (older versions stored
  subagent turns in the main file) and are left out unless ``sidechains=True``; a file holding
  only side-chain messages (a subagent's own transcript) is its own thread.
* Anthropic / OpenAI message lists: the last message carrying :data:`SUMMARY_MARKER`; OpenAI
  ``system``/``developer`` messages before it are kept (the model still gets its instructions).
* OpenCode: :func:`ctxtool.formats.opencode.session.filter_compacted_opencode` (``MessageV2.filterCompacted``:
  the last compaction whose summary finished, the retained tail moved after the summary); it
  holds the session in memory, as OpenCode does, and the first pass only counts compactions.
* Gemini CLI: the records it sends for the conversation its last checkpoint and later lines
  make (:meth:`~ctxtool.formats.adapter.FormatAdapter.entries_sent`), from its last
  ``<state_snapshot>`` on; held in memory the same way.

With no compaction, the transcript view is the input itself, byte for byte. ``view="model"``
goes one step further, to what is sent to the model: only messages (no boundaries, progress,
attachments, snapshots, titles, UI error notices), results listed in ``microcompact_boundary``
entries replaced by the text the agent shows for them (the adapter's ``cleared_result_text``,
``[Old tool result content cleared]``; and their ``toolUseResult`` copy dropped), the lines of one
streamed response merged by ``message.id``, and ``parentUuid`` making one linear chain.

Memory: :func:`plan_cut` reads the entries once and keeps only uuids, line numbers and tool ids;
:func:`filter_compacted` then streams a second reading, holding only the preserved segment (what
Claude Code kept) and, in the model view, one streamed response.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxtool.core.messages.blocks import content_blocks, iter_tool_results, with_tool_result_content
from ctxtool.core.messages.convert import ConvertReport, is_model_message, merge_streamed
from ctxtool.core.messages.repeats import copy_key
from ctxtool.formats.jsonl import exact_entry
from ctxtool.formats.adapter import AGENT_RULE, BOUNDARY, MARKER
from ctxtool.formats.registry import adapter_for
from ctxtool.types import location_of

View = Literal["transcript", "model"]
SUMMARY_MARKER = "[ctxtool summary]"
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
               "cache_read_input_tokens")


def is_summary_message(entry: dict[str, Any], fmt: str) -> bool:
    """True for a compaction summary: Claude Code's ``isCompactSummary`` entry, or an
    Anthropic/OpenAI message whose text starts with :data:`SUMMARY_MARKER`."""
    if getattr(entry, "invalid", False):
        return False
    adapter = adapter_for(fmt)
    compactions = adapter.compactions
    if compactions == BOUNDARY:
        return adapter.is_summary_entry(entry)
    if compactions != MARKER:
        return False
    if adapter.is_compaction_record(entry):  # one record holding the summary (Codex CLI)
        return True
    texts = [b.get("text") for b in content_blocks(entry, fmt) if b.get("type") == "text"]
    first = texts[0] if texts else None
    return isinstance(first, str) and first.lstrip().startswith(SUMMARY_MARKER)


@dataclass
class CutPlan:
    """The first pass: where the view starts and what to splice or clear (no content kept)."""

    fmt: str
    entries: int = 0
    cut: int | None = None  # index of the first entry of the view; None: no compaction
    cut_location: str | None = None  # file:line of that entry
    compactions: int = 0  # completed compactions seen in the thread
    sidechain_thread: bool = False  # the file holds only side-chain messages
    preserved: frozenset[str] = frozenset()  # uuids of entries before the cut that are spliced in
    head: str | None = None
    tail: str | None = None
    splice_index: int | None = None  # the preserved entries follow the entry at this index
    splice_uuid: str | None = None  # ...whose uuid the head is re-pointed at
    problem: str | None = None  # why a preserved segment was left out
    cleared_tool_ids: frozenset[str] = frozenset()
    repeated: frozenset[int] = frozenset()  # indexes of later copies of an entry (same uuid)

    def as_dict(self) -> dict[str, Any]:
        return {"entries_in": self.entries, "compactions": self.compactions,
                "cut": self.cut_location, "preserved": len(self.preserved),
                "preserved_problem": self.problem,
                **({"repeated": len(self.repeated)} if self.repeated else {})}


@dataclass
class FilterReport:
    """Counts from the second pass (the model view)."""

    dropped: int = 0  # non-message entries left out of the model view
    cleared_results: int = 0
    convert: ConvertReport = field(default_factory=ConvertReport)


# --- first pass -----------------------------------------------------------------------------------

def plan_cut(entries: Iterable[dict[str, Any]], fmt: str) -> CutPlan:
    """Read the entries once (streaming) and find the cut; see the module docstring."""
    compactions = adapter_for(fmt).compactions
    if compactions == BOUNDARY:
        return _plan_claude(entries, fmt)
    if compactions == AGENT_RULE:
        return _plan_agent_rule(entries, fmt)
    plan = CutPlan(fmt)
    for index, entry in enumerate(entries):
        plan.entries += 1
        if is_summary_message(entry, fmt):
            plan.cut, plan.cut_location = index, location_of(entry)
            plan.compactions += 1
    return plan


def _plan_agent_rule(entries: Iterable[dict[str, Any]], fmt: str) -> CutPlan:
    """An agent that applies its own rule (OpenCode): where each completed compaction starts,
    for the report; the second pass applies the rule (``entries_sent``)."""
    plan = CutPlan(fmt)

    def counted() -> Iterator[dict[str, Any]]:
        for entry in entries:
            plan.entries += 1
            yield entry

    for index, location in adapter_for(fmt).compaction_starts(counted()):
        plan.cut, plan.cut_location = index, location
        plan.compactions += 1
    return plan


@dataclass
class _Boundary:
    index: int
    uuid: str | None
    location: str | None
    metadata: dict[str, Any]


def _plan_claude(entries: Iterable[dict[str, Any]], fmt: str) -> CutPlan:
    plan = CutPlan(fmt)
    adapter = adapter_for(fmt)
    nodes: dict[str, tuple[str | None, int]] = {}  # uuid -> (parentUuid, index)
    last: dict[bool, _Boundary] = {}  # per thread (isSidechain) the last boundary
    counts = {False: 0, True: 0}
    cleared: set[str] = set()
    repeated: set[int] = set()
    keys: dict[str, tuple[Any, ...]] = {}  # uuid -> copy_key of its first entry
    main_seen = side_seen = False
    for index, entry in enumerate(entries):
        plan.entries += 1
        if getattr(entry, "invalid", False):
            continue
        uuid, parent = entry.get("uuid"), entry.get("parentUuid")
        if isinstance(uuid, str):
            if keys.get(uuid) == copy_key(entry):  # a copy (ctxtool.core.messages.repeats)
                repeated.add(index)
                continue
            keys.setdefault(uuid, copy_key(entry))
            nodes[uuid] = (parent if isinstance(parent, str) else None, index)
        side = entry.get("isSidechain") is True
        if entry.get("type") in ("user", "assistant"):
            main_seen, side_seen = main_seen or not side, side_seen or side
        if adapter.is_compaction_record(entry):
            metadata = entry.get("compactMetadata")
            last[side] = _Boundary(index, uuid if isinstance(uuid, str) else None,
                                   location_of(entry),
                                   metadata if isinstance(metadata, dict) else {})
            counts[side] += 1
        elif (ids := adapter.cleared_ids_recorded(entry)) is not None:
            cleared.update(ids)
    plan.sidechain_thread = side_seen and not main_seen
    plan.cleared_tool_ids = frozenset(cleared)
    plan.repeated = frozenset(repeated)
    boundary = last.get(plan.sidechain_thread)
    plan.compactions = counts[plan.sidechain_thread]
    if boundary is not None:
        plan.cut, plan.cut_location = boundary.index, boundary.location
        _resolve_preserved(plan, boundary, nodes)
    return plan


def _resolve_preserved(plan: CutPlan, boundary: _Boundary,
                       nodes: dict[str, tuple[str | None, int]]) -> None:
    segment = boundary.metadata.get("preservedSegment")
    listed = boundary.metadata.get("preservedMessages")
    segment = segment if isinstance(segment, dict) else {}
    listed = listed if isinstance(listed, dict) else {}
    ids = listed.get("uuids") or listed.get("allUuids")  # what Claude Code 2.1.332 splices in
    if not segment and not isinstance(ids, list):
        return
    anchor = listed.get("anchorUuid") or segment.get("anchorUuid")
    if isinstance(ids, list):
        found = [u for u in ids if isinstance(u, str) and u in nodes]
        missing = len(ids) - len(found)
        problem = f"{missing} preserved message(s) not in the file" if missing else None
    else:
        found, problem = _walk_segment(segment, nodes)
    if problem is not None or not found:
        plan.problem = problem or "the preserved segment is empty"
        return
    earlier = sorted((u for u in found if nodes[u][1] < boundary.index), key=lambda u: nodes[u][1])
    if not earlier:
        plan.problem = "no preserved message comes before the boundary"
        return
    plan.preserved = frozenset(earlier)
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    plan.head = head if head in plan.preserved else earlier[0]
    plan.tail = tail if tail in plan.preserved else earlier[-1]
    if isinstance(anchor, str) and anchor in nodes and nodes[anchor][1] >= boundary.index:
        plan.splice_index, plan.splice_uuid = nodes[anchor][1], anchor
    else:  # no usable anchor after the boundary: the segment follows the boundary itself
        plan.splice_index, plan.splice_uuid = boundary.index, boundary.uuid


def _walk_segment(segment: dict[str, Any],
                  nodes: dict[str, tuple[str | None, int]]) -> tuple[list[str], str | None]:
    """The uuids from tailUuid back to headUuid, or a problem (Claude Code's tail-to-head walk)."""
    head, tail = segment.get("headUuid"), segment.get("tailUuid")
    if not (isinstance(head, str) and isinstance(tail, str)):
        return [], "preservedSegment lacks headUuid/tailUuid"
    walked: list[str] = []
    current: str | None = tail
    while isinstance(current, str) and current in nodes and current not in walked:
        walked.append(current)
        if current == head:
            return walked, None
        current = nodes[current][0]
    return [], f"preserved segment {head}..{tail} is not a complete chain in the file"


# --- second pass ----------------------------------------------------------------------------------

def filter_compacted(entries: Iterable[dict[str, Any]], plan: CutPlan, *,
                     view: View = "transcript", sidechains: bool = False,
                     report: FilterReport | None = None) -> Iterator[dict[str, Any]]:
    """The view after the last compaction, from a second reading of the entries ``plan`` was
    made from (same order). Streams; see the module docstring for what it buffers."""
    report = report if report is not None else FilterReport()
    adapter = adapter_for(plan.fmt)
    if plan.cut is None and view == "transcript" and not plan.repeated:
        return iter(entries)  # no compaction: the input itself, byte for byte
    if adapter.compactions == AGENT_RULE:  # the agent's own rule (OpenCode's, Gemini's); it
        session = adapter.entries_sent(entries)  # buffers the session, as the agent does
        return iter(session) if view == "transcript" else (
            e for e in session if adapter.api_message(e) is not None)
    if adapter.compactions == BOUNDARY:
        kept = _claude_view(entries, plan, sidechains=sidechains)
        return _claude_model_view(kept, plan, report) if view == "model" else kept
    listed = entries if plan.cut is None else _list_view(entries, plan)
    if view == "model":
        return (e for e in listed if not getattr(e, "invalid", False))
    return iter(listed)


def _list_view(entries: Iterable[dict[str, Any]], plan: CutPlan) -> Iterator[dict[str, Any]]:
    assert plan.cut is not None
    for index, entry in enumerate(entries):
        if index >= plan.cut or _kept_before_cut(entry, plan.fmt):
            yield entry


def _kept_before_cut(entry: dict[str, Any], fmt: str) -> bool:
    if getattr(entry, "invalid", False):
        return False
    return adapter_for(fmt).is_instruction(entry)


def _claude_view(entries: Iterable[dict[str, Any]], plan: CutPlan, *,
                 sidechains: bool) -> Iterator[dict[str, Any]]:
    """Entries from the cut (all of them without one), other-thread entries left out, the
    preserved segment spliced in after its anchor."""
    cut = plan.cut or 0
    held: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        if index in plan.repeated:
            continue  # a later copy of an entry the view holds
        uuid = entry.get("uuid")
        uuid = uuid if isinstance(uuid, str) else None  # another type names no entry
        if index < cut:
            if uuid in plan.preserved:
                held.append(_preserved_copy(entry, plan))
            continue
        if not sidechains and _other_thread(entry, plan):
            continue
        if (plan.preserved and plan.splice_uuid is not None and uuid not in plan.preserved
                and entry.get("parentUuid") == plan.splice_uuid):
            # the segment goes between them (exact_entry: read without the big-integer check)
            entry = {**exact_entry(entry), "parentUuid": plan.tail}
        yield entry
        if index == plan.splice_index:
            yield from held
            held = []
    yield from held  # only when the anchor was dropped as another thread's entry


def _other_thread(entry: dict[str, Any], plan: CutPlan) -> bool:
    side = entry.get("isSidechain")
    return isinstance(side, bool) and side != plan.sidechain_thread


def _preserved_copy(entry: dict[str, Any], plan: CutPlan) -> dict[str, Any]:
    """A preserved entry as Claude Code loads it: the head re-pointed, the usage zeroed."""
    entry = exact_entry(entry)
    new: dict[str, Any] = entry
    if entry.get("uuid") == plan.head and entry.get("parentUuid") != plan.splice_uuid:
        new = {**new, "parentUuid": plan.splice_uuid}
    message = entry.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if (isinstance(message, dict) and isinstance(usage, dict)
            and any(usage.get(k) for k in _USAGE_KEYS)):
        zeroed = {**usage, **{k: 0 for k in _USAGE_KEYS if k in usage}}
        new = {**new, "message": {**message, "usage": zeroed}}
    return new


def _claude_model_view(entries: Iterable[dict[str, Any]], plan: CutPlan,
                       report: FilterReport) -> Iterator[dict[str, Any]]:
    def messages() -> Iterator[dict[str, Any]]:
        for entry in entries:
            if is_model_message(entry, plan.fmt):
                yield _with_cleared_results(entry, plan.fmt, plan.cleared_tool_ids, report)
            else:
                report.dropped += 1

    return _linear_chain(merge_streamed(messages(), report=report.convert))


def _linear_chain(entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each entry's parentUuid set to the entry before it: the model view is one sequence (what
    was left out, merged lines and parallel tool results leave no gaps or branches)."""
    previous: str | None = None
    for entry in entries:
        if entry.get("parentUuid") != previous:
            entry = {**entry, "parentUuid": previous}
        uuid = entry.get("uuid")
        previous = uuid if isinstance(uuid, str) else previous
        yield entry


def _with_cleared_results(entry: dict[str, Any], fmt: str, cleared: frozenset[str],
                          report: FilterReport) -> dict[str, Any]:
    if not cleared or entry.get("type") != "user":
        return entry
    new = entry
    text = adapter_for(fmt).cleared_result_text
    for result in iter_tool_results(entry, fmt):
        if result.tool_use_id in cleared and result.content != text:
            new = with_tool_result_content(new, fmt, result.tool_use_id, text)
            report.cleared_results += 1
    if new is not entry and "toolUseResult" in new:
        new = {k: v for k, v in new.items() if k != "toolUseResult"}
    return new


__all__ = ["SUMMARY_MARKER", "CutPlan", "FilterReport", "View", "filter_compacted",
           "is_summary_message", "plan_cut"]
