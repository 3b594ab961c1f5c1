"""``--llm claude-code``: summaries written by the user's own Claude Code (``claude -p``), with
its login (a subscription, ``ANTHROPIC_API_KEY`` or whatever the user set up), no key of ours.

One call is ``claude -p --output-format json`` with the prompt on stdin and ctxtool's system
prompt instead of Claude Code's (checked against 2.1.332's ``--help`` and requests):

* ``--tools ""`` (no built-in tool), ``--strict-mcp-config`` with an empty ``--mcp-config`` (no
  MCP server of the user's), ``--disable-slash-commands`` (no skills), ``--settings`` turning off
  hooks and auto-memory: the request carries no tools, and a reply asking for one gets Claude
  Code's refusal, so nothing in the transcript can be run;
* ``--no-session-persistence``: nothing is written under ``~/.claude/projects``, so the run never
  shows in ``claude --resume``;
* ``CLAUDE_CODE_MAX_RETRIES`` (unless the user set it) so its own retries stop where ctxtool's
  circuit breaker would, and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``: only the model call.

The reply is the ``result`` of the JSON printed at the end; ``is_error`` replies ("Not logged in
· Please run /login", "API Error: Connection refused …", "Prompt is too long") become one line.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxtool.errors import LLMError
from ctxtool.llm.agent_cli import AgentCli, Finished, Folder, count, last_line
from ctxtool.llm.base import BREAKER_LIMIT, BadReply, Completion, PromptTooLong

SETTINGS = json.dumps({"disableAllHooks": True, "autoMemoryEnabled": False})
_TOO_LONG = re.compile(r"prompt is too long|context (window|limit)", re.IGNORECASE)
_NOT_LOGGED_IN = re.compile(r"not logged in|please run /login|invalid api key|oauth", re.IGNORECASE)


class ClaudeCodeModel(AgentCli):
    name = "claude-code"
    label = "Claude Code"
    program = "claude"
    install_hint = ("install Claude Code (npm install -g @anthropic-ai/claude-code) and log in, "
                    "or use --llm anthropic / --llm offline")

    def argv(self, system: str, folder: Folder) -> list[str]:
        return [self.binary, "-p", "--output-format", "json", "--no-session-persistence",
                "--tools", "", "--strict-mcp-config", "--mcp-config", '{"mcpServers":{}}',
                "--disable-slash-commands", "--settings", SETTINGS, "--system-prompt", system,
                *self.model_option()]

    def child_env(self) -> dict[str, str]:
        env = dict(self.env)
        env.setdefault("CLAUDE_CODE_MAX_RETRIES", str(BREAKER_LIMIT - 1))
        env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        return env

    def read(self, done: Finished) -> Completion:
        result = _result(done.stdout)
        if result is None:
            said = last_line(done.stderr) or last_line(done.stdout) or f"exit {done.returncode}"
            raise LLMError(f"Claude Code failed: {said}", hint="run `claude -p hello` to see why")
        text = result.get("result")
        if result.get("is_error") or done.returncode != 0:
            raise _error(str(text or result.get("subtype") or f"exit {done.returncode}"), result)
        if not isinstance(text, str) or not text.strip():
            raise BadReply("Claude Code answered with no text", hint="try again, or another --model")
        usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
        prompt_tokens = sum(count(usage.get(k)) for k in (
            "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        return Completion(text, prompt_tokens, count(usage.get("output_tokens")))


def _result(stdout: str) -> dict[str, Any] | None:
    """The ``{"type": "result", …}`` object Claude Code prints last."""
    for line in reversed(stdout.splitlines()):
        if line.strip().startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict) and found.get("type") == "result":
                return found
    return None


def _error(message: str, result: dict[str, Any]) -> LLMError:
    said = " ".join(message.split())[:300]
    if _TOO_LONG.search(said):
        return PromptTooLong(f"Claude Code: {said}")
    if _NOT_LOGGED_IN.search(said):
        return LLMError(f"Claude Code is not logged in: {said}",
                        hint="run `claude` and log in (/login), or set ANTHROPIC_API_KEY")
    if result.get("api_error") == "connection_failed" or "connection" in said.lower():
        return LLMError(f"Claude Code cannot reach its API: {said}",
                        hint="check the network (and ANTHROPIC_BASE_URL, if set)")
    return LLMError(f"Claude Code failed: {said}", hint="run `claude -p hello` to see why")


__all__ = ["ClaudeCodeModel"]
