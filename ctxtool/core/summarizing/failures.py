"""The failures of a session and what resolved them, for the offline summary's Errors and fixes.

A failure is a tool call whose result is an error, or a test or build run whose output says it
failed though the command exited 0 (piped into ``head`` or ``tail``). Left out as noise: the
user's refusal of a call (the user's words are listed as a message), a command that exited 1
with no output (a ``grep`` or ``test`` that found nothing), and a call the tool refused before
running it (an edit whose text was not found, a file not read first: the agent retries at once;
they are only counted).

Each failure opens an *episode*, which gathers as the session goes on: the error's gist (the
exception or compiler message, not a stack frame; the failing tests and how many failed), the
assistant's first words after it when they speak of it, else its first line further on that
says what went wrong with what failed (its stated reason: :func:`reason_of`; or else the
diagnosis it stated before its first change: :func:`diagnosis`), the changes made after it
(each step's intent and the names the work log's step gained), and the run of the same program
that passed after them. A failure of the same program with the same gist while its episode is
still open is counted in it, not listed again. Episodes are kept in order and in bounded memory
(the newest :data:`EPISODES`).

A check's finding can also reach the assistant where the transcript does not keep it (a hook's
feedback on an edit: the compiler's or linter's words are gone). When the assistant then names
such a finding itself (:func:`ctxtool.core.summarizing.findings.stated_error`) and no failure
seen is what it is speaking of, its words open an episode like a failure: a *stated* one.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from ctxtool.core.summarizing.findings import (check_words, names_failed, restates, says_wrong,
                                                speaks_of, stated_cause, stated_error)
from ctxtool.core.summarizing.names import COMMENT_LINE, test_names_in
from ctxtool.core.summarizing.shell import commands_in, without_redirections
from ctxtool.core.summarizing.text import one_line
from ctxtool.core.summarizing.tools import ToolCall, error_gist

EPISODES = 60  # failure episodes kept (the newest)
OPEN = 12  # episodes still waiting for a fix, tracked (the newest)
FIX_STEPS = 3  # changes kept per episode (the first after the failure)
FIX_NAMES = 6  # names those changes added, kept per episode
FAILED_TESTS = 3
GIST_CHARS = 160
REASON_CHARS = 160

# a tool that refused the call before running it (Claude Code wraps that in tool_use_error)
_REFUSED = re.compile(r"<tool_use_error>|\A\s*(?:File does not exist|File has not been read yet|"
                      r"String to replace not found|InputValidationError)", re.IGNORECASE)
_REJECTED = re.compile(r"doesn't want to proceed|tool use was rejected|user denied|"
                       r"the user said:|reason for the rejection", re.IGNORECASE)
_BARE_EXIT = re.compile(r"\A\s*Exit code 1\s*\Z")
# the lines that name an error, most telling first: an exception or compiler message, a
# location-prefixed diagnostic, a failing test; the others only when none of those is there
_NAMED = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")
_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|\*\* \(\w+\)|\bundefined\b|"
                        r"^error(?:\[\w+\])?:|^panic:|cannot find|not defined|no such|"
                        r"command not found|no function clause", re.IGNORECASE | re.MULTILINE)
# the body of Elixir's FunctionClauseError, its header cut off (``mix test | tail``)
_CLAUSE_ARGUMENTS = re.compile(r"^The following arguments were given to (\S+?):$")
# a task runner's prefix (``[lint:go] ``), a linter's box drawing and arrows, spacing
_DECORATION = re.compile(r"^\s*\[[\w:./-]+\]\s+|^[^\w\[(*/.~\-]+|\s+$")
_LOCATION = re.compile(r"^(?:\S*/)?([\w.-]+\.\w+:\d+(?::\d+)?)(?::\s*|\s+|$)(.*)$")
# a stack frame: where a call came from, not what went wrong (Elixir's ``(app 0.1.0) lib/x.ex:18:
# M.f/3`` and ``test/x_test.exs:202: (test)``, a location with only a function after it)
_FRAME = re.compile(r"^\([\w-]+ [\w.+-]+\)\s|^\S+:\d+(?::\d+)?:?\s+(?:[\w.!?]+/\d+|\(\w+\)|"
                    r"in [\w.<>]+|\+0x[0-9a-f]+)\s*$")
# a test file (Go's x_test.go, Python's test_x.py, Elixir's x_test.exs, x.test.ts, x_spec.rb)
_TEST_FILE = re.compile(r"^(?:[\w.-]*_test\.\w+|test_[\w.-]+\.py|[\w.-]+\.(?:test|spec)\.\w+|"
                        r"[\w.-]+_spec\.rb):\d+")
# credo's priority mark (``[F] →``) and the function a finding is in (``#(App.Hooks.tool_call)``)
_SEVERITY = re.compile(r"^\[[A-Z]\]\s*\W?\s+")
_IN_FUNCTION = re.compile(r"\.?\s*#\((?:[\w.]+\.)?([\w?!]+)\)")
_TEST_FAILED = re.compile(r"^(?:--- )?FAIL(?:ED)?\b|^\S+ \.\.\. (?:FAIL|ERROR)\b|\b[1-9]\d* "
                          r"(?:failed|failures?)\b")
# words of a diagnostic that says something is wrong (a log line in a test's output says none)
_FAULT = re.compile(r"error|fail|undefined|cannot|can't|expect|want|got\b|\bnot\b|panic|invalid|"
                    r"missing|unexpected|mismatch|should|must|no such|denied|unused|unknown|wrong",
                    re.IGNORECASE)
# ("Progress!": a word exclaimed alone says nothing of the failure)
_FILLER = re.compile(r"^(?:(?:(?:good|great|perfect|excellent|ok(?:ay)?|now|so|right|hmm|ah|oh|first|"
                     r"next|then)\b|\w+(?=!))"
                     r"[!,.:]*\s*)+", re.IGNORECASE)


def is_noise(call: ToolCall, text: str) -> bool:
    """A failed result that is no failure of the work: the user's refusal, or an empty exit 1."""
    return _REJECTED.search(text[:400]) is not None or _BARE_EXIT.match(text) is not None


