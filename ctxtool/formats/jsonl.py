"""Bytes <-> entries. Strict UTF-8, one JSON object per line, raw bytes kept for passthrough.

Line framing found in real transcripts, and what the reader does with it:

* no final newline: the last entry's raw bytes have no terminator; writers add one only when
  another entry follows, so an identity pipeline stays byte-identical;
* CRLF: parsed fine (``\\r`` is JSON whitespace) and kept in the raw bytes;
* a UTF-8 BOM on line 1: skipped for parsing, kept in the raw bytes;
* blank lines: kept, attached to the raw bytes of the entry before them (or after them, at the
  start of a file); they go away only when that entry is changed or dropped;
* two JSON objects glued on one line: split into two entries, with a warning;
* a 0-byte file: no entries;
* a file that is one pretty-printed JSON object (line 1 a lone ``{``): one entry, its raw bytes
  the whole file, when an adapter reads such a document as a session
  (:meth:`~ctxtool.formats.capabilities.reading.ReadingAdapter.reads_document`: Gemini CLI's
  older sessions); else line 1 is reported as not JSONL, and a document that does not parse
  names the line where it breaks;
* a truncated last line (no newline, invalid JSON - a session killed mid-write): a warning, and
  the bytes pass through untouched unless ``on_invalid="skip"``;
* integers past 64 bits: orjson would read them as floats, so a line with a run of 19 or more
  digits is parsed again with the stdlib, exactly, and :func:`dumps_json` writes such ints back;
* a line longer than the maximum line length (:func:`max_line_bytes`: 256 MiB unless
  ``$CTXTOOL_MAX_LINE_BYTES`` says otherwise) is an InputError (exit 3) as soon as that many
  bytes were read without a newline, so input without newlines (``/dev/zero``) cannot take all
  memory.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO, Literal

import orjson

from ctxtool.errors import InputError, UsageError
from ctxtool.formats.documents import is_session
from ctxtool.types import Entry

OnInvalid = Literal["error", "skip", "keep"]
Warn = Callable[[str], None]
BOM = b"\xef\xbb\xbf"
INVALID_HINT = "pass --on-invalid skip to drop bad lines or --on-invalid keep to pass them through"
# 2**63 has 19 digits: an integer written with fewer always fits orjson's 64 bits. Digits are
# mapped to "0" so one fast substring search finds any run (a regex is several times slower).
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_DIGIT_RUN = b"0" * 19


MAX_LINE_ENV = "CTXTOOL_MAX_LINE_BYTES"
DEFAULT_MAX_LINE = 256 << 20  # 256 MiB: real lines (a 500 KB tool result, a few images) are far below
_SIZE = re.compile(r"\s*(\d+)\s*([kmg]i?b?|b)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _ignore(_: str) -> None:
    pass


def max_line_bytes(env: Mapping[str, str] | None = None) -> int:
    """The maximum line length: ``$CTXTOOL_MAX_LINE_BYTES`` (bytes, or with a K/M/G suffix,
    powers of 1024), else 256 MiB. A value that is not a size is a UsageError (exit 2)."""
    value = (os.environ if env is None else env).get(MAX_LINE_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_LINE
    match = _SIZE.fullmatch(value)
    if not match or int(match.group(1)) < 1:
        raise UsageError(f"${MAX_LINE_ENV}={value!r} is not a size",
                         hint="give bytes or a size like 512M or 1G")
    return int(match.group(1)) * _UNITS[(match.group(2) or "")[:1].lower()]


def _size(count: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= factor and count % factor == 0:
            return f"{count // factor} {unit}"
    return f"{count} bytes"


LONG_LINE = 4 << 20  # past this, a line is gathered in a BytesIO (see _rest_of_line)


def _rest_of_line(line: bytes, readline: Callable[[int], bytes], limit: int) -> bytes:
    """``line`` (the first :data:`LONG_LINE` bytes of a line) completed, up to ``limit + 1``
    bytes. Gathered piece by piece in a BytesIO, whose buffer grows in place and becomes the
    result without a copy: about 1.1x the line's size at the peak, where ``readline(limit + 1)``
    joins its pieces (2x)."""
    buffer = io.BytesIO()
    buffer.write(line)
    size = len(line)
    del line
    while size <= limit:
        part = readline(min(LONG_LINE, limit + 1 - size))
        buffer.write(part)
        size += len(part)
        if not part or part.endswith(b"\n"):
            break
    return buffer.getvalue()


def bounded_lines(stream: BinaryIO | Iterable[bytes], source: str,
                  limit: int | None = None) -> Iterator[bytes]:
    """The lines of ``stream``, each at most ``limit`` bytes before its newline (default:
    :func:`max_line_bytes`). A file object is read with ``readline(limit + 1)``, so a longer line
    is refused after ``limit`` bytes, not once it is whole; any other iterable of lines is
    checked line by line. Raises InputError (exit 3) naming the line."""
    limit = max_line_bytes() if limit is None else limit
    readline = getattr(stream, "readline", None)
    if readline is None:
        for lineno, line in enumerate(stream, start=1):  # type: ignore[arg-type]
            if len(line) > limit and not (len(line) == limit + 1 and line.endswith(b"\n")):
                raise _too_long(limit, source, lineno)
            yield line
        return
    # the loop every read of a file runs once per line: one C call, no helper, in the
    # common case (a line shorter than the cap, or ending within it)
    cap = min(limit + 1, LONG_LINE)
    lineno = 0
    while line := readline(cap):
        lineno += 1
        if len(line) == cap and not line.endswith(b"\n"):
            if cap == LONG_LINE and cap <= limit:
                line = _rest_of_line(line, readline, limit)
            if len(line) > limit and not (len(line) == limit + 1 and line.endswith(b"\n")):
                raise _too_long(limit, source, lineno)
        yield line


def bounded_chunks(chunks: Iterable[bytes], source: str,
                   limit: int | None = None) -> Iterator[bytes]:
    """``chunks`` of a stream being copied (spooled), checked like :func:`bounded_lines`: a run
    of more than ``limit`` bytes without a newline raises InputError (exit 3) naming its line,
    so copying an endless line (``/dev/zero``) stops instead of filling the disk."""
    limit = max_line_bytes() if limit is None else limit
    run, lineno = 0, 1
    for chunk in chunks:
        last = chunk.rfind(b"\n")
        if last < 0:
            run += len(chunk)
        else:
            lineno += chunk.count(b"\n")
            run = len(chunk) - last - 1
        if run > limit:
            raise _too_long(limit, source, lineno)
        yield chunk


def _too_long(limit: int, source: str, lineno: int) -> InputError:
    return InputError(f"line longer than {_size(limit)} (the maximum line length); not a "
                      "transcript?", source=source, lineno=lineno,
                      hint=f"raise ${MAX_LINE_ENV} (e.g. 1G) if it really is one")


_BLANK_START = (b"", b"\n", b"\r", b" ", b"\t", b"\x0b", b"\x0c")


def is_blank(line: bytes) -> bool:
    """Only whitespace? (``strip()`` copies the line, 500 KB for a large tool result: it runs only
    on the lines whose first byte could make them blank)."""
    return line[:1] in _BLANK_START and not line.strip()


def iter_entries(
    stream: BinaryIO | Iterable[bytes],
    source: str = "<stdin>",
    *,
    on_invalid: OnInvalid = "error",
    warn: Warn = _ignore,
    exact_ints: bool = True,
    final: bool = True,
) -> Iterator[Entry]:
    """Yield one :class:`Entry` per JSON object in a binary stream (streaming, one line held).

    ``exact_ints=False`` skips the search for integers past 64 bits (see :func:`loads_json`),
    which costs about half a parse: for reads whose entries are never written back (estimate,
    validate, the first pass of a two-pass command), or whose few changed entries go through
    :func:`exact_entry` first. ``final=False``: another input follows this one in the same
    output, so its truncated last line cannot end the output (see :func:`_invalid`)."""
    loads = loads_json if exact_ints else orjson.loads
    pending = b""  # blank lines (and a BOM) not yet attached to an entry
    held: Entry | None = None  # last entry, held back so trailing blank lines can join it
    lineno = 0
    lines: Iterator[bytes] = bounded_lines(stream, source)
    first = next(lines, b"")
    if len(first) < 16 and first.removeprefix(BOM).strip() == b"{":  # a pretty-printed document?
        whole = _document_lines(first, lines, source)
        document = _document(b"".join(whole), source, on_invalid)
        if document is not None:
            yield document
            return
        lines = iter(whole)
    elif first:
        lines = itertools.chain((first,), lines)
    for line in lines:
        lineno += 1
        body = line[3:] if lineno == 1 and line.startswith(BOM) else line
        if body[:1] in _BLANK_START and not body.strip():  # is_blank(body), inlined
            if held is not None:
                held.raw = (held.raw or b"") + line
            else:
                pending += line
            continue
        if pending:
            raw, pending = pending + line, b""
        else:
            raw = line
        try:  # parsed here rather than in a helper: this runs for every line
            data = loads(body)
        except orjson.JSONDecodeError as exc:
            entries = _unparsed(raw, body, exc, source, lineno, on_invalid, warn, final)
        else:
            if isinstance(data, dict):  # the common case
                if held is not None:
                    yield held
                held = Entry(data, raw, source, lineno)
                continue
            entries = _invalid(raw, source, lineno, f"expected a JSON object, got {_kind(data)}",
                               on_invalid, warn)
        for entry in entries:
            if held is not None:
                yield held
            held = entry
    if held is not None:
        yield held
    elif pending:
        # a file of nothing but blank lines: keep its bytes so identity stays byte-identical
        yield Entry({}, raw=pending, source=source, lineno=lineno, invalid=True)


def _document_lines(first: bytes, lines: Iterator[bytes], source: str) -> list[bytes]:
    """``first`` and every line after it: a document is held whole, bounded as one line is."""
    limit, size = max_line_bytes(), len(first)
    whole = [first]
    for line in lines:
        size += len(line)
        if size > limit:
            raise InputError(f"a JSON document longer than {_size(limit)} (the maximum line "
                             "length); not a transcript?", source=source, lineno=1,
                             hint=f"raise ${MAX_LINE_ENV} (e.g. 1G) if it really is one")
        whole.append(line)
    return whole


def _document(data: bytes, source: str, on_invalid: OnInvalid) -> Entry | None:
    """The whole file as one entry when it is one JSON object an adapter reads as a session;
    None: read it line by line. A document that does not parse is an InputError naming the
    line where it breaks (with ``on_invalid`` "error"; else it is read line by line)."""
    try:
        document = loads_json(data.removeprefix(BOM))
    except orjson.JSONDecodeError as exc:
        if on_invalid != "error":
            return None
        lines = data.count(b"\n") + (not data.endswith(b"\n"))  # at the end: its last line
        raise InputError(f"not JSONL, and not one JSON document either: {exc.msg}",
                         source=source, lineno=min(exc.lineno, lines),
                         hint="ctxtool reads JSONL transcripts, one JSON object per line, and "
                              "an agent's one-document sessions") from None
    return document_entry(document, data, source)


def document_entry(document: Any, data: bytes, source: str) -> Entry | None:
    """``document`` (parsed from the whole file ``data``) as one entry when an adapter reads
    it as a session, else None."""
    if not isinstance(document, dict) or not is_session(document):
        return None
    return Entry(document, data, source, 1)


def checked_lines(lines: Iterable[bytes], source: str, *, on_invalid: OnInvalid,
                  warn: Warn = _ignore) -> Iterator[bytes]:
    """``lines`` as they are, each checked to be a JSON object as :func:`iter_entries` would
    (a line that is not: an InputError with ``on_invalid`` "error", else a warning; a
    truncated last line is always passed with a warning), for commands that work on the bytes
    of lines and never drop one (``vacuum``)."""
    for lineno, line in enumerate(lines, 1):
        body = line[3:] if lineno == 1 and line.startswith(BOM) else line
        if not is_blank(body):
            try:
                data = orjson.loads(body)
            except orjson.JSONDecodeError as exc:
                _unparsed(line, body, exc, source, lineno, on_invalid, warn)
            else:
                if not isinstance(data, dict):
                    _invalid(line, source, lineno, f"expected a JSON object, got {_kind(data)}",
                             on_invalid, warn)
        yield line


def _unparsed(raw: bytes, body: bytes, exc: orjson.JSONDecodeError, source: str, lineno: int,
              on_invalid: OnInvalid, warn: Warn, final: bool = True) -> list[Entry]:
    """The entries of a line orjson refused: several objects glued together, or an invalid
    line (an error, skipped or kept per ``on_invalid``)."""
    parts = _split_glued(body)
    if parts is None:
        is_last_partial = not raw.endswith(b"\n")
        return _invalid(raw, source, lineno, _describe(exc, body, lineno, is_last_partial),
                        on_invalid, warn, truncated=is_last_partial and final,
                        cut_short=is_last_partial and not final)
    warn(f"{source}:{lineno}: {len(parts)} JSON objects on one line; split into "
         f"{len(parts)} entries")
    return _glued_entries(raw, len(raw) - len(body), parts, source, lineno)


def loads_json(body: bytes) -> Any:
    """``orjson.loads``, but exact for integers orjson cannot hold (it makes them floats): a line
    with a run of 19+ digits is parsed again with the stdlib (only after orjson accepted it, so
    NaN and Infinity stay refused). Raises ``orjson.JSONDecodeError`` like orjson."""
    return _exactly(body, orjson.loads(body))


# orjson reads an integer it cannot hold as a float, so where it read no float there is nothing
# to parse again. On long lines that is checked first: a walk over the values (a few per line)
# costs less than the digit-run search over every byte (a tenth of persist's time).
_WALK_FROM = 4096


def _exactly(body: bytes, parsed: Any) -> Any:
    """``body`` parsed by the stdlib when it holds a run of 19+ digits and ``parsed`` (orjson's
    reading of it) has a float, else ``parsed``."""
    if len(body) > _WALK_FROM and not _has_float(parsed):
        return parsed
    if _LONG_DIGIT_RUN not in body.translate(_DIGITS_TO_ZERO):
        return parsed
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError):  # deeper than the stdlib goes: keep what we have
        return parsed


def _has_float(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif type(item) is float:
            return True
    return False


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def exact_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` parsed again exactly when it was read with ``exact_ints=False`` and its line
    holds a run of 19+ digits (else ``entry`` itself): what a transform that reads that way
    calls on the few entries it changes, so the integers it writes back are the ones it read."""
    if not isinstance(entry, Entry) or not entry.raw or entry.invalid:
        return entry
    data = _exactly(entry.raw.removeprefix(BOM), entry)
    if data is entry or not isinstance(data, dict):
        return entry
    exact = Entry(data, raw=entry.raw, source=entry.source, lineno=entry.lineno)
    exact.glued = entry.glued
    return exact


