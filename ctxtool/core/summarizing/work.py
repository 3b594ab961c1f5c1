"""The work a session did, from its own record: the handover part of the offline summary.

:class:`WorkLog` is fed by :class:`ctxtool.core.summarizing.facts.Facts` as the turns come and
keeps, in order and in bounded memory:

* the agent's task list over time (every agent's todo or plan tool, seen through its adapter as
  Claude Code's TodoWrite/TaskCreate/TaskUpdate): each task's latest state and the work done
  while it was the one in progress;
* commits (the message, the hash the result names, the files changed since the commit before),
  pushes or pull requests (a push right after a commit on the commit's line), merges, pulls and
  rebases, and rounds of replies to review comments (each one line, a round's most telling
  comments under it, each with its point and what the reply said came of it:
  :mod:`ctxtool.core.summarizing.git_work`); the end-of-turn report's lines that restate one of
  them told on its line;
* what each change did, from the edit itself, per file and per step (the edits made for one
  stated intent: what the assistant said it was about to do just before them, :func:`intent_of`),
  each read whole (a file written whole again: against its text as last read or written):
  the definitions, declarations (``attr :rows``, ``@max_rows 5``), imports, options, config
  keys and routes they added, changed or removed, the
  function an edit of a body changed (found in the file's text as last read or written, edits
  applied), their most telling short line of code (a config entry, a dependency, a route, the
  comment over a definition they brought in, which says what it is for), and
  the lines of the end-of-turn report after them that name what they added (the assistant's own
  words for what a step did); a change that reworks what a step wrote moments ago (an alias
  for a call it added, an option it set dropped) is part of that step, which tells its net
  change; and the tests each file gained;
* tests and builds run, and whether each passed after the last change;
* the assistant's own reports at the end of a turn (the lines that say what was done; one that
  restates a shell command of its turn names it, with what its call said it was for);
* the constraints and decisions the user stated.

Every line it writes is short and says one piece of work; lists of names are short and ranked.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from ctxtool.core.summarizing.git_work import (COMMENTS, Comment, Integration, ReviewRound,
                                               branch_in, ending_of, integration, replies_in,
                                               review_comments)
from ctxtool.core.summarizing.names import (COMMENT_LINE, declarations_in, definitions_in,
                                            enclosing_definition, identifiers_in,
                                            looks_like_identifier)
from ctxtool.core.summarizing.text import one_line

WORK_LINES = 400  # pieces of work kept (the newest)
REPORT_LINES = 12  # lines taken from one end-of-turn report
SAID_LINES = 120  # report lines a new one is compared with (the newest)
BODY_LINES = 6  # paragraphs or list items of a commit message's body kept
STEPS_PER_FILE = 12  # intents kept per file (the newest)
INTENT_CHARS = 160
INTENT_SHORT = 80  # an intent is cut to this to make room for the names on its step's line
SHORT_INTENT = 5  # words: an intent this short announcing its calls (``...:``) points above
CODE_CHARS = 100  # a line of code a step shows: at most this long...
STEP_CODE = 6  # ...among the first this many telling lines it added
STEP_NAMES = 4  # names given per step and kind
STEP_DEFINITIONS = 8  # the definitions a step brought in, all listed when this few
STEP_REPORTS = 3  # report lines told on a step's line (instead of what it set out to do)
STEP_CHARS = 390  # a step's line stays one line a reader (and a matcher) takes whole
WROTE_CHARS = 50_000  # the text a step's changes wrote that is kept, to know a later rework
TESTS_PER_FILE = 40  # tests added to one file that are named (the newest)
TEXTS = 32  # files whose text is followed (the newest read or written), to find what an edit is in
TEXT_CHARS = 500_000  # a longer file is not followed
ABOVE_CHARS = 20_000  # how far above an edit its enclosing definition is looked for
ABOVE_LINES = 400  # the same in a rewrite, in lines
DIFF_LINES = 20_000  # a longer file written whole again is not compared line by line
CONSTRAINTS = 12  # user statements kept (the newest)
PLANS = 16  # issues whose text as shown is kept (the newest)...
PLAN_CHARS = 8000  # ...up to this much of it
WHY_CHARS = 200  # what an issue is for: its description's first sentence, cut to this
TURN_CALLS = 16  # shell calls of a turn that its report's lines may restate (the newest)
CALL_CHARS = 80  # a shell command told on a report line, cut to this
_REPORT_VERB = re.compile(
    r"\b(?:done|fixed|fix|completed?|resolved|implemented|merged|committed|pushed|created|added|"
    r"wrote|written|updated|modified|refactored|removed|replaced|renamed|extracted|migrated|"
    r"passing|passe[sd]|moved|deleted|converted|changed|introduced|closed|opened|verified|"
    r"succeeded|works)\b|\u2705", re.IGNORECASE)
_MARKUP = re.compile(r"\*\*|__|^\s*(?:[-*\u2022]|\d+[.)]|#+)\s*(?:\[[ xX]\]\s*)?")  # and a checkbox
_CONSTRAINT = re.compile(
    r"\b(?:must(?:n't| not)?|never|always|do(?:n't| not)|should(?:n't| not)?|instead|only|"
    r"make sure|prefer|no need|keep|avoid|without)\b", re.IGNORECASE)
_OPTION = re.compile(r"(?<![\w-])--[a-z][\w-]{1,40}")
_CONFIG_KEY = re.compile(r"^\s*[\"']?([A-Za-z_][\w.-]{2,40})[\"']?(?::(?!:)|\s*=(?!=))",
                         re.MULTILINE)
_ROUTE = re.compile(r"[\"'](/(?:api|v\d)?[\w/{}:<>.-]{2,60})[\"']")
_TEST_TITLE = re.compile(r"\b(?:test|it|describe)\s*\(?\s*[\"']([^\"'\n]{4,60})[\"']")
# tests as their frameworks define them: Go, Python, Rust, and those titled by a string
# (ExUnit, Jest, Mocha, RSpec)
_TEST_DEF = re.compile(r"\bfunc\s+(Test\w+)|\bdef\s+(test_\w+)|#\[test\]\s*(?:pub\s+)?(?:async\s+)?"
                       r"fn\s+(\w+)|^[ \t]*(?:test|it)\s*\(?\s*[\"']([^\"'\n]{3,80})[\"']", re.MULTILINE)
# a line that says on its own what a change was: a config entry, a dependency, a route, an option
_SALIENT = re.compile(r"^\s*(?:config\b|[\"']?[\w.-]+[\"']?\s*(?::|=(?![=>]))\s*[\"'~^<>\d]|\{:\w+,|"
                      r"[\w.-]+\s*[<>=~]=)|"
                      r"(?<![\w-])--[a-z]|[\"']/[\w/{}:<>.-]+[\"']")
_CONFIG_FILE = re.compile(r"\.(?:json|ya?ml|toml|ini|cfg|conf|env|exs)$|(?:^|/)\.?\w*rc$")
_HASH = re.compile(r"\[([^\]\s]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\]")
_MESSAGE = re.compile(r"""-[a-zA-Z]*m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?\n(.*?)\n\s*\1", re.DOTALL)
_TRAILER = re.compile(r"^[\w-]+: .*(?:<[^>]*@|https?://)|^(?:Co-Authored-By|Signed-off-by):|"
                      r"^\U0001f916|^Generated with", re.IGNORECASE)
