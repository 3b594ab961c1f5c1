"""Type confusion: the right JSON shape, with a wrong type of value in one place.

The robustness matrix (test_matrix.py) feeds bytes that are not a transcript; this file feeds
transcripts that are - except that one field holds a value of another type: ``"type": ["x"]``,
``"usage": true``, ``"content": 1.5``, ``"parentUuid": {}``, an integer past 64 bits where a
count goes, ``"12"`` where a number goes. Every command must take it like any other bad input:
a graceful result (the wrong-typed value treated as absent) or exactly one
``ctxtool: error: FILE:LINE: ...`` line and a documented exit code - never a traceback, and
stdout always valid JSONL (or the estimate report).

The mutants are derived deterministically from one small, valid transcript per format (BASES,
on which every command succeeds and the transforms act): each field of each entry - its first
occurrence per shape (``message.content[tool_use].id`` once, not once per tool_use) - replaced
by values of WRONG of another type, chosen as :func:`wrong_values` says, plus the crashes an
exhaustive run found (FOUND: every occurrence, every value). Every command (COMMANDS) runs on
every mutant in-process through CliRunner; a few crashes found here also go through the real
entry point.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from ctxtool.cli import cli
from ctxtool.errors import ExitCode
from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.opencode.truncate import truncated_output
from tests.conftest import run_ctxtool
from tests.opencode_sessions import fixture_entries
from tests.robustness.strategies import cc_entry, tool_result_message, tool_use_message
from tests.robustness.test_matrix import valid_jsonl

NOW = "2026-01-02T00:00:00Z"
SESSION = "5f0c4c4e-0000-4000-8000-000000000001"
OPENCODE_SESSION = "ses_4a1b2c3d4ffeAbCdEfGhIjKlMn"  # the export fixture's
SAVED = "saved line 1\nsaved line 2\n"  # the content of the file the placeholder names
PLACEHOLDER = ("<persisted-output>\nOutput too large (26 bytes). Full output saved to: "
               f"/moved/{SESSION}/tool-results/toolu_4.txt\n\nPreview (first 2KB):\nsaved line 1"
               "\n\n</persisted-output>")
LONG = "".join(f"{i:04d} def handler(request): return request.json()['x']\n" for i in range(12))

# --- the valid transcripts the mutants come from --------------------------------------------------


def claude_code_base() -> list[dict[str, Any]]:
    """A title, a prompt, a streamed response (thinking, two parallel tool calls, usage
    repeated), the results (one long string, one block list with an error), a compact boundary
    and its summary, a file read twice (the second result is a persisted-output placeholder), a
    microcompact boundary and a final text answer."""
    usage = {"input_tokens": 12, "cache_creation_input_tokens": 500,
             "cache_read_input_tokens": 3000, "output_tokens": 40}
    streamed = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "stop_reason": None, "usage": usage}
    read = tool_use_message("msg_2", "toolu_3", "Read", {"file_path": "/w/app/x.py"})
    reread = tool_use_message("msg_4", "toolu_4", "Read", {"file_path": "/w/app/x.py"})
    return [
        {"type": "summary", "summary": "Fix the handler", "leafUuid": "a5"},
        cc_entry("user", "u1", None, {"role": "user", "content": "read x.py and run the tests"}),
        cc_entry("assistant", "a1", "u1", {**streamed, "content": [
            {"type": "thinking", "thinking": "read first", "signature": "c2ln"}]},
            second=1, requestId="req_1"),
        cc_entry("assistant", "a2", "a1", {**streamed, "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Read",
             "input": {"file_path": "/w/app/x.py"}}]}, second=2, requestId="req_1"),
        cc_entry("assistant", "a3", "a2", {**streamed, "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "Bash",
             "input": {"command": "pytest -q"}}]}, second=3, requestId="req_1"),
        cc_entry("user", "u2", "a3", tool_result_message("toolu_1", LONG), second=4,
                 toolUseResult={"stdout": LONG, "stderr": "", "interrupted": False}),
        cc_entry("user", "u3", "u2", tool_result_message(
            "toolu_2", [{"type": "text", "text": LONG}, {"type": "text", "text": "1 failed"}],
            is_error=True), second=5),
        cc_entry("system", "b1", None, second=6, subtype="compact_boundary",
                 content="Conversation compacted", isMeta=False, level="info",
                 logicalParentUuid="u3", compactMetadata={"trigger": "manual", "preTokens": 9000}),
        cc_entry("user", "s1", "b1", {"role": "user", "content": "This session is being "
                                      "continued from a previous conversation. Summary: fixed x"},
                 second=7, isCompactSummary=True, isVisibleInTranscriptOnly=True),
        cc_entry("user", "u4", "s1", {"role": "user", "content": [
            {"type": "text", "text": "read it again"}]}, second=8),
        cc_entry("assistant", "a4", "u4", read, second=9, requestId="req_2"),
        cc_entry("user", "u5", "a4", tool_result_message("toolu_3", LONG), second=10),
        cc_entry("assistant", "a6", "u5", reread, second=11, requestId="req_4"),
        cc_entry("user", "u6", "a6", tool_result_message("toolu_4", PLACEHOLDER), second=11),
        cc_entry("system", "m1", "u6", second=11, subtype="microcompact_boundary",
                 content="Context microcompacted", isMeta=False, level="info",
                 microcompactMetadata={"trigger": "auto", "preTokens": 12000, "tokensSaved": 300,
                                       "compactedToolIds": ["toolu_1"],
                                       "clearedAttachmentUUIDs": []}),
        cc_entry("assistant", "a5", "m1", {"id": "msg_3", "type": "message", "role": "assistant",
                                           "model": "claude-sonnet-4-5", "content": [
                                               {"type": "text", "text": "Fixed."}],
                                           "stop_reason": "end_turn", "usage": usage},
                 second=12, requestId="req_3", isSidechain=False),
    ]


def anthropic_base() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "read x.py"},
        {"role": "assistant", "content": "Reading."},
        {"role": "user", "content": "[ctxtool summary] This session is being continued. x.py"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read",
             "input": {"file_path": "/w/app/x.py"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": LONG},
            {"type": "text", "text": "again"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_2", "name": "Read",
             "input": {"file_path": "/w/app/x.py"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
             "content": [{"type": "text", "text": LONG}]}]},
        {"role": "assistant", "content": "Done."},
    ]


def openai_base() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "read x.py"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "Read", "arguments": json.dumps({"file_path": "/w/app/x.py"})}},
            {"id": "call_2", "type": "function",
             "function": {"name": "Bash", "arguments": json.dumps({"command": "ls"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": LONG},
        {"role": "tool", "tool_call_id": "call_2", "content": "x.py"},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_3", "type": "function",
             "function": {"name": "Read", "arguments": json.dumps({"file_path": "/w/app/x.py"})}}]},
        {"role": "tool", "tool_call_id": "call_3", "content": LONG},
        {"role": "assistant", "content": "Done."},
    ]


def opencode_base() -> list[dict[str, Any]]:
    """``ctxtool convert`` of the export fixture, cut down: the session line, a user message, a
    step with reasoning, tool calls (a read whose output persist saved) and usage, a failed
    step, a compaction keeping a tail and its summary, a turn after it that re-reads the first
    read's file (with an image attachment) and runs the long bash command again (its output not
    pruned this time), and a last step whose tool calls are pending and running."""
    entries = fixture_entries()
    keep = entries[0:8] + entries[12:14]
    for entry in keep[1:]:  # drop parts that would only repeat the same paths
        entry["parts"] = [p for p in entry["parts"] if p.get("type") not in ("file", "agent")
                          or p.get("mime") == "image/png"][:6]
    read, bash = keep[2]["parts"][3], keep[2]["parts"][4]
    keep[4]["parts"][0]["tail_start_id"] = keep[1]["info"]["id"]  # the request keeps a tail
    read["state"]["output"] = truncated_output(
        SAVED, f"/moved/{OPENCODE_SESSION}/tool-results/{read['callID']}.txt", max_lines=1)
    again = keep[7]
    again["parts"][0]["state"]["input"] = dict(read["state"]["input"])
    state = {**bash["state"], "time": {"start": 1767000121300, "end": 1767000121400}}
    again["parts"].insert(1, {**bash, "id": bash["id"] + "2", "callID": bash["callID"] + "2",
                              "messageID": again["info"]["id"], "state": state})
    return keep


BASES = {"claude-code": claude_code_base, "anthropic": anthropic_base, "openai": openai_base,
         "opencode": opencode_base}

# --- the mutants ----------------------------------------------------------------------------------

# the wrong values; "string" goes only where a string is not expected
WRONG: dict[str, Any] = {
    "list": [["x"], {"k": 1}, "s", 7, None],
    "dict": {"type": ["x"], "k": "v"},
    "null": None,
    "number": 1.5,
    "bool": True,
    "huge": 10**30,
    "string": "12",
}

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Mutant:
    fmt: str
    line: int  # 0-based index of the mutated entry
    path: Path_
    wrong: str  # a key of WRONG
    name: str  # fmt:line:shape=wrong, the test id

    def entries(self) -> list[dict[str, Any]]:
        entries = BASES[self.fmt]()
        entries[self.line] = replaced(entries[self.line], self.path, WRONG[self.wrong])
        return entries

    def data(self) -> bytes:
        return b"".join(dumps_json(e) + b"\n" for e in self.entries())


def mutant(fmt: str, line: int, path: Path_, wrong: str) -> Mutant:
    entry = BASES[fmt]()[line]
    return Mutant(fmt, line, path, wrong, f"{fmt}:{line + 1}:{shape(entry, path)}={wrong}")


def field_paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path below ``value`` to a dict value or list item, depth first."""
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from field_paths(child, (*prefix, key))


