"""The offline summary: the same nine sections a model writes, extracted deterministically.

No network and no model: the sections are built from what the transcript records.

1. Primary Request and Intent - the first user messages (and the earlier summary's intent);
2. Key Technical Concepts - working directory, branch, languages, tools and commands used;
3. Files and Code Sections - every file read, edited or written, with counts and its latest edit;
4. Errors and fixes - each failed tool call and what the assistant did next;
5. Problem Solving - per user request, what was done and the assistant's conclusion;
6. All user messages - every one, verbatim, each cut at a visible marker if very long;
7. Pending Tasks - the last todo-list state (TodoWrite, or TaskCreate/TaskUpdate);
8. Current Work - the last assistant text and its latest tool calls;
9. Optional Next Step - the task in progress and the user's latest words.

The result fits ``max_summary_tokens``: detail is given up section by section (snippets, then
older errors and turns, then long user messages are cut shorter) until it does. User messages are
never dropped; only when there are so many that even 80 characters each do not fit does the
summary exceed the bound. Sections of an earlier compaction summary are merged into the same
sections here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ctxtool.core.file_state import FileRecord, collect_file_state
from ctxtool.core.summary_prompt import HEADINGS, split_sections, summary_body
from ctxtool.core.summary_tools import (BOOKKEEPING, ToolCall, describe_call, error_gist,
                                        tool_calls, todo_state)
from ctxtool.core.tokens import estimate_text_tokens
from ctxtool.llm.base import ASSISTANT, PROMPT, SummaryRequest, Turn
from ctxtool.types import ANTHROPIC

# (detail factor for the other sections, cap in characters per user message), most detail first
LEVELS = ((1.0, 2000), (0.6, 2000), (0.35, 2000), (0.35, 1000), (0.2, 600), (0.2, 300),
          (0.1, 200), (0.05, 120), (0.02, 80), (0.0, 80))


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a visible marker saying how much was cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:max(0, limit)].rstrip()} [... {len(text) - limit} more characters cut by ctxtool]"


def indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


def first_line(text: str, limit: int) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return clip(line, limit)


@dataclass
class Facts:
    """What the sections are made from, extracted once."""

    request: SummaryRequest
    turns: tuple[Turn, ...]
    calls: list[ToolCall]
    files: list[FileRecord]
    todos: list[tuple[str, str]]
    prior: dict[str, str] | None
    prior_text: str

    @classmethod
    def of(cls, request: SummaryRequest) -> Facts:
        turns = request.turns
        # the turns as Anthropic messages, so file_state reads them like any transcript
        state = collect_file_state([{"role": t.role, "content": list(t.blocks)} for t in turns],
                                   ANTHROPIC)
        calls = tool_calls(turns)
        prior_text = summary_body(request.prior_summaries[-1]) if request.prior_summaries else ""
        prior = split_sections(prior_text) if prior_text else None
        return cls(request, turns, calls, state.recent(len(state.files)), todo_state(calls),
                   prior, prior_text)

    @property
    def user_messages(self) -> list[Turn]:
        return [t for t in self.turns if t.is_user_message]

    @property
    def latest_request(self) -> Turn | None:
        """The last message the user typed (a bare slash command only when there is none)."""
        typed = [t for t in self.turns if t.kind == PROMPT]
        messages = typed or self.user_messages
        return messages[-1] if messages else None

    def merged(self, title: str, limit: int) -> str:
        """This section of the earlier summary, as a paragraph to merge in ('' if none)."""
        if self.prior is None or limit <= 0 or not self.prior.get(title, "").strip():
            return ""
        return "From the earlier summary:\n" + indent(clip(self.prior[title], limit))


# --- sections --------------------------------------------------------------------------------------

def primary_request(facts: Facts, f: float) -> str:
    prompts = facts.user_messages
    lines: list[str] = []
    if prompts:
        lines.append("The session started with the user asking:")
        for turn in prompts[:3] if f > 0 else prompts[:1]:
            lines.append(indent("- " + clip(turn.text, max(150, int(1500 * f)))))
        latest = facts.latest_request
        if latest is not None and latest is not prompts[0]:
            lines.append("Latest request: " + clip(latest.text, max(150, int(800 * f))))
    if facts.request.instructions:
        lines.append("Focus asked for this summary: " + clip(facts.request.instructions, 1000))
    merged = facts.merged(HEADINGS[0], int(2500 * f))
    if merged:
        lines.append(merged)
    return "\n".join(lines) or "None recorded."


def key_concepts(facts: Facts, f: float) -> str:
    lines: list[str] = []
    if facts.request.cwd:
        lines.append(f"- Working directory: {facts.request.cwd}"
                     + (f" (git branch {facts.request.git_branch})" if facts.request.git_branch else ""))
    kinds = Counter(_extension(r.path) for r in facts.files if _extension(r.path))
    if kinds:
        lines.append("- File types: " + ", ".join(f"{ext} ({n})" for ext, n in kinds.most_common(8)))
    tools = Counter(call.name for call in facts.calls)
    if tools:
        lines.append("- Tools used: " + ", ".join(f"{n} x{c}" for n, c in tools.most_common(12)))
    commands = Counter(_command_word(c.input.get("command")) for c in facts.calls
                       if c.name == "Bash" and isinstance(c.input, dict))
    commands.pop("", None)
    if commands:
        lines.append("- Commands run: " + ", ".join(f"{w} x{n}" for w, n in commands.most_common(10)))
    merged = facts.merged(HEADINGS[1], int(1500 * f))
    if merged:
        lines.append(merged)
    return "\n".join(lines) or "None recorded."


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[1].lower() if "." in name.strip(".") else ""


def _command_word(command: object) -> str:
    """The program a shell command runs: ``cd app && FOO=1 pytest -q`` gives ``pytest``."""
    if not isinstance(command, str):
        return ""
    for part in re.split(r"&&|\|\||;|\|", command):
        words = [w for w in part.split() if "=" not in w and w != "sudo"]
        if words and words[0] != "cd":
            return words[0][:30]
    return ""


def files_and_code(facts: Facts, f: float) -> str:
    if not facts.files:
        return facts.merged(HEADINGS[2], int(2000 * f)) or "No files were read or changed."
    lines: list[str] = []
    snippets = max(0, int(8 * f))
    for rec in facts.files:
        counts = [f"{label} x{n}" for label, n in (("read", rec.reads), ("edited", rec.edits),
                                                    ("written", rec.writes)) if n]
        failed = f", {rec.failed} failed" if rec.failed else ""
        lines.append(f"- {rec.path} ({', '.join(counts)}{failed})")
        if rec.last_edit is not None and snippets > 0:
            lines.append(indent(_edit_snippet(rec.last_edit, int(900 * f)), "     "))
            snippets -= 1
    merged = facts.merged(HEADINGS[2], int(2000 * f))
    return "\n".join(lines + ([merged] if merged else []))


def _edit_snippet(edit: dict[str, object], limit: int) -> str:
    tool = edit.get("tool")
    if tool == "Write":
        return "Latest write, beginning:\n" + clip(str(edit.get("content") or ""), limit)
    edits = edit.get("edits")
    if tool == "MultiEdit" and isinstance(edits, list) and edits:
        last = edits[-1]
        edit = last if isinstance(last, dict) else {}
    if tool == "NotebookEdit":
        return "Latest edit (notebook cell):\n" + clip(str(edit.get("new_source") or ""), limit)
    old = first_line(str(edit.get("old_string") or ""), 120)
    return f"Latest edit, replacing \"{old}\" with:\n" + clip(str(edit.get("new_string") or ""), limit)


def errors_and_fixes(facts: Facts, f: float) -> str:
    failed = [c for c in facts.calls if c.is_error]
    lines: list[str] = []
    shown = failed[-max(0, int(20 * f)):] if f > 0 else []
    if len(failed) > len(shown):
        lines.append(f"- {len(failed) - len(shown)} {'earlier ' if shown else ''}tool calls failed.")
    for call in shown:
        lines.append(f"- {describe_call(call, 100)} failed: {error_gist(call.result, max(80, int(300 * f)))}")
        said = _said_after(facts.turns, call.result_turn)
        if said and f >= 0.2:
            lines.append(f"  The assistant then said: {first_line(said, max(100, int(400 * f)))}")
        lines.append(f"  Then: {_what_followed(facts.calls, call)}")
    merged = facts.merged(HEADINGS[3], int(1500 * f))
    if merged:
        lines.append(merged)
    return "\n".join(lines) or "No tool call failed."


def _said_after(turns: tuple[Turn, ...], index: int) -> str:
    """The first assistant text after turn ``index`` (before the next user message)."""
    for turn in turns[index + 1:] if index >= 0 else ():
        if turn.is_user_message:
            return ""
        text = "\n".join(str(b.get("text")) for b in turn.blocks if b.get("type") == "text").strip()
        if turn.kind == ASSISTANT and text:
            return text
    return ""


def _what_followed(calls: list[ToolCall], failed: ToolCall) -> str:
    later = [c for c in calls if c.order > failed.order and c.name not in BOOKKEEPING]
    if not later:
        return "nothing; the session stopped here."
    same = next((c for c in later if c.target and c.target == failed.target), None)
    nxt = same or later[0]
    outcome = "failed again" if nxt.is_error else "succeeded" if nxt.has_result else "no result yet"
    return f"{describe_call(nxt, 100)} {outcome}."


def problem_solving(facts: Facts, f: float) -> str:
    rounds = _rounds(facts.turns)
    lines: list[str] = []
    shown = rounds[-max(0, int(15 * f)):] if f > 0 else []
    if len(rounds) > len(shown):
        lines.append(f"- {len(rounds) - len(shown)} {'earlier ' if shown else ''}requests handled.")
    for prompt, tools, conclusion in shown:
        used = ", ".join(f"{n} x{c}" for n, c in tools.most_common(5)) or "no tools"
        lines.append(f"- \"{first_line(prompt, max(60, int(160 * f)))}\": {used}.")
        if conclusion:
            lines.append(indent(clip(conclusion, max(100, int(500 * f))), "  "))
    merged = facts.merged(HEADINGS[4], int(2000 * f))
    if merged:
        lines.append(merged)
    elif facts.prior is None and facts.prior_text and f > 0:
        lines.append("From the earlier summary:\n" + indent(clip(facts.prior_text, int(4000 * f))))
    return "\n".join(lines) or "None recorded."


def _rounds(turns: tuple[Turn, ...]) -> list[tuple[str, Counter[str], str]]:
    """(user message, tools used, last assistant text) for each user message."""
    rounds: list[tuple[str, Counter[str], str]] = []
    for turn in turns:
        if turn.is_user_message:
            rounds.append((turn.text, Counter(), ""))
        elif turn.kind == ASSISTANT and rounds:
            prompt, tools, text = rounds[-1]
            tools.update(str(b.get("name")) for b in turn.blocks if b.get("type") == "tool_use")
            said = "\n".join(str(b.get("text")) for b in turn.blocks if b.get("type") == "text").strip()
            rounds[-1] = (prompt, tools, said or text)
    return rounds


def all_user_messages(facts: Facts, cap: int) -> str:
    lines = ["- " + clip(turn.text, cap).replace("\n", "\n  ") for turn in facts.user_messages]
    earlier = _earlier_messages(facts, 3000 if cap >= 1000 else cap * 3)
    if earlier:
        lines.insert(0, "From the earlier summary (messages not in this transcript):\n"
                     + indent(earlier))
    return "\n".join(lines) or "None."


def _earlier_messages(facts: Facts, limit: int) -> str:
    """Lines of the earlier summary's user-message list that this transcript does not hold
    (a transcript that starts mid-session); the others are listed verbatim anyway."""
    if facts.prior is None or not facts.prior.get(HEADINGS[5]):
        return ""
    known = [_squash(t.text) for t in facts.user_messages]
    keep = [line for line in facts.prior[HEADINGS[5]].splitlines()
            if line.strip() and not any(_squash(line)[:60] in k for k in known if k)]
    kept = [ln for ln in keep if _squash(ln)]
    return clip("\n".join(kept), limit) if kept else ""


def _squash(text: str) -> str:
    """Text without list markers, quotes and spacing, for matching a quoted message."""
    return re.sub(r"[\s\"'`*\-\u201c\u201d]+", "", text)


def pending_tasks(facts: Facts, f: float) -> str:
    if not facts.todos:
        return facts.merged(HEADINGS[6], int(1500 * f)) or "No todo list was kept in the session."
    open_items = [(s, c) for s, c in facts.todos if s != "completed"]
    done = [c for s, c in facts.todos if s == "completed"]
    lines = [f"- [{status}] {clip(content, 300)}" for status, content in open_items]
    if done:
        listed = "; ".join(clip(c, 80) for c in done[-max(1, int(10 * f)):])
        lines.append(f"- Completed ({len(done)}): {listed}")
    if not open_items:
        lines.insert(0, "All items of the last todo list are completed.")
    return "\n".join(lines)


def _last_text(facts: Facts) -> str:
    texts = [str(b.get("text")) for t in facts.turns if t.kind == ASSISTANT
             for b in t.blocks if b.get("type") == "text" and str(b.get("text")).strip()]
    return texts[-1] if texts else ""


def current_work(facts: Facts, f: float) -> str:
    lines: list[str] = []
    said = _last_text(facts)
    if said:
        lines.append("Last thing the assistant said:\n" + indent(clip(said, max(200, int(1500 * f)))))
    recent = facts.calls[-max(1, int(6 * f)):]
    if recent:
        lines.append("Latest tool calls:")
        for call in recent:
            status = "error" if call.is_error else "ok" if call.has_result else "no result"
            lines.append(f"- {describe_call(call, 160)} ({status})")
    return "\n".join(lines) or "Nothing in progress."


def next_step(facts: Facts, f: float) -> str:
    lines: list[str] = []
    active = [c for s, c in facts.todos if s == "in_progress"]
    pending = [c for s, c in facts.todos if s == "pending"]
    if active:
        lines.append(f"Continue the task in progress: {clip(active[0], 300)}")
    elif pending:
        lines.append(f"Next pending task: {clip(pending[0], 300)}")
    said = _last_text(facts)
    if said.rstrip().endswith("?"):
        question = re.split(r"(?<=[.!])\s+", said.strip())[-1]
        lines.append(f"The assistant asked the user: \"{clip(question, 400)}\" - wait for the answer.")
    latest = facts.latest_request
    if latest is not None:
        lines.append("The user's latest request, verbatim: \""
                     + clip(latest.text, max(150, int(800 * f))) + "\"")
    return "\n".join(lines) or "None."


# --- putting it together ---------------------------------------------------------------------------

def render(facts: Facts, f: float, cap: int) -> str:
    bodies = (primary_request(facts, f), key_concepts(facts, f), files_and_code(facts, f),
              errors_and_fixes(facts, f), problem_solving(facts, f), all_user_messages(facts, cap),
              pending_tasks(facts, f), current_work(facts, f), next_step(facts, f))
    return "\n\n".join(f"{n}. {title}:\n{indent(body)}"
                       for n, (title, body) in enumerate(zip(HEADINGS, bodies), start=1))


def offline_summary(request: SummaryRequest) -> str:
    """The nine-section summary of ``request`` within ``request.max_summary_tokens``."""
    facts = Facts.of(request)
    text = ""
    for f, cap in LEVELS:
        text = render(facts, f, cap)
        if estimate_text_tokens(text) <= request.max_summary_tokens:
            break
    return text