def _invalid(raw: bytes, source: str, lineno: int, problem: str, on_invalid: OnInvalid,
             warn: Warn, *, truncated: bool = False, cut_short: bool = False) -> list[Entry]:
    """The entries of a line that is no JSON object. ``truncated``: the output's last line,
    passed through whatever ``on_invalid`` says but "skip"; ``cut_short``: a truncated last
    line of an input others follow in one output, where it would be an invalid line in the
    middle: left out unless ``on_invalid`` is "keep" (its file still holds it)."""
    if cut_short and on_invalid != "keep":
        warn(f"{source}:{lineno}: {problem}; left out of the output, where another input "
             f"follows (the file keeps it; --on-invalid keep passes it through)")
        return []
    if on_invalid == "skip":
        warn(f"{source}:{lineno}: {problem}; line skipped")
        return []
    if on_invalid == "keep" or truncated:
        # A truncated last line is what a live or killed session leaves behind: keep its bytes
        # (at the end of the output: see iter_lines_out).
        warn(f"{source}:{lineno}: {problem}; line passed through unchanged"
             + (" at the end of the output" if truncated else ""))
        entry = Entry({}, raw=raw, source=source, lineno=lineno, invalid=True)
        entry.partial = truncated
        return [entry]
    raise InputError(problem, source=source, lineno=lineno, hint=INVALID_HINT)


