"""OpenCode 1.18's summarizer request: the conversation serialized the way the real OpenCode
1.18.33 does it (each line kind, the 2,000-character cut, a pruned output, files, an earlier
summary), older sessions keeping ctxtool's request, and the offline summary in 1.18's template."""

from __future__ import annotations

from typing import Any

from ctxtool.core.summarizing.offline import OfflineSummarizer
from ctxtool.core.summarizing.summarize import plan_summary as plan_opencode
from ctxtool.formats.opencode.prompt import (SYSTEM, TEMPLATE_HEADINGS, compaction_prompt,
                                                      fill_template, serialize, split_prior,
                                                      template_sections)
from ctxtool.core.summarizing.summarize import SummarizeOptions, compact
from ctxtool.formats.opencode.session import CONTINUE_TEXT
from ctxtool.types import OPENCODE
from tests.opencode_builders import assistant, compaction, text, tool, user
from tests.opencode_sessions import HEADER


def _conversation(prompt: str) -> str:
    return prompt.split("<conversation>\n", 1)[1].split("\n</conversation>", 1)[0]


def _session(version: str | None) -> list[dict[str, Any]]:
    header = {"session": {**HEADER["session"], **({"version": version} if version else {})}}
    return [header, user(1, text("Fix the parser")), assistant(2, 1, text("Fixed it."))]


def test_each_kind_of_line() -> None:
    call = tool("c1", "bash", "3 passed")
    call["state"]["input"] = {"command": "pytest -q", "description": "ünï"}
    failed = tool("c2", "bash", "exit 1", status="error")
    running = tool("c3", "bash", status="running")
    pruned = tool("c4", "read", "old text", compacted=5)
    assert serialize(assistant(2, 1, text("Looking."), {"type": "reasoning", "text": "hmm"},
                               {"type": "step-start"}, call, failed, running, pruned,
                               text(""))) == "\n".join([
        "[Assistant]: Looking.", "[Assistant reasoning]: hmm",
        '[Assistant tool call]: bash({"command":"pytest -q","description":"ünï"})',
        "[Tool result]: 3 passed",
        '[Assistant tool call]: bash({"command":"c2"})', "[Tool error]: exit 1",
        '[Assistant tool call]: bash({"command":"c3"})',
        '[Assistant tool call]: read({"command":"c4"})',
        "[Tool result]: [Old tool result content cleared]"])


def test_user_text_files_and_what_is_left_out() -> None:
    message = user(1, text("first"), text("hidden", ignored=True), text(""),
                   {"type": "file", "mime": "image/png", "filename": "shot.png"},
                   {"type": "file", "mime": "text/plain"}, text("second", synthetic=True))
    assert serialize(message) == ("[User]: first\nsecond\n[Attached image/png: shot.png]\n"
                                  "[Attached text/plain: file]")
    assert serialize(user(2, compaction())) == ""  # a compaction request says nothing


def test_a_long_result_is_cut_at_2000_javascript_characters() -> None:
    emoji = "\U0001F600"  # two UTF-16 code units, as JavaScript counts it
    long = tool("c1", "bash", emoji * 999 + "abc")
    line = serialize(assistant(2, 1, long)).splitlines()[1]
    assert line == "[Tool result]: " + emoji * 999 + "ab"
    assert serialize(assistant(2, 1, long)).endswith("ab\n[truncated]")
    exact = tool("c2", "bash", "x" * 2000)
    assert serialize(assistant(2, 1, exact)).endswith("x" * 2000)


def test_the_prompt_holds_the_conversation_then_the_template() -> None:
    prompt = compaction_prompt([user(1, text("Fix the parser")), user(2, compaction()),
                                assistant(3, 1, text("Fixed it."))], instructions="mind the tests")
    assert _conversation(prompt) == "[User]: Fix the parser\n\n[Assistant]: Fixed it."
    assert "<prior-summary>" not in prompt
    assert prompt.index("</conversation>") < prompt.index("<template>") < prompt.index("Rules:")
    assert prompt.endswith("\n\nmind the tests")
    assert [h for h in TEMPLATE_HEADINGS if h not in prompt] == []


def test_an_earlier_summary_is_merged_not_serialized() -> None:
    messages = [user(5, compaction()), assistant(6, 5, text("## Objective\n- old goal"),
                                                 summary=True),
                user(7, text(CONTINUE_TEXT, synthetic=True)), assistant(8, 7, text("On it."))]
    rest, prior = split_prior(messages)
    assert [m["info"]["id"] for m in rest] == ["msg_007", "msg_008"] and prior == (
        "## Objective\n- old goal")
    prompt = compaction_prompt(messages)
    assert _conversation(prompt) == f"[User]: {CONTINUE_TEXT}\n\n[Assistant]: On it."
    assert "<prior-summary>\n## Objective\n- old goal\n</prior-summary>" in prompt
    # an unfinished summary is no earlier summary: its text stays in the conversation
    failed = [user(5, compaction()), assistant(6, 5, text("partial"), summary=True, finish=None)]
    assert split_prior(failed)[1] is None and "[Assistant]: partial" in compaction_prompt(failed)


def test_sessions_of_1_18_get_its_request_older_ones_ctxtool_s() -> None:
    for version in ("1.18.33", "1.19.0", None):
        agent = plan_opencode(_session(version)).request.agent_prompt
        assert agent is not None and agent.system == SYSTEM, version
        assert agent.missing(agent.prompt) == [], version  # the template names every heading
    assert plan_opencode(_session("1.17.9")).request.agent_prompt is None
    assert plan_opencode(_session("1.1.48")).request.agent_prompt is None


def _long(version: str) -> list[dict[str, Any]]:
    return _session(version) + [user(3, text("and the docs")),
                                assistant(4, 3, tool("c1", "bash", "line\n" * 5000))]


def test_the_offline_summary_fills_the_template() -> None:
    done = compact(_long("1.18.33"), fmt=OPENCODE, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions())
    summary = done.summary or ""
    assert [line for line in summary.splitlines() if line.startswith("#")] == list(
        TEMPLATE_HEADINGS)
    assert "Fix the parser" in "\n".join(template_sections(summary)["Objective"])
    assert template_sections(summary)["Blocked"] == []  # "(none)": no tool call failed
    old = compact(_long("1.1.48"), fmt=OPENCODE, summarizer=OfflineSummarizer(),
                  options=SummarizeOptions())
    assert "1. Primary Request and Intent" in (old.summary or "")


def test_the_template_carries_an_earlier_summary_forward() -> None:
    prior = ("## Objective\n- ship the parser\n\n## Important Details\n- (none)\n\n"
             "## Work State\n### Completed\n- wrote tests\n\n### Active\n- stale work\n\n"
             "### Blocked\n- (none)\n\n## Next Move\n1. stale step\n\n## Relevant Files\n- a.py")
    nine = "\n\n".join(f"{n}. {t}:\n   {t.lower()} text" for n, t in enumerate(
        ("Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
         "Errors and fixes", "Problem Solving", "All user messages", "Pending Tasks",
         "Current Work", "Optional Next Step"), start=1))
    sections = template_sections(fill_template(nine, prior=prior))
    assert sections["Objective"] == ["- ship the parser", "- primary request and intent text"]
    assert sections["Completed"] == ["- wrote tests", "- problem solving text"]
    assert sections["Active"] == ["- current work text", "- pending tasks text"]
    assert sections["Next Move"] == ["1. optional next step text"]
    assert sections["Relevant Files"] == ["- a.py", "- files and code sections text"]
