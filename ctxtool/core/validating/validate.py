"""validate: the structural rules of one transcript, as a pure function over its entries.

:func:`validate` yields :class:`Problem` records (file, line, severity, code, message). Errors are
things that make the transcript wrong for the model or for tools that follow its chain; warnings
are real inconsistencies that do no harm to what the model sees now. It never reports what Claude
Code itself writes in normal operation, which the rules below spell out:

``tool-use-unanswered``
    A tool_use with no tool_result although the model was called again after it (a later
    assistant message descending from it, or after it in files without uuids). A tool_use with no
    result and no later call is the live or killed tail of a session, or was cut off by an
    auto-compaction: not a problem.
``tool-result-orphan`` / ``tool-result-before-use`` / ``tool-result-duplicate`` / ``tool-use-duplicate``
    Every tool_result answers exactly one earlier tool_use. A result whose tool_use is missing is
    fine when its chain leads out of the file (a file that starts mid-session, like a checkpoint
    excerpt or a single curated entry): the tool_use is in the part not in the file.
``parent-missing``
    parentUuid names no entry of the file. Not reported for sidechain entries (subagent files
    point into the parent session), for the first entry with a uuid (a file starting mid-session),
    or for the entry a compact boundary names as its logicalParentUuid (Claude Code does not write
    the entry that triggered an auto-compaction). A warning when a later compact boundary means
    only compacted history is cut off; an error otherwise (resuming loses all before that line).
``duplicate-uuid``
    Two entries with one uuid and different content (an error).
``entry-repeated``
    An entry written again unchanged (same uuid, type, parent, timestamp and message): a
    warning, one per file. Claude Code keys entries by uuid, so it is one entry, and ctxtool
    reads it once; a repeated ``/compact`` in one Claude Code process writes the history before
    the boundary again this way (an open bug; the file grows quadratically).
``compact-boundary`` / ``compact-summary-missing``
    A ``system``/``compact_boundary`` entry has parentUuid null, a logicalParentUuid and
    compactMetadata {trigger, preTokens}, and an ``isCompactSummary`` user entry follows it before
    the next boundary (a warning when the file ends first: stopped during compaction).

OpenCode sessions have their own cross-line rules instead (``opencode-*`` codes, see
:mod:`ctxtool.formats.opencode.validate`).

Line framing and JSON Schema problems come from ``check_entry`` (see
:mod:`ctxtool.formats.validate`), which keeps this module free of jsonschema. It may raise
:class:`~ctxtool.errors.InputError` to say the file is not a transcript at all: that becomes one
``not-a-transcript`` error and the file's other rules are skipped.

Buffers one small record per entry (ids, parent, position), never the entries, and yields the
problems of the file sorted by line once it has seen every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxtool.core.messages.blocks import api_message, iter_tool_results, iter_tool_uses, role_of
from ctxtool.errors import CtxtoolError, InputError
from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.adapter import BOUNDARY
from ctxtool.formats.registry import adapter_for
from ctxtool.types import Entry

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"
Finding = tuple[str, str, str]  # (severity, code, message) of one entry, from check_entry
EntryCheck = Callable[[dict[str, Any]], Iterable[Finding]]


@dataclass(frozen=True)
class Problem:
    """One finding: where, how bad, a stable code and a sentence for people."""

    file: str
    line: int | None
    code: str
    message: str
    severity: Severity = ERROR

    @property
    def location(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"

    def format(self) -> str:
        """``FILE:LINE: severity: message [code]``, like a compiler diagnostic."""
        return f"{self.location}: {self.severity}: {self.message} [{self.code}]"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "severity": self.severity,
                "code": self.code, "message": self.message}

    @classmethod
    def from_error(cls, exc: CtxtoolError, *, file: str, code: str = "not-a-transcript") -> Problem:
        """The single problem for a file that could not be read as a transcript at all."""
        message = exc.message if not exc.hint else f"{exc.message} — {exc.hint}"
        return cls(exc.source or file, exc.lineno, code, message)


@dataclass
class _Node:
    """One entry reduced to what the cross-entry rules need."""

    index: int  # position among the file's valid entries (scan.nodes)
    line: int
    uuid: str | None
    parent: str | None
    role: str | None
    sidechain: bool
    message_id: str | None = None
    own_reply: bool = False  # written by the agent, no model call (adapter.is_own_reply)
    compact_summary: bool = False


@dataclass
class _Scan:
    """What validate remembers about one file while its entries stream by."""

    fmt: str
    file: str
    nodes: list[_Node] = field(default_factory=list)
    by_uuid: dict[str, _Node] = field(default_factory=dict)
    fingerprints: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, list[int]] = field(default_factory=dict)  # uuid -> later lines
    rewrites: list[int] = field(default_factory=list)  # lines repeating an earlier entry
    uses: dict[str, list[tuple[_Node, str]]] = field(default_factory=dict)
    results: dict[str, list[_Node]] = field(default_factory=dict)
    boundaries: list[_Node] = field(default_factory=list)
    logical_parents: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    _children: dict[str, list[_Node]] | None = None

    def report(self, node: _Node | int | None, code: str, message: str,
               severity: Severity = ERROR) -> None:
        line = node.line if isinstance(node, _Node) else node
        self.problems.append(Problem(self.file, line, code, message, severity))

    def children(self) -> dict[str, list[_Node]]:
        if self._children is None:
            self._children = {}
            for node in self.nodes:
                if node.parent is not None:
                    self._children.setdefault(node.parent, []).append(node)
        return self._children


def validate(entries: Iterable[dict[str, Any]], *, fmt: str, source: str = "<input>",
             check_entry: EntryCheck | None = None) -> Iterator[Problem]:
    """Every problem of one transcript (one file), sorted by line. See the module docstring.

    ``source`` names plain-dict entries in problems (read entries carry their own file name);
    their line is their 1-based position. Entries marked ``invalid`` are left to ``check_entry``.
    """
    scan = _Scan(fmt=fmt, file=source)
    opencode = adapter_for(fmt).own_checks()  # OpenCode's own rules (a call and its result
    try:                                         # share one part)
        for index, entry in enumerate(entries):
            scan.file, line = _location(entry, index, source)
            if check_entry is not None:
                for severity, code, message in check_entry(entry):
                    scan.report(line, code, message, severity)  # type: ignore[arg-type]
            if getattr(entry, "invalid", False):
                continue
            if opencode is not None:
                opencode.add(entry, line)
            else:
                _add(scan, entry, line)
    except InputError as exc:
        scan.problems.append(Problem.from_error(exc, file=scan.file))
        yield from sorted(scan.problems, key=_line_key)
        return
    if opencode is not None:
        for line, severity, code, message in opencode.finish():
            scan.report(line, code, message, severity)  # type: ignore[arg-type]
    else:
        _check_uuids(scan)
        _check_tools(scan)
        _check_compactions(scan)
    yield from sorted(scan.problems, key=_line_key)


def _line_key(problem: Problem) -> int:
    return problem.line or 0


def _location(entry: dict[str, Any], index: int, source: str) -> tuple[str, int]:
    if isinstance(entry, Entry):
        return entry.source, entry.lineno
    return source, index + 1


# --- collecting ----------------------------------------------------------------------------------

def _add(scan: _Scan, entry: dict[str, Any], line: int) -> None:
    uuid, parent = entry.get("uuid"), entry.get("parentUuid")
    message = api_message(entry, scan.fmt)
    adapter = adapter_for(scan.fmt)
    node = _Node(index=len(scan.nodes), line=line, uuid=uuid if isinstance(uuid, str) else None,
                 parent=parent if isinstance(parent, str) else None,
                 role=role_of(entry, scan.fmt), sidechain=entry.get("isSidechain") is True,
                 compact_summary=adapter.is_summary_entry(entry))
    if message is not None:
        message_id = message.get("id")
        node.message_id = message_id if isinstance(message_id, str) else None
        node.own_reply = adapter.is_own_reply(entry)
    scan.nodes.append(node)
    if node.uuid is not None and _is_rewrite(scan, entry, node):
        return  # the same entry written again: its tools were counted the first time
    for use in iter_tool_uses(entry, scan.fmt, node.index):
        scan.uses.setdefault(use.id, []).append((node, use.name))
    for result in iter_tool_results(entry, scan.fmt, node.index):
        scan.results.setdefault(result.tool_use_id, []).append(node)
    if adapter.compactions == BOUNDARY and adapter.is_compaction_record(entry):
        _check_boundary_fields(scan, entry, node)


def _is_rewrite(scan: _Scan, entry: dict[str, Any], node: _Node) -> bool:
    """Record the uuid; True when it was seen before with identical content (a benign re-write)."""
    assert node.uuid is not None
    fingerprint = _fingerprint(entry)
    first = scan.by_uuid.get(node.uuid)
    if first is None:
        scan.by_uuid[node.uuid] = node
        scan.fingerprints[node.uuid] = fingerprint
        return False
    if scan.fingerprints[node.uuid] == fingerprint:
        scan.rewrites.append(node.line)
        return True
    scan.duplicates.setdefault(node.uuid, []).append(node.line)
    return False


def _fingerprint(entry: dict[str, Any]) -> int:
    """What makes two lines the same entry: a newer Claude Code re-writing an entry on resume
    changes metadata (version, gitBranch) and may add null keys to the message, nothing else."""
    message = entry.get("message")
    if isinstance(message, dict):
        message = [message.get(k) for k in ("role", "id", "content")]
    keys = ("type", "subtype", "parentUuid", "timestamp")
    return hash(dumps_json([*(entry.get(k) for k in keys), message], sort_keys=True))


def _check_boundary_fields(scan: _Scan, entry: dict[str, Any], node: _Node) -> None:
    scan.boundaries.append(node)
    logical = entry.get("logicalParentUuid")
    if isinstance(logical, str):
        scan.logical_parents.add(logical)
    else:
        scan.report(node, "compact-boundary", "compact boundary without logicalParentUuid "
                    "(the uuid of the last entry before the compaction)")
    if entry.get("parentUuid") is not None:
        scan.report(node, "compact-boundary", "compact boundary with parentUuid "
                    f"{entry.get('parentUuid')!r}: it must be null (the chain restarts here)")
    meta = entry.get("compactMetadata")
    if not (isinstance(meta, dict) and isinstance(meta.get("trigger"), str)
            and isinstance(meta.get("preTokens"), int) and not isinstance(meta["preTokens"], bool)):
        scan.report(node, "compact-boundary", "compact boundary without compactMetadata "
                    "{trigger: string, preTokens: integer}")


# --- uuid chain ----------------------------------------------------------------------------------

def _check_uuids(scan: _Scan) -> None:
    if scan.rewrites:
        count = len(scan.rewrites)
        scan.report(scan.rewrites[0], "entry-repeated",
                    f"{count} {'entry is' if count == 1 else 'entries are'} written again with "
                    f"the uuid of an earlier one (lines {_lines(scan.rewrites)}): one uuid is one "
                    "entry, ctxtool counts and summarizes them once (a repeated /compact in one "
                    "Claude Code process writes the history again)", WARNING)
    for uuid, lines in scan.duplicates.items():
        first = scan.by_uuid[uuid].line
        scan.report(lines[0], "duplicate-uuid",
                    f"uuid {uuid} is already used by line {first} for a different entry "
                    f"(lines sharing it: {_lines([first, *lines])})")
    first_with_uuid = next((n.index for n in scan.nodes if n.uuid is not None), None)
    for node in scan.nodes:
        parent = node.parent
        if parent is None or parent in scan.by_uuid or node.sidechain:
            continue
        if node.index == first_with_uuid or parent in scan.logical_parents:
            continue
        later = next((b for b in scan.boundaries if b.index > node.index), None)
        if later is not None:
            scan.report(node, "parent-missing", f"parentUuid {parent} is not in this file: the "
                        "chain breaks here, cutting off history that the compact boundary at "
                        f"line {later.line} already replaced", WARNING)
        else:
            scan.report(node, "parent-missing", f"parentUuid {parent} is not in this file: the "
                        "chain breaks here, so resuming from a later entry loses everything "
                        "before this line")


def _lines(lines: list[int], limit: int = 6) -> str:
    shown = ", ".join(str(n) for n in lines[:limit])
    return shown if len(lines) <= limit else f"{shown} and {len(lines) - limit} more"


# --- tool_use / tool_result pairing --------------------------------------------------------------

def _check_tools(scan: _Scan) -> None:
    for tool_id, uses in scan.uses.items():
        use, name = uses[0]
        for again, _ in uses[1:]:
            scan.report(again, "tool-use-duplicate",
                        f"tool_use id {tool_id} is used again (first at line {use.line})")
        results = scan.results.get(tool_id, [])
        if not results:
            call = _next_call(scan, use)
            if call is not None:
                scan.report(use, "tool-use-unanswered", f"tool_use {tool_id} ({name}) has no "
                            f"tool_result, but the model was called again after it (line "
                            f"{call.line}); the API rejects such a history")
            continue
        if results[0].index < use.index:
            scan.report(results[0], "tool-result-before-use",
                        f"tool_result for {tool_id} comes before its tool_use (line {use.line})")
        for extra in results[1:]:
            scan.report(extra, "tool-result-duplicate", f"second tool_result for {tool_id} "
                        f"(first at line {results[0].line}); each tool_use gets exactly one")
    for tool_id, results in scan.results.items():
        if tool_id not in scan.uses and not _leads_outside(scan, results[0]):
            scan.report(results[0], "tool-result-orphan",
                        f"tool_result for {tool_id} answers no tool_use in this file")


def _next_call(scan: _Scan, use: _Node) -> _Node | None:
    """The first later API call (assistant message) made after ``use``'s message, if any.

    With uuids, only descendants of the tool_use's entry count (a compact boundary starts a new
    chain, and sidechains have their own); without them, any later assistant message.
    """
    def is_call(node: _Node) -> bool:
        return (node.role == "assistant" and not node.own_reply
                and (node.message_id is None or node.message_id != use.message_id))

    if use.uuid is None:
        return next((n for n in scan.nodes[use.index + 1:] if is_call(n)), None)
    children = scan.children()
    stack, seen, calls = list(children.get(use.uuid, ())), {use.uuid}, []
    while stack:
        node = stack.pop()
        if is_call(node):
            calls.append(node)
        elif node.uuid is not None and node.uuid not in seen:
            seen.add(node.uuid)
            stack.extend(children.get(node.uuid, ()))
    return min(calls, key=lambda n: n.index) if calls else None


def _leads_outside(scan: _Scan, node: _Node) -> bool:
    """True when following parentUuid from ``node`` reaches a uuid that is not in the file."""
    seen: set[str] = set()
    while node.parent is not None:
        parent = scan.by_uuid.get(node.parent)
        if parent is None:
            return True
        if node.parent in seen:
            return False  # a cycle: stays inside the file
        seen.add(node.parent)
        node = parent
    return False


# --- compaction ----------------------------------------------------------------------------------

def _check_compactions(scan: _Scan) -> None:
    """Each compact boundary is followed by its isCompactSummary user entry, before the next one."""
    for number, boundary in enumerate(scan.boundaries):
        end = (scan.boundaries[number + 1].index if number + 1 < len(scan.boundaries)
               else len(scan.nodes))
        segment = [n for n in scan.nodes[boundary.index + 1:end] if n.role == "user"]
        if any(n.compact_summary for n in segment):
            continue
        if not segment and end == len(scan.nodes):
            scan.report(boundary, "compact-summary-missing", "compact boundary at the end of the "
                        "file without its summary (stopped during compaction?)", WARNING)
        else:
            scan.report(boundary, "compact-summary-missing", "compact boundary not followed by "
                        "an isCompactSummary user entry holding the summary")
