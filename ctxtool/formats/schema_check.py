"""A JSON Schema compiled into one Python predicate: does an instance match it, yes or no?

``ctxtool validate`` checks every entry against its format's schema. jsonschema does that by
walking the schema for each entry, building a validator object at every step: about 90 us for
a small Claude Code line, most of ``validate``'s time. Nearly every entry is valid, and a valid
entry needs no message, only the answer. So the schema is compiled once into nested closures
that give that answer, and only an entry they reject goes to jsonschema, for its precise
messages (:mod:`ctxtool.formats.validate`). The answer is jsonschema's (draft 2020-12, no
format assertion): the same type rules (an integer may be a float with no fraction, a boolean
is no number), the same equality for ``const``/``enum`` (``1`` equals ``1.0``, never ``true``).

Only the keywords the shipped input schemas use, and a few more, are compiled; a schema with any
other keyword gives no predicate (:class:`Unsupported`): jsonschema then checks every entry, as
before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Check = Callable[[Any], bool]

# annotations: they never make an instance invalid (format is one too, unless asserted)
_IGNORED = frozenset({"$schema", "$id", "$defs", "definitions", "$comment", "title",
                      "description", "examples", "default", "format", "deprecated", "readOnly",
                      "writeOnly", "contentMediaType", "contentEncoding"})


class Unsupported(ValueError):
    """The schema uses a keyword (or a form of one) this compiler does not handle."""


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": _is_number,
}


def _unbool(value: Any, true: object = object(), false: object = object()) -> Any:
    if value is True:
        return true
    if value is False:
        return false
    return value


def json_equal(one: Any, two: Any) -> bool:
    """Equality as jsonschema's ``const`` and ``enum`` see it."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return one.keys() == two.keys() and all(json_equal(one[k], two[k]) for k in one)
    return bool(_unbool(one) == _unbool(two))


def _always(_: Any) -> bool:
    return True


def _never(_: Any) -> bool:
    return False


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)

    def check(v: Any) -> bool:
        for each in checks:
            if not each(v):
                return False
        return True
    return check


