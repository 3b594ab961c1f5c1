"""The format adapter: everything one agent's transcript format does differently, behind one
interface, so the transforms in :mod:`ctxtool.core` are written once.

A transform never compares format names. It asks the registry (:mod:`ctxtool.formats.registry`)
for the adapter of the format it was given and calls it::

    adapter = adapter_for(fmt)
    role, blocks = adapter.role_and_blocks(entry)

Every format is seen as Anthropic-shaped content blocks (``text``, ``thinking``, ``tool_use``,
``tool_result``, ``image``...): an adapter maps its own lines to such blocks (a view, never
written back) and writes changes back in its own shape (copy-on-write: the input entry is never
mutated; an unchanged entry is returned as the same object so its line stays byte-identical).

The interface is grouped by capability, one small class per capability in
:mod:`ctxtool.formats.capabilities`, each holding that capability's defaults (those of the
Anthropic Messages shape: one ``{"role", "content"}`` object per line). :class:`FormatAdapter`
composes them, so an adapter subclasses it and overrides only what its agent does differently,
one capability at a time; a transform's type hints name the capability it uses
(``ClearingAdapter``, ``ConvertingAdapter``...). Members per capability (98 in all):

* :class:`ReadingAdapter` (``capabilities/reading.py``, 18; every other capability builds on
  it) - identity and detection (``formats/detect.py``): :attr:`name`, :attr:`title`,
  :attr:`schema`, :meth:`claims`, :meth:`claims_weakly`, :attr:`handled_by` (the commands
  that read it, :mod:`ctxtool.formats.unsupported`); lines and messages (every transform):
  :meth:`api_message`, :meth:`role_and_blocks`, :meth:`with_message_content`,
  :meth:`with_tool_result_content`, :meth:`model_of`, :meth:`agent_version`,
  :meth:`timestamp_of`, :meth:`session_id_of`, :meth:`is_instruction`, :meth:`is_api_error`,
  :meth:`is_own_reply`, ``__repr__``;
* :class:`CompactionAdapter` (``capabilities/compaction.py``, 12; ``filter-compacted``,
  ``summarize``) - :attr:`compactions`, :attr:`summary_keeps_lines`,
  :attr:`compaction_streams`, :meth:`is_compaction_record`, :meth:`is_summary_entry`,
  :meth:`is_completed_summary`, :meth:`compaction_starts`, :meth:`summary_text`,
  :meth:`is_compaction_request`, :meth:`compaction_threshold`,
  :meth:`compaction_switched_off`, and how ``summarize`` writes one: :meth:`compaction_writer`
  (with :mod:`ctxtool.formats.compaction`'s classes);
* :class:`SizingAdapter` (``capabilities/sizing.py``, 17, on top of Compaction: what is sent
  depends on the last compaction; ``core/sizing``: meter, estimate, statusline) -
  :attr:`reads_whole_session`, :attr:`rendered_attachments`, :meth:`usage_of`,
  :meth:`results_after_usage`, :meth:`context_mark` (with :class:`ContextMark`),
  :meth:`own_context`, :meth:`is_bare_line`, :meth:`system_sent`, :meth:`compaction_tracker`,
  :meth:`context_entries`, :meth:`entries_sent`, :meth:`dropped_messages`,
  :meth:`count_compactions`,
  :meth:`configured_limits`, :meth:`overflow_rule`, :meth:`context_limits`,
  :meth:`idle_compaction`;
* :class:`ClearingAdapter` (``capabilities/clearing.py``, 24; ``persist``, ``snip``,
  ``microcompact``, ``restore``) - :attr:`placeholder_style`, :attr:`output_truncation`,
  :attr:`clears_by_marking`, :attr:`cleared_result_text`, :attr:`clearing_strategy`,
  :attr:`clearing_defaults`, :attr:`compactable_tools`, :attr:`clearing_count`,
  :attr:`own_tool_names`, :attr:`writes_clearing_boundary`, :meth:`result_slots`,
  :meth:`with_result_contents`, :meth:`cleared`, :meth:`restored`, :meth:`marked_cleared`,
  :meth:`own_prune`, :meth:`results_named`, :meth:`clearing_record`,
  :meth:`without_clearing_records`, :meth:`cleared_ids_recorded`, :meth:`cleared_text`,
  :meth:`clearing_view`, :meth:`snip_view`, :meth:`idle_clearing_after`;
* :class:`SummarizingAdapter` (``capabilities/summarizing.py``, 7; ``core/summarizing``) -
  :attr:`names_tools_its_way`, :attr:`side_chains`, :attr:`queues_prompts`,
  :attr:`restore_files_refusal`, :meth:`typed_text`, :meth:`claude_code_tool`,
  :meth:`summary_prompt`;
* :class:`ConvertingAdapter` (``capabilities/converting.py``, 6; ``convert``) -
  :attr:`converts_through_messages`, :attr:`convert_targets`, :attr:`streams_over_lines`,
  :meth:`iter_api_messages`, and as a target :attr:`blocks_kept`, :attr:`system_in_messages`;
* :class:`ValidatingAdapter` (``capabilities/validating.py``, 1; ``validate``) -
  :meth:`own_checks` (and :attr:`schema`);
* :class:`SessionsAdapter` (``capabilities/sessions.py``, 13; ``storage``, ``ctxtool
  sessions`` and the session selectors, ``cleanup``, ``vacuum``, in-place rewrites in
  ``io/live.py``) - :attr:`results_beside_session`, :attr:`names_cwd`, :attr:`session_marks`,
  :meth:`results_folder`, :meth:`session_and_cwd`, :meth:`session_roots`, :meth:`home_folder`,
  :meth:`session_files`, :meth:`session_prompt`, :meth:`session_title`, :meth:`rewriting`,
  :meth:`vacuum_lines`, :meth:`vacuum_database` (:mod:`ctxtool.formats.vacuum` says the rules).

What was not split, and why: the capabilities are base classes of one :class:`FormatAdapter`,
not separate objects an adapter hands out (``adapter.clearing().cleared(...)``): every transform
and every adapter keeps calling ``adapter.member`` as before, and the registry still gives one
object per format (:func:`~ctxtool.formats.registry.adapter_for` returns a FormatAdapter; the
functions that take an adapter as a parameter name the capability they use: ``ClearingAdapter``
in core/clearing's marking, snip, choosing and persist, ``ConvertingAdapter`` in convert).
Compaction sits under Sizing (``count_compactions`` and what is sent read the compaction
records) and every capability on Reading (their defaults read messages through
:meth:`api_message`); the others are independent of each other. An adapter overrides the same
members as before (OpenCode 54 of the 91, Claude Code 46, Codex 40, OpenAI chat 11, Anthropic
6): what it gains is where to find each default and what a capability asks of it, and an agent
that keeps no sessions on disk (a message list) leaves whole capabilities alone. This module
held all 91 members in 904 lines; the capabilities hold them in eight modules of 33-280 lines.

Adding an agent = writing a subclass in ``ctxtool/formats/<agent>.py`` (or a package), adding
it to :data:`ctxtool.formats.registry.BUILTIN` (detection order; its name becomes a
``--format`` choice, :func:`ctxtool.formats.registry.format_names`). This module and the
adapters import nothing from ``ctxtool.core`` or ``ctxtool.cli`` (a test keeps that rule): an
adapter describes its format; the transforms decide what to do with it.
"""

