"""What the offline summary is made from, gathered turn by turn in bounded memory.

:class:`Facts` reads the turns of a conversation once, in order, and keeps only what the nine
sections use: every user message (each capped, start and end kept), the last few requests with
what was done for them, the latest tool calls and failures, the files touched by any tool, the
names the conversation is about (:mod:`ctxtool.core.summarizing.names`), the todo list, and the
evidence of what is settled - the assistant's statements that something is done, tests run after
the last edit, commits and pushes - and feeds the work log
(:class:`ctxtool.core.summarizing.work.WorkLog`: what each piece of work did). Nothing grows with
the length of the session but the list of user messages, so a very long session is summarized in
the memory its messages take.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from ctxtool.core.clearing.persist import truncate_text
from ctxtool.core.summarizing.failures import FailureLog, change_told, failure_gist
from ctxtool.core.summarizing.names import (WEIGHT_DEFINED, WEIGHT_DISCUSSED, WEIGHT_MENTIONED,
                                        WEIGHT_GLIMPSED, WEIGHT_SEEN, WEIGHT_USER, NameRanking, backticked,
                                        definitions_in, identifiers_in, paths_in, test_names_in,
                                        whole_words)
from ctxtool.core.summarizing.shell import command_word, commands_in, without_redirections
from ctxtool.core.summarizing.tools import ToolCall, TodoList
from ctxtool.core.summarizing.work import (WorkLog, config_keys, intent_of, list_items, new_lines,
                                           planned)
from ctxtool.llm.base import ASSISTANT, INTERRUPT, QUEUED, TOOL_RESULTS, Turn

MESSAGE_CHARS = 6000  # a user message is kept up to this, start and end (the summary cuts more)
SAID_CHARS = 4000  # an assistant text kept for the sections
REPORT_CHARS = 12000  # an assistant text kept until it is known to end its turn (a report)
GLIMPSE_CHARS = 600  # of any tool output, scanned for names in passing
RECENT_CALLS = 8
PLAN_ITEMS = 40  # list items the assistant wrote lately (its plans), for the intents that follow
FILE_NAMES = 60  # names kept per file
RECENT_ROUNDS = 15
DONE_STATEMENTS = 300
READ_TOOLS = ("Read",)
EDIT_TOOLS = ("Edit", "MultiEdit", "NotebookEdit")
WRITE_TOOLS = ("Write",)
SEARCH_TOOLS = ("Grep", "Glob", "LS")
SUBAGENT_TOOLS = ("Task", "Agent")
_DONE = re.compile(r"\b(?:done|fixed|completed?|committed|merged|pushed|passe[sd]|passing|resolved|"
                   r"implemented|added|created|removed|updated|finished|verified|works|succeeded)\b",
                   re.IGNORECASE)
_ENV = r"(?:\w+=\S*\s+)*(?:(?:uv|poetry|pipenv|pdm|hatch)\s+run\s+|python3?\s+-m\s+|npx\s+|bunx\s+)?"
_TEST = re.compile(_ENV + r"(?:pytest|py\.test|tox|nox|go test|cargo test|mix test|jest|vitest|rspec|"
                   r"(?:npm|pnpm|yarn|bun)(?: run)? test\w*|make (?:test|check)\w*|mise run test\w*|"
                   r"unittest|phpunit|ctest|gradle\w* test|mvn test)\b")
_BUILD = re.compile(_ENV + r"(?:go (?:build|vet)|golangci-lint|cargo (?:build|check|clippy)|"
                    r"mix (?:compile|credo|dialyzer|format --check\w*)|tsc|eslint|ruff|mypy|"
                    r"(?:npm|pnpm|yarn|bun|mise|just|task) run (?:build|lint|typecheck|check)\w*|make\b|"
                    r"pre-commit run|gradle\w* build|mvn (?:package|compile|verify))\b")
# a failed run's output (for runs piped into head or tail, which exit 0): a failing test, a
# compiler's or linter's diagnostic or count, a raised exception (Python, Elixir), a panic
_FAILED = re.compile(r"^(?:--- )?FAIL(?:ED)?\b|^ERROR\b|^error(?:\[\w+\])?:|^\S+\.\w+:\d+:\d+: |"
                     r"\b[1-9]\d* (?:failed|failures?|errors?|issues?)\b|"
                     r"\bfound [1-9]\d* [\w ]{0,30}?(?:issues?|errors?)\b|"
                     r"^\s*\*\* \(\w+\)|^Traceback \(most recent call last\)|^panic:", re.MULTILINE)
_COMMIT = re.compile(_ENV + r"git\s+(?:-C\s+\S+\s+)?commit\b")
_PUSH = re.compile(_ENV + r"(?:git\s+(?:-C\s+\S+\s+)?push\b|gh\s+pr\s+(?:create|merge)\b)")
_GIT = re.compile(_ENV + r"git\s")  # other git commands: a merge, pull or rebase, a branch named


@dataclass
class Message:
    """One user message as the summary lists it."""

    kind: str
    text: str
    position: int  # index of its turn


@dataclass
class Round:
    """One user request and what followed until the next one."""

    prompt: str
    tools: Counter[str] = field(default_factory=Counter)
    said: str = ""  # the assistant's last text in the round


@dataclass
class FileTouch:
    """A file the session touched, by any tool."""

    path: str
    reads: int = 0
    edits: int = 0
    writes: int = 0
    failed: int = 0
    mentions: float = 0.0  # searches, shell commands, subagents, the conversation
    last: int = 0
    last_edit: dict[str, Any] | None = None
    names: dict[str, None] = field(default_factory=dict)  # defined or edited in it, newest last

    def saw(self, names: list[str]) -> None:
        for name in names:
            self.names.pop(name, None)
            self.names[name] = None
        while len(self.names) > FILE_NAMES:
            del self.names[next(iter(self.names))]

    @property
    def worked_on(self) -> bool:
        return self.reads + self.edits + self.writes > 0


class Facts:
    """See the module docstring; feed turns with :meth:`add`, then read the attributes."""

    def __init__(self) -> None:
        self.position = 0
        self.compacted_at = 0  # position of the last earlier compaction (0: none)
        self.chars = 0  # the conversation's size as summarized (tool results already cut)
        self.messages: list[Message] = []
        self.rounds: deque[Round] = deque(maxlen=RECENT_ROUNDS)
        self.round_count = 0
        self.tools: Counter[str] = Counter()
        self.commands: Counter[str] = Counter()
        self.calls = 0
        self.recent: deque[ToolCall] = deque(maxlen=RECENT_CALLS)
        self.open_calls: dict[str, ToolCall] = {}
        self.failures = FailureLog()
        self.files: dict[str, FileTouch] = {}
        self.by_name: dict[str, list[str]] = {}  # file name -> paths in files, for mentions
        self.glimpsed: set[str] = set()  # files whose content was scanned since they changed
        self.names = NameRanking()
        self.todos = TodoList()
        self.todo_at = -1  # position of the last todo-list change
        self.done: deque[tuple[int, str]] = deque(maxlen=DONE_STATEMENTS)
        self.last_said = ""
        self.said_full = ""  # the latest assistant text, longer (a report if it ends the turn)
        self.narration = ""  # its latest words (or thoughts) since the user's: why it calls tools
        self.narration_reads: bool | None = None  # they announce reading (None: not yet known)
        self.plan: deque[str] = deque(maxlen=PLAN_ITEMS)  # the items of its lists, newest last
        self.reported = -1  # position of the last end-of-turn text given to the work log
        self.work = WorkLog()
        self.last_event = ""  # "user", "text", "tool_use", "tool_result" or "interrupt"
        self.last_user = -1  # position of the latest user message
        self.answered_at = -1  # position of the assistant text that last ended a turn
        self.last_edit_call = -1  # order of the latest successful edit or write
        self.last_test: ToolCall | None = None
        self.last_commit: ToolCall | None = None
        self.last_push: ToolCall | None = None

    # --- reading ---------------------------------------------------------------------------------

    def add(self, turn: Turn) -> None:
        self.position += 1
        if turn.is_user_message:
            self._user(turn)
        elif turn.kind == ASSISTANT:
            for block in turn.blocks:
                self._assistant_block(block)
        elif turn.kind == TOOL_RESULTS:
            for block in turn.blocks:
                if block.get("type") == "tool_result":
                    self._result(block)
        elif turn.kind == INTERRUPT:
            self.last_event = "interrupt"

    def _user(self, turn: Turn) -> None:
        text = truncate_text(turn.text.replace("\r\n", "\n").replace("\r", "\n"), MESSAGE_CHARS)
        self.chars += len(text)
        self.end_turn()
        self.work.user(text)
        self.failures.user()
        self.messages.append(Message(turn.kind, text, self.position))
        self.names.add(identifiers_in(text), WEIGHT_USER, self.position)
        self._touch_paths(paths_in(text), WEIGHT_USER)
        if turn.kind != QUEUED or self.last_event in ("text", "interrupt", ""):
            self.rounds.append(Round(text))
            self.round_count += 1
        self.last_user = self.position
        self.last_event = "user"
        self.narration, self.narration_reads = "", None

    def _assistant_block(self, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == "text":
            text = str(block.get("text") or "").strip()
            if not text:
                return
            self.chars += len(text)
            self.last_said = text[:SAID_CHARS]
            self.said_full = text[:REPORT_CHARS]
            self.narration = self.last_said
            self.narration_reads = None
            self.plan.extend(list_items(text))
            if self.rounds:
                self.rounds[-1].said = self.last_said
            self.last_event = "text"
            self.answered_at = self.position
            self._mentions(text, WEIGHT_DISCUSSED)
            self.failures.said(text, self.position)
            for line in text.splitlines():
                if _DONE.search(line):
                    self.done.append((self.position, line.strip()[:400]))
        elif kind == "thinking":
            thought = str(block.get("thinking") or "")
            self.names.add(backticked(thought), WEIGHT_MENTIONED, self.position)
            self.failures.thought(thought, self.position)
            if thought.strip():  # what it set out to do, when it says so only to itself
                self.narration, self.narration_reads = thought.strip()[:SAID_CHARS], None
                self.plan.extend(list_items(thought))
        elif kind == "tool_use":
            self._call(block)

    def _mentions(self, text: str, weight: float) -> None:
        """Names in a text: ``weight`` for those in backticks, WEIGHT_MENTIONED for the rest."""
        self.names.add(identifiers_in(text), WEIGHT_MENTIONED, self.position)
        if "`" in text:
            self.names.add(backticked(text), weight - WEIGHT_MENTIONED, self.position)
        self._touch_paths(paths_in(text), WEIGHT_MENTIONED)

    def _call(self, block: dict[str, Any]) -> None:
        value = block.get("input")
        data: dict[str, Any] = value if isinstance(value, dict) else {}
        name = str(block.get("name") or "")
        # the whole input is kept for a change only (the work log reads it), until its result
        uncut = block.get("uncut_input") if name in EDIT_TOOLS + WRITE_TOOLS else None
        call = ToolCall(self.calls, str(block.get("id")), name, data, turn=self.position,
                        intent=self.narration, uncut=uncut)
        self.calls += 1
        self.tools[call.name] += 1
        self.chars += len(str(data)) // 4  # inputs count, but less than what was said
        if self.rounds:
            self.rounds[-1].tools[call.name] += 1
        self.recent.append(call)
        self.open_calls[call.id] = call
        if len(self.open_calls) > 1000:  # calls never answered: forget the oldest
            self.open_calls.pop(next(iter(self.open_calls)))
        self.last_event = "tool_use"
        self._call_facts(call, data)

    def _call_facts(self, call: ToolCall, data: dict[str, Any]) -> None:
        name, position = call.name, self.position
        path = data.get("notebook_path") if name == "NotebookEdit" else data.get("file_path")
        if isinstance(path, str) and path and name in READ_TOOLS + EDIT_TOOLS + WRITE_TOOLS:
            touch = self._file(path)
            if name in READ_TOOLS:
                touch.reads += 1
            else:
                touch.edits += name in EDIT_TOOLS
                touch.writes += name in WRITE_TOOLS
                touch.last_edit = dict(data, tool=name)
                if name in WRITE_TOOLS and touch.reads:  # a rewrite: what was there, as read
                    call.known = frozenset(touch.names)
                self.glimpsed.discard(path)
                for key in ("new_string", "content", "new_source"):
                    self._defined(touch, str(data.get(key) or ""), position)
                for edit in data.get("edits") or () if name == "MultiEdit" else ():
                    if isinstance(edit, dict):
                        self._defined(touch, str(edit.get("new_string") or ""), position)
        elif name in SEARCH_TOOLS or name == "Bash":
            words = " ".join(str(data.get(k) or "") for k in ("pattern", "path", "command", "glob"))
            self.names.add(identifiers_in(words), WEIGHT_DISCUSSED, position)
            self._touch_paths(paths_in(words), WEIGHT_DISCUSSED)
            if name == "Bash":
                self._shell(call, str(data.get("command") or ""))
        elif name in SUBAGENT_TOOLS:
            self._mentions(str(data.get("prompt") or ""), WEIGHT_MENTIONED)
        if self.todos.apply_call(call):
            self.todo_at = position
            self.work.task_list(self.todos.items, position, self.todos.details)

    def _defined(self, touch: FileTouch, code: str, position: int) -> None:
        defined = definitions_in(code)
        self.names.add(defined, WEIGHT_DEFINED, position)
        touch.saw(defined + identifiers_in(code))

    def _shell(self, call: ToolCall, command: str) -> None:
        word = command_word(command)
        if word:
            self.commands[word] += 1
        # what the command runs, not the text it carries (a commit message, a heredoc)
        runs = commands_in(command)
        if any(_TEST.match(part) for part in runs):
            self.last_test = call
        if any(_COMMIT.match(part) for part in runs):
            self.last_commit = call
        if any(_PUSH.match(part) for part in runs):
            self.last_push = call

    def _result(self, block: dict[str, Any]) -> None:
        call = self.open_calls.pop(str(block.get("tool_use_id")), None)
        text = whole_words(str(block.get("content") or ""))
        self.chars += len(text)
        self.last_event = "tool_result"
        if call is None:
            return
        call.has_result, call.is_error, call.result = True, bool(block.get("is_error")), text
        call.result_turn = self.position
        if call.name not in EDIT_TOOLS + WRITE_TOOLS + READ_TOOLS + SEARCH_TOOLS or \
                call.name not in EDIT_TOOLS + WRITE_TOOLS and self._narration_reads():
            self.narration = ""  # what it said was for that call, not for a change after it
        target = call.input.get("file_path") if isinstance(call.input, dict) else None
        if call.is_error:
            self.failures.failed(call, text, self.position)
            if isinstance(target, str) and target in self.files:
                self.files[target].failed += 1
        elif call.name in EDIT_TOOLS + WRITE_TOOLS:
            self.last_edit_call = call.order
        if call.name in SEARCH_TOOLS:
            self._touch_paths(paths_in(text), WEIGHT_MENTIONED)
        elif call.name == "Bash":
            self._touch_paths(paths_in(text[:2 * GLIMPSE_CHARS]), WEIGHT_SEEN)
        elif call.name in SUBAGENT_TOOLS:
            self._mentions(text, WEIGHT_MENTIONED)
        elif call.name == "Read":
            defined = definitions_in(text)
            self.names.add(defined, WEIGHT_SEEN, self.position)
            if isinstance(target, str) and target in self.files:
                self.files[target].saw(defined + config_keys(target, text))
                part = call.input.get("offset") or call.input.get("limit")
                self.work.read(target, str(block.get("uncut_content") or text), whole=not part)
        if call.name != "Read" or self._fresh_read(call):
            self.names.add(identifiers_in(text[:GLIMPSE_CHARS]), WEIGHT_GLIMPSED, self.position)
        if call.name == "Bash" or call.is_error:
            self.names.add(test_names_in(text), WEIGHT_DISCUSSED, self.position)
        passed = self._check(call, text) if call.name == "Bash" else None
        if not call.is_error and passed is None:
            self.failures.ran(call, False, "")
        if self.todos.apply_result(call):
            self.todo_at = self.position
            self.work.task_list(self.todos.items, self.position, self.todos.details)
        if not call.is_error:
            self._work_result(call, text)
        elif call.name == "Bash":  # a merge that stopped at conflicts is work all the same
            self._git(str(call.input.get("command") or ""), text, failed=True)
        call.uncut = None  # read by now if it ever is (a failed change's never)
        if not call.is_error and call.name not in ("Read",) + SEARCH_TOOLS:
            call.result = text[:600]  # the rest is never shown
        else:
            call.result = text[:3000]

    def _narration_reads(self) -> bool:
        """The assistant's latest words announce reading ("Let me check ..."): a read ends them."""
        if self.narration_reads is None:
            self.narration_reads = _LOOKING.match(intent_of(self.narration)) is not None
        return self.narration_reads

    def end_turn(self) -> None:
        """The latest assistant text ended its turn: its report goes to the work log."""
        if self.last_event == "text" and self.reported < self.answered_at:
            self.reported = self.answered_at
            self.work.report(self.said_full, self.answered_at)

    def _work_result(self, call: ToolCall, text: str) -> None:
        """A successful call's part in the work log: a change, a commit, a push."""
        data = call.input if isinstance(call.input, dict) else {}
        if call.name in EDIT_TOOLS + WRITE_TOOLS:
            path = str(data.get("notebook_path") or data.get("file_path") or "")
            touch = self.files.get(path)
            read_before = touch is not None and touch.reads > 0
            intent = planned(call.intent, self.plan)  # the plan's words when it said fewer
            had = self._step_names(path)
            step = None  # none when the call changed nothing (a MultiEdit of no edits)
            # the work log reads a change whole; the names ranked saw it cut (a large file's
            # every name would crowd out those the conversation is about)
            for old, new in _pairs(call.name, call.uncut if isinstance(call.uncut, dict) else data):
                step = self.work.changed(path, call.name, old, new, self.position, read_before,
                                         intent, call.known, own=intent != call.intent)
            if self.failures.wants_changes and step is not None:
                pairs = _pairs(call.name, data)
                code = [line for old, new in pairs for line, _ in
                        sorted(new_lines(old, new, path), key=lambda item: -item[1])[:1]]
                # an import told by its statement (``alias X``; Python's ``from x`` by name)
                known = had.get(step.intent, set())
                imports = [name if st.startswith("from ") else st
                           for st, name in step.imports.items() if st not in known]
                names = [*imports, *(n for n in step.added if n not in known and
                                     n not in step.imports.values())]
                # the change's own words, also when it reworks an earlier step
                self.failures.changed(path, intent_of(intent), names, code[0] if code else "",
                                      tuple(n for n in step.defined if n not in known),
                                      change_told(pairs))
        elif call.name == "Bash":
            command = str(data.get("command") or "")
            runs = commands_in(command)
            tracked = self.work.tracker(command, text, self.position)
            self.work.posted(command, self.position, text)
            purpose = data.get("description")
            if isinstance(purpose, str) and not tracked and not any(map(_GIT.match, runs)):
                self.work.ran(command, purpose)
            for part in runs:
                if _COMMIT.match(part):
                    self.work.commit(command, text, self.position)
                elif _PUSH.match(part):
                    self.work.push(part, text, self.position)
            self._git(command, text, failed=False)

    def _git(self, command: str, text: str, failed: bool) -> None:
        """The git commands of a shell line other than commits and pushes, for the work log."""
        for part in commands_in(command):
            if _GIT.match(part) and not _COMMIT.match(part) and not _PUSH.match(part):
                self.work.git(part, text, self.position, failed)

    def _step_names(self, path: str) -> dict[str, set[str]]:
        """The names and imports each of the work log's steps for ``path`` holds so far, by
        intent (what a change adds to its step is what the step holds after, these left out)."""
        work = self.work.files.get(path)
        return {key: set(step.added) | set(step.imports)
                for key, step in (work.steps.items() if work else ())}

    def _check(self, call: ToolCall, text: str) -> bool | None:
        """A test or build run for the work log and the failures: True when it passed, False
        when it failed, None when the command is no test or build."""
        command = str(call.input.get("command") or "") if isinstance(call.input, dict) else ""
        for part in commands_in(command):
            part = without_redirections(part)
            if _TEST.match(part) or _BUILD.match(part):
                # piped into head or tail, a failed run exits 0: its output tells
                failed = call.is_error or ("|" in command and _FAILED.search(text) is not None)
                shown = self.work.check(part, not failed, text, self.position,
                                        failure_gist(text) if failed else "")
                if failed and not call.is_error:
                    self.failures.failed(call, text, self.position)
                elif not failed:
                    self.failures.ran(call, True, shown)
                return not failed
        return None

    def _fresh_read(self, call: ToolCall) -> bool:
        """The first read of a file since it last changed (reading it again shows the same)."""
        path = call.target
        if not path or path in self.glimpsed:
            return False
        self.glimpsed.add(path)
        return True

    def _file(self, path: str) -> FileTouch:
        touch = self.files.get(path)
        if touch is None:
            touch = self.files[path] = FileTouch(path)
            self.by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        touch.last = self.position
        return touch

    def _touch_paths(self, paths: list[str], weight: float) -> None:
        for path in paths:
            known = self.files.get(path) or next(
                (self.files[p] for p in self.by_name.get(path.rsplit("/", 1)[-1], ())
                 if p.endswith("/" + path) and p in self.files), None)
            touch = known or self._file(path)
            touch.mentions += weight
            touch.last = self.position
        if len(self.files) > 20_000:  # keep the files worked on and the most mentioned
            ranked = sorted(self.files.values(), key=lambda t: (t.worked_on, t.mentions),
                            reverse=True)
            self.files = {t.path: t for t in ranked[:10_000]}
            self.by_name = {}
            for kept in self.files:
                self.by_name.setdefault(kept.rsplit("/", 1)[-1], []).append(kept)

    # --- reading back ----------------------------------------------------------------------------

    @property
    def latest_request(self) -> Message | None:
        """The user's latest typed words (a bare slash command only when nothing was typed)."""
        typed = [m for m in self.messages if m.kind != "command"]
        found = typed or self.messages
        return found[-1] if found else None

    @property
    def latest_answered(self) -> bool:
        """The assistant ended its turn with text after the latest user message."""
        return self.last_event == "text" and self.answered_at > self.last_user

    def settled(self, item: str, since: int) -> str | None:
        """A statement after position ``since`` saying ``item`` is done, or None."""
        words = _words(item)
        if len(words) < 2:
            return None
        for position, line in reversed(self.done):
            if position <= since:
                break
            if len(words & _words(line)) >= max(2, 0.6 * len(words)):
                return line
        return None


