#!/usr/bin/env python3
"""Score the offline summary against the summaries Claude Code itself wrote.

Real sessions hold their own answer key: wherever Claude Code compacted, the ``isCompactSummary``
user entry right after the ``compact_boundary`` is the summary Claude wrote of the history before
it. For every such compaction in a folder of transcripts (older ``type: "summary"`` lines do not
count), this script summarizes that same history with ``ctxtool summarize --llm offline`` (the
core function, same options) and compares the two, counting only what Claude's summary names and
the history really contains:

* user messages - items of Claude's "All user messages" list found in ctxtool's list (matched on
  the quoted words, punctuation and case ignored);
* paths - file paths Claude names, by basename, found anywhere in ctxtool's summary;
* identifiers - names Claude puts in backticks (CamelCase, snake_case, ``x.y`` members, ``f()``
  calls, ``Test*``), found in ctxtool's summary;
* stale pending items - items ctxtool lists under Pending Tasks that Claude's summary reports as
  done (a line outside Claude's Pending Tasks, Current Work and Next Step with a completion word
  sharing most of the item's words) and that none of those three sections holds;
* work items - the lines of Claude's summary (outside All user messages, Pending Tasks and
  Optional Next Step) that report work done: one of the verbs of :data:`WORK_VERBS` (or a check
  mark) and at least 3 key words (names, and words of 4 letters or more that are neither common
  English (:data:`COMMON`) nor those verbs); an item is recalled when one line of ctxtool's
  summary, at most :data:`WORK_LINE_CHARS` characters long, shares at least 3 and at least 60%
  of its key words. Beside it, the *ceiling* of copying: the items that the best single line
  (or sentence) of the history itself would recall, its prose, thinking, tool inputs and results
  each cut to that length - what a summary that only picks lines from the record could reach;
* settled pending items - items ctxtool lists under Pending Tasks whose latest state in the
  history's own task records (every agent's todo or plan tool, through its adapter) is completed;
* size - ctxtool's summary over Claude's (the nine sections, the analysis scratchpad left out;
  ``size_with_analysis`` counts it in), in estimated tokens; and each section's share of both.

A history "starts at the session's start" when its first message (or system line) has no parent or
one earlier in the file (progress lines often point to entries never written); cases
that start mid-session (a slice of a longer session) are reported with ``--all`` only.

    python scripts/score_summaries.py ../shared/corpus
    python scripts/score_summaries.py --json ../shared/corpus > score.json
    python scripts/score_summaries.py --all --max-summary-tokens 6000 ~/.claude/projects
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxtool.core.sizing.tokens import estimate_text_tokens  # noqa: E402
from ctxtool.core.summarizing.offline import OfflineSummarizer  # noqa: E402
from ctxtool.core.summarizing.prompt import HEADINGS, split_sections, summary_body  # noqa: E402
from ctxtool.core.summarizing.request import entry_turns  # noqa: E402
from ctxtool.core.summarizing.summarize import SummarizeOptions, compact  # noqa: E402
from ctxtool.core.summarizing.tools import TodoList, ToolCall  # noqa: E402
from ctxtool.formats.claude_code.chain import is_compact_boundary, is_compact_summary  # noqa: E402
from ctxtool.formats.jsonl import iter_entries  # noqa: E402
from ctxtool.types import CLAUDE_CODE, Entry  # noqa: E402

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
USER_MESSAGES, PENDING = HEADINGS[5], HEADINGS[6]
_QUOTED = re.compile(r"\"([^\"]+)\"|\u201c([^\u201d]+)\u201d")
_EDITORIAL = re.compile(r"\[[^\]]*\]|\.\.\.|\u2026")
_BACKTICKED = re.compile(r"(?<!`)`([^`\n]{3,80})`(?!`)")
_IDENT = re.compile(r"^[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\(\))?$")
_PATH = re.compile(r"(?:~|\.{1,2})?(?:/?[\w.@+-]+/)+[\w.@+-]+\.[A-Za-z0-9]{1,6}\b|"
                   r"\b[\w-]+\.(?:py|go|ts|tsx|js|jsx|rs|md|json|jsonl|yaml|yml|toml|sh|txt|"
                   r"html|css|sql|java|kt|swift|c|h|cpp|rb|ex|exs|heex|lock|mod|sum|cfg|ini)\b")
_FILE_EXT = re.compile(r"\.(?:py|go|ts|tsx|js|jsx|rs|md|json|jsonl|ya?ml|toml|sh|txt|ex|exs|"
                       r"heex|lock|mod|sum|html|css|sql)$")
_DONE = re.compile(r"\b(done|fixed|completed?|committed|merged|pushed|passed|passing|resolved|"
                   r"implemented|added|created|removed|updated|finished|verified|succeeded)\b",
                   re.IGNORECASE)
# the work figure (issue 28): its verbs, key words and the longest line of ctxtool's that counts
WORK_VERBS = ("done", "fixed", "completed", "resolved", "implemented", "merged", "committed",
              "pushed", "created", "added", "wrote", "written", "updated", "modified",
              "refactored", "removed", "replaced", "renamed", "extracted", "migrated", "passing",
              "passed")
_WORK_VERB = re.compile(r"\b(?:" + "|".join(WORK_VERBS) + r")\b|\u2705", re.IGNORECASE)
WORK_LINE_CHARS = 400
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"[A-Za-z0-9_]*[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*")
_NAME = re.compile(r"[_.\d]|[a-z][A-Z]|^[A-Z]{2,}$")
COMMON = frozenset("""
about above across actually after again against almost along already also although always among
another anything around away back based because become been before behind being below better
between both bring brought came cannot case cases change changes changed check checks come comes
could current currently does doing down during each either else even every everything example
exactly first following found from full further gave give given gives going good great have
having help here however instead into itself just keep kept know last later least less like
line lines made make makes making many more most much must need needed needs never next none
note nothing once only onto other others over part place proper properly rather really right
same seen several should show shows similar since some something still such sure take taken than
that their them then there these they thing things this those though through thus together
under unless until upon used uses using very want wanted well went were what whatever when
where whether which while whole will with within without work worked working works would your
""".split())
_WORD = re.compile(r"[A-Za-z_][\w.]{3,}")
_STOP = {"with", "that", "this", "from", "into", "should", "would", "have", "when", "then",
         "task", "tasks", "pending", "completed", "progress", "in_progress", "user", "also"}


@dataclass
class Case:
    file: str
    line: int  # of the compact boundary
    from_start: bool
    user_messages: list[int] = field(default_factory=lambda: [0, 0])  # kept, listed by Claude
    paths: list[int] = field(default_factory=lambda: [0, 0])
    identifiers: list[int] = field(default_factory=lambda: [0, 0])
    stale_pending: list[str] = field(default_factory=list)
    work_items: list[int] = field(default_factory=lambda: [0, 0])  # recalled, in Claude's
    # recalled by the best single line of the history itself: what copying one line could reach
    work_ceiling: list[int] = field(default_factory=lambda: [0, 0])
    settled_pending: list[str] = field(default_factory=list)  # the history's tasks say done
    pending_listed: int = 0  # open items in ctxtool's Pending Tasks
    claude_tokens: int = 0
    claude_tokens_with_analysis: int = 0
    ctxtool_tokens: int = 0
    cut_markers: int = 0
    missing_user_messages: list[str] = field(default_factory=list)
    missing_paths: list[str] = field(default_factory=list)
    missing_identifiers: list[str] = field(default_factory=list)
    missing_work: list[str] = field(default_factory=list)
    shares: dict[str, list[float]] = field(default_factory=dict)  # section: [ctxtool, claude]

    def ratio(self, pair: list[int]) -> float | None:
        return pair[0] / pair[1] if pair[1] else None

    @property
    def size(self) -> float:
        return self.ctxtool_tokens / max(1, self.claude_tokens)


# --- finding the compactions --------------------------------------------------------------------

def _text(entry: dict[str, Any]) -> str:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict):
            parts.append(str(block.get("text") or ""))
    return "\n".join(parts)


def compactions(path: Path) -> list[tuple[int, list[Entry], str, bool]]:
    """(boundary line, history before it, Claude's summary text, history starts at the start)."""
    with path.open("rb") as handle:
        entries = [e for e in iter_entries(handle, str(path), on_invalid="skip")
                   if not e.invalid]
    found = []
    seen: set[str] = set()
    from_start: bool | None = None  # decided by the first message or system entry
    for index, entry in enumerate(entries):
        parent = entry.get("parentUuid")
        if from_start is None and entry.get("type") in ("user", "assistant", "system"):
            from_start = not isinstance(parent, str) or parent in seen
        if isinstance(entry.get("uuid"), str):
            seen.add(entry["uuid"])
        if not is_compact_boundary(entry):
            continue
        summary = next((e for e in entries[index + 1:index + 6] if is_compact_summary(e)), None)
        if summary is None:
            continue
        found.append((entry.lineno, entries[:index], _text(summary), bool(from_start)))
    return found


# --- matching -----------------------------------------------------------------------------------

def squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def _items(section: str) -> list[str]:
    """Top-level list items of a section (a sub-list stays with its item)."""
    items: list[str] = []
    for line in section.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        top = re.match(r"^\s{0,3}(?:[-*\u2022]|\d+[.)])\s+", line)
        if top or not items:
            items.append(stripped)
        else:
            items[-1] += "\n" + stripped
    return items


def _fragments(item: str) -> list[str]:
    quoted = ["".join(m) for m in _QUOTED.findall(item)]
    sources = quoted or [re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s+", "", item)]
    fragments = []
    for source in sources:
        for piece in _EDITORIAL.split(source):
            key = squash(piece)
            if len(key) >= 10:
                fragments.append(key[:40])
    return fragments


def _history_text(history: list[Entry]) -> tuple[str, str]:
    """(the squashed text of every user-side entry, every entry's raw text) of a history."""
    user = []
    raw = []
    for entry in history:
        body = (entry.raw or b"").decode("utf-8", "replace")
        raw.append(body)
        if entry.get("type") in ("user", "queue-operation", "attachment"):
            user.append(body)
    joined = "\n".join(user).replace("\\n", "\n").replace('\\"', '"')
    return squash(joined), "\n".join(raw)


def score_user_messages(case: Case, claude: dict[str, str], ours: dict[str, str],
                        history_user: str) -> None:
    listed = squash(ours.get(USER_MESSAGES, ""))
    for item in _items(claude.get(USER_MESSAGES, "")):
        fragments = [f for f in _fragments(item) if f in history_user]
        if not fragments:
            continue  # a paraphrase, or not in this history: not counted
        case.user_messages[1] += 1
        if any(f in listed for f in fragments):
            case.user_messages[0] += 1
        else:
            case.missing_user_messages.append(item[:160])


def _paths(text: str) -> set[str]:
    return {m.group(0).rstrip(".").rsplit("/", 1)[-1] for m in _PATH.finditer(text)
            if not m.group(0).startswith(("http", "www."))}


def _identifiers(text: str) -> set[str]:
    names = set()
    for span in _BACKTICKED.findall(text):
        span = span.strip()
        if not _IDENT.match(span) or _FILE_EXT.search(span):
            continue
        name = span.removesuffix("()")
        inner_upper = re.search(r"[a-z][A-Z]", name) or re.match(r"^[A-Z][a-z]+[A-Z]", name)
        if inner_upper or "_" in name.strip("_") or "." in name or "::" in name \
                or span.endswith("()") or name.startswith("Test"):
            names.add(name)
    return names


def score_names(case: Case, claude_body: str, ours: str, history_raw: str) -> None:
    for names, pair, missing in ((_paths(claude_body), case.paths, case.missing_paths),
                                 (_identifiers(claude_body), case.identifiers,
                                  case.missing_identifiers)):
        for name in sorted(n for n in names if n in history_raw):
            pair[1] += 1
            if name in ours:
                pair[0] += 1
            else:
                missing.append(name)


def _words(text: str) -> set[str]:
    return {w.lower().strip(".") for w in _WORD.findall(text)} - _STOP


def _overlap(item: set[str], other: str) -> float:
    return len(item & _words(other)) / len(item) if item else 0.0


def _open_items(ours: dict[str, str]) -> list[str]:
    return [line for line in _items(ours.get(PENDING, ""))
            if re.match(r"^[-*]\s+\[(pending|in_progress|open)\]|^[-*]\s+(?!Completed)", line)
            and "earlier summary" not in line.lower()]


def score_pending(case: Case, claude: dict[str, str], ours: dict[str, str]) -> None:
    open_items = _open_items(ours)
    case.pending_listed = len(open_items)
    still_open = (PENDING, HEADINGS[7], HEADINGS[8])  # pending, current work, next step
    theirs = [line for title in still_open for line in _items(claude.get(title, ""))]
    done_lines = [line for title, body in claude.items() if title not in still_open
                  for line in body.splitlines() if _DONE.search(line)]
    for item in open_items:
        words = _words(re.sub(r"^[-*]\s+\[\w+\]\s*", "", item))
        if len(words) < 2 or any(_overlap(words, t) >= 0.5 for t in theirs):
            continue
        if any(_overlap(words, line) >= 0.6 for line in done_lines):
            case.stale_pending.append(item[:160])


def key_words(text: str) -> set[str]:
    """The key words of a line (see the module docstring), lower case."""
    keys = set()
    for token in _TOKEN.findall(text):
        word = token.lower()
        if _NAME.search(token) and len(token) >= 2 or \
                len(token) >= 4 and word not in COMMON and word not in WORK_VERBS:
            keys.add(word)
    return keys


def work_items(claude: dict[str, str]) -> list[tuple[str, set[str]]]:
    """(line, key words) of every work item of Claude's sections."""
    skipped = (USER_MESSAGES, PENDING, HEADINGS[8])
    items = []
    for title, body in claude.items():
        if title in skipped:
            continue
        for line in body.splitlines():
            keys = key_words(line)
            if _WORK_VERB.search(line) and len(keys) >= 3:
                items.append((line.strip(), keys))
    return items


def _recalls(keys: set[str], lines: list[set[str]]) -> bool:
    need = max(3, 0.6 * len(keys))
    return any(len(keys & line) >= need for line in lines)


def score_work(case: Case, claude: dict[str, str], ours_text: str,
               history_lines: list[set[str]]) -> None:
    lines = [key_words(line) for line in ours_text.splitlines()
             if line.strip() and len(line.strip()) <= WORK_LINE_CHARS]
    for item, keys in work_items(claude):
        case.work_items[1] += 1
        case.work_ceiling[1] += 1
        case.work_ceiling[0] += _recalls(keys, history_lines)
        if _recalls(keys, lines):
            case.work_items[0] += 1
        else:
            case.missing_work.append(item[:200])


def _block_texts(entry: Entry) -> list[str]:
    """Every text of an entry's message: prose, thinking, tool inputs (as JSON) and results."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [content]
    texts = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            texts.append(json.dumps(block.get("input"), ensure_ascii=False).replace("\\n", "\n"))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            texts.append(inner if isinstance(inner, str) else
                         "\n".join(str(p.get("text") or "") for p in inner or ()
                                   if isinstance(p, dict)))
        else:
            texts.append(str(block.get("text") or block.get("thinking") or ""))
    return texts


def history_line_keys(history: list[Entry]) -> list[set[str]]:
    """The key words of every line and sentence of the history, each cut to the longest line
    that counts: the lines a summary made by copying one line of the record could hold."""
    keys = []
    for entry in history:
        for text in _block_texts(entry):
            for line in text.splitlines():
                pieces = {line.strip()} | set(_SENTENCE_END.split(line.strip()))
                keys.extend(key_words(p[:WORK_LINE_CHARS]) for p in pieces if p)
    return keys


def history_task_states(history: list[Entry]) -> dict[str, str]:
    """The latest status of every task the history's task tools name (content: status)."""
    tasks = TodoList()
    states: dict[str, str] = {}
    calls: dict[str, ToolCall] = {}
    for entry in history:
        for turn in entry_turns(entry, CLAUDE_CODE):
            for block in turn.blocks:
                if block.get("type") == "tool_use":
                    call = ToolCall(len(calls), str(block.get("id")), str(block.get("name")),
                                    block.get("input"))
                    calls[call.id] = call
                    changed = tasks.apply_call(call)
                elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                    call = calls[block["tool_use_id"]]
                    call.has_result, call.is_error = True, bool(block.get("is_error"))
                    call.result = str(block.get("content") or "")
                    changed = tasks.apply_result(call)
                else:
                    continue
                if changed:
                    states.update({content: status for status, content in tasks.items})
    return states


def score_settled(case: Case, ours: dict[str, str], states: dict[str, str]) -> None:
    done = [key_words(content) for content, status in states.items() if status == "completed"]
    for item in _open_items(ours):
        keys = key_words(re.sub(r"^[-*]\s+\[\w+\]\s*", "", item))
        if keys and any(len(keys & d) >= max(1, 0.8 * len(keys)) for d in done):
            case.settled_pending.append(item[:160])


def _shares(sections: dict[str, str]) -> dict[str, float]:
    sizes = {title: estimate_text_tokens(body) for title, body in sections.items()}
    total = max(1, sum(sizes.values()))
    return {title: size / total for title, size in sizes.items()}


def score(path: Path, line: int, history: list[Entry], claude_text: str, from_start: bool,
          max_summary_tokens: int) -> Case | None:
    body = summary_body(claude_text)
    claude = split_sections(body)
    if claude is None:
        return None  # not a nine-section summary (a fixture's placeholder)
    options = SummarizeOptions(max_summary_tokens=max_summary_tokens, now=NOW)
    done = compact(history, fmt=CLAUDE_CODE, summarizer=OfflineSummarizer(), options=options)
    ours_text = done.summary or ""
    ours = split_sections(ours_text) or {}
    case = Case(str(path), line, from_start)
    history_user, history_raw = _history_text(history)
    score_user_messages(case, claude, ours, history_user)
    score_names(case, body, ours_text, history_raw)
    score_pending(case, claude, ours)
    score_work(case, claude, ours_text, history_line_keys(history))
    score_settled(case, ours, history_task_states(history))
    case.claude_tokens = estimate_text_tokens(body)
    analysis = claude_text.split("\nSummary:\n", 1)[0] if "\nSummary:\n" in claude_text else ""
    case.claude_tokens_with_analysis = case.claude_tokens + estimate_text_tokens(analysis)
    case.ctxtool_tokens = estimate_text_tokens(ours_text)
    case.cut_markers = ours_text.count("cut by ctxtool]")
    mine, theirs = _shares(ours), _shares(claude)
    case.shares = {t: [round(mine.get(t, 0.0), 3), round(theirs.get(t, 0.0), 3)] for t in HEADINGS}
    return case


# --- reporting ----------------------------------------------------------------------------------

def aggregate(cases: list[Case]) -> dict[str, Any]:
    def values(attr: str) -> list[float]:
        return [r for c in cases if (r := c.ratio(getattr(c, attr))) is not None]

    def pooled(attr: str) -> float | None:
        kept = sum(getattr(c, attr)[0] for c in cases)
        total = sum(getattr(c, attr)[1] for c in cases)
        return kept / total if total else None

    out: dict[str, Any] = {"cases": len(cases)}
    for attr in ("user_messages", "paths", "identifiers", "work_items", "work_ceiling"):
        vals = values(attr)
        out[attr] = {"mean": statistics.fmean(vals) if vals else None,
                     "median": statistics.median(vals) if vals else None,
                     "min": min(vals) if vals else None, "pooled": pooled(attr)}
    out["cases_with_stale_pending"] = sum(1 for c in cases if c.stale_pending)
    out["stale_pending_items"] = sum(len(c.stale_pending) for c in cases)
    out["cases_with_settled_pending"] = sum(1 for c in cases if c.settled_pending)
    out["settled_pending_items"] = sum(len(c.settled_pending) for c in cases)
    sizes = [c.size for c in cases]
    out["size_median"] = statistics.median(sizes) if sizes else None
    out["size_with_analysis_median"] = statistics.median(
        [c.ctxtool_tokens / max(1, c.claude_tokens_with_analysis) for c in cases]) if cases else None
    out["cut_markers"] = sum(c.cut_markers for c in cases)
    out["section_share_mean"] = {t: [round(statistics.fmean(c.shares[t][i] for c in cases), 3)
                                     for i in (0, 1)] for t in HEADINGS} if cases else {}
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def print_table(cases: list[Case], total: dict[str, Any]) -> None:
    print(f"{'case':<50} {'user':>9} {'paths':>9} {'idents':>9} {'work':>9} {'stale':>5} "
          f"{'settl':>5} {'size':>5}")
    for c in cases:
        name = f"{Path(c.file).name[:40]}:{c.line}" + ("" if c.from_start else " *")
        cells = [f"{_pct(c.ratio(p))} {p[0]}/{p[1]}" for p in (c.user_messages, c.paths,
                                                                c.identifiers, c.work_items)]
        print(f"{name:<50} {cells[0]:>9} {cells[1]:>9} {cells[2]:>9} {cells[3]:>9} "
              f"{len(c.stale_pending):>5} {len(c.settled_pending):>5} {c.size:>5.2f}")
    u, p, i = total["user_messages"], total["paths"], total["identifiers"]
    w = total["work_items"]
    print(f"\n{total['cases']} cases; user messages mean {_pct(u['mean'])} (min {_pct(u['min'])}), "
          f"paths mean {_pct(p['mean'])}, identifiers median {_pct(i['median'])} "
          f"(mean {_pct(i['mean'])}), work items mean {_pct(w['mean'])} "
          f"(median {_pct(w['median'])}, pooled {_pct(w['pooled'])}; one line of the history "
          f"at best {_pct(total['work_ceiling']['mean'])}), "
          f"stale pending in {total['cases_with_stale_pending']} cases, settled pending in "
          f"{total['cases_with_settled_pending']} cases, "
          f"size ctxtool/Claude median {total['size_median']:.2f} "
          f"({total['size_with_analysis_median']:.2f} counting Claude's analysis), "
          f"{total['cut_markers']} cut markers")
    print("section shares (ctxtool / Claude): " + ", ".join(
        f"{t} {100 * a:.0f}/{100 * b:.0f}%" for t, (a, b) in total["section_share_mean"].items()))
    for c in cases:
        for label, missing in (("user message", c.missing_user_messages),
                               ("path", c.missing_paths), ("identifier", c.missing_identifiers),
                               ("work item", c.missing_work)):
            for item in missing:
                print(f"  {Path(c.file).name[:40]}:{c.line} missing {label}: {item}",
                      file=sys.stderr)
        for label, items in (("stale pending", c.stale_pending),
                             ("settled pending", c.settled_pending)):
            for item in items:
                print(f"  {Path(c.file).name[:40]}:{c.line} {label}: {item}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders of .jsonl transcripts")
    parser.add_argument("--all", action="store_true",
                        help="also score histories that start mid-session (marked *)")
    parser.add_argument("--max-summary-tokens", type=int, default=8000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    cases: list[Case] = []
    for folder in args.folders:
        files = [folder] if folder.is_file() else sorted(folder.rglob("*.jsonl"))
        for path in files:
            for line, history, text, from_start in compactions(path):
                if not from_start and not args.all:
                    continue
                case = score(path, line, history, text, from_start, args.max_summary_tokens)
                if case is not None:
                    cases.append(case)
    total = aggregate(cases)
    if args.json:
        json.dump({"aggregate": total, "cases": [asdict(c) for c in cases]}, sys.stdout, indent=1)
        print()
    elif cases:
        print_table(cases, total)
    else:
        print("no compaction with a summary of Claude's own found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