def _describe(exc: orjson.JSONDecodeError, body: bytes, lineno: int, is_last_partial: bool) -> str:
    reason = str(exc).split(":", 1)[0]
    if "utf-8" in str(exc).lower() or "surrogate" in str(exc).lower():
        return f"invalid UTF-8 or lone surrogate ({reason})"
    if lineno == 1 and body.strip() in (b"{", b"["):
        return "not JSONL: this looks like a pretty-printed JSON document (one object per line expected)"
    if is_last_partial:
        return f"truncated last line, the session was probably killed mid-write ({reason})"
    return f"invalid JSON ({reason})"


def is_truncated(raw: bytes) -> bool:
    """Whether a last line without newline is a truncated one (reads as ``Entry.partial``)."""
    return any(entry.partial for entry in iter_entries([raw], on_invalid="keep"))


def describe_invalid(entry: Entry) -> tuple[str, str]:
    """Why a line passed through as invalid (``on_invalid="keep"``) did not parse, as
    ``(problem, kind)``; kind is ``truncated`` (a last line without newline: a killed session),
    ``not-jsonl`` (line 1 opens a pretty-printed JSON document), ``not-an-object`` or
    ``invalid-json``. Used by ``validate`` to report bad lines."""
    raw = entry.raw or b""
    truncated = not raw.endswith(b"\n")
    body = (raw[3:] if raw.startswith(BOM) else raw).strip()
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        problem = _describe(exc, body, entry.lineno, truncated)
        if entry.lineno == 1 and body in (b"{", b"["):
            return problem, "not-jsonl"
        return problem, "truncated" if truncated else "invalid-json"
    return f"expected a JSON object, got {_kind(data)}", "not-an-object"


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _split_glued(body: bytes) -> list[tuple[int, dict[str, Any]]] | None:
    """Split ``{...}{...}`` into (byte offset where the object ends, object) pairs; None when the
    line is not exactly a run of objects."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    parts: list[tuple[int, dict[str, Any]]] = []
    pos = len(text) - len(text.lstrip())
    end_of_text = len(text.rstrip())
    while pos < end_of_text:
        try:
            obj, end = decoder.raw_decode(text, pos)
            obj = loads_json(text[pos:end].encode("utf-8"))  # same strictness as other lines
        except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
            return None
        if not isinstance(obj, dict):
            return None
        parts.append((len(text[:end].encode("utf-8")), obj))
        pos = end
        while pos < end_of_text and text[pos] in " \t\r":
            pos += 1
    return parts if len(parts) > 1 else None


def _glued_entries(raw: bytes, body_start: int, parts: list[tuple[int, dict[str, Any]]],
                   source: str, lineno: int) -> list[Entry]:
    """Entries for objects glued on one line. Each keeps its own slice of the line, and all but
    the first are marked ``glued`` so an untouched run is written back without new newlines."""
    entries: list[Entry] = []
    start = 0
    for i, (end, obj) in enumerate(parts):
        stop = len(raw) if i == len(parts) - 1 else body_start + end
        entry = Entry(obj, raw=raw[start:stop], source=source, lineno=lineno)
        entry.glued = i > 0
        entries.append(entry)
        start = stop
    return entries


def dumps_entry(entry: dict[str, Any]) -> bytes:
    """Serialize a new or changed entry: compact orjson, key order kept, one line."""
    return dumps_json(entry) + b"\n"


def dumps_json(value: Any, *, indent: bool = False, sort_keys: bool = False) -> bytes:
    """``orjson.dumps`` (compact, or indented by 2), falling back to the stdlib for what orjson
    refuses but a transcript may hold: integers past 64 bits, nesting past 254 levels. Use it,
    not ``orjson.dumps``, for anything taken from a transcript. Raises RecursionError past the
    stdlib's own depth (about 900 levels), which the CLI reports as input nested too deeply."""
    option = (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, option=option or None)
    except orjson.JSONEncodeError:
        layout: dict[str, Any] = {"indent": 2} if indent else {"separators": (",", ":")}
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=sort_keys,
                          **layout)
        return text.encode("utf-8")


