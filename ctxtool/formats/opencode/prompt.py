"""What OpenCode 1.18 sends its summarizer when it compacts a session, in ctxtool's own words.

The shape is the real OpenCode 1.18.33's (its request recorded against a fake Messages API in
``tests/e2e/test_opencode_db.py``; the wording here is ctxtool's):

* one call, no tools, a system prompt of its own (the hidden ``compaction`` agent's) and one user
  message - not the conversation as messages;
* that message holds the conversation serialized between ``<conversation>`` tags, one block per
  message, blocks separated by a blank line: ``[User]: `` with the user's text parts (and an
  ``[Attached MIME: NAME]`` line per file), ``[Assistant]: ``, ``[Assistant reasoning]: ``,
  ``[Assistant tool call]: TOOL(INPUT AS JSON)`` followed by ``[Tool result]: `` (at most 2,000
  characters, then ``[truncated]``; a pruned output is OpenCode's placeholder) or
  ``[Tool error]: ``;
* the newest earlier summary is not part of the conversation: it comes in ``<prior-summary>``
  tags with rules for merging it, and its compaction request and summary message are left out;
* then a Markdown template - Objective, Important Details, Work State (Completed, Active,
  Blocked), Next Move, Relevant Files - every section kept even when empty;
* the summary is the reply's text as it is.

After writing the summary OpenCode sends, in place of everything before it, a user message
"What did we do so far?" (its compaction part) and the summary as the assistant's answer; the
records are written by :func:`ctxtool.formats.opencode.session.append_compaction`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from ctxtool.formats.jsonl import dumps_json
from ctxtool.formats.opencode.context import is_finished_summary
from ctxtool.formats.opencode.view import obj
from ctxtool.llm.base import AgentPrompt
from ctxtool.llm.sections import split_sections

CLEARED = "[Old tool result content cleared]"  # what OpenCode sends for a pruned tool output
RESULT_LIMIT = 2000  # characters (JavaScript's: UTF-16 code units) of a tool result kept
TRUNCATED = "\n[truncated]"

SYSTEM = (
    "You summarize a conversation between a user and a coding agent. The summary is all another "
    "coding agent will have to continue the work, so give it in the structure the user message "
    "asks for.\n\n"
    "Follow that structure exactly: keep every section, keep file paths and identifiers exact, "
    "and write short bullets rather than paragraphs.\n\n"
    "Do not carry on the conversation and do not answer questions asked in it. Reply with the "
    "structured summary alone, in the language of the conversation.\n")

TEMPLATE_HEADINGS = ("## Objective", "## Important Details", "## Work State", "### Completed",
                     "### Active", "### Blocked", "## Next Move", "## Relevant Files")

_TEMPLATE = """\
Reply with exactly the Markdown structure inside <template>, sections in this order, without the \
<template> tags themselves.
<template>
## Objective
- [what the user wants to achieve, in one or two short sentences]

## Important Details
- [constraints and preferences, decisions and their reasons, facts and assumptions, anything \
exact needed to go on; or "(none)"]

## Work State
### Completed
- [work finished, facts verified, changes made; or "(none)"]

### Active
- [work under way, partial changes, what is being looked into; or "(none)"]

### Blocked
- [blockers, failing commands, open questions; or "(none)"]

## Next Move
1. [the next concrete action, or "(none)"]
2. [the one after it, if known, or "(none)"]

## Relevant Files
- [a file or folder path: why it matters; or "(none)"]
</template>

Rules:
- Keep every section, even an empty one.
- Short bullets, no paragraphs.
- Keep file paths, symbols, commands, error messages, URLs and identifiers exactly as written.
- Do not mention that the conversation was summarized or compacted."""

_NEW = ("Write a summary of the conversation in the <conversation> tags above from which another "
        "coding agent can carry on the work.")

_MERGE = """\
The <prior-summary> covers everything before the <conversation>. Write one new summary that \
covers both; the <prior-summary> is thrown away afterwards, so whatever the new summary leaves \
out is lost.
To merge them:
- Keep the objectives, constraints, instructions of the user, decisions and parallel lines of \
work of the <prior-summary> even where the <conversation> does not mention them; leave out only \
what is done and no longer needed.
- The <conversation> is newer than the <prior-summary>: where they disagree, state the \
conversation's version and drop the old one.
- Add the progress, decisions, constraints and context the conversation brings.
- Move finished work from "Active" to "Completed".
- When a blocker was resolved, say so and keep whatever detail is still needed to go on.
- Bring "Objective" and "Next Move" up to date."""


# --- the conversation, serialized ------------------------------------------------------------------

def _cut(text: str) -> str:
    """``text`` cut to RESULT_LIMIT UTF-16 code units, as OpenCode (JavaScript) counts."""
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * RESULT_LIMIT:
        return text
    return units[:2 * RESULT_LIMIT].decode("utf-16-le", "surrogatepass") + TRUNCATED


def _attached(file: Mapping[str, Any]) -> str:
    return f"[Attached {file.get('mime')}: {file.get('filename') or 'file'}]"


def _json(value: Any) -> str:
    """``JSON.stringify`` of a tool's input (``undefined`` when it has none)."""
    return "undefined" if value is None else dumps_json(value).decode("utf-8")


