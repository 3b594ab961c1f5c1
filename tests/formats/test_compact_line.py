"""dumps_changed: whether a changed line's original bytes were orjson's compact form, decided
from the changed entry's bytes, must say exactly what dumping the original entry says
(``raw == dumps_json(original) + b"\\n"``, what snip and microcompact decided before), on real
lines and on lines spelling a string with every escape JSON allows; and a line that was not
compact still comes back byte for byte through ``restore``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxtool.formats.jsonl import BOM, dumps_changed, dumps_json, iter_entries
from ctxtool.types import Entry
from tests.clearing_helpers import Session, text_with_tokens
from tests.conftest import corpus_params, run_ctxtool

# unique in any line, so the check finds the value it replaced (as a store path makes it)
PLACEHOLDER = "[Content snipped - re-read if needed]\nTool result saved to: /s/9f0c1e7d.txt"


def decisions(entry: Entry, old: str, path: tuple[Any, ...]) -> tuple[bool, bool]:
    """(what dumps_changed decides, what dumping the original says) for ``entry`` with the
    string at ``path`` (``old``) replaced by the placeholder; the bytes it returns are checked
    to be the changed entry's."""
    new = _replaced(entry, path, PLACEHOLDER)
    assert entry.raw is not None
    line, compact = dumps_changed(new, entry.raw, old, PLACEHOLDER)
    assert line == dumps_json(new) + b"\n"
    return compact, entry.raw == dumps_json(entry) + b"\n"


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