def is_refused(text: str) -> bool:
    """The tool refused the call before running it (the agent's own slip, retried at once)."""
    return _REFUSED.search(text[:200]) is not None


def failure_gist(text: str, limit: int = GIST_CHARS) -> str:
    """The error's gist: the first named exception (``KeyError: 'json'``), else the first two
    located diagnostics (``x.go:3:5: undefined: y``, directory left out), else the first other
    error line, else the last failing test line, else
    :func:`ctxtool.core.summarizing.tools.error_gist`'s line."""
    if text.count("\\n") > text.count("\n"):  # a hook's output as a JSON string: its lines
        text = text.replace("\\n", "\n")
    lines = [_DECORATION.sub("", ln) for ln in re.sub(r"</?tool_use_error>", "", text).splitlines()]
    lines = [_CLAUSE_ARGUMENTS.sub(r"no function clause matching in \1", ln) for ln in lines
             if ln and not ln.startswith("Exit code")]
    named = [i for i, line in enumerate(lines) if _NAMED.search(line)]
    if named:  # an exception's name says more than where it was raised
        return one_line(_exception(lines, named[0]), limit)
    found = [d for d in (_diagnostic(lines, i) for i in range(len(lines))) if d]
    tests = [ln for ln in lines if _TEST_FAILED.search(ln)]
    # a test's own lines say what it expected; a helper's lines in its output are its log, and
    # in a failed test run's output a line that names no fault is log too
    asserted = [d for d in found if _TEST_FILE.match(d)]
    found = asserted or [d for d in found if not tests or _FAULT.search(d.split(": ", 1)[-1])]
    if found:  # the first two diagnostics: the cause is usually the first
        return one_line("; ".join(found[:2]), limit)
    other = [i for i, line in enumerate(lines) if _EXCEPTION.search(line)]
    if other:
        return one_line(_exception(lines, other[0]), limit)
    if tests:  # the last that says more than a bare "FAIL"
        return one_line(next((ln for ln in reversed(tests) if len(ln.split()) > 1), tests[-1]),
                        limit)
    gist = error_gist("\n".join(lines), limit)
    after = lines[lines.index(gist) + 1:] if gist.endswith(":") and gist in lines else []
    return one_line(f"{gist} {after[0]}", limit) if after else gist  # a header: what it heads