_BODY = re.compile(r"""--body[= ]+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')|-f body=(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_PR_TITLE = re.compile(r"""--title\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_URL = re.compile(r"https?://\S+/pull/\d+")
_COUNTS = re.compile(r"\b\d+ (?:passed|failed|tests?|examples?|failures?|errors?|specs?|"
                     r"properties)\b|^(?:ok|PASS|FAIL)\s", re.IGNORECASE | re.MULTILINE)
CHECK_WORDS = 2  # a test or build command is known by its first words (``mix test``)
# issue trackers driven from the shell: beads (``bd``) and GitHub's ``gh issue``
_TRACKER = re.compile(r"(?:^|&&|;|\|\|)\s*(?:bd|beads|gh issue)\s+"
                      r"(?P<verb>close|update|create|reopen|show|view)"
                      r"\s+(?P<id>[\w.#-]+)")
# an issue's title as ``bd show`` (``○ spotter-4te.1 · Add OTEL deps   [● P1 · OPEN]``) or
# ``gh issue view`` (``title:\tAdd OTEL deps``) prints it
_SHOWN_TITLE = re.compile(r"\A\W*[\w.#-]+(?:\s+\[\w+\])?\s+\u00b7\s+(.+?)(?:\s{2,}\[.*)?$|^title:\s+(.+)$",
                          re.MULTILINE)
_FLAG_STATUS = re.compile(r"--status[= ]+([\w-]+)")
_LEAD = ("#", "-", "*", "+", "|", ">", "`", "[")  # a heading, list, table, quote, fence, link
_STATUS = {"in_progress": "in_progress", "in-progress": "in_progress", "open": "pending",
           "closed": "completed", "done": "completed", "blocked": "pending"}
_REASON = re.compile(r"""--(?:reason|comment)[= ]+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_TITLE = re.compile(r"""(?:--title|-t)[= ]+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")
_TASK_ID = re.compile(r"^[\w.#-]{1,40}$")  # an issue's id, not a todo item's sentence
_CREATED = re.compile(r"(?:Created issue|created)[: ]+([\w.#-]+)", re.IGNORECASE)


@dataclass
class FileWork:
    """What the session's edits and writes did to one file."""

    path: str
    created: bool = False  # first written whole, never read before
    edits: int = 0
    first: int = 0  # position of the first change
    last: int = 0  # position of the last change
    commit: str = ""  # the commit that last covered it ("" while not committed since)
    steps: dict[str, Step] = field(default_factory=dict)  # by intent, the newest last
    tests: dict[str, None] = field(default_factory=dict)  # tests the changes added, still there


@dataclass
class Step:
    """The edits of one file made for one stated intent (the assistant's words before them)."""

    intent: str
    added: dict[str, None] = field(default_factory=dict)  # definitions first, then other names
    defined: dict[str, None] = field(default_factory=dict)  # the definitions among them
    declared: dict[str, None] = field(default_factory=dict)  # the declarations (``attr :rows``)
    changed: dict[str, None] = field(default_factory=dict)  # definitions the edits rewrote
    removed: dict[str, None] = field(default_factory=dict)
    code: dict[str, float] = field(default_factory=dict)  # short new lines that say most: weight
    reports: list[str] = field(default_factory=list)  # the lines of the report after it naming it
    imports: dict[str, str] = field(default_factory=dict)  # import statements it added: name
    dropped: dict[str, str] = field(default_factory=dict)  # import statements it took out: name
    tried: dict[str, None] = field(default_factory=dict)  # names it added, then took out
    aims: dict[str, None] = field(default_factory=dict)  # names its reworks' intents named
    task: str = ""  # the task in progress when it began
    commits: int = 0  # the commits made before its latest change
    wrote: list[str] = field(default_factory=list)  # the texts its changes wrote, as they are now
    fresh: set[str] = field(default_factory=set)  # the lines it brought in, spacing squeezed


@dataclass
class Check:
    """A test or build command, as last run."""

    command: str
    passed: bool
    detail: str  # the result's telling line
    position: int


@dataclass(eq=False)  # a line is itself: two that say the same are still two
class WorkLine:
    position: int
    task: str  # the task in progress when it happened ("" for none)
    text: str
    detail: bool = False  # a detail of the line before it (a commit message's body)
    kind: str = ""  # the git action it tells (a key of :data:`_RESTATING`, or "commit")
    keys: list[str] = field(default_factory=list)  # a commit's short hash, the comments replied to
    reported: list[str] = field(default_factory=list)  # report lines of its turn told on it
    own: str = ""  # what it says itself, when report lines are told on it

    def tell(self, text: str) -> None:
        """``text`` as what the line itself says, then the report lines told on it."""
        self.own = text
        self.text = self.shown(STEP_CHARS) if self.reported else text

    def shown(self, width: int) -> str:
        """The line, what it says itself and the reports told on it each cut to ``width``
        (the reports alone when it names nothing: "Pushed"), within :data:`STEP_CHARS`."""
        own = one_line(self.own or self.text, width)
        told = one_line("; ".join(self.reported), width)
        if not told:
            return own
        return one_line(f"{own} - reported: {told}" if telling_words(own) else told, STEP_CHARS)


@dataclass
class Task:
    content: str
    status: str
    first: int
    changed: int  # position of the latest status change
    detail: str = ""  # what the task is to do, when the agent wrote it down


def _rank(names: dict[str, None], limit: int) -> list[str]:
    """The newest ``limit`` names, newest last, a name inside a longer one left out."""
    kept = list(names)[-limit:]
    return [n for n in kept if not any(n != o and n in o for o in kept)]


_TRIVIAL = re.compile(r"^[\W\d_]*$|^(?:end|else|fi|done|esac|return|pass|break|continue)\W*$")
_DEFINES = re.compile(r"\b(?:def|defp|defmacro|defmodule|class|func|function|fn|struct|interface|"
                      r"enum|trait|impl|type|const|module)\s+[A-Za-z_]")


def _weight(line: str, path: str) -> float:
    """How much a new line of code says about the change: a definition most, then a config
    entry, a line naming identifiers, a comment; 0 for a line that says nothing."""
    if len(line) < 6 or _TRIVIAL.match(line):
        return 0.0
    if _DEFINES.search(line):
        return 4.0
    if _CONFIG_FILE.search(path) and _CONFIG_KEY.match(line):
        return 3.0
    if COMMENT_LINE.match(line):
        return 1.0 if len(line.split()) >= 3 else 0.0
    return 2.0 if identifiers_in(line) or _OPTION.search(line) or _ROUTE.search(line) else 0.5


def new_lines(old: str, new: str, path: str) -> list[tuple[str, float]]:
    """The statements of ``new`` not in ``old`` that say something, spacing squeezed, weighed;
    a statement that goes on over the next lines (``config :app,``) is taken with them up to
    :data:`CODE_CHARS`."""
    before = {" ".join(ln.split()) for ln in old.splitlines()}
    found: dict[str, float] = {}
    lines = [" ".join(raw.split()) for raw in new.splitlines()]
    index = 0
    while index < len(lines):
        line, index = lines[index], index + 1
        if line in before:
            continue
        while _GOES_ON.search(line) and index < len(lines) and lines[index] \
                and len(line) + len(lines[index]) < CODE_CHARS:
            line, index = f"{line} {lines[index]}", index + 1
        weight = _weight(line, path)
        if weight > 0:
            found.setdefault(line, weight)
    return list(found.items())


_GOES_ON = re.compile(r"[,(\[{=]$")
PURPOSE = 5.0  # the weight of a comment saying what a definition it sits on is for
PURPOSES = 2  # such comments a step keeps


def purposes_in(old: str, new: str) -> list[str]:
    """The comments of ``new`` right above a new clause of a function ``old`` already defines
    (``# No-op handler for badge clicks`` over ``def handle_event("badge_clicked", ...)``):
    what it is for, in the words of whoever wrote it, where the function's name says nothing
    new (a new function is told by its name)."""
    before = {" ".join(ln.split()) for ln in old.splitlines()}
    known = set(definitions_in(old))
    lines = [" ".join(raw.split()) for raw in new.splitlines()]
    return [above for above, line in zip(lines, lines[1:])
            if line not in before and _DEFINES.search(line) and COMMENT_LINE.match(above)
            and above not in before and len(above.split()) >= 3 and len(above) <= CODE_CHARS
            and set(definitions_in(line)) <= known and definitions_in(line)]


# a line that brings a module or a name in (Python, JavaScript, Rust, Elixir, Ruby, PHP; Go below):
# a change's imports are told with their keyword, as one would say it ("added alias X")
_IMPORT = re.compile(r"^[ \t]*(import|from|use|alias|require)[ \t]+([A-Za-z_][\w.:]*)", re.MULTILINE)


def rewritten(old: str, new: str) -> list[str]:
    """The definitions of ``old`` that ``new`` (the same file written whole again) changed:
    those whose lines a changed part of it holds, and those a changed part is inside."""
    before, after = old.splitlines(), new.splitlines()
    if max(len(before), len(after)) > DIFF_LINES:
        return definitions_in(new)
    found: dict[str, None] = {}
    kept = set(definitions_in(new))  # a definition whose lines went is removed, not changed
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, before, after).get_opcodes():
        if tag == "equal":
            continue
        found.update((n, None) for n in definitions_in("\n".join(before[i1:i2])) if n in kept)
        found.update(dict.fromkeys(definitions_in("\n".join(after[j1:j2]))))
        line = next((ln for ln in after[j1:j2] if ln.strip()), "")
        if line:
            found[enclosing_definition("\n".join(after[max(0, j1 - ABOVE_LINES):j1]),
                                       _indent(line))] = None
    found.pop("", None)
    return list(found)


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


# Go's: ``import "fmt"``, ``import log "x/log"`` or a line of an ``import (...)`` block (an edit
# of the block often holds only its lines)
_GO_IMPORT = re.compile(r"^[ \t]*(?:import[ \t]+)?(?:[A-Za-z_]\w*[ \t]+)?"
                        r"\"([\w.-]+(?:/[\w.-]+)*)\"[ \t]*$", re.MULTILINE)


def imports_in(text: str, path: str = "") -> dict[str, str]:
    """The imports of ``text`` (``alias X.Y``: the keyword and the name) and the name each
    brings in (of a Go file, its package path's last part)."""
    if path.endswith(".go"):
        return {f"import {m.group(1)}": m.group(1).rsplit("/", 1)[-1]
                for m in _GO_IMPORT.finditer(text)}
    return {f"{m.group(1)} {m.group(2)}": m.group(2) for m in _IMPORT.finditer(text)
            if looks_like_identifier(m.group(2))}


def names_of(text: str, path: str) -> dict[str, None]:
    """The names a piece of code holds, in order: definitions first, then identifiers,
    command-line options, routes, test titles and (in config files) keys."""
    found: dict[str, None] = dict.fromkeys(definitions_in(text))
    found.update(dict.fromkeys(declarations_in(text)))
    found.update(dict.fromkeys(identifiers_in(text)))
    found.update(dict.fromkeys(_OPTION.findall(text)))
    found.update(dict.fromkeys(_ROUTE.findall(text)))
    found.update(dict.fromkeys(f'"{t}"' for t in _TEST_TITLE.findall(text)))
    if _CONFIG_FILE.search(path):
        found.update(dict.fromkeys(_CONFIG_KEY.findall(text)))
    return found


def config_keys(path: str, text: str) -> list[str]:
    """The keys a config or data file (JSON, YAML, TOML, ...) holds that read as identifiers
    (``sessionId``, ``max_retries``): what such a file is about, as definitions are for code.
    ``text`` may be a Read result, its lines numbered."""
    if not _CONFIG_FILE.search(path):
        return []
    plain = _LINE_NUMBER.sub("", text)
    return [k for k in dict.fromkeys(_CONFIG_KEY.findall(plain)) if looks_like_identifier(k)]


# ``cat -n`` numbers in a Read result (``   12\tcode``, ``12→code``); the lines after them, a
# reminder the agent added, have none
_LINE_NUMBER = re.compile(r"^ *\d+(?:\t|\u2192)", re.MULTILINE)


def tests_in(text: str) -> list[str]:
    """The tests a piece of code defines: their names, or their titles in quotes."""
    found: list[str] = []
    for match in _TEST_DEF.finditer(text):
        name, title = match.group(1) or match.group(2) or match.group(3), match.group(4)
        found.append(name if name else f'"{title}"')
    return list(dict.fromkeys(found))


def commit_message(command: str) -> list[str]:
    """The lines of the message a ``git commit`` command gives (none when not given): the
    subject, then the body's lines that say something (trailers left out)."""
    heredoc = _HEREDOC.search(command)
    if heredoc and "-m" in command[:heredoc.start()]:
        text = heredoc.group(2)
    else:
        text = "\n".join((m.group(1) or m.group(2) or "").replace('\\"', '"')
                         for m in _MESSAGE.finditer(command))
    items: list[str] = []  # the body's paragraphs and list items, each on one line
    joined = True
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            joined = False
        elif joined and items and not _MARKUP.match(raw) and len(items) > 1:
            items[-1] += " " + line
        else:
            items.append(_MARKUP.sub("", line).strip())
            joined = len(items) > 1  # the subject stands alone; the body's lines wrap
    return [ln for ln in items if len(ln.split()) >= 2 and not _TRAILER.match(ln)]


def commit_told(command: str, result: str) -> str:
    """A ``git commit`` as a reader knows it: the hash its result names and the message's
    subject (``1a2b3c4 "fix: x"``; either may be missing)."""
    found = _HASH.search(result)
    lines = commit_message(command)
    return " ".join(part for part in (found.group(2)[:7] if found else "",
                                      f"\"{one_line(lines[0], 100)}\"" if lines else "") if part)


def report_lines(text: str, added: Iterable[str] = ()) -> list[str]:
    """The lines of an end-of-turn report that say what was done (markup and opening filler
    taken off; a line naming nothing in particular left out, and a heading of one telling word:
    "Done. Summary:", "**Before the fix:**"): those with a verb of work done, and those that name one of ``added``
    (the definitions the work added: ``TestX - what it checks``, an item under "Added 5
    tests:")."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = _FILLER.sub("", _MARKUP.sub("", raw).strip()).strip().rstrip(":")
        words = telling_words(line)
        if line.endswith("?") or line.startswith(("```", "|")) or not words \
                or len(words) == 1 and _heading(raw) \
                or not _REPORT_VERB.search(line) and not any(_named(n, line) for n in added):
            continue
        lines.append(line if len(line) <= 240 else line[:237].rstrip() + "...")
        if len(lines) >= REPORT_LINES:
            break
    return list(dict.fromkeys(lines))


_PLAIN = frozenset("that this with from have been into were will would should could they them "
                   "their there then than what when which while also just some more most made "
                   "make work session successfully everything things all".split())


def _heading(raw: str) -> bool:
    """A line that opens a section or a list (``## Fixes``, ``**Before the fix:**``)."""
    bare = raw.strip().strip("*").strip()
    return bare.startswith("#") or bare.endswith(":")


_NAME = re.compile(r"[_./`\d]|[a-z][A-Z]")  # a name, not a word: ``x_y``, ``a.b``, ``fooBar``


def telling_words(line: str) -> set[str]:
    """The words of a line that say something: names, and words of 4 letters or more that are
    neither plain English nor the verbs of a report."""
    found = set()
    for word in re.findall(r"[\w.`/-]+", line):
        bare = word.strip("`.").lower()  # a sentence's full stop does not make a name
        if _NAME.search(word.rstrip(".")) or len(bare) >= 4 and bare not in _PLAIN \
                and not _REPORT_VERB.fullmatch(bare):
            found.add(bare)
    return found


_FILLER = re.compile(
    r"^(?:(?:good|great|perfect|excellent|ok(?:ay)?|now|next|first|then|also|finally|so|right|"
    r"i see)\b[!,.:]*\s*(?:[-\u2013\u2014]\s*)?)*(?:(?:let me|let's|i'll|i will|i need to|we need to|i'm going to|"
    r"i can|i should)\s+(?:also\s+|now\s+|first\s+)?)?", re.IGNORECASE)


def intent_of(text: str) -> str:
    """What the assistant said it was about to do: the last paragraph of its words before a
    call, without filler ("Now let me", "Perfect!"), cut to :data:`INTENT_CHARS`."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    if not paragraphs:
        return ""
    said = _sentences(paragraphs[-1])
    if len(said.split()) < SHORT_INTENT and paragraphs[-1].rstrip().endswith(":") \
            and len(paragraphs) > 1:  # "Let me implement these changes:" - those said above
        said = ": ".join(p for p in (said.rstrip(":. "), _sentences(paragraphs[-2])) if p)
    return one_line(said.rstrip(":. "), INTENT_CHARS)


LIST_MARK = r"^[ \t]*(?:[-*\u2022]|\d+[.)])[ \t]+"  # a list item's mark, at a line's start
_LIST_ITEM = re.compile(LIST_MARK)
_LIST_LINE = re.compile(LIST_MARK + ".*", re.MULTILINE)


def list_items(text: str) -> list[str]:
    """The items of the lists in a text (a plan's steps), markup off."""
    return [_MARKUP.sub("", m.group(0)).strip() for m in _LIST_LINE.finditer(text)]


def planned(intent: str, items: Iterable[str]) -> str:
    """The item of a plan written earlier (``items``, oldest first) that ``intent`` says in
    fewer words ("Now update the conversion functions:" carrying out "2. Update the conversion
    functions to include `EndedAt`"), else ``intent``."""
    said = _plain_words(intent_of(intent))
    if len(said) < 2:
        return intent
    for item in reversed(list(items)):
        words = _plain_words(item)
        if len(words) > len(said) and words[:len(said)] == said:
            return item
    return intent


def _plain_words(text: str) -> list[str]:
    return re.findall(r"\w[\w.-]*", text.replace("`", "").lower())


def _sentences(paragraph: str) -> str:
    """A paragraph's sentences and list items on one line, markup and filler off."""
    words = ""
    for raw in paragraph.splitlines():
        line = _MARKUP.sub("", raw).strip()
        if line and not line.startswith("```"):  # list items apart, wrapped lines joined
            list_item = words and not words.endswith(":") and _LIST_ITEM.match(raw)
            words += ("; " if list_item else " ") + line.rstrip(";")
    sentences = [_FILLER.sub("", s).strip() for s in re.split(r"(?<=[.!?])\s+", words.strip())]
    return " ".join(s[:1].upper() + s[1:] for s in sentences if len(s.split()) >= 2)


def constraints_in(text: str) -> list[str]:
    """The sentences of a user message that state a constraint or a decision."""
    found = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip(" -*")
        if 4 <= len(sentence.split()) <= 40 and _CONSTRAINT.search(sentence) \
                and not sentence.endswith("?"):
            found.append(sentence)
    return found


class WorkLog:
    """See the module docstring; fed by :class:`ctxtool.core.summarizing.facts.Facts`."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}  # content: task, in the order first seen
        self.active = ""  # the task in progress
        self.lines: deque[WorkLine] = deque(maxlen=WORK_LINES)
        self.files: dict[str, FileWork] = {}
        self.since_commit: dict[str, None] = {}  # files changed since the last commit
        self.checks: dict[str, Check] = {}
        self.last_change = -1  # position of the last successful edit or write
        self.constraints: deque[str] = deque(maxlen=CONSTRAINTS)
        self.commits = 0
        self.titles: dict[str, str] = {}  # issue titles an issue tracker printed, by id
        self.plans: dict[str, str] = {}  # the issues as the tracker printed them, by id (newest)
        self.whys: dict[str, str] = {}  # what each issue is for (:func:`purpose_of`), by id
        self.holding: dict[str, None] = {}  # files whose steps keep what they wrote (the newest)
        self.texts: dict[str, str] = {}  # the files' text as last read or written, edits applied
        self.whole: set[str] = set()  # the files whose text there is all of it (not a part read)
        self.said: deque[set[str]] = deque(maxlen=SAID_LINES)  # the telling words of report lines
        self.reported = -1  # position of the latest report
        self.branch = ""  # the branch checked out, as git's output last named it
        # the latest merge, pull or rebase: its line, what came of it, and where
        self.merging: tuple[WorkLine, Integration, int] | None = None
        # this round of replies: its line, the lines under it (a comment each), what it counts
        self.review: tuple[WorkLine, list[WorkLine], ReviewRound] | None = None
        self.comments: dict[str, Comment] = {}  # review comments as listed, by id (the newest)
        self.hashes: set[str] = set()  # the commits' short hashes
        # this turn's shell commands (no git or tracker), each with what the call said it was for
        self.calls: deque[tuple[str, str]] = deque(maxlen=TURN_CALLS)

    def _line(self, position: int, text: str, detail: bool = False, kind: str = "",
              keys: tuple[str, ...] = ()) -> None:
        self.lines.append(WorkLine(position, self.active, text, detail, kind, list(keys)))

    # --- feeding ---------------------------------------------------------------------------------

    def user(self, text: str) -> None:
        self.review = None  # the user's message ends a round of replies
        self.calls.clear()  # and a turn: a report after it is about the calls after it
        for sentence in constraints_in(text):
            if sentence not in self.constraints:
                self.constraints.append(sentence)

    def task_list(self, items: list[tuple[str, str]], position: int,
                  details: dict[str, str] | None = None) -> None:
        """The task list as it stands now ((status, content) in order; ``details``: the
        descriptions of those that have one, by content)."""
        for status, content in items:
            task = self.tasks.get(content)
            if task is None:
                task = self.tasks[content] = Task(content, status, position, position,
                                                  (details or {}).get(content, ""))
            elif task.status != status:
                task.status, task.changed = status, position
        active = [c for s, c in items if s == "in_progress"]
        self.active = active[-1] if active else ""

    def changed(self, path: str, tool: str, old: str, new: str, position: int,
                read_before: bool, intent: str = "", known: Iterable[str] = (),
                own: bool = False) -> Step:
        """A successful edit (``old`` replaced by ``new``) or write (``new`` the whole file),
        made for ``intent`` (the assistant's words before it); ``known``: the names a
        rewritten file was read to hold. A rewrite of a file whose text is followed is told as
        the edits it amounts to (what it added, changed and removed against that text). A
        change that reworks what an earlier step wrote is part of that step (:meth:`_refined`)
        unless ``own`` (it carries out an item of a plan of its own). Returns the step it is
        part of."""
        work = self.files.get(path)
        if work is None:
            work = self.files[path] = FileWork(path, created=tool == "Write" and not read_before,
                                               first=position)
        work.edits += 1
        work.last = position
        work.commit = ""
        prior = self.texts.get(path) if tool == "Write" and path in self.whole else None
        old = old if prior is None else prior
        before, after = names_of(old, path), names_of(new, path)
        inside = self._follow(path, tool, old, new)
        host = None if own else self._refined(work, old, {n for n in before if n not in after},
                                              any(n not in before for n in after))
        step = host or self._step_for(work, intent_of(intent))
        self._step(work, step, dict.fromkeys(known) if known and prior is None else before,
                   after, old, new, None if prior is None else rewritten(prior, new),
                   self.texts.get(path, ""))
        _wrote(step, old, new, host is not None)
        self._hold(path)
        if host is not None:  # what the rework said it was about is the step's too
            host.aims.update(dict.fromkeys(identifiers_in(intent_of(intent))))
        step.task, step.commits = self.active, self.commits
        if inside and inside not in step.added and inside not in step.defined:
            step.changed[inside] = None
        self._tests(work, old, new)
        self.since_commit[path] = None
        self.last_change = position
        return step

    def _hold(self, path: str) -> None:
        """``path``'s steps keep what they wrote; those of a file changed longer ago (past the
        newest :data:`TEXTS`) let it go. A rework comes moments after what it reworks, and what
        a long session wrote in many files is not all held."""
        self.holding.pop(path, None)
        self.holding[path] = None
        while len(self.holding) > TEXTS:
            oldest = next(iter(self.holding))
            del self.holding[oldest]
            for step in self.files[oldest].steps.values():
                step.wrote.clear()
                step.fresh.clear()

    def _step_for(self, work: FileWork, key: str) -> Step:
        """The step of ``work`` for the intent ``key``, made the newest."""
        step = work.steps.pop(key, None) or Step(key)
        work.steps[key] = step
        while len(work.steps) > STEPS_PER_FILE:  # never this step: it was put last
            del work.steps[next(iter(work.steps))]
        return step

    def _refined(self, work: FileWork, old: str, gone: set[str], brings: bool) -> Step | None:
        """The step a change reworks, if any: the newest of the file's steps, made while the
        same task was in progress and no commit came since, whose written text ``old`` lies
        inside and rewrites a line of it brought in (a fix-up of what was written moments ago:
        a name aliased, an option dropped). Its net change is what a reader wants, once. A
        change that only takes out (``gone``) all the step brought in, bringing nothing in
        (``brings``), undoes it: a step of its own."""
        lines = _squeezed(old)
        for step in reversed(work.steps.values()):
            if step.task == self.active and step.commits == self.commits \
                    and not lines.isdisjoint(step.fresh) and any(old in t for t in step.wrote) \
                    and (brings or not gone.issuperset(step.added)):
                return step
        return None

    def _step(self, work: FileWork, step: Step, before: dict[str, None],
              after: dict[str, None], old: str, new: str,
              rewrote: list[str] | None = None, text: str = "") -> None:
        """The edit's part in its step: the definitions it brought in first, then names; the
        definitions it rewrote (``rewrote``, when known: those a rewrite changed); the names it
        took out, but those the file's text after it (``text``, as far as known) still holds (a
        duplicate taken out; a definition or declaration it still defines or declares, a use of
        it left elsewhere being no reason not to call it removed); its first telling lines of
        code. The step tells its net change: a
        name one of its edits added and another took out is neither added nor removed."""
        defined, defined_before = definitions_in(new), set(definitions_in(old))
        for name in [*defined, *after]:
            if name not in before and name not in step.added:
                if name in step.removed:  # taken out, then brought back
                    del step.removed[name]
                    continue
                step.added[name] = None
                if name in defined:
                    step.defined[name] = None
        for name in defined if rewrote is None else rewrote:
            if name in defined_before and old != new and name not in step.added:
                step.changed[name] = None
        gone = [name for name in before if name not in after and name in text
                and _named(name, text)]  # still named in the file: removed only when declared
        declared = set(definitions_in(old)) | set(declarations_in(old)) if gone else set()
        kept = set(definitions_in(text)) | set(declarations_in(text)) if declared & set(gone) \
            else set()
        for name in before:
            if name not in after and (name not in gone or name in declared and name not in kept):
                if name not in step.added:
                    step.removed[name] = None
                else:
                    step.tried[name] = None
                step.added.pop(name, None)
                step.defined.pop(name, None)
                step.declared.pop(name, None)
        gone = set(declarations_in(old))
        for name in declarations_in(new):
            if name not in gone and name in step.added and name not in step.defined:
                step.declared[name] = None
        brought, dropped = imports_in(new, work.path), imports_in(old, work.path)
        for statement, name in brought.items():
            if statement not in dropped and step.dropped.pop(statement, None) is None:
                step.imports[statement] = name
        for statement, name in dropped.items():
            if statement not in brought and step.imports.pop(statement, None) is None:
                step.dropped[statement] = name
        for line, weight in new_lines(old, new, work.path):
            if len(step.code) >= STEP_CODE:
                break
            if weight >= 2.0 and len(line) <= CODE_CHARS:
                step.code.setdefault(line, weight + (1.0 if _SALIENT.search(line) else 0.0))
        for line in purposes_in(old, new)[:PURPOSES]:
            step.code[line] = PURPOSE

    def read(self, path: str, text: str, whole: bool) -> None:
        """A file's text as a Read showed it (``whole``: not a part of it)."""
        if whole or path not in self.texts:
            self._keep(path, _LINE_NUMBER.sub("", text), whole)

    def _keep(self, path: str, text: str, whole: bool = True) -> None:
        self.texts.pop(path, None)
        self.whole.discard(path)
        if len(text) <= TEXT_CHARS:
            self.texts[path] = text
            if whole:
                self.whole.add(path)
            while len(self.texts) > TEXTS:
                self.whole.discard(gone := next(iter(self.texts)))
                del self.texts[gone]

    def _follow(self, path: str, tool: str, old: str, new: str) -> str:
        """The file's text after a change, and the definition the change is inside (the
        function an edit of its body changed; "" when not known)."""
        if tool == "Write":
            self._keep(path, new)
            return ""
        text = self.texts.get(path)
        at = text.find(old) if text is not None and old else -1
        if text is None or at < 0:
            return ""
        self.texts[path] = text[:at] + new + text[at + len(old):]
        start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
        line = text[start:end if end >= 0 else len(text)]
        return enclosing_definition(text[max(0, start - ABOVE_CHARS):start], _indent(line)) \
            if line.strip() else ""

    def _tests(self, work: FileWork, old: str, new: str) -> None:
        """The tests an edit added to a file, and those it took out."""
        gone, found = tests_in(old), tests_in(new)
        for name in gone:
            if name not in found:
                work.tests.pop(name, None)
        for name in found:
            if name not in gone:
                _push(work.tests, name, TESTS_PER_FILE)

    def check(self, command: str, passed: bool, result: str, position: int,
              detail: str) -> str:
        """A test or build run (``detail``: the telling line of a failure); its outcome's
        detail as shown (a passed run's counts)."""
        if not passed:
            shown = detail
        else:
            counts = [m.group(0).strip() for m in _COUNTS.finditer(result)]
            shown = ", ".join(dict.fromkeys(counts[-3:]))
        key = " ".join(command.split()[:CHECK_WORDS])
        previous = self.checks.get(key)
        check = Check(command, passed, shown, position)
        self.checks[key] = check
        # a failure, and the run that passed after it, are told under Errors and fixes
        if passed and previous is None:
            self._line(position, f"`{one_line(command, 80)}` passed"
                       + (f": {one_line(shown, 160)}" if shown else ""))
        return shown

    def commit(self, command: str, result: str, position: int) -> None:
        """A successful ``git commit``."""
        found = _HASH.search(result)
        lines = commit_message(command)
        message = lines[0] if lines else "(message not on the command line)"
        files = list(self.since_commit)
        label = found.group(2)[:7] if found else ""
        self.branch = found.group(1) if found else self.branch
        if label:
            self.hashes.add(label)
        self._merge_ended(f"committed in {label}" if label else "committed")
        # an issue tracker's task in progress (``spotter-4te.1``) names what the commit was for
        task = f" for {self.active}" if _TASK_ID.match(self.active) else ""
        for path in files:
            if path in self.files:
                self.files[path].commit = (label or "a commit") + task
        self.since_commit = {}
        self.commits += 1
        names = ", ".join(p.rsplit("/", 1)[-1] for p in files[-6:])
        more = f" and {len(files) - 6} more" if len(files) > 6 else ""
        self._line(position, f"Committed {label + ' ' if label else ''}\"{one_line(message, 120)}\""
                   + (f" ({names}{more})" if files else ""), kind="commit",
                   keys=(label,) if label else ())
        for line in lines[1:1 + BODY_LINES]:
            self._line(position, one_line(line, 200), detail=True)
        committed = [step for path in files if path in self.files
                     for step in self.files[path].steps.values()]
        for line in lines:  # the message says what the steps it covers did
            _attach(line, committed)

    def push(self, command: str, result: str, position: int) -> None:
        """A successful push or pull request."""
        title = _PR_TITLE.search(command)
        url = _URL.search(result)
        if "gh pr" in command:
            what = "Opened pull request" if "create" in command else "Merged pull request"
            text = what + (f" \"{one_line(title.group(1) or title.group(2), 100)}\"" if title else "")
            self._line(position, text + (f" {url.group(0)}" if url else ""))
        else:
            words = [w for w in command.split("&&")[-1].split() if not w.startswith("-")]
            target = " ".join(words[2:4]) if len(words) > 2 else ""
            # right after a commit (nothing else between), the commit's line says so
            commit = next((line for line in reversed(self.lines) if not line.detail), None)
            if commit is not None and commit.kind == "commit" and "pushed" not in commit.text:
                commit.tell((commit.own or commit.text) + ", then pushed"
                            + (f" to {target}" if target else ""))
            else:
                self._line(position, "Pushed" + (f" to {target}" if target else ""), kind="push")

    def git(self, command: str, result: str, position: int, failed: bool) -> None:
        """A git command other than a commit or a push (``failed``: it exited with an error):
        the branch its output names; a merge, pull or rebase as a line of work (a failed one
        when it stopped at conflicts), or the command that ends one (``--continue``)."""
        self.branch = branch_in(result) or self.branch
        ending = ending_of(command)
        if ending:
            if not failed:
                self._merge_ended(ending)
            return
        found = integration(command, result, self.branch)
        if found is None or failed and not found.conflicts:
            return
        line = WorkLine(position, self.active, found.text(), kind=found.verb)
        self.lines.append(line)
        self.merging = (line, found, position)

    def _merge_ended(self, how: str) -> None:
        """The latest merge's conflicts were resolved (``how``: "committed in X", or the
        ``--continue`` that went on) or given up (``--abort``, ``--quit``): its line says so,
        naming the conflicted files edited since."""
        if self.merging is None or not self.merging[1].open:
            return
        line, found, at = self.merging
        if how in ("abort", "quit"):
            found.ending = f"{found.verb} aborted"
        else:
            edited = [p.rsplit("/", 1)[-1] for p, w in self.files.items() if w.last > at
                      and any(p.endswith("/" + c) or p == c for c in found.conflicts)]
            then = f"{found.verb} continued" if how in ("continue", "skip") else how
            found.ending = "resolved" + (f" by editing {', '.join(edited[:4])}" if edited else "") \
                + f", {then}"
        line.tell(found.text())

    def tracker(self, command: str, result: str, position: int) -> bool:
        """An issue tracker's command (``bd close ID --reason ...``, ``gh issue close N``): the
        issue as a task, its state, and the reason as a piece of work. True when it was one."""
        match = _TRACKER.search(command)
        if match is None:
            return False
        verb, ident = match.group("verb"), match.group("id")
        if verb in ("show", "view"):
            shown = _SHOWN_TITLE.search(result.lstrip())
            if shown:
                self.titles[ident] = one_line(shown.group(1) or shown.group(2), 160)
                self.whys[ident] = purpose_of(result)
                self.plans.pop(ident, None)  # what the issue says is to be done
                self.plans[ident] = result[:PLAN_CHARS]
                while len(self.plans) > PLANS:
                    del self.plans[next(iter(self.plans))]
                if ident in self.tasks and not self.tasks[ident].detail:
                    self.tasks[ident].detail = self.titles[ident]
            return True
        status = "completed" if verb == "close" else _STATUS.get(
            (_FLAG_STATUS.search(command) or [None, ""])[1], "")
        if verb == "create":
            title = _TITLE.search(command)
            ident = (_CREATED.search(result) or [None, ident])[1]
            name = f"{ident}: {title.group(1) or title.group(2)}" if title else ident
            self.tasks.setdefault(ident, Task(name, "pending", position, position))
            return True
        task = self.tasks.get(ident)
        if task is None:
            task = self.tasks[ident] = Task(ident, status or "pending", position, position,
                                            self.titles.get(ident, ""))
        if status and status != task.status:
            task.status, task.changed = status, position
        if status == "in_progress":
            self.active = ident
        reason = _REASON.search(command)
        if status == "completed":
            self._line(position, f"Closed {ident}" + (
                f": {one_line(reason.group(1) or reason.group(2), 200)}" if reason else ""))
            if self.active == ident:
                self.active = ""
        return True

    def posted(self, command: str, position: int, result: str = "") -> None:
        """A ``gh`` command: the replies it posts to review comments count in the round of
        replies (:meth:`_replied`); a comment, a pull request's body (``--body``) says what was
        done; a listing of review comments names their authors."""
        replies = replies_in(command) if "gh" in command else []
        if not replies and not command.lstrip().startswith("gh "):
            return
        for pr, comment, body in replies:  # told under the round's line, not again by a step
            self._replied(pr, comment, body, position)
        if replies:
            return
        steps = [step for work in self.files.values() for step in work.steps.values()]
        if not _BODY.search(command):
            for ident, comment in review_comments(command, result).items():
                known = self.comments.pop(ident, None)
                self.comments[ident] = Comment(comment.author or (known.author if known else ""),
                                               comment.where or (known.where if known else ""),
                                               comment.point or (known.point if known else ""))
            while len(self.comments) > COMMENTS:
                del self.comments[next(iter(self.comments))]
        for match in _BODY.finditer(command):
            text = next(g for g in match.groups() if g is not None).replace('\\"', '"')
            heredoc = _HEREDOC.search(command, match.start())  # ``--body "$(cat <<'EOF' ...``
            if text.startswith("$(") and heredoc:  # whole: quotes inside it end the match
                text = heredoc.group(2)
            for line in report_lines(text)[:3]:
                self._line(position, line)
            for line in report_lines(text, _definitions(steps)):  # a pull request's test plan
                _attach(line, steps)

    def _replied(self, pr: str, comment: str, body: str, position: int) -> None:
        """A reply to a review comment: it counts in this round's line (one per pull request
        until the user's next message), and the comment's point and the reply's words are told
        under it (the most telling: :meth:`ReviewRound.points`); a later report line saying no
        more is left out."""
        if self.review is None or self.review[2].pr != pr:
            self.review = (WorkLine(position, self.active, "", kind="review"), [], ReviewRound(pr))
            self.lines.append(self.review[0])
        line, under, round_ = self.review
        round_.add(body, self.hashes, self.comments.get(comment))
        line.keys.append(comment)
        line.tell(round_.text())
        under[:] = self._under(line, under, [WorkLine(position, self.active, text, detail=True)
                                             for text in round_.points()])
        self.said.append(telling_words(round_.told[-1].text()))

    def ran(self, command: str, purpose: str) -> None:
        """A shell command that succeeded, with what the call said it was for (``description``:
        "List the new files with their sizes"), for the turn's report to name."""
        self.calls.append((command, purpose))

    def _under(self, head: WorkLine, old: list[WorkLine], new: list[WorkLine]) -> list[WorkLine]:
        """``new`` in place of ``old`` right under ``head`` (other lines may have come after
        it since); the oldest lines go when there is no room."""
        kept = [line for line in self.lines if line not in old]
        at = next((i + 1 for i, line in enumerate(kept) if line is head), len(kept))
        self.lines.clear()
        self.lines.extend(kept[:at] + new + kept[at:])
        return new

    def report(self, text: str, position: int) -> None:
        """The assistant's text at the end of a turn: its lines that say what was done, but
        those an earlier report already says (all their telling words, :func:`telling_words`).
        A line that restates a git action of its turn (:func:`_restated`) is told on that
        action's line, which comes down to the report's place: the record's facts (what was
        merged into which branch, how many files, the conflicts) with the assistant's words."""
        recent = [step for work in self.files.values() if work.last > self.reported
                  for step in work.steps.values()]
        actions = [line for line in self.lines if line.kind and line.position > self.reported]
        self.reported = position
        moved: list[WorkLine] = []
        for line in report_lines(text, _definitions(recent)):
            words = telling_words(line)
            if not any(words <= seen for seen in self.said):
                action = _restated(line, actions)
                if action is None:
                    self._line(position, _backed(line, self.calls))
                else:
                    action.reported.append(line)
                    action.tell(action.own or action.text)
                    if action not in moved and not self._under_lines(action):
                        self._to_end(action)
                        moved.append(action)
                self.said.append(words)
            _attach(line, recent)
        self.calls.clear()

    def _under_lines(self, head: WorkLine) -> bool:
        """Whether lines are told under ``head`` (a commit's body, a round's comments)."""
        lines = iter(self.lines)
        next(line for line in lines if line is head)
        return next(lines, head).detail

    def _to_end(self, head: WorkLine) -> None:
        """``head`` moved last."""
        self.lines.remove(head)
        self.lines.append(head)

    # --- reading back ------------------------------------------------------------------------------

    def file_lines(self, path: str, limit: int, rank: Callable[[Iterable[str], int], list[str]],
                   names: int = STEP_NAMES, any_code: bool = True) -> list[str]:
        """What the changes to ``path`` did, one line per step: the ``limit`` steps that did
        the most, in order, each with what the assistant set out to do, the names it added
        (definitions first), changed and removed (``names`` at most of each, the most central
        by ``rank``) and its most telling short line of code (see :func:`_step_line`); then
        the tests the changes added (how many, and the newest names)."""
        work = self.files.get(path)
        if work is None or limit <= 0:
            return []
        steps = [s for s in work.steps.values() if s.intent or s.added or s.removed or s.changed]
        chosen = sorted(steps, key=_step_weight, reverse=True)[:limit]
        shown: set[str] = set()  # a line of code is shown once
        lines = [_step_line(step, rank, names, shown, any_code) for step in steps if step in chosen]
        if work.tests:  # how many, and those the steps shown do not name
            said = " ".join(lines)
            unnamed = [t for t in work.tests if not _named(t, said)][-2 * names:]
            lines.append(one_line(f"tests added: {len(work.tests)}"
                                + (" (" + ", ".join(unnamed) + ")" if unnamed else ""), STEP_CHARS))
        return lines


def purpose_of(shown: str) -> str:
    """What an issue is for: the first sentence of the first paragraph of prose an issue
    tracker's view of it prints after its title (its description's opening; headings, lists
    and ``Key: value`` lines passed over), '' if there is none."""
    for line in shown.splitlines()[1:]:
        text = line.strip()
        words = text.split()
        if len(words) >= 8 and not text.startswith(_LEAD) and not words[0].endswith(":"):
            return one_line(re.split(r"(?<=[.!?])\s+", text)[0], WHY_CHARS)
    return ""


# the words a report uses for a git action of its turn (a pull request is another matter)
_RESTATING = {
    "merge": re.compile(r"\bmerg(?:e|ed|es|ing)\b(?!\s+(?:the\s+|a\s+)?(?:pull request|PR)\b)",
                        re.IGNORECASE),
    "pull": re.compile(r"\bpull(?:ed|s|ing)?\b(?!\s+requests?\b)", re.IGNORECASE),
    "rebase": re.compile(r"\brebas(?:e|ed|es|ing)\b", re.IGNORECASE),
    "push": re.compile(r"\bpush(?:ed|es|ing)?\b", re.IGNORECASE),
    "review": re.compile(r"\brepl(?:y|ies|ied|ying)\b", re.IGNORECASE),
}


def _restated(line: str, actions: list[WorkLine]) -> WorkLine | None:
    """The git action among ``actions`` (those of the report's turn, oldest first) that a
    report line restates: the commit whose hash it names, or the round of replies to a review
    comment it names by its id; else the action its first word for one names ("Merged from
    main" a merge; the newest of that kind); else None."""
    best, at = None, len(line)
    for action in actions:
        if any(re.search(rf"\b{key}" + (r"\b" if key.isdigit() else ""), line)
               for key in action.keys if key):  # a hash may be given whole
            where: int | None = -1
        elif action.kind in _RESTATING:
            verb = _RESTATING[action.kind].search(line)
            where = verb.start() if verb else None
        else:
            where = None
        if where is not None and where <= at:
            best, at = action, where
    return best


# past tenses that are not the verb with -ed or -d
_IRREGULAR = {"ran": "run", "wrote": "write", "built": "build", "found": "find", "made": "make",
              "got": "get", "read": "read", "set": "set", "put": "put", "began": "begin",
              "did": "do", "gave": "give", "saw": "see", "took": "take", "kept": "keep"}


def _backed(line: str, calls: Iterable[tuple[str, str]]) -> str:
    """A report line with the shell command it restates (the newest of the turn whose stated
    purpose opens with the line's verb, "Listed the files" and "List the new files ...", and
    shares another word with it): ``line (ran `ls -lh *.txt`: List the new files with their
    sizes)``, the purpose told only when it says what neither the line nor the command does."""
    verb = re.search(r"[A-Za-z]+", line)
    if verb is None:
        return line
    said = telling_words(line)
    for command, purpose in reversed(list(calls)):
        first, _, rest = purpose.partition(" ")
        if _past_of(verb.group(0).lower(), first.lower()) and telling_words(rest) & said:
            told = one_line(command.replace("`", "'"), CALL_CHARS)  # the span stays one
            new = telling_words(rest) - said - telling_words(command)
            return f"{line} (ran `{told}`" + (f": {purpose}" if new else "") + ")"
    return line


def _past_of(past: str, verb: str) -> bool:
    """Whether ``past`` is ``verb``'s past tense (listed: list, tried: try, stopped: stop)."""
    if len(verb) < 2 or not verb.isalpha():
        return False
    return _IRREGULAR.get(past) == verb or past in (
        verb + "ed", verb + "d", verb + verb[-1] + "ed",
        verb[:-1] + "ied" if verb.endswith("y") else "")


def _definitions(steps: list[Step]) -> set[str]:
    return {name for step in steps for name in step.defined}


def _attach(line: str, steps: list[Step]) -> None:
    """A report line goes with the step whose names it names most (its definitions and those
    its intent, or that of a change that reworked it, names count double; those it tried and
    took out count too): the assistant's words after the work, or a commit's, say what it did
    better than those before."""
    def named(step: Step) -> int:
        aimed = [*identifiers_in(step.intent), *step.aims]  # what the assistant said it was about
        return sum((2 if n in step.defined or n in step.changed or n in aimed else 1)
                   for n in dict.fromkeys((*aimed, *step.added, *step.changed, *step.removed,
                                           *step.tried))
                   if _named(n, line))
    best = max(steps, key=named, default=None)
    if best is None or named(best) < 2 or len(best.reports) >= STEP_REPORTS:
        return
    words = telling_words(line)
    if 2 * len(words - set().union(*map(telling_words, best.reports))) > len(words):
        best.reports.append(line)  # "Added the nil check", "Fixed in 1a2b3c4: nil check": once


def _named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) is not None


def _step_weight(step: Step) -> int:
    """How much a step did: definitions most, then other names; a stated intent counts."""
    return 3 * len(step.defined) + len(step.added) + 2 * len(step.changed) + len(step.removed) \
        + (4 if step.intent else 0) + 4 * len(step.reports)


def _step_line(step: Step, rank: Callable[[Iterable[str], int], list[str]], count: int,
               shown: set[str], any_code: bool) -> str:
    """``Add the X handler: added f, g; changed h; removed k; `code``` on one line: what it
    did as the report after it says (else what the assistant set out to do), the names it
    added, changed and removed (:func:`_name_parts`) and its telling line of code: the comment
    over a definition it brought in, a config entry, a dependency, a route or an option, or
    with ``any_code`` a line naming something not said already."""
    what = "; ".join(step.reports) or step.intent
    parts = _name_parts(step, rank, count, what)
    said = " ".join([what, *parts])
    code = [ln for ln, weight in sorted(step.code.items(), key=lambda kv: -kv[1])
            if ln not in shown and not any(_named(d, said) for d in definitions_in(ln))
            and (_SALIENT.search(ln) is not None or weight >= PURPOSE
                 or any_code and not all(_named(n, said) for n in names_of(ln, "")))]
    if code:
        parts.append(f"`{code[0]}`")
        shown.add(code[0])
    if not what:  # edits the assistant said nothing about
        text = "; ".join(part.replace(" ", ": ", 1) if not part.startswith("`") else part
                         for part in parts)
    else:  # the names a reader cannot guess before the end of a long intent
        what = _shortened(what, max(STEP_CHARS - len("; ".join(parts)) - 2, INTENT_SHORT))
        what = _at_word(what)
        text = what.rstrip(" .:;") + ": " + "; ".join(parts) if parts else what
    return one_line(text, STEP_CHARS)


def _name_parts(step: Step, rank: Callable[[Iterable[str], int], list[str]], count: int,
                what: str) -> list[str]:
    """``added f, g``, ``changed h``, ``removed k``: the definitions the step brought in (all
    when few: what the edit was, before what it merely used), then its declarations
    (``attr :rows``, ``@max_rows``) when all of both are few, other names to fill up to
    ``count``, the import statements it added or took out, the definitions it changed or
    changed code inside and the names it removed (the most central); those ``what`` names
    left out."""
    few = len(step.defined) <= STEP_DEFINITIONS
    defs = set(step.defined if few else rank(step.defined, max(count, STEP_DEFINITIONS // 2)))
    added = [n for n in step.defined if n in defs]
    if len(added) + len(step.declared) <= STEP_DEFINITIONS:  # then what it declared
        added += [n for n in step.declared if n not in defs]
    imported = set(step.imports.values())  # told by their import statements
    added += rank((n for n in step.added if n not in step.defined and n not in imported),
                  max(0, count - len(added)))
    removed = rank((n for n in step.removed if n not in step.dropped.values()), max(2, count // 2))
    lists = (("added", [*added, *list(step.imports)[:count]]),
             ("changed", rank(step.changed, max(2, count // 2))),
             ("removed", [*list(step.dropped)[:count], *removed]))
    parts = []
    for label, names in lists:
        kept = [n for n in _rank(dict.fromkeys(names), len(names)) if not _named(n, what)]
        if kept:
            parts.append(f"{label} " + ", ".join(kept))
    return parts


def _push(names: dict[str, None], name: str, limit: int) -> None:
    names.pop(name, None)
    names[name] = None
    if len(names) > limit:
        del names[next(iter(names))]


def _squeezed(text: str) -> set[str]:
    """The lines of ``text`` that say something, spacing squeezed."""
    return {line for line in (" ".join(raw.split()) for raw in text.splitlines())
            if len(line) >= 6 and not _TRIVIAL.match(line)}


def _wrote(step: Step, old: str, new: str, reworked: bool) -> None:
    """What a change wrote, kept with its step (up to :data:`WROTE_CHARS`, the newest) to know
    a later change that reworks it; a change that reworked it (``reworked``) rewrites it in
    place, and the step's lines of code it took out go."""
    if reworked:
        at = next(i for i, text in enumerate(step.wrote) if old in text)
        step.wrote[at] = step.wrote[at].replace(old, new, 1)
        kept, gone = " ".join(new.split()), " ".join(old.split())
        step.code = {ln: w for ln, w in step.code.items() if ln not in gone or ln in kept}
    elif len(new) <= WROTE_CHARS:
        step.wrote.append(new)
    while sum(map(len, step.wrote)) > WROTE_CHARS:
        del step.wrote[0]
    if step.wrote and len(step.fresh) < WROTE_CHARS // 10:
        step.fresh |= _squeezed(new) - _squeezed(old)


def _at_word(what: str) -> str:
    """What a step did, cut short (``...``, :func:`one_line`): ending after its last whole
    word, marked."""
    return _marked(what[:-3]) if what.endswith("...") and " " in what else what


def _marked(text: str, floor: int = 0) -> str:
    """``text`` cut after its last whole word (not before ``floor``), marked as cut."""
    return text[:max(text.rfind(" "), floor)].rstrip(" ,;:") + " \u2026"


def _shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters: after its last whole clause (``; ``) when that
    keeps half of it, else after a word, marked."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if head.rfind("; ") >= limit // 2:
        return head[:head.rfind("; ")]
    return _marked(head, limit // 2)