def _string_slots(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        return [(path, value)] if path else []
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    return [slot for key, item in items for slot in _string_slots(item, (*path, key))]


def _variants(raw: bytes) -> list[bytes]:
    """The line as read, as orjson writes it, and spelled in ways orjson does not write it."""
    try:
        value = json.loads(raw.removeprefix(BOM))
    except ValueError:  # glued objects: the line as read only
        return [raw]
    body = raw.rstrip(b"\r\n")
    return [raw, orjson.dumps(value) + b"\n",
            json.dumps(value, ensure_ascii=False).encode() + b"\n",  # spaces after : and ,
            json.dumps(value, separators=(",", ":")).encode() + b"\n",  # \uXXXX for non-ASCII
            body.replace(b"/", b"\\/") + b"\n",  # '/' only occurs inside strings
            body.replace(b"\\u001b", b"\\u001B") + b"\n",
            BOM + body + b"\n", body + b"\r\n", body, body + b"\n\n"]


@pytest.mark.parametrize("path", corpus_params())
def test_the_decision_is_the_full_dumps_on_corpus_lines(path: Path | None) -> None:
    assert path is not None
    checked = compact_seen = 0
    for raw in path.read_bytes().splitlines(keepends=True):
        for variant in _variants(raw):
            for entry in iter_entries(io.BytesIO(variant), on_invalid="keep"):
                if entry.invalid:
                    continue
                slots = _string_slots(entry)
                # the first, the longest and the last string values of the line
                for slot_path, old in {id(s): s for s in (
                        slots[:1] + sorted(slots, key=lambda s: -len(s[1]))[:1]
                        + slots[-1:])}.values():
                    fast, full = decisions(entry, old, slot_path)
                    assert fast == full, (path.name, variant[:200], slot_path)
                    checked += 1
                    compact_seen += fast
    # some lines were compact, and said so without a dumps (a file holding no JSON lines, a
    # pretty-printed document, has nothing to check)
    assert compact_seen or not checked


_SHORT = {'"': b'\\"', "\\": b"\\\\", "/": b"\\/", "\b": b"\\b", "\f": b"\\f", "\n": b"\\n",
          "\r": b"\\r", "\t": b"\\t"}


def _spellings(char: str) -> list[bytes]:
    """Every way JSON allows to write ``char`` inside a string."""
    ways = []
    if char not in '"\\' and ord(char) >= 0x20:
        ways.append(char.encode())
    if char in _SHORT:
        ways.append(_SHORT[char])
    units = [ord(char)] if ord(char) < 0x10000 else \
        [0xD800 + ((ord(char) - 0x10000) >> 10), 0xDC00 + ((ord(char) - 0x10000) & 0x3FF)]
    ways.append(b"".join(b"\\u%04x" % unit for unit in units))
    ways.append(b"".join(b"\\u%04X" % unit for unit in units))
    return ways


@st.composite
def spelled_strings(draw: st.DrawFn) -> tuple[str, bytes]:
    """A string (control characters, quotes, backslashes, '/', U+2028, accents, astral
    characters...) and a JSON token for it: orjson's, or each character spelled one of the
    ways JSON allows."""
    text = draw(st.text(st.one_of(
        st.characters(exclude_categories=("Cs",)),
        st.sampled_from(list(_SHORT) + ["\x1b", "\x00", "\x7f", "\u2028", "\u00e9", "\U0001F600"])),
        max_size=30))
    if draw(st.booleans()):
        return text, orjson.dumps(text)
    token = b'"' + b"".join(draw(st.sampled_from(_spellings(c))) for c in text) + b'"'
    return text, token


@settings(max_examples=300, deadline=None)
@given(content=spelled_strings(), other=spelled_strings(), framing=st.one_of(
    st.just((b"", b":", b"\n")),  # as orjson writes a line
    st.tuples(st.sampled_from([b"", BOM]), st.sampled_from([b":", b": "]),
              st.sampled_from([b"\n", b"\r\n", b"", b"\n\n", b" \n"]))))
def test_the_decision_is_the_full_dumps_on_every_escape(
        content: tuple[str, bytes], other: tuple[str, bytes],
        framing: tuple[bytes, bytes, bytes]) -> None:
    start, colon, ending = framing
    raw = start + b'{"type":"user","message":{"role":"user","content":[' \
        b'{"type":"tool_result","tool_use_id":"toolu_1","content"' + colon + content[1] + \
        b'}]},"toolUseResult":{"stdout":' + other[1] + b'}}' + ending
    [entry] = iter_entries(io.BytesIO(raw))
    assert entry["message"]["content"][0]["content"] == content[0]
    fast, full = decisions(entry, content[0], ("message", "content", 0, "content"))
    assert fast == full


def test_a_lone_surrogate_never_reaches_the_check() -> None:
    """orjson refuses a lone surrogate escape: such a line is no entry to clear."""
    raw = b'{"type":"user","content":"\\ud800"}\n'
    [entry] = iter_entries(io.BytesIO(raw), on_invalid="keep")
    assert entry.invalid


def test_only_a_whole_string_value_is_taken_for_the_value_replaced() -> None:
    """The placeholder's JSON after an escaped quote (inside a longer string) or as a key is
    not a value that was replaced: the check does not say compact there (the original is
    dumped instead), though each raw line here is compact."""
    text = "[ph at /s/1.txt]"
    for new, raw in [({"a": 'x"' + text}, b'{"a":"x\\"old"}\n'),
                     ({"b": 0, text: 1}, b'{"b":0,"old":1}\n')]:
        line, compact = dumps_changed(new, raw, "old", text)
        assert line == dumps_json(new) + b"\n" and orjson.dumps(text) in line
        assert not compact
        assert raw == dumps_json(json.loads(raw)) + b"\n"


def _session() -> Session:
    session = Session()
    session.user("start")
    for n in range(8):
        result = text_with_tokens(3000, f"out {n}: caf\u00e9 /src/m\u00f6d.py \x1b[31mred\x1b[0m")
        session.call("Bash", {"command": f"run {n}"}, result)
    session.user("done")
    return session


def test_lines_not_compact_come_back_byte_for_byte(tmp_path: Path) -> None:
    """Changed lines spelled every way orjson does not write them (spaces, \\u escapes, '\\/',
    upper-case hex, CRLF, a BOM, no final newline) are kept in the store and restored exactly;
    compact ones are not kept."""
    lines = _session().jsonl().splitlines(keepends=True)
    spellings = [
        lambda raw: raw,  # compact: not kept
        lambda raw: json.dumps(json.loads(raw), ensure_ascii=False).encode() + b"\n",
        lambda raw: json.dumps(json.loads(raw), separators=(",", ":")).encode() + b"\n",
        lambda raw: raw.replace(b"/", b"\\/"),
        lambda raw: raw.replace(b"\\u001b", b"\\u001B"),
        lambda raw: raw[:-1] + b"\r\n",
    ]
    spelled = [spellings[i % len(spellings)](raw) for i, raw in enumerate(lines)]
    spelled[0] = BOM + spelled[0]
    spelled[-1] = spelled[-1].rstrip(b"\r\n")
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(spelled))
    store, out = tmp_path / "store", tmp_path / "out.jsonl"
    done = run_ctxtool("microcompact", "--force", "--target", "0", "--keep", "0", "--store",
                       str(store), "--now", "2030-01-01T00:00:00Z", "-o", str(out), str(source))
    assert done.returncode == 0, done.stderr
    changed = [raw for raw in spelled if b'"tool_result"' in raw]
    kept = sorted(p.read_bytes() for p in store.rglob("ctxtool-lines/*.jsonl"))
    assert kept == sorted(raw for raw in changed if raw != dumps_json(
        next(iter_entries([raw]))) + b"\n")
    assert 0 < len(kept) < len(changed)
    restored = run_ctxtool("restore", str(out))
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout == source.read_bytes()


def test_what_orjson_refuses_is_left_to_the_full_dumps() -> None:
    """An integer past 64 bits (written by the stdlib, with its own escapes) or a lone
    surrogate: no bytes and no yes, the caller dumps both entries as before."""
    raw = b'{"n":123456789012345678901234,"content":"old"}\n'
    [entry] = iter_entries(io.BytesIO(raw))
    assert entry["n"] == 123456789012345678901234
    assert dumps_changed({**entry, "content": PLACEHOLDER}, raw, "old", PLACEHOLDER) \
        == (None, False)
    assert dumps_changed({"content": PLACEHOLDER}, b'{"content":"\\ud800"}\n', "\ud800",
                         PLACEHOLDER) == (None, False)
