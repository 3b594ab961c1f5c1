"""The offline summary: the same nine sections a model writes, extracted deterministically.

No network and no model: the sections are built from what the transcript records
(:class:`ctxtool.core.summarizing.facts.Facts`, gathered in one pass).

1. Primary Request and Intent - the first user messages, the latest one, the constraints and
   decisions the user stated, the focus asked for;
2. Key Technical Concepts - working directory, branch, file types, the programs the shell ran,
   and a short ranked list of the names the conversation is about (identifiers it defines,
   edits, searches for or discusses) that no other section shows: the most central, then those
   of the latest request's work (:data:`NAMES_SHOWN` in all);
3. Files and Code Sections - every file changed, newest first, new or not, committed or not,
   with the names in it the conversation mentioned, and what its changes did, one line per
   piece of work (:class:`ctxtool.core.summarizing.work.WorkLog`: what the assistant said it was
   for, the names it added, changed and removed, its telling line of code; more lines for a
   file changed often; a file with one piece of work on one line), and the tests it gained; then
   the files only read, with their names, and those reached only through searches, shell
   commands, subagents or the conversation;
4. Errors and fixes - the failed tool calls and runs (those a change fixed, with the assistant's
   diagnosis, first when not all fit), the changes after them and whether the run then passed;
5. Problem Solving - the work done, in order, grouped by the task in progress at the time with its
   state at the cut (and what it is for, as its issue's description opens): commits, pushes, merges
   and rebases, rounds of replies to review comments (:mod:`ctxtool.core.summarizing.git_work`),
   tests and builds, issues closed, the assistant's own end-of-turn reports (a line restating a git
   action of its turn told on that action's line, one restating another shell command naming it);
   as many of the newest as fit in its room (:data:`WORK_CHARS`), those a section above tells left
   out first; the tasks whose work is left out for size keep a line each (their state and
   description);
6. All user messages - every one, in order: typed, queued while the assistant worked, sent beside
   tool results, given as the reason for rejecting a tool call; a very long one keeps its start
   and end;
7. Pending Tasks - what is open at the cut: todo items nothing later settles, the latest request
   when no reply ended it, queued messages not yet answered;
8. Current Work - the assistant's last words, the task in progress with what it is and the files
   its plan names that nothing changed since it started (and the plan's lines about them), the
   tool calls in flight, each test or build's last outcome, the files changed since the last
   commit, the last commit (hash and subject, how it ended, pushed or not) and push;
9. Optional Next Step - what follows from the latest request and the work in progress (nothing
   new when the last request was answered).

Size: a model's summary grows slowly with the history, so the target is a share of the history
(:data:`BASE_TOKENS` plus :data:`SHARE` of it), never above ``max_summary_tokens``. Detail is
given up section by section until the summary fits (:data:`DETAIL`); then only very long user
messages are cut, keeping their start and end (:data:`SQUEEZE`); shorter caps only keep the summary
within the bound (:data:`BOUND_CAPS`), and when even short messages do not fit, the middle of the
list is left out with a note saying how many - the bound holds whatever the input size.

An earlier compaction summary is used only for what the transcript does not hold (a transcript
that starts with one): its user messages come first, its sections are merged flat (never nested
again), and its pending items stay only when nothing later settles them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from ctxtool.core.clearing.persist import truncate_text
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.core.summarizing.facts import Facts, FileTouch, Message
from ctxtool.core.summarizing.failures import (Episode, diagnosis, failure_gist, is_noise, kind_of,
                                                stated_kind)
from ctxtool.core.summarizing.findings import restates
from ctxtool.core.summarizing.names import WEIGHT_MENTIONED, paths_in
from ctxtool.core.summarizing.prompt import HEADINGS, split_sections, summary_body
from ctxtool.core.summarizing.tools import ToolCall, describe_call, error_gist
from ctxtool.core.summarizing.work import (LIST_MARK, Task, WorkLine, WorkLog, commit_told,
                                           telling_words)
from ctxtool.llm.base import QUEUED, Progress, SummaryRequest, SummaryResult, Turn, no_progress

# detail factors for the sections other than the user messages, most detail first: the first
# that fits the target wins (user messages up to MESSAGE_CAP characters each)
DETAIL = (1.0, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1, 0.05, 0.0)
MESSAGE_CAP = 2000
# when the messages alone outgrow the target: very long ones are cut (start and end kept) to
# reach it, down to SQUEEZE's last cap; below that only to keep within the bound (BOUND_CAPS)
SQUEEZE = ((0.1, 1500), (0.05, 1000), (0.0, 600), (0.0, 400))
BOUND_CAPS = (400, 250, 150, 80)
BASE_TOKENS = 1200  # target size: this much...
SHARE = 0.025  # ...plus this share of the history's tokens (tool output as summarized)
NAMES_SHOWN = 12  # names in play listed: those no other section shows
STEPS_BONUS = 3  # steps shown beyond the base for a file changed often (one per 4 changes)
OLDER_NAMES = 3  # names per kind on the line of a changed file older than those described
FILES_LISTED = 30  # changed files given a line of their own (the rest are named in one line)
PATH_TOKENS = 60  # one file reached only through searches, shells or subagents per this many...
REFERENCED_SHOWN = 10  # ...and never more: a short list, the rest counted
_GIT_SIDE = re.compile(r"^[ab]/")  # a path as ``git diff`` prints it (``a/src/x.py``)
PRIOR_MARK = "From the earlier summary"
ERRORS_SHOWN = 4  # failures listed at the least detail (the ones with a fix first)
LINE_CHARS = 396  # a file's line with its one step on it stays one a reader takes whole
EPISODE_CHARS = 396  # a failure's line (the score reads lines of up to 400 characters)...
EPISODE_CHARS_LEAST = 300  # ...and at the least detail (the error and its fix still fit)
WORK_SHOWN = 8  # pieces of work listed at the least detail (the newest)...
WORK_CHARS = 110  # ...at detail f, the newest that fit in 70 * f times this (a line, typically)
PLAN_FILES = 6  # files of the task in progress named as not changed yet (at most)...
PLAN_LINES = 2  # ...and the lines of its plan about them
NEWS_WORDS = 2  # when not all fit: words a piece of work tells that no section above does


def clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters at a line or word boundary, marked ``[…]``."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:max(0, limit)]
    cut = max(head.rfind("\n"), head.rfind(" "))
    if cut > limit // 2:
        head = head[:cut]
    return head.rstrip() + " […]"


def indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


def first_line(text: str, limit: int) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return clip(line, limit)


def first_sentence(text: str, limit: int) -> str:
    line = first_line(text, 10 * limit)
    sentence = re.split(r"(?<=[.!?:])\s+", line, maxsplit=1)[0]
    return clip(sentence, limit)


class View:
    """The facts and the request, with the earlier summary's sections when they are needed."""

    def __init__(self, request: SummaryRequest, facts: Facts) -> None:
        self.request = request
        self.facts = facts
        prior = request.prior_summaries[0] if request.prior_summaries else ""
        self.prior = (split_sections(summary_body(prior)) or {}) if request.history_missing else {}
        self.prior_text = summary_body(prior) if request.history_missing and not self.prior else ""
        self.cwd = (request.cwd or "").rstrip("/")
        self.target = target_tokens(facts, request.max_summary_tokens)

    def merged(self, title: str, limit: int) -> str:
        """This section of the earlier summary, flattened (its own carried-over parts and
        headings left out), as a paragraph to merge in ('' if none)."""
        body = self.prior.get(title, "").strip()
        if not body or limit <= 0:
            return ""
        lines = [ln.strip() for ln in body.splitlines()
                 if ln.strip() and not ln.strip().startswith(PRIOR_MARK)]
        return f"{PRIOR_MARK}:\n" + indent(clip("\n".join(lines), limit))

    def show(self, path: str) -> str:
        """A path relative to the working directory when it is inside it."""
        if self.cwd and path.startswith(self.cwd + "/"):
            return path[len(self.cwd) + 1:]
        return path