def shape(entry: dict[str, Any], path: Path_) -> str:
    """The path with list indices replaced by the item's ``type`` (``content[tool_use].id``),
    after the kind of entry (:func:`kind_of`): paths of one shape exercise the same code. The
    ids every OpenCode part carries are one shape whatever the part."""
    spelled = [kind_of(entry)]
    node: Any = entry
    for key in path:
        node = node[key]
        if isinstance(key, int):
            tag = node.get("type") if isinstance(node, dict) else None
            spelled[-1] += f"[{tag or ''}]"
        else:
            spelled.append(key)
    if len(path) == 3 and path[0] == "parts" and path[2] in ("id", "sessionID", "messageID"):
        spelled[1] = "parts[]"
    return ".".join(spelled)


def kind_of(entry: dict[str, Any]) -> str:
    """``user``, ``system/compact_boundary``, ``user/isCompactSummary``, ``assistant/summary``
    (OpenCode), ``user/compaction`` (a compaction request), ``session``..."""
    info: dict[str, Any] = entry["info"] if isinstance(entry.get("info"), dict) else {}
    kind = entry.get("type") or entry.get("role") or info.get("role") or next(iter(entry))
    marks = [entry.get("subtype"), "isCompactSummary" if entry.get("isCompactSummary") else None,
             "summary" if info.get("summary") else None,
             "compaction" if any(isinstance(p, dict) and p.get("type") == "compaction"
                                 for p in entry.get("parts") or []) else None]
    return "/".join([str(kind), *(m for m in marks if m)])


