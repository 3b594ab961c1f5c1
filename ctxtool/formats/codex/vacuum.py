"""``vacuum`` on a Codex rollout: compactions whose history a later one of the same turn
replaces lose it (docs/vacuum.md#codex)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from ctxtool.formats.json_spans import SpanError, object_spans
from ctxtool.formats.jsonl import loads_json
from ctxtool.formats.vacuum import LineEdit

SUPERSEDED = "superseded compaction history"
VACUUM_MARK = "ctxtool_vacuumed"  # the payload key naming the original line (its SHA-256)
_TURN_STARTED, _ROLLED_BACK, _COMPACTED = b"task_started", b"thread_rolled_back", b'"compacted"'
_EMPTIED = ("replacement_history", "replacement_history_metadata")
# the base64 of an image's data URL, stored apart (under its own hash) when it is this long
_IMAGE = re.compile(rb"data:image/[A-Za-z0-9.+-]{1,40};base64,([A-Za-z0-9+/=]{1024,})")


def superseded_compactions(lines: Iterable[bytes]) -> list[LineEdit]:
    """One :class:`LineEdit` per ``compacted`` record whose ``replacement_history`` a later
    compaction of the same turn replaces: Codex never reads it again (docs/vacuum.md#codex).

    Codex rebuilds a thread's history from the newest compaction of a turn (resume: the newest
    of all; ``thread/fork`` through a turn and ``thread/revert`` before one: the newest of the
    turns kept), so an earlier compaction *in the same turn* is never the base; one that ends
    an earlier turn may be, and stays. A turn is what lies between two ``task_started`` events;
    compactions before the first one, and every one in a rollout with a ``thread_rolled_back``
    event (older Codex replays those by user message), are left alone."""
    edits: list[LineEdit] = []
    pending: LineEdit | None = None  # the newest compaction of this turn, emptied
    in_turn = False
    for index, line in enumerate(lines):
        if _TURN_STARTED in line and _line_kind(line) == ("event_msg", "task_started"):
            pending, in_turn = None, True
        elif _ROLLED_BACK in line and _line_kind(line) == ("event_msg", "thread_rolled_back"):
            return []
        elif in_turn and _COMPACTED in line and _line_kind(line) == ("compacted", None):
            emptied = _emptied_compaction(index, line)
            if emptied is False:
                continue  # no history of its own (an older record): it replaces nothing
            if pending is not None:
                edits.append(pending)
            pending = emptied or None
    return edits


def _line_kind(line: bytes) -> tuple[Any, Any] | None:
    try:
        entry = loads_json(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
        return None
    kind = entry["payload"].get("type") if entry.get("type") == "event_msg" else None
    return entry.get("type"), kind


def _emptied_compaction(index: int, line: bytes) -> LineEdit | None | bool:
    """The edit that empties a compaction's history (``[]``, Codex's own shape for a
    checkpoint that carries none) and names the original line; False when the record has no
    history list; None when it has one but cannot be edited safely (it still counts)."""
    text = line.decode("latin-1")
    try:
        top, _ = object_spans(text)
        payload_span = top["payload"]
        members, payload_end = object_spans(text, payload_span[0])
    except (SpanError, KeyError):
        return None
    history = members.get("replacement_history")
    if history is None or text[history[0]] != "[":
        return False
    if not line.endswith(b"\n") or VACUUM_MARK in members:
        return None
    cuts = sorted(members[key] for key in _EMPTIED
                  if key in members and text[members[key][0]] == "[")
    mark = f',"{VACUUM_MARK}":"sha256:{hashlib.sha256(line).hexdigest()}"'
    pieces, at = [], 0
    for start, end in cuts:
        pieces += [text[at:start], "[]"]
        at = end
    pieces += [text[at:payload_end - 1], mark, text[payload_end - 1:]]
    new = "".join(pieces).encode("latin-1")
    if not _only_history_emptied(line, new):
        return None
    return LineEdit(index, SUPERSEDED, new=new, payloads=_image_ranges(line))


def _only_history_emptied(line: bytes, new: bytes) -> bool:
    """What the edit must be, checked on the parsed JSON: the same record, its history lists
    empty, the mark added."""
    try:
        before, after = loads_json(line), loads_json(new)
    except ValueError:
        return False
    payload = dict(before["payload"])
    payload.update({key: [] for key in _EMPTIED if isinstance(payload.get(key), list)})
    payload[VACUUM_MARK] = after["payload"].get(VACUUM_MARK)
    return after == {**before, "payload": payload}


def _image_ranges(line: bytes) -> tuple[tuple[int, int], ...]:
    """The line cut around each image's base64 (an image repeated in many records is then
    stored once, under its hash); () when it holds none."""
    bounds = [edge for found in _IMAGE.finditer(line) for edge in found.span(1)]
    if not bounds:
        return ()
    edges = [0, *bounds, len(line)]
    return tuple((a, b) for a, b in zip(edges, edges[1:]) if a < b)