def _exception(lines: list[str], index: int) -> str:
    """The exception on line ``index``, and the line after it when its message goes on."""
    line = lines[index]
    if line.startswith("** ("):  # Elixir's ``** (BadMapError) expected a map``
        line = line[4:].replace(") ", ": ", 1)
    if line.endswith(":") and index + 1 < len(lines):  # ``got:`` and what it got
        line += " " + lines[index + 1]
    return line


def _diagnostic(lines: list[str], index: int) -> str:
    """``x.go:3:5: message`` when line ``index`` is a located diagnostic (its directory left out,
    its message beside it, or on the line before or after), else ''."""
    located = _LOCATION.match(lines[index])
    if not located or _FRAME.match(lines[index]):
        return ""
    message = located.group(2)
    before = lines[index - 1] if index and not _FRAME.match(lines[index - 1]) else ""
    after = lines[index + 1] if index + 1 < len(lines) else ""
    if len(message.split()) < 4:
        if len(before.split()) >= 4 and not _LOCATION.match(before):
            message = f"{before} {message}"
        elif after and not _LOCATION.match(after):  # not the next diagnostic
            message = f"{message} {after}"
    message = _IN_FUNCTION.sub(r" in `\1`", _SEVERITY.sub("", message))
    return f"{located.group(1)}: {message}"


_FAILED_COUNT = re.compile(r"\b(\d+) (?:failed|failures?)\b")
_TEST_COUNT = re.compile(r"\b(\d+) tests?\b")


def failed_count(text: str) -> str:
    """How many tests a run's output says failed, of how many (``11 of 297 tests failed``;
    the last counts it prints), else ''."""
    failed = _FAILED_COUNT.findall(text)
    if not failed or failed[-1] == "0":
        return ""
    total = _TEST_COUNT.findall(text)
    return f"{failed[-1]} of {total[-1]} tests failed" if total else \
        f"{failed[-1]} test{'s' * (failed[-1] != '1')} failed"


_PASSED_LINE = re.compile(r"\bPASS(?:ED)?\b")  # a line of a run's output naming a test that passed


def failed_tests(text: str) -> list[str]:
    """The tests a run's output says failed (not those it says passed), the first
    :data:`FAILED_TESTS`."""
    failing = "\n".join(line for line in text.splitlines() if not _PASSED_LINE.search(line))
    return list(dict.fromkeys(test_names_in(failing)))[:FAILED_TESTS]


def program_of(command: str) -> str:
    """What a shell command runs, as two words: the test, build or commit part when there is
    one (``cd x && git add -A && git commit ...`` gives ``git commit``), else its first part."""
    parts = commands_in(command)
    words = [[w for w in p.split() if "=" not in w and w != "sudo" and not w.startswith("-")]
             for p in parts]
    words = [w for w in words if w and w[0] != "cd"]
    for part in words:
        if part[:2] == ["git", "commit"] or any(t in part[:3] for t in ("test", "build", "check",
                                                                         "lint", "compile")):
            return _head(part)
    return _head(words[0]) if words else ""


def _head(words: list[str]) -> str:
    """A command's first two words, three for a runner (``npm run lint``, ``mise run test``)."""
    return " ".join(words[:3] if words[1:2] in (["run"], ["exec"]) else words[:2])


_KINDS = (("Test failure", re.compile(r"\btest|^(?:pytest|jest|vitest|rspec|tox|nox|phpunit|ctest)\b|"
                                     r"\bspec\b")),
          ("Lint error", re.compile(r"lint|credo|eslint|ruff|mypy|clippy|\bvet\b|dialyzer|tsc\b|"
                                    r"check|fmt|format|prettier|black|flake8|shellcheck")),
          ("Build error", re.compile(r"build|compile|\bmake\b|cargo|mvn|gradle")),
          ("Commit failed", re.compile(r"^git commit")))


def kind_of(cause: str) -> str:
    """What kind of failure a cause gives: a test failure, a lint or build error, a commit
    a hook refused, or a command or tool call that failed."""
    for label, pattern in _KINDS:
        if pattern.search(cause):
            return label
    return "Command failed" if " " not in cause or cause.split()[0] not in _TOOLS else \
        f"{cause.split()[0]} failed"


def stated_kind(gist: str) -> str:
    """The kind of a finding the assistant named: a test, lint or build one, else a warning."""
    kind = kind_of(gist)
    return kind if kind in _CODE else "Warning" if re.search(r"unused|warning", gist) else "Error"


