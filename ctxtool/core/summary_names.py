"""The names a conversation is about: code identifiers and file paths, found in the texts and
tool calls of a session and ranked by how central they are (:class:`NameRanking`).

An *identifier* is a name that cannot be an ordinary word: CamelCase (``GeminiMessage``,
``parseConfig``), snake_case (``load_transcript``), a member (``repo.Head``, ``Otel.setup``), a
test (``TestResume_AfterMerge``). Each sighting adds a weight that says how central its source
is - the user naming it, the assistant discussing it in backticks, an edit defining it, a search
for it - and the ranking prefers names seen often and lately.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# candidate names: words with dots or :: between parts; filtered by looks_like_identifier
_CANDIDATE = re.compile(r"(?<![\w/.-])[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_BACKTICKED = re.compile(r"`([^`\n]{2,120})`")
_DEFINITION = re.compile(
    r"\b(?:def|class|func|function|type|struct|interface|enum|trait|impl|fn|defp?|defmodule|"
    r"module|const|let|var|val)\s+(?:\([^)]*\)\s*)?([A-Za-z_][\w.]*)")
_TEST_NAME = re.compile(r"--- (?:FAIL|PASS): (\w+)|(?:FAILED|ERROR) \S*?::(\w+)|::(test_?\w+)")
# the partial words on both sides of a head-and-tail cut (``[... N chars truncated ...]``)
_CUT_EDGES = re.compile(r"\S*(\n\n\[\.\.\. \d+ chars truncated \.\.\.\]\n\n)\S*")
FILE_EXTENSIONS = frozenset(
    "py pyi go ts tsx js jsx mjs cjs rs md mdx json jsonl yaml yml toml sh bash zsh txt html css "
    "scss sql java kt swift c h cc cpp hpp rb ex exs heex eex erl lua php cs vue svelte lock mod "
    "sum cfg ini conf xml gradle proto graphql tf dockerfile env csv ipynb".split())
_PATH = re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@+-]+/)*[\w@+-][\w.@+-]*\.([A-Za-z0-9]{1,10})\b")
_COMMON = frozenset("e.g i.e etc.etc vs.vs".split())
WEIGHT_USER = 3.0  # the user named it
WEIGHT_DEFINED = 3.0  # an edit or write defines it
WEIGHT_DISCUSSED = 2.0  # the assistant put it in backticks, or searched for it
WEIGHT_MENTIONED = 1.0  # in passing: plain text, error lines, a subagent's report
WEIGHT_SEEN = 0.25  # defined in a file that was read
WEIGHT_GLIMPSED = 0.05  # anywhere in a tool's output
MAX_TRACKED = 20_000  # names kept while reading; the weakest half is dropped beyond that


def looks_like_identifier(name: str) -> bool:
    """True for a name that cannot be an ordinary word (see the module docstring)."""
    if len(name) < 3 or name.lower() in _COMMON:
        return False
    last = name.rsplit(".", 1)[-1]
    if "." in name and last.lower() in FILE_EXTENSIONS:
        return False  # a file name
    if "." in name or "::" in name:
        return not name[0].isdigit() and all(part for part in re.split(r"\.|::", name))
    core = name.strip("_")
    if "_" in core:
        return any(c.isalpha() for c in core)
    if name.startswith("Test") and len(name) > 4 and (name[4].isupper() or name[4] == "_"):
        return True
    return bool(re.search(r"[a-z][A-Z]", name)) or bool(re.match(r"[A-Z]{2,}[a-z]", name))


def identifiers_in(text: str) -> list[str]:
    return [m.group(0) for m in _CANDIDATE.finditer(text) if looks_like_identifier(m.group(0))]


def backticked(text: str) -> list[str]:
    """Identifiers inside backticks (a ``call()`` counts as its name)."""
    names: list[str] = []
    for span in _BACKTICKED.findall(text):
        names.extend(identifiers_in(span))
    return names


def definitions_in(text: str) -> list[str]:
    return [m.group(1) for m in _DEFINITION.finditer(text) if looks_like_identifier(m.group(1))
            or (len(m.group(1)) > 3 and m.group(1)[0].isupper())]


def test_names_in(text: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _TEST_NAME.finditer(text)]


def whole_words(text: str) -> str:
    """``text`` without the words a head-and-tail cut split in two."""
    return _CUT_EDGES.sub(r"\1", text) if "chars truncated ...]" in text else text


def paths_in(text: str) -> list[str]:
    """File paths (anything ending in a known extension; URLs left out)."""
    found: list[str] = []
    for match in _PATH.finditer(text):
        if match.group(1).lower() not in FILE_EXTENSIONS:
            continue
        start = match.start()
        if text[max(0, start - 3):start].endswith("://") or text[max(0, start - 1):start] in (":",):
            continue
        path = match.group(0)
        if not path.startswith(("http", "www.")) and not re.fullmatch(r"[\d.]+", path):
            found.append(path)
    return found


@dataclass
class _Seen:
    score: float = 0.0
    last: int = 0


class NameRanking:
    """Names with a score; :meth:`top` ranks by score, lifted for recent sightings."""

    def __init__(self) -> None:
        self.seen: dict[str, _Seen] = {}

    def add(self, names: Iterable[str], weight: float, position: int) -> None:
        """Count each name once per text: a pasted log naming a key a hundred times is one
        sighting."""
        for name in dict.fromkeys(names):  # once each, in order (deterministic ties)
            record = self.seen.get(name)
            if record is None:
                record = self.seen[name] = _Seen()
            record.score += weight
            record.last = position
        if len(self.seen) > MAX_TRACKED:
            keep = sorted(self.seen.items(), key=lambda kv: kv[1].score, reverse=True)
            self.seen = dict(keep[:MAX_TRACKED // 2])

    def top(self, count: int, end: int, compacted_at: int = 0) -> list[str]:
        """The ``count`` most central names; ``end`` is the position of the last turn. Names
        not seen since an earlier compaction at ``compacted_at`` count half: that summary
        already chose what to carry over from before it."""
        span = max(1, end)

        def rank(item: tuple[str, _Seen]) -> float:
            lift = 1.0 + item[1].last / span
            return item[1].score * lift * (0.5 if item[1].last < compacted_at else 1.0)

        ordered = sorted(self.seen.items(), key=rank, reverse=True)
        return [name for name, _ in ordered[:max(0, count)]]
