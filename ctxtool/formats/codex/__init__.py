"""Codex CLI rollouts: what its lines mean, as Anthropic-shaped blocks, and how to write them back.

Codex CLI (0.169.0 and 0.171.0 measured, see ``tests/fixtures/codex-0.171.0``) keeps each
session in ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`` (``CODEX_HOME``
defaults to ``~/.codex``), one ``{"timestamp", "ordinal", "type", "payload"}`` object per line:

- ``session_meta``: the session's ``id``, ``cwd``, ``cli_version`` and ``base_instructions``
  (sent in front of every request, never as an item);
- ``turn_context`` (model, cwd, policies), ``world_state``, ``token_usage_record``;
- ``response_item``: one item of the history as the Responses API has it - ``message`` (role
  developer/user/assistant, ``input_text``/``output_text`` parts), ``function_call`` (``name``,
  JSON ``arguments``, ``call_id``), ``function_call_output`` (``output`` paired by ``call_id``),
  ``custom_tool_call``/``custom_tool_call_output`` (free-text ``input``), ``reasoning``;
- ``event_msg``: events; ``token_count`` carries ``info.last_token_usage`` (the last model
  call: ``input_tokens`` *including* ``cached_input_tokens``, ``output_tokens``) and
  ``info.model_context_window``;
- ``compacted``: a compaction - ``message`` (the handoff summary, with Codex's prefix) and
  ``replacement_history`` (the items that replace every item before it). Codex follows it with
  copies of the last ``world_state`` and ``turn_context`` lines.

On ``codex exec resume`` Codex rebuilds the history from the file and sends it whole every turn
(no ``previous_response_id``): the items after the last ``compacted`` record, behind its
``replacement_history`` (or, for a record without one, the user messages before it and the
summary). So what a transform writes into the file is exactly what the model gets next.

The package, shaped as ``claude_code/`` and ``opencode/`` are: ``rollout`` (what each line
says), ``usage`` (token counts), ``rules`` (when Codex compacts), ``compaction`` (what it sends
after one, and the record summarize writes), ``sessions`` (rollouts on disk), ``tools`` (its tool
calls as Claude Code's), ``vacuum``, and ``adapter``. Nothing here imports from
``ctxtool.core``: this package describes the format; transforms decide.
"""

from ctxtool.formats.codex.adapter import CodexAdapter
from ctxtool.formats.codex.compaction import (SUMMARY_PREFIX, compaction_lines, context_entries,
                                              summary_lines)
from ctxtool.formats.codex.rollout import (NAME, SCHEMA, base_instructions, claims, is_compacted,
                                           is_instruction, item_role_and_blocks, role_and_blocks,
                                           session_id_of, tool_output, with_tool_output)
from ctxtool.formats.codex.rules import CodexLimits, codex_limits
from ctxtool.formats.codex.sessions import THREAD_RECORDS, session_roots
from ctxtool.formats.codex.tools import (patch_as_edit, shell_command, shell_tool, snip_view,
                                         summary_view)
from ctxtool.formats.codex.usage import context_window_of, token_info, usage_counts, usage_only
from ctxtool.formats.codex.vacuum import SUPERSEDED, VACUUM_MARK, superseded_compactions

__all__ = ["CodexAdapter", "CodexLimits", "codex_limits", "NAME", "SCHEMA", "SUMMARY_PREFIX",
           "SUPERSEDED", "THREAD_RECORDS", "VACUUM_MARK", "base_instructions", "claims",
           "compaction_lines", "context_entries", "context_window_of", "is_compacted",
           "is_instruction", "item_role_and_blocks", "patch_as_edit", "role_and_blocks",
           "session_id_of", "session_roots", "shell_command", "shell_tool", "snip_view",
           "summary_lines", "summary_view", "superseded_compactions", "token_info", "tool_output",
           "usage_counts", "usage_only", "with_tool_output"]
