"""``--llm codex``: summaries written by the user's own Codex CLI (``codex exec``), with its login
(ChatGPT sign-in, an API key, or the model provider in ``~/.codex/config.toml``).

One call is ``codex exec --json --ephemeral`` with the prompt on stdin (checked against 0.171.0's
``--help``, its feature list and the requests it sends):

* every tool off: the features that bring tools (shell, unified exec, goals, sub-agents, apps,
  plugins, images, browser and computer use, memories, hooks), web search, the plan and
  user-input tools, and each MCP server of the user's config.toml by name
  (``mcp_servers.NAME.enabled=false``: ``-c mcp_servers={}`` leaves them running); the request
  carries no tools, and a reply calling one is refused ("unsupported call"). As a second wall,
  the ``read-only`` sandbox and approvals ``never``;
* ``--ephemeral``: no rollout under ``~/.codex/sessions`` and no thread in its state database, so
  the run never shows in ``codex resume``;
* ctxtool's system prompt replaces Codex's own (``model_instructions_file``, a file in a private
  temporary folder beside the empty working folder); AGENTS.md files are not read.

Codex waits for a network that is down without end ("Reconnecting... waiting for network"): the
run is stopped at the first such event. After a failure ``codex login status`` says whether the
user is logged in at all.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from typing import Any

from ctxtool.errors import LLMError
from ctxtool.llm.agent_cli import AgentCli, Finished, Folder, count, last_line
from ctxtool.llm.base import BadReply, Completion, PromptTooLong

# features of 0.171.0 (`codex features list`) that add tools or run anything of the user's;
# view_image's tool stays on unless named, though the list calls it removed
OFF_FEATURES = ("shell_tool", "unified_exec", "goals", "multi_agent", "apps", "plugins",
                "plugin_hooks", "image_generation", "view_image", "browser_use", "computer_use",
                "memories", "hooks", "shell_snapshot", "js_repl", "apply_patch_freeform",
                "token_budget", "default_mode_request_user_input", "collaboration_modes")
OFF_CONFIG = ('web_search="disabled"', "project_doc_max_bytes=0",
              "tools.update_plan.enabled=false",
              "tools.experimental_request_user_input.enabled=false", 'approval_policy="never"')
_NO_NETWORK = "waiting for network"
_TOO_LONG = re.compile(r"context window|context_length_exceeded|prompt is too long|too many tokens",
                       re.IGNORECASE)
LOGIN_HINT = "run `codex login` (or check the model provider in ~/.codex/config.toml)"


class CodexModel(AgentCli):
    name = "codex"
    label = "Codex"
    program = "codex"
    install_hint = ("install Codex (npm install -g @openai/codex) and run `codex login`, or use "
                    "--llm anthropic / --llm offline")

    def argv(self, system: str, folder: Folder) -> list[str]:
        instructions = folder.private / "instructions.md"
        instructions.write_text(system, encoding="utf-8")
        config = [*(f"features.{name}=false" for name in OFF_FEATURES), *OFF_CONFIG,
                  *(f"mcp_servers.{name}.enabled=false" for name in mcp_servers(self.env)),
                  f"model_instructions_file={json.dumps(str(instructions))}"]
        return [self.binary, "exec", "--json", "--ephemeral", "--skip-git-repo-check",
                "--sandbox", "read-only", "--color", "never",
                *(arg for item in config for arg in ("-c", item)), *self.model_option(), "-"]

    def watch(self, line: str) -> LLMError | None:
        event = _event(line)
        message = str(event.get("message") or "") if event.get("type") == "error" else ""
        if _NO_NETWORK in message:
            return LLMError(f"Codex cannot reach its model endpoint: {message[:300]}",
                            hint="check the network, and " + LOGIN_HINT)
        return None

    def read(self, done: Finished) -> Completion:
        events = [event for line in done.stdout.splitlines() if (event := _event(line))]
        texts = [str(item.get("text") or "") for event in events
                 if event.get("type") == "item.completed"
                 and isinstance(item := event.get("item"), dict)
                 and item.get("type") == "agent_message"]
        failure = _failure(events)
        if failure or done.returncode != 0 or not any(t.strip() for t in texts):
            said = failure or last_line(done.stderr) or f"exit {done.returncode}"
            if _TOO_LONG.search(said):
                raise PromptTooLong(f"Codex: {said}")
            if not failure and done.returncode == 0:
                raise BadReply("Codex answered with no text", hint="try again, or another --model")
            raise LLMError(f"Codex failed: {said}", hint=LOGIN_HINT)
        usage: dict[str, Any] = next((e["usage"] for e in reversed(events)
                                      if e.get("type") == "turn.completed"
                                      and isinstance(e.get("usage"), dict)), {})
        return Completion(texts[-1], count(usage.get("input_tokens")),
                          count(usage.get("output_tokens")))

    def diagnose(self) -> str | None:
        try:
            proc = subprocess.run([self.binary, "login", "status"], env=self.child_env(),
                                  capture_output=True, text=True, timeout=15, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        said = last_line(proc.stdout + "\n" + proc.stderr)
        return f"`codex login status` says: {said}" if "not logged in" in said.lower() else None


_MCP_TABLE = re.compile(r'^\s*\[\s*mcp_servers\.("[^"]+"|[A-Za-z0-9_-]+)', re.MULTILINE)


def mcp_servers(env: Mapping[str, str]) -> list[str]:
    """The MCP servers named in the user's ``$CODEX_HOME/config.toml`` (default ``~/.codex``), as
    Codex's ``-c`` paths spell them."""
    home = env.get("CODEX_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"),
                                                 ".codex")
    try:
        with open(os.path.join(home, "config.toml"), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return []
    try:
        import tomllib  # Python 3.11+; 3.10 reads the table headers below
    except ImportError:
        return sorted({name.strip('"') for name in _MCP_TABLE.findall(text)})
    try:
        servers = tomllib.loads(text).get("mcp_servers")
    except tomllib.TOMLDecodeError:
        return sorted({name.strip('"') for name in _MCP_TABLE.findall(text)})
    return sorted(str(name) for name in servers) if isinstance(servers, dict) else []


def _event(line: str) -> dict[str, Any]:
    if not line.lstrip().startswith("{"):
        return {}
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _failure(events: list[dict[str, Any]]) -> str | None:
    """The message of a failed turn, else of the last error event, else None."""
    for event in reversed(events):
        error = event.get("error")
        if event.get("type") == "turn.failed" and isinstance(error, dict):
            return " ".join(str(error.get("message") or "turn failed").split())[:300]
    if any(event.get("type") == "turn.completed" for event in events):
        return None
    errors = [str(e.get("message") or "") for e in events if e.get("type") == "error"]
    return " ".join(errors[-1].split())[:300] if errors else None


__all__ = ["CodexModel"]