_CODE = ("Test failure", "Lint error", "Build error", "Commit failed")
_TOOLS = ("Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Grep", "Glob", "WebFetch",
          "WebSearch", "Task", "Agent")


def what_ran(call: ToolCall) -> str:
    """A call as the cause of a failure: the program it ran, or the tool and its file."""
    data = call.input if isinstance(call.input, dict) else {}
    if call.name == "Bash":
        return program_of(str(data.get("command") or "")) or "Bash"
    target = call.target.rsplit("/", 1)[-1]
    return f"{call.name} {target}".strip()


TOLD_LINES = 6  # an edit that changed more lines than this is told by its new lines, not its diff
TOLD_PARTS = 2  # the moves and removals told of a small edit
TOLD_CHARS = 40  # each line of code in them, at most
DIFF_LINES = 200  # an edit longer than this on both sides is not compared


def change_told(pairs: list[tuple[str, str]]) -> str:
    """What a small edit did that its new lines do not show: a line it moved (``moved `*Alias`
    before `Content []byte` ``), a line it took out (``removed `return "", false` ``), a value
    it changed on every line it rewrote (``6 -> 7 in a comment, `if count != 7 {` ``); '' for
    an edit that only added or rewrote lines otherwise, or changed many (its new lines tell
    it)."""
    told: list[str] = []
    for old, new in pairs:
        before, after = _code_lines(old), _code_lines(new)
        if min(len(before), len(after)) > DIFF_LINES:
            continue  # too long to compare (a small change comes as a small edit)
        ops = SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
        gone = [before[i] for tag, i1, i2, _, _ in ops if tag in ("delete", "replace")
                for i in range(i1, i2)]
        came = [after[j] for tag, _, _, j1, j2 in ops if tag in ("insert", "replace")
                for j in range(j1, j2)]
        if len(gone) + len(came) > TOLD_LINES:
            continue
        moved = [line for line in gone if line in came and _says(line)]
        told.extend(_moved(line, after) for line in moved)
        if not moved:
            told.append(_substituted(gone, came))
        if not came:  # lines only taken out (a rewritten line is told by what it became)
            told.extend(f"removed `{_snip(line)}`" for line in gone if _says(line))
    return "; ".join(t for t in told[:TOLD_PARTS] if t)


def _substituted(gone: list[str], came: list[str]) -> str:
    """``6 -> 7 in a comment, `if count != 7 {` ``: the one word or value a small edit changed
    on each of the two or more lines it rewrote (the same on every one), else ''."""
    if len(gone) != len(came) or len(came) < 2:
        return ""
    common: set[tuple[str, str]] | None = None
    for old, new in zip(gone, came):
        a, b = _TOKEN.findall(old), _TOKEN.findall(new)
        swaps = {(a[i1], b[j1]) for tag, i1, i2, j1, j2
                 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
                 if tag == "replace" and i2 - i1 == 1 and j2 - j1 == 1}
        common = swaps if common is None else common & swaps
    if not common:
        return ""
    was, now = min(common)
    where = ("a comment" if COMMENT_LINE.match(line) else f"`{_snip(line)}`" for line in came)
    return f"{was} -> {now} in " + ", ".join(dict.fromkeys(where))


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _code_lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _says(line: str) -> bool:
    """A line of code that says something (not a brace, ``end`` or a blank comment)."""
    return len(re.findall(r"\w", line)) >= 3 and line not in ("end", "else", "done", "fi")


def _moved(line: str, after: list[str]) -> str:
    """``moved `x` before `y` ``: the line now after it, else the one now before it."""
    at = after.index(line)
    following = next((ln for ln in after[at + 1:] if _says(ln)), "")
    if following:
        return f"moved `{_snip(line)}` before `{_snip(following)}`"
    preceding = next((ln for ln in reversed(after[:at]) if _says(ln)), "")
    return f"moved `{_snip(line)}` after `{_snip(preceding)}`" if preceding else ""


def _snip(line: str) -> str:
    """A line of code cut at a space within TOLD_CHARS (its first words name it)."""
    if len(line) <= TOLD_CHARS:
        return line
    cut = line.rfind(" ", 0, TOLD_CHARS - 3)
    return line[:cut if cut > 8 else TOLD_CHARS - 3].rstrip() + "..."


