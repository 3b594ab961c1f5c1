"""Checks of one entry on its own: its line framing and the JSON Schema of its format.

:func:`entry_checker` builds the ``check_entry`` callable that :func:`ctxtool.core.validating.validate.validate`
calls for every entry; the cross-entry rules live there. Only ``ctxtool validate`` uses this
module: jsonschema is imported the first time a checker is built, and each schema is compiled once
per process (importing this module loads neither jsonschema nor click).

Findings are ``(severity, code, message)`` tuples:

* ``schema`` (error): the entry does not match ``schemas/<format>.schema.json``;
* ``invalid-json`` / ``not-an-object`` (error): a line that is not a JSON object;
* ``truncated`` (warning): the last line stops mid-object, as a killed or live session leaves it;
* ``glued-line`` (warning): two objects on one line; ctxtool splits them, most readers drop the line.

A file whose first line opens a pretty-printed JSON document is not a transcript: the checker
raises :class:`~ctxtool.errors.InputError`, which validate reports as one error for the file.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable
from typing import Any

from ctxtool.errors import InputError
from ctxtool.formats.jsonl import describe_invalid
from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.registry import adapter_for
from ctxtool.formats.schema_check import Check, Unsupported, compile_schema
from ctxtool.formats.schemas import load_schema
from ctxtool.types import ANTHROPIC, CLAUDE_CODE, OPENAI, OPENCODE, Entry

Finding = tuple[str, str, str]  # (severity, code, message)
SCHEMA_OF: dict[str, str] = {
    CLAUDE_CODE: "claude-code-entry",
    ANTHROPIC: "anthropic-message",
    OPENAI: "openai-message",
    OPENCODE: "opencode-message",
}
MAX_SCHEMA_FINDINGS = 5  # per entry: a wrong --format must not bury the output in noise
_JSON_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer",
               float: "number", type(None): "null"}


def entry_checker(fmt: str) -> Callable[[dict[str, Any]], list[Finding]]:
    """``check_entry(entry) -> findings`` for entries of ``fmt``. An entry the schema's compiled
    predicate accepts has no schema finding; only the others go through jsonschema, for its
    messages (see :mod:`ctxtool.formats.schema_check`)."""
    name = SCHEMA_OF.get(fmt) or adapter_for(fmt).schema  # an adapter names its own
    matches = _predicate(name) if name else None

    def check_entry(entry: dict[str, Any]) -> list[Finding]:
        if isinstance(entry, Entry) and entry.invalid:
            return line_findings(entry)
        found = line_findings(entry) if isinstance(entry, Entry) else []
        if name is not None and not _accepted(matches, entry):
            found.extend(schema_findings(_validator(name), entry))
        return found

    return check_entry


def _accepted(matches: Check | None, entry: dict[str, Any]) -> bool:
    """True when the compiled predicate accepts ``entry`` (never without one, nor when the entry
    is nested too deeply for it: jsonschema then decides, as it always did)."""
    if matches is None:
        return False
    try:
        return matches(entry)
    except RecursionError:
        return False


@functools.cache
def _predicate(name: str) -> Check | None:
    """The schema ``name`` compiled to a predicate; None when it cannot be (jsonschema alone)."""
    documents = {load_schema(other)["$id"]: load_schema(other) for other in SCHEMA_OF.values()}
    try:
        return compile_schema(load_schema(name), documents)
    except Unsupported:
        return None


def line_findings(entry: Entry) -> list[Finding]:
    """Framing problems of one read line (see the module docstring)."""
    if entry.glued:
        return [("warning", "glued-line", "a second JSON object on the same line (a newline is "
                 "missing before it); ctxtool reads both, most JSONL readers drop the whole line")]
    if not entry.invalid or not (entry.raw or b"").strip(b"\xef\xbb\xbf \t\r\n"):
        return []  # a valid line, or a file of nothing but blank lines
    problem, kind = describe_invalid(entry)
    if kind == "not-jsonl":
        raise InputError(problem, source=entry.source, lineno=entry.lineno,
                         hint="ctxtool reads JSONL transcripts, one JSON object per line")
    if kind == "truncated":
        return [("warning", "truncated", problem)]
    return [("error", kind, problem)]


def schema_findings(validator: Any, entry: dict[str, Any]) -> list[Finding]:
    """Schema violations of one entry, each naming the JSON path and what was expected."""
    errors = list(itertools.islice(validator.iter_errors(entry), MAX_SCHEMA_FINDINGS + 1))
    found: list[Finding] = [("error", "schema", _describe_error(e))
                            for e in errors[:MAX_SCHEMA_FINDINGS]]
    if len(errors) > MAX_SCHEMA_FINDINGS:
        found.append(("error", "schema", "more schema errors in this entry not shown"))
    return found


@functools.cache
def _validator(name: str) -> Any:
    """The compiled validator of one schema, with the other input schemas resolvable by $id."""
    # lazy: only validate needs them; jsonschema ships no type hints (types-jsonschema does)
    from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    registry: Registry[Any] = Registry().with_resources(
        (load_schema(other)["$id"],
         Resource.from_contents(load_schema(other), default_specification=DRAFT202012))
        for other in SCHEMA_OF.values())
    standard_all_of = Draft202012Validator.VALIDATORS["allOf"]

    def all_of(validator: Any, subschemas: Any, instance: Any, schema: Any) -> Any:
        # The schemas pick a sub-schema by "type" with allOf: [{if: type == X, then: ...}, ...].
        # Evaluating every `if` dominates the run time; jump to the one that matches instead.
        # Same errors as the standard keyword, which handles every other case.
        table = _discriminator(subschemas)
        key = table[0] if table else None
        if key is None or not isinstance(instance, dict) or not isinstance(instance.get(key), str):
            yield from standard_all_of(validator, subschemas, instance, schema)
            return
        for index in table[1].get(instance[key], ()):  # type: ignore[index]
            yield from validator.descend(instance, subschemas[index], schema_path=index)

    fast = validators.extend(Draft202012Validator, validators={"allOf": all_of})
    return fast(load_schema(name), registry=registry)


_DISCRIMINATORS: dict[int, tuple[Any, tuple[str, dict[str, list[int]]] | None]] = {}


def _discriminator(subschemas: Any) -> tuple[str, dict[str, list[int]]] | None:
    """``(key, {value: [indexes]})`` when every subschema is ``{if: {properties: {key: {const:
    value}}, required: [key]}, then: ...}`` with one shared key and string values; None
    otherwise. Cached."""
    cached = _DISCRIMINATORS.get(id(subschemas))
    if cached is not None and cached[0] is subschemas:
        return cached[1]
    table: tuple[str, dict[str, list[int]]] | None = None
    keys: set[str] = set()
    values: dict[str, list[int]] = {}
    for index, sub in enumerate(subschemas if isinstance(subschemas, list) else ()):
        test = sub.get("if") if isinstance(sub, dict) and set(sub) == {"if", "then"} else None
        if not isinstance(test, dict):
            break
        props = test.get("properties")
        if not (isinstance(props, dict) and len(props) == 1):
            break
        (key, rule), = props.items()
        if set(test) - {"properties", "required"} or test.get("required", [key]) != [key]:
            break
        if not (isinstance(rule, dict) and set(rule) == {"const"} and isinstance(rule["const"], str)):
            break
        keys.add(key)
        values.setdefault(rule["const"], []).append(index)
    else:
        if len(keys) == 1:
            table = (keys.pop(), values)
    _DISCRIMINATORS[id(subschemas)] = (subschemas, table)
    return table


def _describe_error(error: Any) -> str:
    where = _json_path(error.absolute_path)
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else expected
        return f"{where}: expected {wanted}, got {_json_type(instance)}"
    if kind == "const":
        return f"{where}: expected {_short(expected)}, got {_short(instance)}"
    if kind == "enum":
        return f"{where}: expected one of {', '.join(_short(v) for v in expected)}, got {_short(instance)}"
    if kind == "required":  # one error per missing key, named in jsonschema's short message
        return f"{where}: {error.message.replace('is a required property', 'is missing')}"
    return f"{where}: {_clip(error.message)}"


def _json_path(parts: Iterable[Any]) -> str:
    """``message.content[2].id`` for a jsonschema path; ``entry`` for the top level."""
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "entry"


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES.items() if type(value) is kind), "object")


def _short(value: Any) -> str:
    return _clip(dumps_json(value).decode(), 60)


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
