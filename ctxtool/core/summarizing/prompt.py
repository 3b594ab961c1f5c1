"""The nine-section summary: headings, the prompt a model gets, its reply, and the continuation
text the summary is wrapped in.

The nine headings are Claude Code's (seeds/000), so a summary made by ctxtool reads like one made
by ``/compact``. The prompt wording is ctxtool's own. A model first writes an ``<analysis>``
scratchpad, then the ``<summary>``; :func:`extract_summary` keeps only the summary and
:func:`missing_headings` checks that all nine sections are there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ctxtool.formats.compaction import CONTINUE_NOTE
from ctxtool.formats.jsonl import dumps_json
from ctxtool.llm.base import (ASSISTANT, COMMAND, CONTEXT, INTERRUPT, PROMPT, QUEUED, TOOL_RESULTS,
                              Turn)
from ctxtool.llm.sections import HEADINGS, missing_headings, split_sections


_GUIDANCE: tuple[str, ...] = (
    "every explicit request and intent of the user, in detail, including how it changed.",
    "technologies, frameworks, concepts and conventions that matter for the work.",
    "each file read, edited or created: why it matters, what changed, and the important code "
    "snippets (most detail for the most recent work).",
    "each error met and how it was fixed, with anything the user said about it.",
    "problems solved, and troubleshooting still under way.",
    "every message the user wrote (not tool results), in order and word for word; shorten only "
    "very long ones, and say where you did.",
    "what the user asked for that is not done yet.",
    "precisely what was being done right before this summary, with file names and code.",
    "the next step, only if it follows directly from the user's latest request and the work in "
    "progress, quoting the user's latest relevant words verbatim. If the last task was finished, "
    "say so and propose nothing new.",
)

SYSTEM_PROMPT = (
    "You write hand-over notes for a coding session. Another instance of the assistant will carry "
    "on from your notes alone, without the conversation, so they must be complete and exact: "
    "file paths, function names, commands, error messages and the user's own words."
)

CONTINUATION_PREFIX = ("This session is being continued from a previous conversation that ran "
                       "out of context.")
_CONTINUATION = CONTINUATION_PREFIX + (" The summary below covers the earlier portion of the "
                                       "conversation.\n\nSummary:\n")
# The closing notes follow Claude Code's own summary: where the full transcript is, then carry on
# where it stopped (the agent's writer chooses that note: its wording and whether a manual
# compaction gets it changed between versions); and when messages were kept, that they follow it.
_TRANSCRIPT_NOTE = ("If you need specific details from before compaction (like exact code "
                    "snippets, error messages, or content you generated), read the full "
                    "transcript at: {path}")
_KEPT_NOTE = ("The messages after this summary are the most recent messages from before "
              "compaction, kept verbatim. The summary was written without seeing them, so "
              "something it says has not happened yet may already have happened in them.")


# --- the continuation text -------------------------------------------------------------------------

def continuation_text(summary: str, *, transcript_path: str | None = None,
                      closing: str | None = None, kept: bool = False) -> str:
    """The text of the message that replaces the conversation, starting and ending the way
    Claude Code's does (tools that look for compaction summaries recognise it): ``closing`` is
    the note asking to carry on (None: none, as Claude Code before 2.1.330 wrote manual ones)."""
    text = _CONTINUATION + summary.strip()
    if transcript_path:
        text += "\n\n" + _TRANSCRIPT_NOTE.format(path=transcript_path)
    if closing:
        text += "\n" + closing
    if kept:
        text += "\n\n" + _KEPT_NOTE
    return text


def is_continuation_text(text: str) -> bool:
    return text.lstrip().startswith(CONTINUATION_PREFIX)


_TRAILERS = ("If you need specific details from before compaction", "The full transcript from "
             "before this compaction", "Read it when you need exact code", "Please continue the "
             "conversation", "Continue the conversation from where it left off",
             "The messages after this summary are the most recent", "Continue with the last task "
             "you were asked to do", CONTINUE_NOTE, _KEPT_NOTE)


def summary_body(text: str) -> str:
    """The summary inside a continuation text (Claude Code's or ctxtool's), without the preamble
    and the trailing notes."""
    body = text.strip()
    if is_continuation_text(body):
        marker = body.find("\nSummary:\n")
        body = body[marker + len("\nSummary:\n"):] if marker >= 0 else body.split("\n", 1)[-1]
    lines = body.rstrip().splitlines()
    while lines and (not lines[-1].strip() or lines[-1].lstrip().startswith(_TRAILERS)):
        lines.pop()
    return "\n".join(lines).strip()


# --- the prompt ------------------------------------------------------------------------------------

def section_list() -> str:
    return "\n".join(f"{n}. {title}: {hint}" for n, (title, hint)
                     in enumerate(zip(HEADINGS, _GUIDANCE), start=1))


def build_prompt(conversation: str, *, previous: str | None = None, instructions: str | None = None,
                 part: int = 1, parts: int = 1, target_tokens: int | None = None) -> str:
    """The user message of one summary call: the conversation (or one part of it), the summary so
    far to fold in, the nine sections asked for and any custom instructions."""
    intro = ("Below, inside <conversation> tags, is a conversation between a user and a coding "
             "assistant, with the assistant's tool calls and their results.")
    if parts > 1:
        intro += (f" It is part {part} of {parts} of a longer conversation, oldest first"
                  + ("; later parts follow." if part < parts else "; it is the last part."))
    pieces = [intro]
    if previous:
        pieces.append("Inside <previous_summary> tags is the summary of everything before it. "
                      "Merge the two: keep everything from the previous summary that still "
                      "matters - every user message in particular - and bring it up to date.\n\n"
                      f"<previous_summary>\n{previous.strip()}\n</previous_summary>")
    pieces.append(f"<conversation>\n{conversation}\n</conversation>")
    pieces.append(
        "Write the notes in two steps. First, inside <analysis> tags, go through the conversation "
        "in order and note for each stretch what the user asked for, what the assistant did, the "
        "decisions, file names, code, commands and errors, and any feedback from the user. This is "
        "a scratchpad and will be thrown away.\n\nThen, inside <summary> tags, write the notes "
        "under exactly these nine numbered headings, in this order (write \"None.\" under a "
        "heading with nothing to report):\n\n" + section_list()
        + (f"\n\nKeep the summary within about {target_tokens} tokens; if something must give, "
           "shorten the other sections before the user's messages." if target_tokens else ""))
    if instructions and instructions.strip():
        pieces.append("The user gave these instructions for this summary; follow them:\n"
                      f"<instructions>\n{instructions.strip()}\n</instructions>")
    pieces.append("Reply with the <analysis> block and the <summary> block only. Do not call tools.")
    return "\n\n".join(pieces)


# --- rendering turns as text -----------------------------------------------------------------------

def _json(value: object) -> str:
    try:
        return dumps_json(value).decode()
    except (TypeError, ValueError, RecursionError):
        return str(value)


def render_turn(turn: Turn, tool_names: dict[str, str]) -> str:
    """One turn as plain text for the prompt. ``tool_names`` maps tool_use ids to tool names; it
    is filled in from assistant turns so results can name their tool."""
    if turn.kind in (PROMPT, COMMAND):
        return f"[user]\n{turn.text}"
    if turn.kind == QUEUED:
        return f"[user, typed while the assistant was working]\n{turn.text}"
    if turn.kind == INTERRUPT:
        return "[the user interrupted the assistant]"
    lines: list[str] = []
    for block in turn.blocks:
        kind = block.get("type")
        if kind == "tool_use":
            name = str(block.get("name") or "tool")
            tool_names[str(block.get("id"))] = name
            lines.append(f"[tool call {name}] {_json(block.get('input'))}")
        elif kind == "tool_result":
            name = tool_names.get(str(block.get("tool_use_id")), "tool")
            status = "error" if block.get("is_error") else "result"
            lines.append(f"[{name} {status}]\n{block.get('content', '')}")
        elif kind == "thinking":
            lines.append(f"(thinking) {block.get('thinking', '')}")
        elif kind == "text":
            lines.append(str(block.get("text", "")))
    body = "\n".join(line for line in lines if line.strip())
    if turn.kind == ASSISTANT:
        return f"[assistant]\n{body}"
    if turn.kind == CONTEXT:
        return f"[{turn.role} context added by the harness]\n{body}"
    if turn.kind == TOOL_RESULTS:
        return body
    return f"[{turn.role}]\n{body}"


def render_turns(turns: Iterable[Turn]) -> list[str]:
    """The turns as prompt items, oldest first; the lines of one streamed assistant response (and
    consecutive assistant turns generally) share one ``[assistant]`` header."""
    names: dict[str, str] = {}
    items: list[str] = []
    previous = ""
    for turn in turns:
        text = render_turn(turn, names)
        if not text.strip():
            continue
        if turn.kind == ASSISTANT and previous == ASSISTANT and items:
            items[-1] += "\n" + text.removeprefix("[assistant]\n")
        else:
            items.append(text)
        previous = turn.kind
    return items


# --- the reply -------------------------------------------------------------------------------------

_SUMMARY_BLOCK = re.compile(r"<summary>(.*?)(?:</summary>|\Z)", re.DOTALL)
_ANALYSIS_BLOCK = re.compile(r"<analysis>.*?(?:</analysis>|\Z)", re.DOTALL)


def extract_summary(reply: str) -> str:
    """The ``<summary>`` of a reply, without the ``<analysis>`` scratchpad."""
    blocks = _SUMMARY_BLOCK.findall(reply)
    if blocks:
        return blocks[-1].strip()
    return _ANALYSIS_BLOCK.sub("", reply).strip()