# words that announce reading, not changing: they were for the reads that followed
_LOOKING = re.compile(r"(?:read|look|check|see|view|explore|search|find|examine|inspect|"
                      r"understand|investigate|review|verify|open|grep|get)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][\w.]{2,}")
_STOP = frozenset("the and for with that this from into should would have when then task tasks "
                  "pending completed progress user also make sure all are was not but its".split())


_IRREGULAR = {"wrote": "write", "written": "write", "built": "build", "made": "make", "ran": "run",
              "done": "do", "did": "do", "found": "find", "gave": "give", "took": "take"}


def _stem(word: str) -> str:
    """A crude stem, enough to match "Fix the tests" with "fixed the test"."""
    word = _IRREGULAR.get(word, word)
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[:-len(suffix)]
    return word


def _words(text: str) -> set[str]:
    return {_stem(w.lower().strip(".")) for w in _WORD.findall(text)} - _STOP


def _pairs(tool: str, data: dict[str, Any]) -> list[tuple[str, str]]:
    """(old, new) of each change an Edit, MultiEdit, Write or NotebookEdit input makes."""
    edits = data.get("edits") if tool == "MultiEdit" else None
    if isinstance(edits, list):
        return [(str(e.get("old_string") or ""), str(e.get("new_string") or ""))
                for e in edits if isinstance(e, dict)]
    return [(str(data.get("old_string") or ""),
             str(data.get("new_string") or data.get("content") or data.get("new_source") or ""))]