# --- sections --------------------------------------------------------------------------------------

def primary_request(v: View, f: float) -> str:
    typed = [m for m in v.facts.messages if m.kind != "command"] or v.facts.messages
    lines: list[str] = []
    if typed:
        lines.append("The session started with the user asking:")
        for message in typed[:3] if f > 0.2 else typed[:1]:
            lines.append(indent("- " + clip(message.text, max(150, int(1200 * f)))))
        latest = v.facts.latest_request
        if latest is not None and latest is not typed[0]:
            lines.append("Latest request: " + clip(latest.text, max(150, int(800 * f))))
    stated = list(v.facts.work.constraints)[-max(2, int(8 * f)):] if f > 0 else []
    if stated:
        lines.append("Constraints and decisions the user stated:")
        lines.extend(indent("- " + clip(c, 200)) for c in stated)
    if v.request.instructions:
        lines.append("Focus asked for this summary: " + clip(v.request.instructions, 1000))
    merged = v.merged(HEADINGS[0], int(1500 * f))
    return "\n".join(lines + ([merged] if merged else [])) or "None recorded."


def key_concepts(v: View, f: float, shown: str = "") -> str:
    facts, lines = v.facts, []
    if v.request.cwd:
        branch = f" (git branch {v.request.git_branch})" if v.request.git_branch else ""
        lines.append(f"- Working directory: {v.request.cwd}{branch}")
    kinds = Counter(_extension(p) for p, t in facts.files.items() if t.worked_on and _extension(p))
    if kinds:
        lines.append("- File types: " + ", ".join(f"{ext} ({n})" for ext, n in kinds.most_common(6)))
    if facts.commands and f >= 0.5:  # the programs the work ran (tool counts say little)
        lines.append("- Commands run: " + ", ".join(f"{w} x{n}" for w, n in facts.commands.most_common(6)))
    names = _names(facts, NAMES_SHOWN, shown)
    if names:
        lines.append("- Names in play: " + ", ".join(names))
    merged = v.merged(HEADINGS[1], int(1000 * f))
    return "\n".join(lines + ([merged] if merged else [])) or "None recorded."


