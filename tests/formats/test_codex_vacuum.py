"""What vacuum takes out of a Codex rollout: the history of a compaction that a later compaction
of the same turn replaces (ctxtool/formats/codex/vacuum.py, docs/vacuum.md#codex); the real client's
side is tests/e2e/test_codex_vacuum.py."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ctxtool.formats.codex import SUPERSEDED, VACUUM_MARK, superseded_compactions
from ctxtool.formats.json_spans import SpanError, object_spans
from tests.conftest import run_ctxtool

IMAGE = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 8).decode()


def line(kind: str, payload: dict[str, Any], ordinal: int = 0) -> bytes:
    """A rollout line as Codex 0.171.0 writes it (serde's compact JSON, non-ASCII as is)."""
    entry = {"timestamp": "2026-11-27T16:06:55.597Z", "ordinal": ordinal, "type": kind,
             "payload": payload}
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def started(turn: str) -> bytes:
    return line("event_msg", {"type": "task_started", "turn_id": turn})


def user(text: str) -> bytes:
    return line("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": text}]})


def compacted(summary: str, *, history: Any = "default", image: bool = False) -> bytes:
    if history == "default":
        content: list[dict[str, Any]] = [{"type": "input_text", "text": f"asked «{summary}» \"q\""}]
        if image:
            content.append({"type": "input_image", "image_url": IMAGE})
        history = [{"type": "message", "role": "user", "content": content},
                   {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": summary}]}]
    payload: dict[str, Any] = {"message": summary, "replacement_history": history}
    if isinstance(history, list):
        payload["replacement_history_metadata"] = [{"history_sequence": n}
                                                   for n in range(len(history))]
    payload.update({"retained_context": {"user_messages": [{"text": summary}]},
                    "window_number": 1, "window_id": "w-" + summary})
    return line("compacted", payload)


def edits_of(lines: list[bytes]) -> dict[int, Any]:
    return {e.index: e for e in superseded_compactions(iter(lines))}


def test_an_earlier_compaction_of_the_same_turn_is_emptied_the_last_of_each_turn_stays() -> None:
    lines = [line("session_meta", {"id": "s"}), started("t1"), user("one"), compacted("a"),
             user("more"), compacted("b"), started("t2"), compacted("c"), compacted("d"),
             compacted("e"), started("t3"), compacted("f")]
    edits = edits_of(lines)
    assert sorted(edits) == [3, 7, 8]  # a (b follows in t1), c and d (e follows in t2)
    assert {e.reason for e in edits.values()} == {SUPERSEDED}


def test_the_emptied_record_keeps_every_other_byte_and_names_the_original() -> None:
    original = compacted("a")
    new = edits_of([started("t"), original, compacted("b")])[1].new
    before, after = json.loads(original), json.loads(new)
    assert after["payload"]["replacement_history"] == []
    assert after["payload"]["replacement_history_metadata"] == []
    assert after["payload"][VACUUM_MARK] == "sha256:" + hashlib.sha256(original).hexdigest()
    del after["payload"][VACUUM_MARK]
    for key in ("replacement_history", "replacement_history_metadata"):
        before["payload"][key] = []
    assert after == before
    head = original.index(b'"replacement_history"')
    assert new[:head] == original[:head]  # the text around the history is Codex's own
    assert new.endswith(b'"window_id":"w-a","' + VACUUM_MARK.encode() + b'":"sha256:'
                        + hashlib.sha256(original).hexdigest().encode() + b'"}}\n')
    assert len(new) < len(original)


def test_compactions_outside_a_turn_or_without_a_history_list_are_left() -> None:
    assert not edits_of([compacted("a"), compacted("b"), started("t"), compacted("c")])
    # a record without its own history (an older Codex) replaces nothing: "a" is the base
    assert not edits_of([started("t"), compacted("a"), compacted("b", history=None)])
    assert sorted(edits_of([started("t"), compacted("a"), compacted("b", history=None),
                            compacted("c")])) == [1]


def test_a_rollout_with_a_rollback_is_left_whole() -> None:
    rollback = line("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
    assert not edits_of([started("t"), compacted("a"), compacted("b"), rollback])


def test_a_line_still_being_written_is_not_edited_but_counts() -> None:
    last = compacted("b")
    # the newest compaction lacks its newline: it is not edited, yet it replaces "a"
    assert sorted(edits_of([started("t"), compacted("a"), last[:-1]])) == [1]
    assert not edits_of([started("t"), compacted("a")[:-1]])


def test_a_record_already_vacuumed_is_not_vacuumed_again() -> None:
    once = edits_of([started("t"), compacted("a"), compacted("b")])[1].new
    assert not edits_of([started("t"), once, compacted("b")])


def test_images_are_cut_out_to_be_stored_each_under_its_hash() -> None:
    original = compacted("a", image=True)
    edit = edits_of([started("t"), original, compacted("b")])[1]
    cut = [original[start:end] for start, end in edit.payloads]
    assert b"".join(cut) == original  # the pieces are the whole line, in order
    payload = IMAGE.split(",", 1)[1].encode()
    assert payload in cut
    assert not edits_of([started("t"), compacted("x"), compacted("y")])[1].payloads


@pytest.mark.parametrize("text", ['{"a":1,"payload":{"b":[1,{"c":"}"}],"d":"\\"x"}}',
                                  '{ "a" : 1 , "payload" : { } }'])
def test_object_spans_find_each_value(text: str) -> None:
    top, end = object_spans(text)
    assert end == len(text)
    start, stop = top["payload"]
    assert json.loads(text[start:stop]) == json.loads(text)["payload"]
    members, _ = object_spans(text, start)
    for key, (a, b) in members.items():
        assert json.loads(text[a:b]) == json.loads(text)["payload"][key]


@pytest.mark.parametrize("text", ['{"a":1,"a":2}', '{"a":1', '["a"]', '{"a" 1}'])
def test_object_spans_refuse_what_is_not_one_object(text: str) -> None:
    with pytest.raises(SpanError):
        object_spans(text)


def test_an_image_in_many_emptied_records_is_stored_once_and_restored(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2026-11-27T16-06-55-01a21dc2-7f57-73e3-8a07-e5f5371a9d2f.jsonl"
    data = b"".join([line("session_meta", {"id": "01a21dc2-7f57-73e3-8a07-e5f5371a9d2f"}),
                     started("t"), compacted("a", image=True), compacted("b", image=True),
                     compacted("c", image=True)])
    rollout.write_bytes(data)
    store, out = tmp_path / "store", tmp_path / "vacuumed.jsonl"
    proc = run_ctxtool("vacuum", str(rollout), "-o", str(out), "--store", str(store))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().count(b"data:image") == 1  # the last compaction keeps its own
    payload = IMAGE.split(",", 1)[1].encode()
    stored = [p.read_bytes() for p in store.rglob("*.bin")]
    assert stored.count(payload) == 1 and len(stored) == 5  # the image once, 2 x 2 line parts
    back = run_ctxtool("restore", str(out), "--store", str(store))
    assert back.returncode == 0, back.stderr
    assert back.stdout == data
