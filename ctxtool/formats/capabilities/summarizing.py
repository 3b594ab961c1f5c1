"""Summarizing: what the summarizer reads differently in the agent's sessions (side chains,
queued prompts, text the agent added, its tools under Claude Code's names) and the request the
agent's own compaction sends (``summarize``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ctxtool.formats.capabilities.reading import ReadingAdapter
from ctxtool.formats.content import Block

if TYPE_CHECKING:  # for a type only: the llm package is not loaded with every adapter
    from ctxtool.llm.base import AgentPrompt


class SummarizingAdapter(ReadingAdapter):
    """How the summarizer reads the agent's sessions."""

    #: True when the summarizer must read the agent's tool calls through
    #: :meth:`claude_code_tool` (its tools, todo or plan tool and shell are not Claude Code's).
    names_tools_its_way: ClassVar[bool] = False
    #: True when lines of other threads (subagents' side chains, ``isSidechain``) can sit in a
    #: session file; they are not part of the main conversation.
    side_chains: ClassVar[bool] = False
    #: True when the agent writes what the user typed while it was busy as lines of their own
    #: (Claude Code's ``queue-operation``/``queued_command``); the summarizer reads them.
    queues_prompts: ClassVar[bool] = False
    #: (error, hint) when ``--restore-files`` does not apply to the agent's sessions (it
    #: re-attaches no files after a compaction), None when it does.
    restore_files_refusal: ClassVar[tuple[str, str] | None] = None

    def typed_text(self, entry: Mapping[str, Any]) -> str | None:
        """For a user message holding parts the agent added itself (OpenCode: synthetic and
        ignored parts), the text the user typed (may be blank); None when the message's text is
        all the user's."""
        return None

    def claude_code_tool(self, block: Block) -> Block:
        """A content block with a tool call under Claude Code's tool name and input keys (a
        view: its todo or plan tool as ``TodoWrite``, its shell as ``Bash``, its file edits as
        ``Edit``/``Write``), for agents with :attr:`names_tools_its_way`; other blocks as they
        are."""
        return block

    def summary_prompt(self, head: list[dict[str, Any]], entries: list[dict[str, Any]], *,
                       instructions: str | None) -> AgentPrompt | None:
        """The request the agent's own compaction sends its summarizer for ``head`` (of the
        session ``entries``), when ``summarize`` should ask the same way (OpenCode 1.18); None:
        ctxtool's nine-section request."""
        return None