def _names(facts: Facts, count: int, shown: str) -> list[str]:
    """The ``count`` names the conversation is most about that ``shown`` (the other sections)
    leaves out: half the most central of the whole history, half the most central of the
    latest request's work (what a model resuming works on first); one already inside a
    listed longer name (``Otel`` when ``Otel.setup`` is there) left out."""
    present = _words_of(shown)
    ranked = [n for n in facts.names.top(6 * count, facts.position, facts.compacted_at)
              if n not in present]
    latest = [n for n in ranked if facts.names.seen[n].last >= facts.last_user]
    chosen: list[str] = []
    for name in [*ranked[:count - count // 2], *latest, *ranked]:
        if len(chosen) >= count:
            break
        if name not in chosen and not any(name in longer for longer in chosen):
            chosen = [c for c in chosen if c not in name] + [name]
    return chosen


def _words_of(text: str) -> set[str]:
    """The names ``text`` shows: each run of word characters and dots, and its parts up to
    each dot (``Otel.setup`` shows ``Otel`` too), in one pass however long the text."""
    found = set(_WORDS.findall(text))
    for token in [t for t in found if "." in t]:
        parts = token.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return found


_WORDS = re.compile(r"\w+(?:\.\w+)*")


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[1].lower() if "." in name.strip(".") else ""


def files_and_code(v: View, f: float) -> str:
    facts, work = v.facts, v.facts.work
    touched = sorted(facts.files.values(), key=lambda t: t.last, reverse=True)
    changed = [t for t in touched if t.edits + t.writes]
    read = [t for t in touched if t.worked_on and not t.edits + t.writes]
    lines: list[str] = []
    shown = changed[:max(FILES_LISTED, int(40 * f))]
    described = max(12, int(40 * f))  # the newest: what their changes did
    snippets = int(2 * f)
    for index, touch in enumerate(shown):
        if index >= described:  # older changes: the file, its state and its main step
            lines.append(_older_file(v, touch))
            continue
        lines.extend(_changed_file(v, touch, f))
        if touch.last_edit is not None and snippets > 0:
            lines.append(indent(_edit_snippet(touch.last_edit, int(500 * f)), "    "))
            snippets -= 1
    if len(changed) > len(shown):
        rest = [v.show(t.path) for t in changed[len(shown):]]  # every changed file is named
        lines.append(_name_list("Also changed earlier", rest, len(rest)))
    described = read[:max(2, int(10 * f))]
    for touch in described:
        names = _file_names(v, touch, max(3, int(10 * f)), "")
        lines.append(f"- {v.show(touch.path)} (read x{touch.reads})"
                     + (": " + ", ".join(names) if names else ""))
    if len(read) > len(described):
        lines.append(_name_list("Also read (newest first)",
                                [v.show(t.path) for t in read[len(described):]],
                                max(10, int(40 * f))))
    known = [t.path for t in touched if t.worked_on]
    others = sorted((t for t in touched if not t.worked_on and not any(
                        k == t.path or k.endswith("/" + _GIT_SIDE.sub("", t.path)) for k in known)),
                    key=lambda t: t.mentions * (1 + t.last / max(1, facts.position)),
                    reverse=True)
    if others:  # one path written two ways (absolute, relative) is one
        named = list(dict.fromkeys(v.show(t.path) for t in others))
        lines.append(_name_list("Also referenced (searches, shell, subagents, the conversation)",
                                named, min(REFERENCED_SHOWN, max(6, int(
                                    v.target / PATH_TOKENS * (0.2 + 0.4 * f))))))
    merged = v.merged(HEADINGS[2], int(1500 * f))
    return "\n".join(lines + ([merged] if merged else [])) or "No files were read or changed."


def _changed_file(v: View, touch: FileTouch, f: float) -> list[str]:
    """A changed file's lines: its state and the names in it the conversation mentioned, then
    what its changes did, a line per piece of work (more for a file changed often); one piece
    of work goes on the file's own line."""
    facts = v.facts
    head = f"- {v.show(touch.path)} ({_file_state(touch, facts.work)})"
    steps = max(2, int(5 * f)) + min(STEPS_BONUS, (touch.edits + touch.writes) // 4)
    details = facts.work.file_lines(touch.path, steps, _centrality(facts), 4 + int(4 * f),
                                    any_code=f >= 0.5)
    names = _file_names(v, touch, max(3, int(8 * f)), " ".join(details))
    if names:  # what else in it the conversation was about
        head = head[:-1] + "; about " + ", ".join(names) + ")"
    if len(details) == 1 and len(head) + len(details[0]) < LINE_CHARS:
        return [f"{head}: {details[0]}"]
    return [head, *(indent("- " + d, "  ") for d in details)]


def _older_file(v: View, touch: FileTouch) -> str:
    """An older change on one line: the file, its state and its step that did most, briefly
    (a config file's keys, a manifest's dependencies, the definitions it added)."""
    facts = v.facts
    head = f"- {v.show(touch.path)} ({_file_state(touch, facts.work)})"
    step = facts.work.file_lines(touch.path, 1, _centrality(facts), OLDER_NAMES, any_code=False)
    return f"{head}: {clip(step[0], LINE_CHARS - len(head) - 2)}" if step else head


def _centrality(facts: Facts) -> Callable[[Iterable[str], int], list[str]]:
    """The ranking of a step's names: the most central in the conversation first."""
    return lambda names, count: facts.names.best(names, count, facts.position, facts.compacted_at)


def _file_names(v: View, touch: FileTouch, count: int, shown: str) -> list[str]:
    """The most central names defined or edited in a file that the conversation mentioned
    (not only held in the file as read), those in ``shown`` left out."""
    facts, seen = v.facts, v.facts.names.seen
    return [n for n in facts.names.best(touch.names, count + 6, facts.position, facts.compacted_at)
            if n not in shown and n in seen and seen[n].score >= WEIGHT_MENTIONED][:count]


def _file_state(touch: FileTouch, work: WorkLog) -> str:
    done = work.files.get(touch.path)
    counts = ["new" if done is not None and done.created else ""] + [
        f"{label} x{n}" for label, n in (("edited", touch.edits), ("written", touch.writes)) if n]
    if touch.failed:
        counts.append(f"{touch.failed} failed")
    if done is not None and work.commits:
        counts.append(f"committed in {done.commit}" if done.commit else "not committed")
    return ", ".join(c for c in counts if c)


def _name_list(label: str, names: list[str], limit: int) -> str:
    more = len(names) - limit
    return f"- {label}: " + ", ".join(names[:limit]) + (f" and {more} more" if more > 0 else "")


def _edit_snippet(edit: dict[str, object], limit: int) -> str:
    tool = edit.get("tool")
    if tool == "Write":
        return "Latest write, beginning:\n" + _code(str(edit.get("content") or ""), limit)
    edits = edit.get("edits")
    if tool == "MultiEdit" and isinstance(edits, list) and edits:
        last = edits[-1]
        edit = last if isinstance(last, dict) else {}
    if tool == "NotebookEdit":
        return "Latest edit (notebook cell):\n" + _code(str(edit.get("new_source") or ""), limit)
    old = first_line(str(edit.get("old_string") or ""), 100)
    return f"Latest edit, replacing \"{old}\" with:\n" + _code(str(edit.get("new_string") or ""), limit)


def _code(text: str, limit: int) -> str:
    """Whole lines of code up to ``limit`` characters, and how many lines were left out."""
    lines = text.strip("\n").splitlines()
    kept: list[str] = []
    used = 0
    for line in lines:
        if kept and used + len(line) > limit:
            break
        kept.append(line if len(line) <= limit else clip(line, limit))
        used += len(line) + 1
    more = len(lines) - len(kept)
    return "\n".join(kept) + (f"\n({more} more lines)" if more else "")


def errors_and_fixes(v: View, f: float) -> str:
    """Every failure that mattered, in order, one line each: the error's gist, the assistant's
    stated reason, what fixed it and the run that passed after (repeats of one cause merged)."""
    log, lines = v.facts.failures, []
    episodes = list(log.episodes)
    room = max(ERRORS_SHOWN, int(12 * f))
    shown = sorted(_ranked(episodes)[:room])
    left = log.count - sum(episodes[i].count for i in shown)
    if left > 0:
        causes = Counter(e.cause for i, e in enumerate(episodes) if i not in shown)
        lines.append(f"- {left} other failure{'s' * (left > 1)} not listed" + (": " + ", ".join(
            f"{c} x{n}" for c, n in causes.most_common(max(1, int(4 * f)))) if causes else "") + ".")
    lines.extend(_episode_line(episodes[i], f) for i in shown)
    if log.refused and f >= 0.5:
        lines.append(f"- Not listed: {sum(log.refused.values())} calls the tool refused before "
                     "running them (" + ", ".join(f"{n} x{c}" for n, c in log.refused.most_common(3))
                     + "), redone at once.")
    merged = v.merged(HEADINGS[3], int(1000 * f))
    return "\n".join(lines + ([merged] if merged else [])) or "No tool call failed."


def _ranked(episodes: list[Episode]) -> list[int]:
    """The episodes' indexes, most worth telling first: the latest (where the work stands), then
    by :func:`_worth`, the newest first among equals."""
    latest = max(range(len(episodes)), key=lambda i: episodes[i].position, default=-1)
    return sorted(range(len(episodes)), key=lambda i: (i == latest, _worth(episodes[i]), i),
                  reverse=True)


def _worth(episode: Episode) -> int:
    """3: a change fixed it and the record says why (the assistant's words after it or before
    the change, or the definition the change added); 2: a change fixed it; 1: a change was
    tried, or a run passed after it; 0: nothing followed."""
    fixed = bool(episode.steps and episode.closed)
    said = bool(episode.reason or episode.defined or any(": " in s for s in episode.steps)) \
        or episode.call is None  # a stated one is the assistant's words
    return 3 if fixed and said else 2 if fixed else 1 if episode.steps or episode.passed else 0


def _episode_line(episode: Episode, f: float) -> str:
    """``- `go test` failed x2: x.go:3: undefined: y (TestZ). Reason. Fixed: x.go: intent;
    added z. Then `go test ./...` passed (12 passed).`` - one line within EPISODE_CHARS: the
    error first, then how it ended, the reason and the fix in what room is left."""
    times = f" x{episode.count}" if episode.count > 1 else ""
    named_tests = [*episode.tests[:2], episode.failed] if episode.failed else episode.tests[:2]
    tests = f" ({', '.join(named_tests)})" if named_tests else ""
    limit = max(110, int(160 * f))
    gist = episode.gist if len(episode.gist) <= limit else episode.gist.split("; ")[0]
    if episode.call is None:  # stated: the assistant's words are all there is of it
        # the sentence of its fix's words that names it says more of it ("`x` is unused since ...")
        intent = next(iter(episode.steps), "").partition(": ")[2]
        gist = next((s.rstrip(".") for s in re.split(r"(?<=[.!?])\s+", intent)
                     if gist in s and len(s) <= limit), gist)
        head = f"- {stated_kind(gist)}: \"{gist}\""
    else:
        cause = episode.cause if episode.cause != "Bash" else describe_call(episode.call, 40)[6:-1]
        plain = episode.checks  # the words a reader knows the checks by
        head = f"- {kind_of(episode.cause)}{': ' + plain if plain else ''}{times} (`{cause}`): " \
               f"{clip(gist, limit)}{tests}"
    steps = list(episode.steps)
    if episode.passed:
        # the run that failed, passing now: "it" (the line named it)
        again = episode.cause and episode.passed.startswith(f"`{episode.cause}` ")
        end = "Then it " + episode.passed.split("` ", 1)[1] if again else f"Then {episode.passed}"
    elif episode.retry is not None and not steps:
        end = f"Retried: {describe_call(episode.retry, 60)}"
    elif not episode.closed:
        end = "Not passing yet" if steps else "No fix followed"
    else:
        end = ""
    chars = EPISODE_CHARS_LEAST + int((EPISODE_CHARS - EPISODE_CHARS_LEAST) * f)
    room = chars - len(head) - len(end) - 8
    # the diagnostics shown name files: the changes to others were for those not shown
    named = [step for step in steps if step.split(":")[0] in _located_files(gist)]
    # no words after the failure: the diagnosis before its first change says why
    said = episode.reason or diagnosis((named or steps or [""])[0].partition(": ")[2])[0]
    said = "" if said and restates(said, head) else said  # words the error's line says already
    fix = _fix(episode, named or steps, said, first=not named or named[0] == steps[0], head=head)
    # the reason and the fix share the room left: the fix as much as it needs, up to two thirds
    reason = clip(said, min(max(90, int(140 * f)), room - min(len(fix) + 8, room * 2 // 3))) \
        if room > 40 else ""
    fix = ("Fixed: " if episode.closed else "Tried: ") + clip(fix, room - len(reason) - 8) \
        if fix and room - len(reason) > 30 else ""
    parts = [p for p in (head, reason, fix, end) if p]
    return " ".join(p if p[-1:] in ".!?)" else p + "." for p in parts)


def _fix(episode: Episode, steps: list[str], said: str, first: bool, head: str) -> str:
    """The changes told for a failure (``file: intent``, the words ``said`` or the error's line
    ``head`` already say left out), what the first change moved or took out and the code it
    wrote beside its intent if it is among them (``first``; the file not named again when it is
    the one the error names); then the definitions the changes added, else the names they
    brought in."""
    if not steps:
        return ""
    told = _merged([_step(step, said, head) for step in steps])
    code = [episode.told] * bool(first and episode.told) + \
        [f"`{clip(episode.code, 70)}`"] * bool(first and episode.code
                                               and not _shows(episode.told, episode.code))
    if len(told) == 1 and told[0] in _located_files(head) and code:
        told = []
    fix = "; ".join(told[:1] + code + told[1:])
    # what the changes defined, else the names they brought in (those they merely used say
    # little beside a definition)
    names = [n for n in episode.names if n not in fix and n in episode.defined] or \
        [n for n in episode.names if n not in fix]
    return fix + ("; added " + ", ".join(names[:3]) if names else "")


def _shows(told: str, code: str) -> bool:
    """Whether what a change did (``told``) shows its line of code already (its start)."""
    return any(code.startswith(span.removesuffix("...")) for span in re.findall(r"`([^`]+)`", told))


def _merged(steps: list[str]) -> list[str]:
    """Steps of one intent in several files told once, naming the files (``a.exs, b.exs: x``)."""
    files: dict[str, list[str]] = {}
    for step in steps:
        name, _, intent = step.partition(": ")
        files.setdefault(intent, []).append(name)
    return [", ".join(names) + (f": {intent}" if intent else "") for intent, names in files.items()]


def _located_files(gist: str) -> set[str]:
    """The files a gist's diagnostics are located in (``x.go:3:5: ...`` gives x.go)."""
    return set(re.findall(r"([\w.-]+\.\w+):\d+", gist))


def _step(step: str, reason: str, head: str) -> str:
    """A fix step (``file: intent``), the words the reason already says left out, and an intent
    that only restates the error's line (``head``) left out whole."""
    name, _, intent = step.partition(": ")
    intent = diagnosis(intent)[1] or intent  # what it did: the diagnosis is the reason's
    said = reason.rstrip(".")
    rest = intent.replace(said, "").strip(" .;:") if said else intent
    # its sentences the error's line says already left out
    rest = " ".join(s for s in re.split(r"(?<=[.!?])\s+", rest) if s.rstrip(".") not in head)
    return f"{name}: {rest}" if rest and not restates(rest, head) else name


STATE = {"completed": "done", "in_progress": "in progress", "pending": "not started"}


def _task_state(facts: Facts, task: Task) -> str:
    """A task's state at the cut from the latest evidence: its last status, unless the
    assistant said later that it is done."""
    if task.status != "completed" and facts.settled(task.content, task.changed):
        return "done at the cut: the assistant said so after its last update"
    return f"{STATE.get(task.status, task.status)} at the cut"


def problem_solving(v: View, f: float, said: str = "") -> str:
    """The work done, in order, grouped by the task in progress at the time: commits, pushes,
    tests and builds that changed outcome, the assistant's own reports. When not all fit, those
    that tell nothing ``said`` (the sections above) does not are left out first."""
    facts, work, lines = v.facts, v.facts.work, []
    room, width = int(70 * f) * WORK_CHARS, max(200, int(300 * f))
    fits = _fitting(work.lines, room, width)
    pool = list(work.lines) if fits == 0 else _untold(work.lines, said)
    start = _fitting(pool, room, width)
    if start:  # the tasks whose work is left out get a line each, in its room
        start += min(len(pool) - start - 1, len(_left_out(work, pool[start:])))
    start = _whole(pool, start, width)
    entries = pool[start:]
    left = len(work.lines) - len(entries)
    if left > 0:
        noun = "piece" if left == 1 else "pieces"
        what = f"{noun} of work (earlier, or told above)" if len(pool) < len(work.lines) \
            else f"earlier {noun} of work"
        lines.append(f"- {left} {what} {'is' if left == 1 else 'are'} left out here"
                     + ("; the tasks they were for:" if _left_out(work, entries) else "."))
        lines.extend("  " + _task_line(facts, task, max(140, int(240 * f)))
                     for task in _left_out(work, entries))
    group = ""
    for entry in entries:
        if entry.task != group:
            group = entry.task
            task = work.tasks.get(group)
            if task is not None:
                detail = f" - {clip(task.detail, 160)}" if task.detail else ""
                why = work.whys.get(group, "")  # what it is for, as its issue says
                detail += f" (why: {why.rstrip('.')})" if why else ""
                lines.append(f"- Task \"{clip(group, 160)}\" ({_task_state(facts, task)}){detail}:")
        lines.append(("  " if group else "") + ("  - " if entry.detail else "- ")
                     + _shown(entry, width))
    if not entries:
        shown = list(facts.rounds)[-max(3, int(10 * f)):]
        for r in shown:
            used = ", ".join(f"{n} x{c}" for n, c in r.tools.most_common(4)) or "no tools"
            ended = f" Ended with: {first_sentence(r.said, max(80, int(220 * f)))}" if r.said else ""
            lines.append(f"- \"{first_line(r.prompt, max(60, int(120 * f)))}\": {used}.{ended}")
    merged = v.merged(HEADINGS[4], int(1000 * f))
    if merged:
        lines.append(merged)
    elif v.prior_text and f > 0:
        lines.append(f"{PRIOR_MARK}:\n" + indent(clip(v.prior_text, int(3000 * f))))
    return "\n".join(lines) or "None recorded."


def _fitting(entries: Sequence[WorkLine], room: int, width: int) -> int:
    """Where the newest of ``entries`` that fit in ``room`` characters begin (each cut to
    ``width``), :data:`WORK_SHOWN` of them at least."""
    used, start = 0, len(entries)
    while start > 0:
        used += len(_shown(entries[start - 1], width)) + 4
        if len(entries) - start >= WORK_SHOWN and used > room:
            break
        start -= 1
    return start


def _whole(entries: Sequence[WorkLine], start: int, width: int) -> int:
    """``start`` moved off the lines under a head (a commit's body, a round's comments): back
    to their head when what that adds is no more than a line (``width``), else past them."""
    head = start
    while 0 < head < len(entries) and entries[head].detail:
        head -= 1
    if sum(len(_shown(entry, width)) + 4 for entry in entries[head:start]) <= width:
        return head
    while start < len(entries) and entries[start].detail:
        start += 1
    return start


def _shown(entry: WorkLine, width: int) -> str:
    """A work line as shown: cut to ``width``, the report lines told on it cut apart."""
    return entry.shown(width) if entry.reported else clip(entry.text, width)


def _untold(entries: Iterable[WorkLine], said: str) -> list[WorkLine]:
    """The work lines that tell at least :data:`NEWS_WORDS` words ``said`` does not, or none it
    does (a report line that tells a step above says nothing new); a commit's body goes with
    its commit."""
    told = telling_words(said)
    kept: list[WorkLine] = []
    head = False
    for entry in entries:
        words = telling_words(entry.text)
        new = len(words - told) >= NEWS_WORDS or not words & told
        head = new if not entry.detail else head
        if new and head:
            kept.append(entry)
    return kept


def _left_out(work: WorkLog, entries: list[WorkLine]) -> list[Task]:
    """The tasks none of the work lines shown belongs to, in order."""
    shown = {entry.task for entry in entries}
    return [task for content, task in work.tasks.items() if content not in shown]


def _task_line(facts: Facts, task: Task, limit: int) -> str:
    """``- Task "X" (done at the cut): what it was to do`` (that cut to ``limit``)."""
    detail = f": {clip(task.detail, limit)}" if task.detail else ""
    state = _task_state(facts, task).split(" at the cut")[0]
    return f"- \"{clip(task.content, 160)}\" ({state}){detail}"


def message_lines(v: View, cap: int) -> list[str]:
    """Every user message as a list item, the earlier summary's first (each cut to ``cap``)."""
    lines = [_earlier_line(line, cap) for line in _earlier_messages(v)]
    for message in v.facts.messages:
        mark = "(typed while the assistant was working) " if message.kind == QUEUED else ""
        text = truncate_text(message.text, cap).strip()
        lines.append("- " + mark + "\n  ".join(text.splitlines()))
    return lines


def _earlier_line(line: str, cap: int) -> str:
    return "- " + truncate_text(re.sub(r"^[-*\u2022]\s*", "", line.strip()), cap)


def _earlier_messages(v: View) -> list[str]:
    """Items of the earlier summary's user-message list (a transcript that starts from it holds
    none of them), without the lists it had carried over itself."""
    body = v.prior.get(HEADINGS[5], "")
    known = [_squash(m.text) for m in v.facts.messages]
    return [ln for ln in body.splitlines()
            if re.match(r"^\s*[-*\u2022]\s+\S", ln) and PRIOR_MARK not in ln
            and not any(_squash(ln)[:60] in k for k in known)]  # quoted here in full anyway


def _squash(text: str) -> str:
    """Text without list markers, quotes and spacing, for matching a quoted message."""
    return re.sub(r"[\s\"'`*\-\u201c\u201d]+", "", text)


def all_user_messages(lines: list[str]) -> str:
    return "\n".join(lines) or "None."


def elide(lines: list[str], keep: int) -> list[str]:
    """The first and last messages, ``keep`` in all, with a note for those left out."""
    if len(lines) <= keep:
        return lines
    head = max(1, keep // 4)
    tail = max(1, keep - head)
    left = len(lines) - head - tail
    return [*lines[:head], f"- [{left} more user messages here are left out to fit the size "
                           "bound; the transcript holds them]", *lines[-tail:]]


def pending_tasks(v: View, f: float) -> str:
    facts, lines = v.facts, []
    todos = facts.todos.items
    open_items = [(s, c) for s, c in todos if s != "completed"]
    done = [c for s, c in todos if s == "completed"]
    settled: list[str] = []
    for status, content in open_items:
        if facts.settled(content, facts.todo_at):
            settled.append(content)
        else:
            lines.append(f"- [{status}] {clip(content, 300)}")
    for item in _earlier_pending(v):
        if facts.settled(item, 0) is None:
            lines.append(f"- [from the earlier summary] {clip(item, 300)}")
    latest = facts.latest_request
    if latest is not None and not facts.latest_answered:
        lines.append("- [in_progress] The user's latest request, not finished when the history "
                     f"ends: \"{clip(latest.text, max(150, int(600 * f)))}\"")
    for message in _unanswered_queued(facts, latest):
        lines.append(f"- [pending] Queued by the user, not yet answered: \"{clip(message.text, 300)}\"")
    if settled:
        lines.append("- Done since the todo list was last updated (the session says so): "
                     + "; ".join(clip(c, 100) for c in settled))
    if done and f > 0:
        lines.append(f"- Completed ({len(done)}): " + "; ".join(clip(c, 80) for c in done[-max(1, int(8 * f)):]))
    if not lines:
        return "None: the last request was answered and no todo item is open."
    return "\n".join(lines)


def _earlier_pending(v: View) -> list[str]:
    body = v.prior.get(HEADINGS[6], "")
    items = [re.sub(r"^\s*[-*\u2022]\s*(\[\w+\]\s*)?", "", ln).strip() for ln in body.splitlines()
             if re.match(r"^\s*[-*\u2022]\s+\S", ln) and PRIOR_MARK not in ln]
    return [i for i in items if i and not i.lower().startswith(("none", "completed"))]


def _unanswered_queued(facts: Facts, latest: Message | None) -> list[Message]:
    """Queued messages after the assistant's last reply, other than the latest request."""
    return [m for m in facts.messages if m.kind == QUEUED and m.position > facts.answered_at
            and m is not latest]


def current_work(v: View, f: float) -> str:
    facts, lines = v.facts, []
    if facts.latest_answered:  # a report: Problem Solving has its lines, this is its opening
        lines.append("The assistant's last reply began: "
                     + clip(_plain(facts.last_said), max(120, int(300 * f))))
    elif facts.last_said:
        lines.append("Last thing the assistant said:\n"
                     + indent(clip(facts.last_said, max(200, int(600 * f)))))
    lines.extend(_task_lines(v, f))
    # the calls in flight say where the work stands; after a reply, the reply says it
    recent = list(facts.recent)[-max(1, int(3 * f)):] if not facts.latest_answered else []
    last = recent[-1] if recent and facts.latest_request is not None else None
    if last is not None and not last.is_error:  # Optional Next Step names it
        recent.pop()
    if recent:
        lines.append("Tool calls before the last one:" if last is not None and last not in recent
                     else "Latest tool calls:")
        for call in recent:
            status = "error" if call.is_error else "ok" if call.has_result else "no result"
            lines.append(f"- {describe_call(call, 140)} ({status})")
    lines.extend(_state_lines(facts))
    return "\n".join(lines) or "Nothing in progress."


def _task_lines(v: View, f: float) -> list[str]:
    """The task in progress at the cut: its name and what it is, then what of its plan (the
    issue as the tracker showed it, the description the agent wrote) the record shows not done -
    the files it names that no change touched since the task started, read or not, and the
    plan's lines about them."""
    facts, work = v.facts, v.facts.work
    name = work.active
    if not name or facts.settled(name, facts.todo_at):
        return []
    task = work.tasks.get(name)
    what = work.titles.get(name) or (task.detail if task else "")
    lines = [f"Task in progress: {clip(name, 300)}"
             + (f" - {first_sentence(what, 200)}" if what and what != name else "")]
    plan = work.plans.get(name) or (task.detail if task else "")
    start = task.changed if task else 0
    named = [p for p in dict.fromkeys(paths_in(plan))  # a file, not a library (highlight.js)
             if "/" in p or any(_same(path, p) for path, t in facts.files.items() if t.worked_on)]
    untouched = [p for p in named
                 if not any(w.last > start for path, w in work.files.items() if _same(path, p))]
    if not untouched:
        return lines
    before = {p for p in untouched if any(_same(path, p) for path in work.files)}
    read = {p for p in untouched
            if any(t.reads for path, t in facts.files.items() if _same(path, p))}
    # those this session never changed first, those it read first among them
    untouched.sort(key=lambda p: (p in before, p not in read))
    shown = untouched[:max(3, int(PLAN_FILES * f))]
    lines.append(_name_list("Files of its plan not changed since it started", [
        p + (" (changed before it started)" if p in before else " (read)" if p in read else "")
        for p in untouched], len(shown)))
    steps = [line for line in (_MARK.sub("", ln).strip() for ln in plan.splitlines())
             if any(p in line for p in untouched) and len(line.split()) >= 4]
    lines.extend(f"- Still to do by its plan: {clip(line, 200)}"
                 for line in list(dict.fromkeys(steps))[:max(2, int(PLAN_LINES * f))])
    return lines


def _same(path: str, named: str) -> bool:
    """``path`` (as a tool gave it) is the file a plan names (often relative to the project)."""
    return path == named or path.endswith("/" + named.lstrip("./"))


_MARK = re.compile(LIST_MARK)


def _plain(text: str) -> str:
    """Text on one line, without headings, emphasis, list marks and filler ("Perfect!")."""
    lines = [re.sub(r"^\s*(?:#+|[-*\u2022]|\d+[.)])\s*", "", ln).replace("**", "").strip()
             for ln in text.splitlines()]
    joined = " ".join(ln for ln in lines if ln and not ln.startswith(("```", "|")))
    return re.sub(r"^(?:(?:perfect|great|excellent|done|good|ok(?:ay)?)[!.:]\s*)+", "", joined,
                  flags=re.IGNORECASE)


def _state_lines(facts: Facts) -> list[str]:
    """Tests, builds, commits and pushes: the evidence of where the work stands."""
    lines = []
    test = facts.last_test
    if test is not None and not test.has_result:
        lines.append(f"- Last test run: {describe_call(test, 120)} had no result yet.")
    checks = sorted(facts.work.checks.values(), key=lambda c: c.position)[-2:]
    for check in checks:
        after = "after the last change" if check.position > facts.work.last_change else \
            "before the last change (not rerun since)"
        outcome = "passed" if check.passed else "failed"
        detail = f" ({clip(check.detail, 160)})" if check.detail else ""
        lines.append(f"- `{clip(check.command, 100)}` {outcome} {after}{detail}.")
    pending = [p for p in facts.work.since_commit if p in facts.work.files]
    if pending and facts.work.commits:
        lines.append(_name_list("Changed since the last commit", [p.rsplit("/", 1)[-1] for p in pending], 8))
    commit, push = facts.last_commit, facts.last_push
    if commit is not None:
        told = commit_told(_command(commit), commit.result) or describe_call(commit, 60)
        outcome = _outcome(commit)
        pushed = push is not None and push.order > commit.order and _outcome(push) == "done"
        # the session pushes with git, but not since this commit: the remote lacks it
        behind = push is not None and push.order < commit.order and outcome == "done" \
            and _GIT_PUSH.search(_command(push)) is not None
        lines.append(f"- Last commit: {told} {outcome}"
                     + (", then " + _pushed(push) if pushed else "")
                     + (", not pushed (the last `git push` came before it)" if behind else "")
                     + _later(facts, push if pushed else commit) + ".")
        push = None if pushed or behind else push
    if push is not None:
        lines.append(f"- Last push or pull request: {describe_call(push, 60)} {_outcome(push)}"
                     f"{_later(facts, push)}.")
    return lines


def _outcome(call: ToolCall) -> str:
    """How a commit or push ended: done, failed (the error's gist), stopped by the user."""
    if call.is_error and is_noise(call, call.result) and "Exit code" not in call.result[:20]:
        return "not made: the user stopped it"  # their words are among their messages
    if call.is_error:
        return f"failed: {failure_gist(call.result, 160)}"
    return "done" if call.has_result else "no result yet"


def _command(call: ToolCall) -> str:
    return str(call.input.get("command") or "") if isinstance(call.input, dict) else ""


_GIT_PUSH = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?push\b([^&|;\n]*)")


def _pushed(push: ToolCall) -> str:
    """``pushed to origin main`` (a ``git push``), or the pull request command and ``done``."""
    found = _GIT_PUSH.search(_command(push))
    if found is None:
        return describe_call(push, 60) + " done"
    target = [w for w in found.group(1).split() if not w.startswith("-")][:2]
    return "pushed" + (" to " + " ".join(target) if target else "")


def _later(facts: Facts, call: ToolCall) -> str:
    return " (files changed after it)" if call.order < facts.last_edit_call else ""


def next_step(v: View, f: float) -> str:
    facts, lines = v.facts, []
    latest = facts.latest_request
    active = [c for s, c in facts.todos.items if s == "in_progress"
              and not facts.settled(c, facts.todo_at)]
    queued = _unanswered_queued(facts, latest)
    if latest is not None and not facts.latest_answered:
        lines.append("Continue the user's latest request, verbatim: \""
                     + clip(latest.text, max(150, int(800 * f))) + "\"")
        if active:
            lines.append(f"The task in progress: {clip(active[0], 300)}")
        if facts.recent:
            call = facts.recent[-1]
            lines.append(f"The last tool call: {describe_call(call, 140)}"
                         + (" (no result yet)" if not call.has_result else ""))
    elif queued:
        lines.append(f"Answer the user's queued message: \"{clip(queued[0].text, 400)}\"")
    elif latest is not None:
        said = facts.last_said
        if said.rstrip().endswith("?"):
            question = re.split(r"(?<=[.!])\s+", said.strip())[-1]
            lines.append(f"The assistant asked the user: \"{clip(question, 300)}\" - wait for the answer.")
        else:  # the request itself is quoted above, under the user's messages
            lines.append("The latest request was answered; the assistant's last words: \""
                         + first_sentence(said, 200)
                         + "\". Nothing further was asked for: wait for the user.")
    return "\n".join(lines) or "None."


# --- putting it together ---------------------------------------------------------------------------

def render(v: View, f: float, messages: list[str]) -> str:
    rest = [primary_request(v, f), files_and_code(v, f), errors_and_fixes(v, f)]
    rest += [problem_solving(v, f, "\n".join(rest[1:])), all_user_messages(messages),
             pending_tasks(v, f), current_work(v, f), next_step(v, f)]
    # the names in play: those the other sections do not already show
    bodies = (rest[0], key_concepts(v, f, "\n".join(rest)), *rest[1:])
    return "\n\n".join(f"{n}. {title}:\n{indent(body)}"
                       for n, (title, body) in enumerate(zip(HEADINGS, bodies), start=1))


def target_tokens(facts: Facts, max_summary_tokens: int) -> int:
    """The size to aim for: a share of the history, within the bound."""
    return min(max_summary_tokens, BASE_TOKENS + int(SHARE * facts.chars / 4))


class OfflineRun:
    """The offline summary made as the turns come (:class:`ctxtool.llm.base.TurnSink`): the
    facts are gathered from each turn and the turns are not kept."""

    def __init__(self) -> None:
        self.facts = Facts()

    def add(self, turn: Turn) -> None:
        self.facts.add(turn)

    def compaction(self) -> None:
        """An earlier compaction ends here (names not seen since count less)."""
        self.facts.compacted_at = self.facts.position

    def finish(self, request: SummaryRequest) -> str:
        return summary_of(request, self.facts)


def offline_summary(request: SummaryRequest) -> str:
    """The nine-section summary of ``request`` (see the module docstring)."""
    run = OfflineRun()
    for index, turn in enumerate(request.turns):
        if index == request.since:
            run.compaction()
        run.add(turn)
    return run.finish(request)


def summary_of(request: SummaryRequest, facts: Facts) -> str:
    facts.end_turn()
    view = View(request, facts)
    target = view.target
    messages = message_lines(view, MESSAGE_CAP)
    for f in DETAIL:
        text = render(view, f, messages)
        if estimate_text_tokens(text) <= target:
            return text
    # the user messages alone outgrow the target: very long ones give way
    for f, cap in SQUEEZE:
        messages = message_lines(view, cap)
        text = render(view, f, messages)
        if estimate_text_tokens(text) <= target:
            return text
    for cap in BOUND_CAPS:
        if estimate_text_tokens(text) <= request.max_summary_tokens:
            return text
        messages = message_lines(view, cap)
        text = render(view, 0.0, messages)
    keep = len(messages)
    while estimate_text_tokens(text) > request.max_summary_tokens and keep > 2:
        keep = keep * 2 // 3
        text = render(view, 0.0, elide(messages, keep))
    return text


class OfflineSummarizer:
    """Extracts the nine sections from the transcript itself (see above).
    Also a :class:`ctxtool.llm.base.StreamingSummarizer`: :meth:`begin` reads turns one by one."""

    name = "offline"
    model: str | None = None

    def summarize(self, request: SummaryRequest, *, progress: Progress = no_progress) -> SummaryResult:
        text = offline_summary(request)
        if request.agent_prompt is not None:  # the agent's own template, filled from the nine
            text = request.agent_prompt.from_sections(text)
        return SummaryResult(text=text, backend=self.name, chunks=1)

    def begin(self) -> OfflineSink:
        return OfflineSink(self.name)


class OfflineSink:
    """:class:`ctxtool.llm.base.TurnSink` over :class:`ctxtool.core.summarizing.offline.OfflineRun`."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.run = OfflineRun()

    def add(self, turn: Turn) -> None:
        self.run.add(turn)

    def compaction(self) -> None:
        self.run.compaction()

    def finish(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(text=self.run.finish(request), backend=self.backend, chunks=1)
