"""What ``vacuum`` may take out of a Gemini CLI session file: the records Gemini CLI 0.61.0's
loader provably no longer uses (rules: :mod:`ctxtool.formats.vacuum`).

The loader (``loadConversationRecord``, chunk-JDPZ4CE3.js:286006; :mod:`.records` replays it)
builds three things from the lines, and only these reach a resumed chat or the session list:

- the **messages**: a map by id, which a checkpoint (``{"$set": {"messages": [...]}}``)
  clears and refills, a ``$rewindTo`` cuts, a repeated id updates in its first place;
- the **metadata**: every ``$set`` (and the metadata line) merged into one object, later keys
  winning (``messages`` is not read from it);
- three facts taken on the way: the first prompt (``firstUserMessage``, the session list's
  name for it: the text of the first user record in file order that it would resume),
  whether the memory scratchpad is stale (a message or rewind after the last ``$set`` of
  ``memoryScratchpad``), and, for the list, a count of message writes since the last
  checkpoint (repeats included).

So, before the last checkpoint, these go:

- message records and ``$rewindTo`` lines (the checkpoint clears the map), except the record
  that names the first prompt and the first message or rewind after the last
  ``memoryScratchpad`` (which makes it stale);
- ``$set`` lines, earlier checkpoints included, every key of which a later line sets again (a
  ``{"$set": {"lastUpdated": ...}}`` after each record); an earlier checkpoint that sets a key
  nothing later sets keeps it, without its list.

From the last checkpoint on, a write of an id that a later write of the same id replaces
(a model turn written without, then with, its tool calls; a checkpoint listing
``<id>_response`` twice) becomes ``{"id": "<id>"}``: the map keeps the id's first place, its
value is the later write, and the count of writes is unchanged. Never the first prompt's record.

Nothing else: the metadata lines, lines that do not parse, and what Gemini sends twice — each
tool result is in the model turn's ``toolCalls[].result`` and in the user record that answers
it, and a resume sends both, so taking one out would change the request.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxtool.formats.gemini.listing import is_resumable
from ctxtool.formats.gemini.records import MESSAGE, METADATA, REWIND, SET, line_kind
from ctxtool.formats.json_spans import SpanError, array_spans, object_spans
from ctxtool.formats.vacuum import LineEdit

DEAD = "replaced by a later checkpoint"
OVERWRITTEN = "metadata set again later"
REPEATED = "replaced by a later write of its id"
INLINE_BYTES = 1024  # a line shorter than this is kept in the recipe, not as a file of its own


@dataclass
class _Line:
    """What one line is to the loader (the line's bytes are not kept)."""

    kind: str | None
    length: int
    complete: bool  # ends with its newline
    id: str | None = None  # a message record's
    keys: frozenset[str] = frozenset()  # the metadata keys it sets (messages left out)
    rest: dict[str, Any] | None = None  # a checkpoint's $set without its list
    elements: list[tuple[str | None, int, int]] | None = None  # a checkpoint's (id, start, end)
    keep: bool = False  # names the first prompt, or makes the scratchpad stale
    first_slot: int | None = None  # the element of its list that names the first prompt
    unparsed: bool = False  # not JSON to ctxtool (white space aside)


@dataclass
class _Scan:
    lines: list[_Line] = field(default_factory=list)
    checkpoint: int | None = None  # the last checkpoint line
    checkpoint_bytes: bytes = b""
    first_prompt: bool = False  # found (a non-empty text)
    scratchpad: bool = False  # a memoryScratchpad $set seen, no message or rewind after it yet


def gemini_dead_lines(lines: Iterable[bytes]) -> Iterator[LineEdit]:
    """The edits ``vacuum`` makes to a Gemini CLI session file (see the module docstring)."""
    scan = _Scan()
    for index, raw in enumerate(lines):
        scan.lines.append(_read(raw, index, scan))
    if not scan.lines or scan.lines[0].kind != METADATA:
        return  # not a file the client reads line by line (one JSON document, or not Gemini)
    if any(line.unparsed and line.complete for line in scan.lines):
        return  # a line Gemini may read otherwise than ctxtool: nothing is known for sure
    yield from _edits(scan)


def _read(raw: bytes, index: int, scan: _Scan) -> _Line:
    complete = raw.endswith(b"\n")
    try:
        entry = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _Line(None, len(raw), complete, keep=True, unparsed=bool(raw.strip()))
    kind = line_kind(entry)
    line = _Line(kind, len(raw), complete)
    if kind in (MESSAGE, REWIND):
        if scan.scratchpad:
            line.keep, scan.scratchpad = True, False  # the one that makes it stale
        if kind == MESSAGE:
            line.id = entry["id"]
            line.keep |= _names_first_prompt(entry, scan)
    elif kind == SET and isinstance(entry["$set"], dict):
        update = entry["$set"]
        line.keys = frozenset(k for k in update if k != "messages")
        if "memoryScratchpad" in update:
            scan.scratchpad = bool(update["memoryScratchpad"])
        listed = update.get("messages")
        if isinstance(listed, list):
            line.rest = {k: v for k, v in update.items() if k != "messages"}
            line.elements = _elements(raw, listed)
            line.first_slot = next((slot for slot, record in enumerate(listed)
                                    if isinstance(record, dict)
                                    and _names_first_prompt(record, scan)), None)
            scan.checkpoint, scan.checkpoint_bytes = index, raw
    elif kind == METADATA:
        line.keys = frozenset(entry)
        line.keep = True
    else:
        line.keep = True  # a $set that is a list, JSON that is no record: left as they are
    return line


def _names_first_prompt(record: dict[str, Any], scan: _Scan) -> bool:
    """True for a user record the loader takes (or tries) the first prompt from: until a
    non-empty one was found, every resumable user record with content."""
    if scan.first_prompt or record.get("type") != "user" or not record.get("content") \
            or not is_resumable(record):
        return False
    scan.first_prompt = bool(first_prompt_text(record["content"]))
    return True


def first_prompt_text(content: Any) -> str | None:
    """The text the loader takes for the first prompt from a record's ``content``: a list's
    text parts joined, a string as it is; None for anything else (then it looks further)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return None


def _elements(raw: bytes, listed: list[Any]) -> list[tuple[str | None, int, int]] | None:
    """Each element of a checkpoint's list: its id and where its bytes are in the line (None
    when the line is not laid out as expected: it is then left alone)."""
    text = raw.decode("latin-1")
    try:
        spans, _ = object_spans(text)
        inner, _ = object_spans(text, spans["$set"][0])
        ranges, _ = array_spans(text, inner["messages"][0])
    except (SpanError, KeyError):
        return None
    if len(ranges) != len(listed):
        return None
    return [(record.get("id") if isinstance(record, dict) and isinstance(record.get("id"), str)
             else None, start, end) for record, (start, end) in zip(listed, ranges)]


def _edits(scan: _Scan) -> Iterator[LineEdit]:
    later = _keys_set_later(scan.lines)
    last = scan.checkpoint
    replaced = _replaced_writes(scan) if last is not None else set()
    for index, line in enumerate(scan.lines):
        if not line.complete or line.keep:
            continue
        if last is not None and index < last:
            edit = _before_checkpoint(index, line, later[index])
        elif index == last:
            edit = _stubbed_checkpoint(index, line, scan.checkpoint_bytes, replaced)
        elif (index, None) in replaced:
            edit = _stub(index, line)
        elif line.kind == SET and line.elements is None and line.keys <= later[index]:
            edit = _gone(index, line, OVERWRITTEN)
        else:
            edit = None
        if edit is not None:
            yield edit


def _keys_set_later(lines: list[_Line]) -> list[frozenset[str]]:
    """For each line, the metadata keys some later complete line sets (a last line still being
    written may not be there yet for the next reader)."""
    found: list[frozenset[str]] = [frozenset()] * len(lines)
    seen: set[str] = set()
    for index in range(len(lines) - 1, -1, -1):
        found[index] = frozenset(seen)
        if lines[index].complete:
            seen |= lines[index].keys
    return found


def _before_checkpoint(index: int, line: _Line, later: frozenset[str]) -> LineEdit | None:
    if line.kind in (MESSAGE, REWIND):
        return _gone(index, line, DEAD)
    if line.kind != SET:
        return None
    if line.elements is not None and line.first_slot is not None:
        return None  # an earlier checkpoint naming the first prompt: left whole
    if line.keys <= later:
        return _gone(index, line, DEAD if line.elements is not None else OVERWRITTEN)
    if line.rest is not None and line.elements is not None:  # its own keys stay, its list goes
        new = orjson.dumps({"$set": line.rest}) + b"\n"
        return LineEdit(index, DEAD, new=new, payloads=_payloads(line))
    return None


def _gone(index: int, line: _Line, reason: str) -> LineEdit:
    return LineEdit(index, reason, payloads=_payloads(line),
                    inline=line.length < INLINE_BYTES)


def _payloads(line: _Line) -> tuple[tuple[int, int], ...]:
    """Each message of a checkpoint's list is stored on its own (the next checkpoint lists
    most of them again: stored once); a long record is stored without its newline."""
    if line.elements is not None:
        return tuple((start, end) for _, start, end in line.elements)
    return ((0, line.length - 1),) if line.length >= INLINE_BYTES else ()


def _replaced_writes(scan: _Scan) -> set[tuple[int, int | None]]:
    """The writes, from the last checkpoint on, that a later write of their id replaces:
    (line, slot in the checkpoint's list or None). Never the first prompt's record."""
    last = scan.checkpoint
    assert last is not None
    writes: list[tuple[str, int, int | None]] = []
    checkpoint = scan.lines[last]
    for slot, (message_id, _, _) in enumerate(checkpoint.elements or []):
        if message_id is not None and slot != checkpoint.first_slot:
            writes.append((message_id, last, slot))
    for index in range(last + 1, len(scan.lines)):
        line = scan.lines[index]
        if line.kind == MESSAGE and line.id is not None:
            writes.append((line.id, index, None))
    replaced = set()
    seen_later: set[str] = set()
    for message_id, index, slot in reversed(writes):
        if message_id in seen_later:
            replaced.add((index, slot))
        seen_later.add(message_id)
    return replaced


def _stub(index: int, line: _Line) -> LineEdit:
    assert line.id is not None
    return LineEdit(index, REPEATED, new=orjson.dumps({"id": line.id}) + b"\n",
                    payloads=_payloads(line), inline=line.length < INLINE_BYTES)


def _stubbed_checkpoint(index: int, line: _Line, raw: bytes,
                        replaced: set[tuple[int, int | None]]) -> LineEdit | None:
    """The last checkpoint with its replaced elements as ``{"id": ...}``."""
    slots = {slot for at, slot in replaced if at == index and slot is not None}
    if not slots or line.elements is None:
        return None
    pieces, at = [], 0
    for slot, (message_id, start, end) in enumerate(line.elements):
        if slot in slots:
            pieces += [raw[at:start], orjson.dumps({"id": message_id})]
            at = end
    pieces.append(raw[at:])
    return LineEdit(index, REPEATED, new=b"".join(pieces), payloads=_payloads(line))


__all__ = ["DEAD", "OVERWRITTEN", "REPEATED", "gemini_dead_lines"]