@dataclass
class Episode:
    """One failure (or several of one cause) and what followed it."""

    call: ToolCall | None  # the first failed call (None: a stated one)
    cause: str  # what ran (:func:`what_ran`)
    gist: str
    tests: list[str]
    position: int
    count: int = 1
    reason: str = ""  # the assistant's first words after it
    steps: dict[str, None] = field(default_factory=dict)  # the changes after it: "file: intent"
    names: dict[str, None] = field(default_factory=dict)  # names they added
    defined: set[str] = field(default_factory=set)  # those they defined (a new function...)
    code: str = ""  # the telling line of code the first change wrote
    told: str = ""  # what the first change did, when small (:func:`change_told`)
    failed: str = ""  # how many tests failed ("11 of 297 tests failed")
    checks: str = ""  # the linter checks its output names, in plain words (:func:`check_words`)
    code_failure: bool = True  # a test, lint, build or commit check: a change can fix it
    retry: ToolCall | None = None  # the next run of its cause when no change came before it
    passed: str = ""  # the run that passed after it
    closed: bool = False


class FailureLog:
    """See the module docstring; fed by :class:`ctxtool.core.summarizing.facts.Facts`."""

    def __init__(self) -> None:
        self.episodes: deque[Episode] = deque(maxlen=EPISODES)
        self.open: list[Episode] = []  # those still waiting for a fix (the newest OPEN)
        self.count = 0  # failures seen, noise left out
        self.refused: Counter[str] = Counter()  # calls a tool refused, by tool
        self.unsaid: list[Episode] = []  # failed since the assistant's last words
        self.said_at = -1  # the position of its last words

    def failed(self, call: ToolCall, text: str, position: int) -> None:
        """A failed call or run (``text``: its result)."""
        if is_noise(call, text):
            return
        if call.is_error and is_refused(text):
            self.refused[call.name] += 1
            return
        self.count += 1
        cause, gist = what_ran(call), failure_gist(text)
        for episode in list(self.open):
            if episode.cause == cause and episode.steps and not _same_gist(episode.gist, gist):
                self._close(episode)  # its fix got past it: this is another error
        for episode in list(self.episodes)[-OPEN:]:
            if episode.cause == cause and _same_gist(episode.gist, gist):
                episode.count += 1  # the same error again, after a fix or not
                episode.position = position
                if episode.closed:
                    episode.closed, episode.passed = False, ""
                    self.open = self.open[-(OPEN - 1):] + [episode]
                self.unsaid.append(episode)
                return
        tests = failed_tests(text)
        kind = kind_of(cause)
        episode = Episode(call, cause, gist, tests, position, code_failure=kind in _CODE,
                          failed=failed_count(text) if kind == "Test failure" else "",
                          checks=check_words(text))
        self.episodes.append(episode)
        self.open = self.open[-(OPEN - 1):] + [episode]
        self.unsaid.append(episode)

    def said(self, text: str, position: int) -> None:
        """The assistant's text: the stated reason of the failures since its last words that
        have none yet; words about no failure seen may name one (:meth:`thought`)."""
        for episode in self.unsaid:
            episode.reason = episode.reason or reason_of(text, f"{episode.cause} {episode.gist}")
        about, self.unsaid, self.said_at = bool(self.unsaid), [], position
        if not about:
            self.thought(text, position)

    def thought(self, text: str, position: int) -> None:
        """The assistant's words (text or thinking): a check's finding they name opens a stated
        episode, unless they are about a failure seen or one still waiting for a change. It has
        no reason: its words are its gist, and the words after it are about its fix."""
        if self.unsaid or any(e.code_failure and not e.steps for e in self.open):
            return
        gist = stated_error(text)
        if not gist or any(speaks_of(gist, e.gist) for e in list(self.episodes)[-OPEN:]):
            return  # a failure listed already
        cause = stated_cause(text, gist)  # "the compile error": the words before say what it is
        self.count += 1
        episode = Episode(None, "", f"{gist}: {cause}" if cause else gist, [], position)
        self.episodes.append(episode)
        self.open = self.open[-(OPEN - 1):] + [episode]

    def changed(self, path: str, intent: str, names: list[str], code: str = "",
                defined: tuple[str, ...] = (), told: str = "") -> None:
        """A successful edit or write of ``path`` for ``intent``, adding ``names`` (``code``:
        its telling new line; ``defined``: the definitions among them; ``told``: what it did
        when it was small, :func:`change_told`)."""
        self._step(path.rsplit("/", 1)[-1], intent, names, code, defined, told)

    def _step(self, name: str, intent: str, names: list[str], code: str,
              defined: tuple[str, ...] = (), told: str = "") -> None:
        """A change (``name``: its file or command) for the failure being worked on."""
        self.unsaid = []  # words after a change are about the change
        # a change is for the latest failure a change can fix (the one being worked on)
        episode = max((e for e in self.open if e.code_failure), key=lambda e: e.position,
                      default=None)
        if episode is None or episode.call is None and episode.steps:
            return  # a stated finding is fixed by the change after it
        if episode.call is None and (self.said_at < episode.position or
                                     restates(intent, episode.gist)):
            intent = ""  # words from before the finding are not about its fix, nor the finding
        if len(episode.steps) < FIX_STEPS and not any(s.split(":")[0] == name
                                                      for s in episode.steps):
            episode.steps[name + (f": {intent}" if intent else "")] = None
        if not episode.code and not episode.told:
            episode.code, episode.told = code, told
        for added in names:
            if len(episode.names) < FIX_NAMES:
                episode.names[added] = None
        episode.defined.update(n for n in defined if n in episode.names)

    def ran(self, call: ToolCall, check: bool, detail: str) -> None:
        """A call that succeeded; ``check``: a test or build run that passed (``detail``: its
        counts). It closes the episodes of its cause, and, a test or build, those with a fix."""
        if not self.open or call.name in _BOOKKEEPING:
            return
        cause = what_ran(call)
        rewrote = _rewrites(call)
        if rewrote:  # a formatter rewrote the code: a change
            self._step(f"`{one_line(rewrote, 60)}`", "", [], "")
        for episode in list(self.open):
            same = _alike(episode.cause, cause)
            if same and not episode.steps and episode.retry is None:
                episode.retry = call
            if same or check and episode.steps:
                verb = "passed" if check else "succeeded"
                ran = one_line(_command(call), 60)
                ran = cause if check else ran  # a test or build run: its program says it
                episode.passed = f"`{ran}` {verb}" + (
                    f" ({one_line(detail, 60)})" if detail else "")
                self._close(episode)

    @property
    def wants_changes(self) -> bool:
        """Some failure still takes in the changes that follow it."""
        return any(e.code_failure and (len(e.steps) < FIX_STEPS or len(e.names) < FIX_NAMES)
                   for e in self.open)

    def user(self) -> None:
        """The user spoke: a failure nothing was changed for is left as it stands (what the
        session does next is for the user's words, not a fix)."""
        self.open = [e for e in self.open if e.steps]
        self.unsaid = []

    def _close(self, episode: Episode) -> None:
        episode.closed = True
        self.open.remove(episode)