def dumps_changed(entry: dict[str, Any], raw: bytes, old: str,
                  new: str) -> tuple[bytes | None, bool]:
    """:func:`dumps_entry` of ``entry`` (None when orjson refuses it: see :func:`dumps_json`), and
    whether ``raw``, the line read for the entry ``entry`` was made from by changing one string
    value from ``old`` to ``new``, was orjson's compact form plus a newline: decided without
    dumping what ``raw`` holds. True only when it surely was; False when it was not, or when
    this cannot tell (the caller then dumps the original to know).

    Why it is exact: orjson writes a value the same way wherever it stands, so when ``new``'s
    string token stands as a whole value in the bytes of ``entry`` (P + token + Q), P +
    dumps(old) + Q is orjson's compact form of ``entry`` with that value ``old``. If ``raw`` is
    those bytes (and the newline), it parses to that; and as a line parses to what it was read
    into (an Entry's ``raw``), it was the compact form of the original entry."""
    try:
        line = orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE)  # no copy to add it
        token, before = orjson.dumps(new), orjson.dumps(old)
    except orjson.JSONEncodeError:  # past 64 bits or 254 levels, or a lone surrogate
        return None, False
    at = line.find(token)
    end = at + len(token)
    # The token stands as a whole value when the quote it opens with follows what precedes a
    # value (so it is not an escaped quote), its next byte cannot follow a closing quote (so
    # that quote opens a string), and what follows it ends a value (not a key's colon).
    if at <= 0 or line[at - 1] not in b":,[" or token[1:2] in (b":", b",", b"]", b"}") \
            or line[end:end + 1] not in (b",", b"]", b"}"):
        return line, False
    after = at + len(before)
    view = memoryview(line)
    compact = (len(raw) == len(line) - len(token) + len(before)
               and raw.startswith(view[:at]) and raw.startswith(before, at)
               and raw.startswith(view[end:], after))
    return line, compact