def replaced(value: Any, path: Path_, new: Any) -> Any:
    """A copy of ``value`` with the item at ``path`` replaced by ``new``."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: replaced(value[head], rest, new)}
    copy = list(value)
    copy[head] = replaced(value[head], rest, new)  # type: ignore[index]
    return copy


def _at(value: Any, path: Path_) -> Any:
    for key in path:
        value = value[key]
    return value


# Which wrong values a field gets (each kind of value where crashes hide, the rest in turn):
# * a string, a flag or a null the commands read: a list (unhashable, like an object, when it
#   is looked up in a set or used as a key), then one other;
# * a number (a counter, a time, a size): "string" and "huge" (compared, summed, turned into a
#   date), then one other;
# * a list or an object: the other container and "string" (no .get, iterated wrongly), then one
#   other (a scalar where it is walked);
# * a field the commands pass over (a title, a version, a cost): one wrong value.
# :func:`exhaustive` tries every occurrence of every field with every value instead; the crashes
# it found are pinned in FOUND below.
READ = frozenset({
    "type", "role", "subtype", "message", "content", "text", "thinking", "id", "tool_use_id",
    "name", "input", "is_error", "usage", "input_tokens", "cache_creation_input_tokens",
    "cache_read_input_tokens", "output_tokens", "requestId", "model", "isSidechain",
    "isCompactSummary", "parentUuid", "uuid", "logicalParentUuid", "timestamp", "sessionId",
    "leafUuid", "compactMetadata", "preTokens", "microcompactMetadata", "tokensSaved",
    "compactedToolIds", "toolUseResult", "tool_calls", "function", "arguments", "tool_call_id",
    "session", "parts", "callID", "tool", "mime", "url", "tail_start_id", "auto"})
# fields whose meaning depends on the kind of entry (a boundary's uuid, a summary's parentID...)
PER_KIND = frozenset({"type", "role", "subtype", "uuid", "parentUuid", "logicalParentUuid",
                      "message", "content", "isCompactSummary", "compactMetadata",
                      "microcompactMetadata", "info", "parts", "id", "parentID", "summary",
                      "finish", "error", "tokens"})


def sampled() -> list[Mutant]:
    """Per format, the first occurrence of each field shape, with :func:`wrong_values`."""
    found: list[Mutant] = []
    for fmt, base in BASES.items():
        seen: set[str] = set()
        for line, entry in enumerate(base()):
            for path in field_paths(entry):
                where = shape(entry, path)
                # most fields mean the same in every kind of entry: mutated in the first only
                key = where if path[-1] in PER_KIND else where.split(".", 1)[1]
                if key not in seen:
                    seen.add(key)
                    read = isinstance(path[-1], int) or path[-1] in READ or "info" in path \
                        or "state" in path
                    found += [Mutant(fmt, line, path, wrong, f"{fmt}:{line + 1}:{where}={wrong}")
                              for wrong in wrong_values(_at(entry, path), read, turn=len(seen))]
    return found


def wrong_values(original: Any, read: bool, *, turn: int) -> list[str]:
    """The keys of WRONG to put in place of ``original`` (see above)."""
    others = [wrong for wrong, value in WRONG.items()
              if (type(value) is not type(original) or wrong == "huge") and value != original
              and not (wrong == "string" and isinstance(original, str))]
    if not read:
        fixed = []
    elif isinstance(original, (int, float)) and not isinstance(original, bool):
        fixed = ["string", "huge"]
    elif isinstance(original, (list, dict)):
        fixed = ["dict" if isinstance(original, list) else "list", "string"]
    else:
        fixed = ["list"]
    rest = [wrong for wrong in others if wrong not in fixed]
    return fixed + [rest[turn % len(rest)]]


# The crashes the exhaustive run (:func:`exhaustive`) found, each fixed where it was caused:
# (format, 0-based line, path, wrong value), pinned here since the sample does not reach them all.
FOUND: list[tuple[str, int, Path_, str]] = [
    ("anthropic", 3, ("content", 0, "type"), "list"),  # formats/detect.py
    ("claude-code", 2, ("uuid",), "dict"),  # filter_compacted._claude_view
    ("claude-code", 14, ("microcompactMetadata",), "number"),  # filter_compacted._plan_claude
    ("claude-code", 14, ("microcompactMetadata", "compactedToolIds"), "bool"),
    ("claude-code", 2, ("message", "usage", "output_tokens"), "list"),  # convert._merged_lines
    ("opencode", 7, ("parts", 0, "state", "attachments"), "number"),  # opencode_view
    ("opencode", 1, ("parts",), "bool"),  # opencode_view.parts_of
    ("opencode", 1, ("info", "id"), "list"),  # opencode_context, validate_opencode
    ("opencode", 4, ("info", "id"), "dict"),  # opencode.filter_compacted_opencode
    ("opencode", 5, ("info", "parentID"), "list"),  # opencode, filter_compacted, opencode_context
    ("opencode", 7, ("parts", 1, "callID"), "dict"),  # microcompact_opencode._account
    ("opencode", 7, ("parts", 1, "tool"), "list"),  # opencode._walk_parts
    # the last call's usage past 64 bits: estimate --json, and every --stats report
    ("opencode", 7, ("info", "tokens", "input"), "huge"),  # cli/estimate.py
    ("claude-code", 15, ("message", "usage", "input_tokens"), "huge"),  # io/options.py
    *(("openai", 2, ("tool_calls",), wrong) for wrong in ("number", "bool", "huge")),
    *(("openai", 2, ("tool_calls", 0, "function"), wrong)  # blocks._openai_blocks
      for wrong in ("list", "number", "bool", "huge", "string")),
]


def exhaustive() -> list[Mutant]:
    """Every occurrence of every field with every wrong value (also those of the original's
    type, but for "huge" in place of a number): about 5,500 mutants, half an hour on a busy
    machine. Run them with ``CTXTOOL_TEST_TYPE_CONFUSION=all`` in the environment."""
    found = []
    for fmt, base in BASES.items():
        for line, entry in enumerate(base()):
            for path in field_paths(entry):
                original = _at(entry, path)
                found += [Mutant(fmt, line, path, wrong, f"{fmt}:{line + 1}:{shape(entry, path)}"
                                 f"={wrong}@{'.'.join(map(str, path))}")
                          for wrong, value in WRONG.items()
                          if (type(value) is not type(original) or wrong == "huge")
                          and not (wrong == "string" and isinstance(original, str))]
    return found


def mutants() -> list[Mutant]:
    """The sampled mutants, then those of FOUND sampling left out."""
    if os.environ.get("CTXTOOL_TEST_TYPE_CONFUSION") == "all":
        return exhaustive()
    chosen = sampled()
    names = {m.name for m in chosen}
    extra = [mutant(*found) for found in FOUND]
    return chosen + [m for m in extra if m.name not in names]


MUTANTS = mutants()

# --- the commands ---------------------------------------------------------------------------------

# how each command runs; {store} is the test's store, which holds the file the placeholder names
COMMANDS: dict[str, list[str]] = {
    "estimate": ["estimate"],
    "estimate --json": ["estimate", "--json"],
    "estimate --per-entry": ["estimate", "--per-entry"],
    "validate": ["validate", "--json"],
    "persist": ["persist", "--max-chars", "100", "--max-lines", "5", "--store", "{store}",
                "--now", NOW],
    "restore": ["restore", "--store", "{store}"],
    "snip": ["snip", "--keep", "0", "--min-tokens", "0", "--store", "{store}", "--now", NOW],
    "microcompact": ["microcompact", "--force", "--keep", "0", "--target", "0", "--protect-turns",
                     "0", "--store", "{store}", "--now", NOW],
    "summarize": ["summarize", "--llm", "offline", "--keep-last", "1", "--store", "{store}",
                  "--now", NOW],
    "filter-compacted": ["filter-compacted"],
    "filter-compacted --to anthropic": ["filter-compacted", "--to", "anthropic"],
    "filter-compacted --to openai": ["filter-compacted", "--to", "openai"],
    "convert --to anthropic": ["convert", "--to", "anthropic"],
    "convert --to openai": ["convert", "--to", "openai"],
}
DOCUMENTED = {int(code) for code in (ExitCode.OK, ExitCode.FAILED, ExitCode.USAGE,
                                      ExitCode.INVALID_INPUT, ExitCode.STORAGE)}


def prepare_store(store: Path) -> None:
    """The files the placeholders name, where ``restore --store`` looks for moved files."""
    for session, name in ((SESSION, "toolu_4"), (OPENCODE_SESSION, "toolu_01ReadAAA")):
        saved = store / session / "tool-results" / f"{name}.txt"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(SAVED)


def argv_for(command: str, store: Path, path: Path) -> list[str]:
    return [a.format(store=store) for a in COMMANDS[command]] + [str(path)]


def problems(command: str, name: str, code: int, stdout: bytes, stderr: str) -> list[str]:
    """What is wrong with one run of ``command`` on the file ``name`` (nothing when it is a
    graceful result or one clear error)."""
    found = []
    if "Traceback" in stderr:
        found.append(f"traceback:\n{stderr[-3000:]}")
    if code not in DOCUMENTED:
        found.append(f"exit code {code}: {stderr[-1000:]}")
    errors = [line for line in stderr.splitlines() if line.startswith("ctxtool: error:")]
    if code == ExitCode.INVALID_INPUT and not (
            len(errors) == 1 and re.match(rf"ctxtool: error: {re.escape(name)}:\d+: ", errors[0])):
        found.append(f"exit 3 needs one error line naming {name}:LINE: {errors}")
    elif len(errors) > (1 if code else 0):
        found.append(f"exit {code} with these error lines: {errors}")
    try:
        if command == "estimate":  # the text report, headed by the file's name
            assert code or stdout.startswith(f"{name}: ".encode()), stdout[:200]
        else:
            valid_jsonl(stdout)
    except (AssertionError, ValueError) as exc:
        found.append(f"stdout is not valid: {exc!r} {stdout[:300]!r}")
    return [f"{command}: {p}" for p in found]


def run_all(mutant: Mutant, tmp_path: Path) -> list[str]:
    """Every command on the mutant, in-process; the problems found."""
    store = tmp_path / "store"
    prepare_store(store)
    source = tmp_path / "mutant.jsonl"
    source.write_bytes(mutant.data())
    runner = CliRunner()
    found = []
    for command in COMMANDS:
        result = runner.invoke(cli, argv_for(command, store, source))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            found.append(f"{command}: raised {result.exception!r} at {crash_site(result)}")
            continue
        found += problems(command, str(source), result.exit_code, result.stdout_bytes,
                          result.stderr)
    return found


def crash_site(result: Result) -> str:
    """``ctxtool/module.py:LINE function`` of the innermost ctxtool frame of an exception."""
    frames = [f for f in traceback.extract_tb(result.exc_info[2]) if "/ctxtool/" in f.filename] \
        if result.exc_info else []
    if not frames:
        return "?"
    return f"{frames[-1].filename.rsplit('/ctxtool/', 1)[1]}:{frames[-1].lineno} {frames[-1].name}"


# --- the tests ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_every_command_takes_a_wrong_type(mutant: Mutant, tmp_path: Path) -> None:
    """Every command on the mutant: a graceful result or one clear error, never a crash."""
    found = run_all(mutant, tmp_path)
    assert not found, "\n".join(found)


# --- the premises: valid bases that every command acts on, and every field mutated ---------------

# the transforms that change each valid base (the message lists hold no placeholder to restore,
# the OpenCode session no superseded read to snip)
ACTS = {"persist": set(BASES), "restore": {"claude-code", "opencode"},
        "snip": {"claude-code", "anthropic", "openai"}, "microcompact": set(BASES),
        "summarize": set(BASES)}


@pytest.mark.parametrize("fmt", list(BASES))
def test_the_bases_are_valid_and_every_command_acts_on_them(fmt: str, tmp_path: Path) -> None:
    """Without the mutation, every command succeeds, and the transforms change something: the
    mutants reach the code that clears, saves, restores and summarizes, not a no-op path."""
    store = tmp_path / "store"
    prepare_store(store)
    source = tmp_path / "base.jsonl"
    source.write_bytes(b"".join(dumps_json(e) + b"\n" for e in BASES[fmt]()))
    runner = CliRunner()
    for command in COMMANDS:
        result = runner.invoke(cli, argv_for(command, store, source))
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.exit_code == 0, (command, result.stderr)
        assert not problems(command, str(source), 0, result.stdout_bytes, result.stderr)
        if fmt in ACTS.get(command, ()):
            # a summary was made; on a base this small it would not save anything, and the
            # input is then left as it is (summarize never returns a larger context)
            declined = "would not make the context smaller" in result.stderr
            assert (command == "summarize" and declined) \
                or result.stdout_bytes != source.read_bytes(), command


FIELDS_NAMED_IN_THE_ISSUE = {
    "claude-code": ["type", "message.role", "subtype", "message.content", "text", "id",
                    "tool_use_id", "name", "input", "message.usage", "input_tokens",
                    "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
                    "message.id", "requestId", "message.model", "isSidechain", "isCompactSummary",
                    "parentUuid", "uuid", "timestamp", "microcompactMetadata.tokensSaved"],
    "anthropic": ["role", "content", "type", "text", "id", "tool_use_id", "name", "input"],
    "openai": ["role", "content", "tool_calls", "tool_call_id", "function", "arguments", "name"],
    "opencode": ["info.id", "info.role", "info.parentID", "info.time", "info.tokens",
                 "info.summary", "info.finish", "parts", "state.status", "state.input",
                 "state.output", "state.time", "state.attachments", "callID", "tail_start_id"],
}


@pytest.mark.parametrize("fmt", list(BASES))
def test_every_field_shape_is_mutated(fmt: str) -> None:
    """Each field of the base (its first occurrence per shape) has a mutant, the fields the issue
    names among them, and every wrong value is used."""
    mutated = {m.name.split(":", 2)[2].rsplit("=", 1)[0] for m in MUTANTS if m.fmt == fmt}
    for field in FIELDS_NAMED_IN_THE_ISSUE[fmt]:
        assert any(m == field or m.endswith("." + field) for m in mutated), field
    shapes = {shape(entry, path) for entry in BASES[fmt]() for path in field_paths(entry)}
    assert {where.split(".", 1)[1] for where in shapes} <= {m.split(".", 1)[1] for m in mutated}
    assert {m.wrong for m in MUTANTS if m.fmt == fmt} == set(WRONG)


def test_the_checks_can_fail() -> None:
    """The control: a traceback, an exit 3 without FILE:LINE, a second error line, an
    undocumented exit code and a broken stdout line are each reported."""
    name = "/t/m.jsonl"
    assert not problems("persist", name, 3, b'{"a":1}\n', f"ctxtool: error: {name}:2: bad\n")
    assert not problems("estimate", name, 0, f"{name}: 24,004 tokens".encode(), "")
    for command, code, stdout, stderr in [
            ("persist", 1, b"", "Traceback (most recent call last):\n"),
            ("persist", 3, b"", f"ctxtool: error: {name}: bad\n"),
            ("persist", 3, b"", f"ctxtool: error: {name}:2: a\nctxtool: error: {name}:2: b\n"),
            ("persist", 0, b"", f"ctxtool: error: {name}:2: a\n"),
            ("persist", 5, b"", ""),
            ("persist", 0, b'{"a":1}\n{"a":\n', ""),
            ("persist", 0, b"[1]\n", ""),
            ("estimate", 0, b"usage: 12\n", "")]:
        assert problems(command, name, code, stdout, stderr), (command, code, stdout, stderr)


# --- through the real entry point -----------------------------------------------------------------

def test_the_reported_crash_through_the_entry_point(tmp_path: Path) -> None:
    """The crash that started this file: a content block whose type is a list."""
    entry = cc_entry("user", "u1", None, {"role": "user", "content": [
        {"type": ["x"], "text": "hi"}]})
    source = tmp_path / "list-type.jsonl"
    source.write_bytes(dumps_json(entry) + b"\n")
    for argv in (["estimate"], ["estimate", "--json"], ["estimate", "--per-entry"]):
        proc = run_ctxtool(*argv, str(source), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert not problems(" ".join(argv), str(source), proc.returncode, proc.stdout,
                            proc.stderr.decode())


# one crash of FOUND per module fixed, with a command it crashed (index into FOUND, command)
ENTRY_POINT_CASES = [(0, "estimate --json"), (1, "filter-compacted"),
                     (2, "filter-compacted --to openai"), (4, "convert --to anthropic"),
                     (5, "snip"), (9, "summarize"), (7, "validate"), (10, "microcompact"),
                     (12, "estimate --json"), (13, "summarize")]


@pytest.mark.parametrize(("index", "command"), [
    pytest.param(index, command, id=f"{mutant(*FOUND[index]).name}-{command}")
    for index, command in ENTRY_POINT_CASES])
def test_crashes_found_here_through_the_entry_point(index: int, command: str,
                                                     tmp_path: Path) -> None:
    """A few of the crashes this file found and fixed, through the installed ``ctxtool``."""
    store = tmp_path / "store"
    prepare_store(store)
    source = tmp_path / "mutant.jsonl"
    source.write_bytes(mutant(*FOUND[index]).data())
    proc = run_ctxtool(*argv_for(command, store, source), cwd=tmp_path)
    assert not problems(command, str(source), proc.returncode, proc.stdout,
                        proc.stderr.decode())