# a formatter or linter run that rewrites the files it checks
_FORMATTER = re.compile(r"^(?:\w+=\S*\s+)*(?:gofmt\b.*\s-w\b|go fmt|goimports\b.*\s-w\b|cargo fmt|"
                        r"mix format(?!.*--check)|black\b(?!.*--check)|ruff format(?!.*--check)|"
                        r"(?!git\b)\S+.*\s--fix\b|prettier\b.*\s--write\b|"
                        r"(?:npm|pnpm|yarn|bun|mise|just|task|make)(?: run)? (?:fmt|format)\b)")


def _rewrites(call: ToolCall) -> str:
    """The formatter command a shell call ran (``gofmt -w x.go``), else ''."""
    data = call.input if isinstance(call.input, dict) else {}
    if call.name != "Bash":
        return ""
    parts = [without_redirections(p) for p in commands_in(str(data.get("command") or ""))]
    return next((p for p in parts if _FORMATTER.match(p)), "")


_BOOKKEEPING = ("TodoWrite", "TaskCreate", "TaskUpdate", "TaskList")


def reason_of(text: str, failure: str = "") -> str:
    """What the assistant made of a failure: the first sentences of its words after it, filler
    ("Good!", "Now") and what it goes on to do ("Let me ...": the fix says it) left out. When
    they speak of neither what failed (``failure``: the command and the error) nor of anything
    going wrong ("I ran the three commands:"), the first sentence further on that speaks of
    both ("- Ran the script (failed because `python` isn't installed)"), else ''."""
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    said = _reason_sentences(" ".join(_bare(ln) for ln in (paragraphs or [""])[0].splitlines()
                                      if not ln.strip().startswith("```")))[:2]
    if failure and not any(says_wrong(s) or names_failed(s, failure) for s in said):
        later = (s for p in paragraphs[1:] for ln in p.splitlines()
                 if not ln.strip().startswith("```") for s in _reason_sentences(_bare(ln)))
        said = [next((s for s in later if says_wrong(s) and names_failed(s, failure)), "")]
    reason = " ".join(said).rstrip(":")
    return one_line(reason[:1].upper() + reason[1:], REASON_CHARS)