def iter_lines_out(entries: Iterable[dict[str, Any]], *, more: bool = False) -> Iterator[bytes]:
    """The bytes to write for each entry: raw bytes when untouched, orjson otherwise.

    A raw line without a final newline (the last line of a file) gets one only when something
    follows it, so an identity pipeline reproduces the input byte for byte. A truncated last line
    (``Entry.partial``) is held back and written last, unchanged: entries a transform appends
    go before it, where they are whole lines, and a writer still adding to that line (a live
    session) completes it in place. ``more``: another input's entries follow in the same output,
    so the last line gets its newline.
    """
    need_newline = False
    previous_raw = False
    partial: list[bytes] = []
    for entry in entries:
        raw = entry.raw if isinstance(entry, Entry) else None
        if raw is not None and entry.partial:  # type: ignore[union-attr]
            partial.append(raw)
            continue
        if need_newline and not (raw is not None and previous_raw
                                 and getattr(entry, "glued", False)):
            yield b"\n"
        chunk = raw if raw is not None else dumps_entry(entry)
        need_newline = not chunk.endswith(b"\n")
        previous_raw = raw is not None
        yield chunk
    for raw in partial:
        if need_newline:
            yield b"\n"
        yield raw
        need_newline = True
    if more and need_newline:
        yield b"\n"


def write_entries(entries: Iterable[dict[str, Any]], out: BinaryIO, *, more: bool = False) -> int:
    """Write entries to a binary stream; returns the number written. ``more``: what another
    input gives is written after them (:func:`iter_lines_out`)."""
    count = 0
    write = out.write
    for chunk in iter_lines_out(entries, more=more):
        write(chunk)
        if chunk != b"\n":
            count += 1
    return count