class SchemaCompiler:
    """Compiles schemas whose ``$ref`` point into ``documents`` (by ``$id``) or into their own
    document. Each referenced schema is compiled once (references may be recursive)."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        self.documents = documents
        self.compiled: dict[tuple[str, str], Check] = {}

    def compile_document(self, schema: Mapping[str, Any]) -> Check:
        return self._schema(schema, str(schema.get("$id", "")))

    def _schema(self, schema: Any, base: str) -> Check:
        if schema is True:
            return _always
        if schema is False:
            return _never
        if not isinstance(schema, dict):
            raise Unsupported(f"not a schema: {schema!r}")
        if schema.get("$id", base) != base or schema.get("$schema", DRAFT) != DRAFT:
            raise Unsupported("a nested $id, or a draft other than 2020-12")
        checks: list[Check] = []
        for key, value in schema.items():
            if key in _IGNORED or key in _SIBLINGS:
                continue
            keyword = _KEYWORDS.get(key)
            if keyword is None:
                raise Unsupported(f"keyword {key!r}")
            checks.append(keyword(self, value, schema, base))
        return _all(checks)

    def _ref(self, ref: Any, base: str) -> Check:
        if not isinstance(ref, str):
            raise Unsupported(f"$ref {ref!r}")
        document, _, pointer = ref.partition("#")
        document = document or base
        key = (document, pointer)
        if key not in self.compiled:
            target = self._resolve(document, pointer)
            cell: list[Check] = []
            self.compiled[key] = lambda v: cell[0](v)  # for references back to this one
            cell.append(self._schema(target, document))
            self.compiled[key] = cell[0]
        return self.compiled[key]

    def _resolve(self, document: str, pointer: str) -> Any:
        """The schema at JSON pointer ``pointer`` ("" or "/$defs/name") in ``document``."""
        node: Any = self.documents.get(document)
        if node is None or (pointer and not pointer.startswith("/")):
            raise Unsupported(f"$ref {document}#{pointer}: no such document, or an anchor")
        for part in pointer.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise Unsupported(f"$ref {document}#{pointer}")
            node = node[part]
        return node


_SIBLINGS = frozenset({"then", "else"})  # read with "if"
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _type(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    names = value if isinstance(value, list) else [value]
    if not names or any(name not in TYPES for name in names):
        raise Unsupported(f"type {value!r}")
    tests = [TYPES[name] for name in names]
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(test(v) for test in tests)


_PLAIN_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool,
                "null": type(None)}  # exactly isinstance (not integer, number: bool, 1.0)
_MISSING = object()


def _plain_type(schema: Any) -> tuple[type, ...] | None:
    """The Python types of a schema that is only ``{"type": ...}`` of plain types, else None."""
    if not isinstance(schema, dict) or set(schema) - _IGNORED != {"type"}:
        return None
    names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    if not names or any(name not in _PLAIN_TYPES for name in names):
        return None
    return tuple(_PLAIN_TYPES[name] for name in names)


def _properties(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    if not isinstance(value, dict):
        raise Unsupported("properties")
    # most properties only have a type: checked inline, without a call each
    typed = [(name, types) for name, sub in value.items() if (types := _plain_type(sub))]
    plain = {name for name, _ in typed}
    pairs = [(name, check) for name, sub in value.items() if name not in plain
             and (check := compiler._schema(sub, base)) is not _always]

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        get = v.get
        for name, types in typed:
            item = get(name, _MISSING)
            if item is not _MISSING and not isinstance(item, types):
                return False
        for name, sub in pairs:
            item = get(name, _MISSING)
            if item is not _MISSING and not sub(item):
                return False
        return True
    return check


def _additional(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    known = set(schema.get("properties", {}))
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    extra = compiler._schema(value, base)
    own = _pattern_properties(compiler, schema.get("patternProperties", {}), base)

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for name, item in v.items():
            if name not in known and not any(p.search(name) for p in patterns) \
                    and not extra(item):
                return False
        return own(v)
    return check


def _pattern_properties(compiler: SchemaCompiler, value: Any, base: str) -> Check:
    if not isinstance(value, dict):
        raise Unsupported("patternProperties")
    pairs = [(re.compile(p), compiler._schema(sub, base)) for p, sub in value.items()]
    if not pairs:
        return _always

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        return all(sub(item) for name, item in v.items()
                   for pattern, sub in pairs if pattern.search(name))
    return check


def _pattern_only(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    """patternProperties without additionalProperties (which checks them itself)."""
    if "additionalProperties" in schema:
        return _always
    return _pattern_properties(compiler, value, base)


def _required(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    names = list(value) if isinstance(value, list) else None
    if names is None:
        raise Unsupported("required")
    if len(names) == 1:
        (name,) = names
        return lambda v: not isinstance(v, dict) or name in v
    wanted = frozenset(names)
    return lambda v: not isinstance(v, dict) or wanted <= v.keys()


def _const(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    if isinstance(value, str):
        return lambda v: isinstance(v, str) and v == value
    return lambda v: json_equal(v, value)


def _enum(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    if not isinstance(value, list):
        raise Unsupported("enum")
    if all(isinstance(item, str) for item in value):
        allowed = frozenset(value)
        return lambda v: isinstance(v, str) and v in allowed
    return lambda v: any(json_equal(v, item) for item in value)


def _items(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    if "prefixItems" in schema:
        raise Unsupported("prefixItems")
    sub = compiler._schema(value, base)
    if sub is _always:
        return _always
    return lambda v: not isinstance(v, list) or all(sub(item) for item in v)


def _bound(kind: str, test: Callable[[Any, Any], bool]) -> Callable[..., Check]:
    applies = {"string": lambda v: isinstance(v, str), "number": _is_number,
               "array": lambda v: isinstance(v, list),
               "object": lambda v: isinstance(v, dict)}[kind]

    def keyword(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
        if not _is_number(value):
            raise Unsupported(f"bound {value!r}")
        return lambda v: not applies(v) or test(v, value)
    return keyword


def _pattern(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    regex = re.compile(value)
    return lambda v: not isinstance(v, str) or regex.search(v) is not None


def _all_of(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    if not isinstance(value, list):
        raise Unsupported("allOf")
    table = _dispatch(compiler, value, base)
    if table is not None:
        return table
    return _all([compiler._schema(sub, base) for sub in value])


def _dispatch(compiler: SchemaCompiler, subschemas: list[Any], base: str) -> Check | None:
    """allOf of ``{if: {properties: {KEY: {const: "value"}}, required: [KEY]}, then: ...}`` with
    one KEY (the schemas' way to pick a sub-schema by ``type``): one dict lookup instead of an
    ``if`` per entry. Not an object: every ``if`` holds, so every ``then`` applies."""
    key = None
    thens: dict[str, list[Check]] = {}
    every: list[Check] = []
    for sub in subschemas:
        test = sub.get("if") if isinstance(sub, dict) and set(sub) == {"if", "then"} else None
        props = test.get("properties") if isinstance(test, dict) else None
        if not (isinstance(props, dict) and len(props) == 1 and set(test) <= {"properties",
                                                                              "required"}):
            return None
        ((name, rule),) = props.items()
        if test.get("required") != [name] or (key is not None and name != key) \
                or not (isinstance(rule, dict) and set(rule) == {"const"}
                        and isinstance(rule["const"], str)):
            return None
        key = name
        then = compiler._schema(sub["then"], base)
        thens.setdefault(rule["const"], []).append(then)
        every.append(then)
    if key is None:
        return None
    chosen = {value: _all(checks) for value, checks in thens.items()}
    on_other = _all(every)

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return on_other(v)
        picked = v.get(key)
        if not isinstance(picked, str):
            return True  # the key missing or not a string: no if holds
        sub = chosen.get(picked)
        return sub is None or sub(v)
    return check


def _any_of(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    subs = [compiler._schema(sub, base) for sub in value]
    return lambda v: any(sub(v) for sub in subs)


def _one_of(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    subs = [compiler._schema(sub, base) for sub in value]
    return lambda v: sum(1 for sub in subs if sub(v)) == 1


def _not(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    sub = compiler._schema(value, base)
    return lambda v: not sub(v)


def _if(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    test = compiler._schema(value, base)
    then = compiler._schema(schema.get("then", True), base)
    other = compiler._schema(schema.get("else", True), base)
    return lambda v: then(v) if test(v) else other(v)


def _ref(compiler: SchemaCompiler, value: Any, schema: Any, base: str) -> Check:
    return compiler._ref(value, base)


_KEYWORDS: dict[str, Callable[[SchemaCompiler, Any, Any, str], Check]] = {
    "type": _type, "properties": _properties, "additionalProperties": _additional,
    "patternProperties": _pattern_only, "required": _required, "const": _const,
    "enum": _enum, "items": _items, "pattern": _pattern, "allOf": _all_of, "anyOf": _any_of,
    "oneOf": _one_of, "not": _not, "if": _if, "$ref": _ref,
    "minLength": _bound("string", lambda v, n: len(v) >= n),
    "maxLength": _bound("string", lambda v, n: len(v) <= n),
    "minimum": _bound("number", lambda v, n: v >= n),
    "maximum": _bound("number", lambda v, n: v <= n),
    "exclusiveMinimum": _bound("number", lambda v, n: v > n),
    "exclusiveMaximum": _bound("number", lambda v, n: v < n),
    "minItems": _bound("array", lambda v, n: len(v) >= n),
    "maxItems": _bound("array", lambda v, n: len(v) <= n),
    "minProperties": _bound("object", lambda v, n: len(v) >= n),
    "maxProperties": _bound("object", lambda v, n: len(v) <= n),
}


def compile_schema(schema: Mapping[str, Any],
                   documents: Mapping[str, Mapping[str, Any]]) -> Check:
    """The predicate of ``schema`` (its ``$ref`` resolved in ``documents``, by ``$id``, and in
    itself). Raises :class:`Unsupported` for a schema it cannot decide exactly."""
    own = {str(schema.get("$id", "")): schema}
    return SchemaCompiler({**documents, **own}).compile_document(schema)


__all__ = ["Check", "Unsupported", "compile_schema", "json_equal"]
