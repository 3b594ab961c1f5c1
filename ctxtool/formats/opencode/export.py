"""OpenCode sessions: ``opencode export`` documents <-> ctxtool's OpenCode JSONL.

OpenCode keeps a session as message records, each with its parts (``message-v2.ts``:
``WithParts = {info, parts}``). ``opencode export <sessionID>`` prints
``{"info": <session>, "messages": [{"info": ..., "parts": [...]}, ...]}`` as
``JSON.stringify(data, null, 2)`` plus a newline; OpenCode <= 1.1 stored the same records as one
JSON file each (see :mod:`ctxtool.storage.opencode_tree`); 1.2 moved them into a SQLite database
(:mod:`ctxtool.storage.opencode_db`).

The JSONL form ctxtool works on has one message with its parts per line, in time order
(``info.time.created``, then ``id``), exactly the ``{"info", "parts"}`` objects OpenCode writes,
preceded by one ``{"session": <session info>}`` line that keeps what an export or a storage tree
needs to be written back (other top-level keys of an export, such as ``todos``, ride on that line
too). Writers re-create the documents byte for byte: :func:`js_stringify` formats like
``JSON.stringify(value, null, 2)``, numbers included.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import orjson

from ctxtool.errors import InputError
from ctxtool.formats.opencode.view import SESSION_KEY, is_message, is_session_line, obj

EXPORT_HINT = "expected the output of `opencode export <sessionID>`"


# --- what a line is --------------------------------------------------------------------------------

def message_sort_key(entry: Mapping[str, Any]) -> tuple[float, str]:
    """OpenCode's message order: ``time.created``, then ``id`` (its database index)."""
    info = obj(entry.get("info"))
    created = obj(info.get("time")).get("created")
    number = created if isinstance(created, (int, float)) and not isinstance(created, bool) else -math.inf
    ident = info.get("id")
    return (float(number), ident if isinstance(ident, str) else "")


def sort_messages(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages in time order; a stable sort, so an export already in order stays as it is."""
    return sorted(messages, key=message_sort_key)


# --- export documents ------------------------------------------------------------------------------

def loads_document(data: bytes, source: str, *, hint: str | None = EXPORT_HINT) -> Any:
    """Parse a whole JSON document; a syntax error names the line it is on."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        reason = str(exc).split(":", 1)[0]
        raise InputError(f"invalid JSON ({reason})", source=source, lineno=exc.lineno or None,
                         hint=hint) from exc


def is_export(document: Any) -> bool:
    return (isinstance(document, dict) and isinstance(document.get("messages"), list)
            and isinstance(document.get("info"), dict))


def entries_from_export(document: Any, source: str) -> list[dict[str, Any]]:
    """The JSONL entries of an export document: the session line, then the messages in order."""
    if not is_export(document):
        raise InputError("not an OpenCode export: no 'info' object and 'messages' list",
                         source=source, hint=EXPORT_HINT)
    messages = []
    for index, message in enumerate(document["messages"]):
        check_message(message, f"messages[{index}]", source)
        messages.append(message)
    header = {SESSION_KEY: document["info"]}
    header.update((k, v) for k, v in document.items() if k not in ("info", "messages"))
    return [header, *sort_messages(messages)]


def check_message(message: Any, where: str, source: str) -> None:
    """Raise InputError unless ``message`` is ``{"info": {id, role...}, "parts": [objects]}``."""
    problem = None
    if not isinstance(message, dict) or not isinstance(message.get("info"), dict):
        problem = "is not an object with an 'info' object"
    elif not isinstance(message.get("parts"), list):
        problem = "has no 'parts' list"
    elif not isinstance(message["info"].get("id"), str) or not message["info"]["id"]:
        problem = "has no info.id"
    elif message["info"].get("role") not in ("user", "assistant"):
        problem = f"has an unknown role {message['info'].get('role')!r}"
    elif not all(isinstance(p, dict) for p in message["parts"]):
        problem = "has a part that is not an object"
    if problem:
        raise InputError(f"{where} {problem}", source=source, hint=EXPORT_HINT)


def export_document(entries: Iterable[Mapping[str, Any]], *, source: str = "<input>") -> dict[str, Any]:
    """Entries (a session line and messages) back into an export document.

    Messages keep the order they come in; lines that are neither (invalid lines) are dropped,
    since an export has no place for them.
    """
    header: Mapping[str, Any] | None = None
    messages: list[dict[str, Any]] = []
    for entry in entries:
        if is_session_line(entry):
            header = entry
        elif is_message(entry):
            messages.append({"info": entry["info"], "parts": entry["parts"]})
    if header is None:
        raise InputError("no {\"session\": ...} line: an export needs the session record",
                         source=source,
                         hint="convert from the export or storage tree, which writes that line")
    document: dict[str, Any] = {"info": header[SESSION_KEY], "messages": messages}
    document.update((k, v) for k, v in header.items() if k != SESSION_KEY)
    return document


def dumps_export(document: Mapping[str, Any]) -> bytes:
    """An export document as ``opencode export`` prints it (2-space JSON and a newline)."""
    return (js_stringify(document) + "\n").encode("utf-8")


# --- JSON.stringify(value, null, 2) ----------------------------------------------------------------

_encode_string = json.JSONEncoder(ensure_ascii=False).encode  # same escapes as JSON.stringify


def js_number(value: float) -> str:
    """A float the way JavaScript prints it (``0.00001234``, ``1e-7``, ``5``, ``1e+21``)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else "null"
    # repr() gives the shortest round-tripping digits, as JavaScript does; only the layout differs
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    k = len(digits)
    n = int(exponent) + len(digit_tuple)  # value = 0.digits x 10^n
    sign = "-" if value < 0 else ""
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    tail = "." + digits[1:] if k > 1 else ""
    return f"{sign}{digits[0]}{tail}e{'+' if n >= 1 else '-'}{abs(n - 1)}"


def js_stringify(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)``: OpenCode's on-disk and export formatting."""
    out: list[str] = []
    _write(value, out, "", " " * indent)
    return "".join(out)


def _write(value: Any, out: list[str], pad: str, step: str) -> None:
    if isinstance(value, str):
        out.append(_encode_string(value))
    elif value is True or value is False or value is None:
        out.append("true" if value is True else "false" if value is False else "null")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(js_number(value))
    elif isinstance(value, Mapping):
        _write_container([(_encode_string(str(k)) + ": ", v) for k, v in value.items()],
                         "{", "}", out, pad, step)
    elif isinstance(value, (list, tuple)):
        _write_container([("", v) for v in value], "[", "]", out, pad, step)
    else:
        raise TypeError(f"cannot serialize {type(value).__name__}")


def _write_container(items: list[tuple[str, Any]], open_: str, close: str, out: list[str],
                     pad: str, step: str) -> None:
    if not items:
        out.append(open_ + close)
        return
    inner = pad + step
    out.append(open_)
    for i, (prefix, item) in enumerate(items):
        out.append(("\n" if i == 0 else ",\n") + inner + prefix)
        _write(item, out, inner, step)
    out.append("\n" + pad + close)


__all__ = [
    "SESSION_KEY", "check_message", "dumps_export", "entries_from_export", "export_document",
    "is_export", "is_message", "is_session_line", "js_number", "js_stringify", "loads_document",
    "message_sort_key", "sort_messages",
]