def _bare(line: str) -> str:
    return re.sub(r"\*\*|^\s*(?:[-*]|\d+[.)]|#+)\s*", "", line).strip()


def _reason_sentences(words: str) -> list[str]:
    """The sentences of ``words`` that may say a reason: filler off, those saying what comes
    next, a few words leading in to what follows ("First, the implicit try:") and those saying
    nothing of it ("I see the issue.") left out."""
    sentences = re.split(r"(?<=[.!?])\s+", words)
    said = [_FILLER.sub("", s).strip() for s in sentences if not _ACTION.match(_FILLER.sub("", s))]
    return [_LEAD_IN.sub("", s) for s in said if s and not (s.endswith(":") and len(s.split()) < 5)
            and not _EMPTY.match(s)]


# a sentence that says what is wrong ("The issue is that ...", "The credo warning is about ...")
_DIAGNOSIS = re.compile(r"(?:the\s+(?:[\w`()-]+\s+){0,3}?(?:issue|problem|error|bug|cause|warning|"
                        r"failure)s?\s+(?:is|are|was|were)\b|this (?:is|was) because\b|"
                        r"i (?:think i |now )?(?:see|understand|found)\b)", re.IGNORECASE)


def diagnosis(intent: str) -> tuple[str, str]:
    """A change's stated intent split in two: the sentences that say what is wrong (the
    assistant's diagnosis), and those that say what the change does ('' when none is left)."""
    sentences = re.split(r"(?<=[.!?])\s+", intent.strip())
    wrong = [s for s in sentences if _DIAGNOSIS.match(s)]
    done = [s for s in sentences if not _DIAGNOSIS.match(s)]
    return " ".join(wrong), " ".join(done)


_EMPTY = re.compile(r"(?:i (?:think i )?(?:see|found|understand|get) (?:the|what the) (?:issue|problem|"
                    r"error|bug)(?: now)?|got it)\W*$", re.IGNORECASE)
# "I see the issue - " before what it is: the words after it say it
_LEAD_IN = re.compile(r"^(?:i (?:think i )?(?:see|found|understand)(?: (?:the|what the) "
                      r"(?:issue|problem|error|bug)(?: is)?)?(?: now)?|got it)"
                      r"\s*(?:[-\u2013\u2014:]|\.\.\.)\s*", re.IGNORECASE)
_ACTION = re.compile(r"(?:let me|let's|i'll|i will|i need to|i'm going to|fix|now fix)\b",
                     re.IGNORECASE)


def _same_gist(one: str, other: str) -> bool:
    """Two gists of one cause: the same words once numbers are left out."""
    def key(text: str) -> set[str]:
        return set(re.findall(r"[A-Za-z_]{3,}", text.lower()))
    a, b = key(one), key(other)
    return a == b or bool(a and b) and len(a & b) >= 0.6 * max(len(a), len(b))


def _alike(one: str, other: str) -> bool:
    """Two causes alike: the same, or the same arguments to another program (``python x.py``
    retried as ``python3 x.py``)."""
    return one == other or len(one.split()) > 1 and one.split()[1:] == other.split()[1:]


def _command(call: ToolCall) -> str:
    data = call.input if isinstance(call.input, dict) else {}
    command = str(data.get("command") or "")
    if call.name != "Bash" or not command:
        return what_ran(call)
    parts = commands_in(command)
    program = program_of(command)
    part = next((p for p in parts if p.startswith(program)), parts[0])
    return without_redirections(part)