from __future__ import annotations

from typing import Any

from ctxtool.formats.capabilities.clearing import (Clearer, ClearingAdapter, OutputTruncation,
                                                   PruneResult, Restorer, ResultSlot)
from ctxtool.formats.capabilities.compaction import (AGENT_RULE, BOUNDARY, MARKER,
                                                     CompactionAdapter)
from ctxtool.formats.capabilities.converting import ConvertingAdapter
from ctxtool.formats.capabilities.reading import ReadingAdapter
from ctxtool.formats.capabilities.sessions import SessionFile, SessionMarks, SessionsAdapter
from ctxtool.formats.capabilities.sizing import (CLEAR_MARK, COMPACT_MARK, CompactionTracker,
                                                 ContextMark, LimitsLookup, OverflowVerdict,
                                                 SizingAdapter, Usage, verdict_rows)
from ctxtool.formats.capabilities.summarizing import SummarizingAdapter
from ctxtool.formats.capabilities.validating import Finding, TranscriptChecks, ValidatingAdapter
from ctxtool.formats.content import Block

# What summarize hands an adapter's compaction writer and gets back (CompactionWrite, a frozen
# dataclass of 23 fields, takes about a millisecond to build) is in formats/compaction.py,
# imported by summarize and the writers; still importable from here (__getattr__ at the end).
_COMPACTION = ("CompactionLines", "CompactionWrite", "CompactionWriter")


class FormatAdapter(SizingAdapter, ClearingAdapter, SummarizingAdapter, ConvertingAdapter,
                    ValidatingAdapter, SessionsAdapter):
    """One agent's transcript format. Subclass, override what differs, register an instance.

    Its members are its capabilities' (module docstring); it adds none of its own."""


__all__ = ["AGENT_RULE", "BOUNDARY", "CLEAR_MARK", "COMPACT_MARK", "MARKER", "Block", "Clearer",
           "ClearingAdapter", "CompactionAdapter", "CompactionLines", "CompactionTracker",
           "CompactionWrite", "CompactionWriter", "ContextMark", "ConvertingAdapter", "Finding",
           "FormatAdapter", "LimitsLookup", "OutputTruncation", "OverflowVerdict", "PruneResult",
           "ReadingAdapter", "Restorer", "ResultSlot", "SessionFile", "SessionMarks",
           "SessionsAdapter", "SizingAdapter", "SummarizingAdapter", "TranscriptChecks", "Usage",
           "ValidatingAdapter", "verdict_rows"]


def __getattr__(name: str) -> Any:
    if name in _COMPACTION:  # see the imports
        import ctxtool.formats.compaction as compaction

        return getattr(compaction, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
