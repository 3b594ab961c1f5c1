"""The compiled schema predicate (formats/schema_check.py) answers exactly as jsonschema does.

validate trusts it: an entry it accepts never goes to jsonschema. So its answer is compared with
jsonschema's on every shipped input schema over real entries (fixtures, the corpus) and over
those entries broken in every way a mutation can break them, and on small schemas that reach
each keyword's edge cases (a float with no fraction is an integer, a boolean is no number,
``1`` equals ``1.0`` but not ``true``...).
"""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from ctxtool.core.messages.convert import to_messages
from ctxtool.formats.opencode.export import entries_from_export, loads_document
from ctxtool.formats.schema_check import Unsupported, compile_schema
from ctxtool.formats.schemas import load_schema
from ctxtool.formats.validate import SCHEMA_OF, _predicate, _validator
from tests.conftest import ROOT, corpus_files
from tests.opencode_builders import FIXTURE

INPUT_SCHEMAS = [*SCHEMA_OF.values(), "codex-rollout"]
ODD_VALUES: list[Any] = [None, True, False, 0, 1, 1.0, 1.5, -3, "", "x", "user", [], [1],
                         {}, {"type": "text"}]


@functools.cache
def _entries() -> list[dict[str, Any]]:
    """Real entries of every input format: the fixtures and the corpus as read, their messages
    as convert writes them for each API, and OpenCode's export fixture as convert reads it."""
    found: list[dict[str, Any]] = []
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.jsonl")) + corpus_files():
        lines = [orjson.loads(line) for line in path.read_bytes().splitlines()
                 if line.strip().startswith(b"{") and _is_json(line)]
        found += [e for e in lines if isinstance(e, dict)]
    sessions = [e for e in found if e.get("type") in ("user", "assistant")][:3000]
    for target in ("anthropic", "openai"):
        found += list(to_messages(sessions, "claude-code", target=target))
    export = FIXTURE / "export.json"
    found += list(entries_from_export(loads_document(export.read_bytes(), str(export)),
                                      str(export)))
    return found