def _user_lines(parts: Sequence[Mapping[str, Any]]) -> list[str]:
    words = "\n".join(str(p["text"]) for p in parts if p.get("type") == "text"
                      and not p.get("ignored") and p.get("text"))
    files = [_attached(p) for p in parts if p.get("type") == "file"]
    return ([f"[User]: {words}"] if words else []) + files


def _tool_lines(part: Mapping[str, Any]) -> list[str]:
    state = obj(part.get("state"))
    call = f"[Assistant tool call]: {part.get('tool')}({_json(state.get('input'))})"
    if state.get("status") == "completed":
        if obj(state.get("time")).get("compacted"):
            return [call, f"[Tool result]: {CLEARED}"]
        files = [_attached(obj(f)) for f in state.get("attachments") or []]
        return [call, "[Tool result]: " + _cut("\n".join([str(state.get("output", "")), *files]))]
    if state.get("status") == "error":
        return [call, f"[Tool error]: {state.get('error')}"]
    return [call]


def _assistant_lines(parts: Sequence[Mapping[str, Any]]) -> list[str]:
    lines: list[str] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            lines.append(f"[Assistant]: {part['text']}")
        elif kind == "reasoning" and part.get("text"):
            lines.append(f"[Assistant reasoning]: {part['text']}")
        elif kind == "tool":
            lines.extend(_tool_lines(part))
    return lines


def serialize(message: Mapping[str, Any]) -> str:
    """One message as OpenCode 1.18 writes it into ``<conversation>`` ("" when it has nothing)."""
    parts = [obj(p) for p in message.get("parts") or []]
    user = obj(message.get("info")).get("role") == "user"
    return "\n".join(_user_lines(parts) if user else _assistant_lines(parts))


# --- the earlier summary ---------------------------------------------------------------------------

def _summary_text(message: Mapping[str, Any]) -> str | None:
    texts = (str(p.get("text", "")).strip() for p in message.get("parts") or []
             if obj(p).get("type") == "text")
    return "\n".join(t for t in texts if t).strip() or None


def split_prior(messages: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], str | None]:
    """The messages without earlier compactions (each compaction request and the finished
    summary that answers it), and the newest of those summaries' text."""
    requests = {obj(m.get("info")).get("id") for m in messages
                if obj(m.get("info")).get("role") == "user"
                and any(obj(p).get("type") == "compaction" for p in m.get("parts") or [])}
    pairs: set[Any] = set()
    prior = None
    for message in messages:
        info = obj(message.get("info"))
        if is_finished_summary(info) and info.get("parentID") in requests:
            pairs.update((info.get("id"), info.get("parentID")))
            prior = _summary_text(message)
    return [m for m in messages if obj(m.get("info")).get("id") not in pairs], prior


# --- the request -----------------------------------------------------------------------------------

def compaction_prompt(messages: Sequence[Mapping[str, Any]], *,
                      instructions: str | None = None) -> str:
    """The user message OpenCode 1.18 sends its summarizer for ``messages`` (the view it would
    send now, minus the tail it keeps); ``instructions`` go last, where a plugin's context goes."""
    rest, prior = split_prior(messages)
    blocks = [text for text in (serialize(m) for m in rest) if text]
    conversation = "\n\n".join(blocks)
    head = f"The conversation so far:\n\n<conversation>\n{conversation}\n</conversation>"
    middle = (f"The summary of the conversation before the <conversation> above:\n<prior-summary>\n"
              f"{prior}\n</prior-summary>\n\n{_MERGE}") if prior else _NEW
    return "\n\n".join(p for p in (head, middle, _TEMPLATE, (instructions or "").strip()) if p)


