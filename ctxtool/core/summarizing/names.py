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

# names that cannot be ordinary words, found by the regex engine alone: members (``a.b``, ``a::b``),
# camelCase and PascalCase with an inner capital, ACRONYMWords, snake_case, Test names
_CANDIDATE = re.compile(
    r"(?<![\w/.@-])(?:[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+|\w*[a-z][A-Z]\w*|[A-Z]{2,}[a-z]\w*|"
    r"_*[A-Za-z][A-Za-z0-9]*_\w*|Test[A-Z_]\w*)(?![\w/-])")
_PARTS = re.compile(r"\.|::")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]|^[A-Z]{2,}[a-z]")
_BACKTICKED = re.compile(r"`([^`\n]{2,120})`")
_DEFINITION = re.compile(
    r"\b(?:def|class|func|function|type|struct|interface|enum|trait|impl|fn|defp?|defmodule|"
    r"module|const|let|var|val)\s+(?:\([^)]*\)\s*)?([A-Za-z_][\w.]*)")
COMMENT_LINE = re.compile(r"^(?:#|//|--|/\*|\*|;|<!--)")  # a line of code that is a comment
_TEST_NAME = re.compile(r"--- (?:FAIL|PASS): (\w+)|(?:FAILED|ERROR) \S*?::(\w+)|::(test_?\w+)")
_CUT_MARK = "\n\n[... "  # a head-and-tail cut: ``[... N chars truncated ...]`` (truncate_text)
FILE_EXTENSIONS = frozenset(
    "py pyi go ts tsx js jsx mjs cjs rs md mdx json jsonl yaml yml toml sh bash zsh txt html css "
    "scss sql java kt swift c h cc cpp hpp rb ex exs heex eex erl lua php cs vue svelte lock mod "
    "sum cfg ini conf xml gradle proto graphql tf dockerfile env csv ipynb".split())
# a path-like token ending in .ext (one greedy run: no backtracking inside tokens)
_PATH = re.compile(r"(?<![\w.@+/~-])[\w.@+~/-]*\.([A-Za-z0-9]{1,10})(?![\w-])")
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
    if "." in name or ":" in name:
        last = name.rsplit(".", 1)[-1]
        if "." in name and last.lower() in FILE_EXTENSIONS:
            return False  # a file name
        return not name[0].isdigit() and all(_PARTS.split(name))
    core = name.strip("_")
    if "_" in core:
        return any(c.isalpha() for c in core)
    if name.startswith("Test") and len(name) > 4 and (name[4].isupper() or name[4] == "_"):
        return True
    return _INNER_CAPITAL.search(name) is not None


def identifiers_in(text: str) -> list[str]:
    return [name for name in _CANDIDATE.findall(text) if looks_like_identifier(name)]


def backticked(text: str) -> list[str]:
    """Identifiers inside backticks (a ``call()`` counts as its name)."""
    names: list[str] = []
    for span in _BACKTICKED.findall(text):
        names.extend(identifiers_in(span))
    return names


# members declared by a macro naming them (Phoenix's ``attr :rows``, Ecto's ``field :name``,
# Rails' ``has_many :posts``) and Elixir's module attributes (``@max_rows 5``; not its own
# ``@doc``, ``@spec``...)
_DECLARED = re.compile(
    r"^[ \t]*(?:(?:attr|slot|field|embeds_one|embeds_many|has_many|has_one|belongs_to|"
    r"many_to_many|attribute|attr_accessor|attr_reader|attr_writer)\(?[ \t]*:|@(?!(?:module)?doc\b|"
    r"spec\b|impl\b|type[pt]?\b|callback\b|behaviou?r\b|derive\b|moduletag\b|tag\b)(?=\w+[ \t]+[^\s(=]))"
    r"(\w+)", re.MULTILINE)


def declarations_in(text: str) -> list[str]:
    """The members a piece of code declares by a macro (``attr :all_rows``) or as module
    attributes (``@max_rows 5``): less than its definitions, more than the names it uses."""
    if ":" not in text and "@" not in text:
        return []
    return [("@" if text[m.start(1) - 1] == "@" else "") + m.group(1)  # as written: @max_rows
            for m in _DECLARED.finditer(text) if looks_like_identifier(m.group(1))]


def definitions_in(text: str) -> list[str]:
    return [m.group(1) for m in _DEFINITION.finditer(text) if looks_like_identifier(m.group(1))
            or (len(m.group(1)) > 3 and m.group(1)[0].isupper())]


# the definitions that hold a body other code is written in (a variable does not); a class or
# module holds functions, and a change inside it but in none of them says little
_ENCLOSING = re.compile(
    r"^([ \t]*)(?:(?:pub(?:\([\w:]+\))?|export|async|static|private|public|protected|override)\s+)*"
    r"(def|defp|defmacro|func|function|fn|class|defmodule|module|impl|trait)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_][\w.]*)", re.MULTILINE)
_CONTAINERS = frozenset(("class", "defmodule", "module", "impl", "trait"))


def enclosing_definition(text: str, indent: int) -> str:
    """The name of the function a change is in: the last definition in ``text`` (the code
    above the change) whose line is indented less than ``indent`` (the changed line's), ""
    when that is none, or a class or module."""
    found = ""
    for match in _ENCLOSING.finditer(text):
        if len(match.group(1).expandtabs(4)) < indent:  # a line of code: any name is one
            found = match.group(3) if match.group(2) not in _CONTAINERS else ""
    return found


def test_names_in(text: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _TEST_NAME.finditer(text)]


def whole_words(text: str) -> str:
    """``text`` without the words a head-and-tail cut split in two."""
    start = text.find(_CUT_MARK)
    if start < 0:
        return text
    end = text.find(" chars truncated ...]\n\n", start)
    if end < 0:
        return text
    end += len(" chars truncated ...]\n\n")
    head, tail = text[:start], text[end:]
    head = head[:len(head) - len(head.split()[-1])] if head and not head[-1].isspace() else head
    tail = tail[len(tail.split()[0]):] if tail and not tail[0].isspace() else tail
    return head + text[start:end] + tail


def paths_in(text: str) -> list[str]:
    """File paths (anything ending in a known extension; URLs left out)."""
    if "." not in text:
        return []
    found: list[str] = []
    for match in _PATH.finditer(text):
        path = match.group(0)
        if match.group(1).lower() not in FILE_EXTENSIONS or path.startswith(("//", "www.")):
            continue  # not a known extension, or the rest of a URL after "https:"
        name = path.rsplit("/", 1)[-1]
        if len(name) > len(match.group(1)) + 1 and not name.startswith("."):
            found.append(path.rstrip("."))
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
        ordered = sorted(self.seen.items(), key=lambda kv: _rank(kv[1], end, compacted_at),
                         reverse=True)
        return [name for name, _ in ordered[:max(0, count)]]

    def best(self, names: Iterable[str], count: int, end: int, compacted_at: int = 0) -> list[str]:
        """The ``count`` most central of ``names`` (those never ranked last)."""
        empty = _Seen()
        return sorted(dict.fromkeys(names), key=lambda n: _rank(self.seen.get(n, empty), end,
                                                                 compacted_at),
                      reverse=True)[:max(0, count)]


def _rank(seen: _Seen, end: int, compacted_at: int) -> float:
    lift = 1.0 + seen.last / max(1, end)
    return seen.score * lift * (0.5 if seen.last < compacted_at else 1.0)