def _is_json(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            yield from _paths(item, (*path, index))


def _mutants(entry: dict[str, Any], rng: random.Random, count: int) -> Iterator[Any]:
    """``entry`` with one place replaced by an odd value, or one key removed."""
    paths = [p for p in _paths(entry) if p]
    for path in rng.sample(paths, min(count, len(paths))):
        broken = copy.deepcopy(entry)
        parent = broken
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and rng.random() < 0.25:
            del parent[path[-1]]
        else:
            parent[path[-1]] = rng.choice(ODD_VALUES)
        yield broken


@pytest.mark.parametrize("name", INPUT_SCHEMAS)
def test_every_input_schema_compiles(name: str) -> None:
    assert _predicate(name) is not None


@pytest.mark.parametrize("name", INPUT_SCHEMAS)
def test_the_predicate_agrees_with_jsonschema_on_real_and_broken_entries(name: str) -> None:
    matches, validator = _predicate(name), _validator(name)
    assert matches is not None
    rng = random.Random(name)
    checked = rejected = 0
    entries = _entries()
    pool = entries[-20:] + rng.sample(entries, min(3000, len(entries)))  # OpenCode's are last
    own = [e for e in pool if validator.is_valid(e)]  # this format's entries
    for entry in [*rng.sample(own, min(300, len(own))),
                  *rng.sample(entries, min(800, len(entries)))]:
        for instance in [entry, *_mutants(entry, rng, 3)]:
            expected = next(validator.iter_errors(instance), None) is None
            assert matches(instance) is expected, (name, instance)
            checked += 1
            rejected += not expected
    accepted = checked - rejected
    assert accepted > 20 and rejected > 100  # both answers were exercised


EDGE_SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer"}, {"type": "number"}, {"type": ["string", "null"]},
    {"type": "boolean"}, {"type": "array"}, {"type": "object"},
    {"const": 1}, {"const": "a"}, {"const": [1, {"a": True}]}, {"const": None},
    {"enum": ["a", "b"]}, {"enum": [1, False, None, {"k": 1}]},
    {"minimum": 1}, {"maximum": 1}, {"exclusiveMinimum": 0}, {"exclusiveMaximum": 2},
    {"minLength": 2}, {"maxLength": 1}, {"minItems": 1}, {"maxItems": 1},
    {"minProperties": 1}, {"maxProperties": 0}, {"pattern": "^u"},
    {"required": ["a", "b"]}, {"required": ["a"]},
    {"properties": {"a": {"type": "string"}, "b": {"minimum": 2}}},
    {"properties": {"a": {"type": "integer"}}, "additionalProperties": False},
    {"properties": {"a": True}, "patternProperties": {"^x": {"type": "string"}},
     "additionalProperties": {"type": "integer"}},
    {"patternProperties": {"^x": {"type": "string"}}},
    {"items": {"type": "string"}}, {"items": False},
    {"allOf": [{"type": "object"}, {"required": ["a"]}]},
    {"anyOf": [{"type": "string"}, {"minimum": 5}]},
    {"oneOf": [{"type": "integer"}, {"minimum": 1}]},
    {"not": {"type": "object"}},
    {"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"type": "array"}},
    {"allOf": [{"if": {"properties": {"t": {"const": "a"}}, "required": ["t"]},
                "then": {"required": ["x"]}},
               {"if": {"properties": {"t": {"const": "b"}}, "required": ["t"]},
                "then": {"type": "string"}}]},
    {"allOf": [{"if": {"properties": {"t": {"const": "a"}}}, "then": {"required": ["x"]}}]},
    {"$defs": {"node": {"type": "object",
                        "properties": {"kids": {"items": {"$ref": "#/$defs/node"}}}}},
     "$ref": "#/$defs/node"},
    True, False,
]
EDGE_VALUES: list[Any] = [*ODD_VALUES, 2, 2.0, 5, "ab", "é", "uu", {"a": 1}, {"a": "s"},
                          {"a": 1, "b": 2}, {"a": "s", "b": 3}, {"x1": "s"}, {"x1": 2},
                          {"c": 1.0}, {"c": "no"}, {"t": "a"}, {"t": "a", "x": 0}, {"t": "b"},
                          {"t": 3}, [1, {"a": True}], [1.0, {"a": True}], [True, {"a": 1}],
                          {"k": 1}, {"k": True}, {"k": 1.0}, ["s"], ["s", 1],
                          {"kids": [{"kids": []}, {"kids": [1]}]}, {"kids": [{"kids": [{}]}]}]


@pytest.mark.parametrize("schema", EDGE_SCHEMAS, ids=lambda s: orjson.dumps(s).decode()[:60])
def test_keyword_edge_cases_match_jsonschema(schema: Any) -> None:
    if isinstance(schema, dict):
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    matches = compile_schema(schema, {}) if isinstance(schema, dict) else None
    validator = Draft202012Validator(schema)
    for value in [*EDGE_VALUES, *ODD_VALUES]:
        expected = validator.is_valid(value)
        got = matches(value) if matches else expected  # True/False: handled by the compiler too
        assert got is expected, (schema, value)


@pytest.mark.parametrize("schema", [
    {"uniqueItems": True}, {"prefixItems": [{"type": "string"}]}, {"contains": {"const": 1}},
    {"unevaluatedProperties": False}, {"$ref": "#/$defs/missing"},
    {"$defs": {"x": True}, "properties": {"a": {"$id": "urn:other", "$ref": "#/$defs/x"}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]},
])
def test_a_schema_it_cannot_decide_exactly_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(Unsupported):
        compile_schema(schema, {})


def test_every_shipped_input_schema_is_draft_2020_12() -> None:
    """What the compiler assumes of the schemas it is given."""
    for name in INPUT_SCHEMAS:
        assert load_schema(name)["$schema"] == "https://json-schema.org/draft/2020-12/schema"