def agent_prompt(messages: Sequence[Mapping[str, Any]], *,
                 instructions: str | None = None) -> AgentPrompt:
    """OpenCode 1.18's summarizer request for ``messages``, for a backend to send or fill (the
    offline backend's nine sections go into the template, merged with the earlier summary)."""
    return AgentPrompt(system=SYSTEM, prompt=compaction_prompt(messages, instructions=instructions),
                       headings=TEMPLATE_HEADINGS,
                       from_sections=partial(fill_template, prior=split_prior(messages)[1]))


# --- the offline summary in the same template ------------------------------------------------------

def _lines(body: str | None) -> list[str]:
    """A section body's non-empty lines, indented relative to the body (its first line lost its
    indentation when the section was split off)."""
    lines = [line.rstrip() for line in (body or "").splitlines() if line.strip()]
    if len(lines) < 2:
        return [line.strip() for line in lines]
    margin = min(len(line) - len(line.lstrip()) for line in lines[1:])
    return [lines[0].strip()] + [line[margin:] for line in lines[1:]]


def _bullets(*bodies: str | None) -> str:
    """Section bodies as Markdown bullets, nested as they were; "(none)" when they hold nothing
    but the offline summary's one-line "No ..." / "None ..." sentence."""
    out: list[str] = []
    for body in bodies:
        lines = _lines(body)
        if len(lines) == 1 and re.match(r"No(?:ne)?\b", lines[0]):
            continue
        for line in lines:
            item = line.lstrip()
            out.append(line[:len(line) - len(item)] + (item if item.startswith("- ") else f"- {item}"))
    return "\n".join(out) or "- (none)"


def _numbered(body: str | None) -> str:
    steps = [re.sub(r"^(?:- |\d+\.\s*)", "", line.strip()) for line in _lines(body)]
    return "\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1)) or "1. (none)"


_CARRIED = ("Objective", "Important Details", "Completed", "Blocked", "Relevant Files")


def template_sections(summary: str | None) -> dict[str, list[str]]:
    """The bullet lines under each heading of a summary in 1.18's template (by heading name,
    without the ``#``); "(none)" left out."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (summary or "").splitlines():
        heading = re.match(r"^[ \t]*#+[ \t]*(.+?)[ \t]*$", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
        elif current is not None and line.strip() and "(none)" not in line:
            current.append(line.rstrip())
    return sections


def fill_template(nine: str, prior: str | None = None) -> str:
    """The offline backend's nine sections put into OpenCode 1.18's template: the request as
    Objective; technical facts and the user's own messages as Important Details; problem
    solving, current work (with pending tasks) and errors as Completed, Active and Blocked; the
    next step; the files. An earlier summary in the same template (``prior``) is carried
    forward: its Objective, Important Details, Completed, Blocked and Relevant Files come first
    in theirs; Active and Next Move are the newer conversation's."""
    get = (split_sections(nine) or {"Current Work": nine}).get
    before = template_sections(prior)
    new = {
        "Objective": _bullets(get("Primary Request and Intent")),
        "Important Details": _bullets(get("Key Technical Concepts"), get("All user messages")),
        "Completed": _bullets(get("Problem Solving")),
        "Active": _bullets(get("Current Work"), get("Pending Tasks")),
        "Blocked": _bullets(get("Errors and fixes")),
        "Next Move": _numbered(get("Optional Next Step")),
        "Relevant Files": _bullets(get("Files and Code Sections")),
    }

    def body(name: str) -> str:
        lines = before.get(name, []) if name in _CARRIED else []
        fresh = [line for line in new[name].splitlines() if "(none)" not in line or not lines]
        return "\n".join(dict.fromkeys(lines + fresh))  # a line said twice is said once

    return "\n\n".join((
        "## Objective\n" + body("Objective"),
        "## Important Details\n" + body("Important Details"),
        "## Work State\n### Completed\n" + body("Completed"),
        "### Active\n" + body("Active"),
        "### Blocked\n" + body("Blocked"),
        "## Next Move\n" + body("Next Move"),
        "## Relevant Files\n" + body("Relevant Files"),
    ))


__all__ = ["CLEARED", "SYSTEM", "TEMPLATE_HEADINGS", "agent_prompt", "compaction_prompt",
           "fill_template", "serialize", "split_prior", "template_sections"]
