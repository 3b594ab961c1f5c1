"""Move oversized tool results out of a transcript into files, the way Claude Code does.

A tool result larger than ``max_chars`` (or longer than ``max_lines``) is saved through the
injected store and replaced by a ``<persisted-output>`` block in Claude Code's own shape::

    <persisted-output>
    Output too large (134.7KB). Full output saved to: /abs/path/tool-results/toolu_01....txt

    Preview (first 2KB):
    <first 2000 characters, cut at the last newline when it is past the half>
    ...
    </persisted-output>

When the results of one message together still exceed ``max_message_chars``, the largest go
next until the message fits. Results holding images, empty results and results that already are
placeholders are left alone, so running persist twice changes nothing the second time. With
``truncate`` nothing is saved: the result keeps its head and tail around a
``[... N chars truncated ...]`` marker (explicit, lossy).

When results changed before the last API call that records usage in a Claude Code transcript,
a ``microcompact_boundary`` entry is appended with the tokens saved there
(:mod:`ctxtool.core.clearing.boundary`), so ``estimate`` subtracts them from that call's usage; it lists
no tool ids (the results show their preview, not a cleared notice) and ``restore`` removes it.

"Characters" are Unicode code points. Claude Code's ``toolUseResult`` copy of the output is not
part of the model's context and is left untouched, as Claude Code itself does.

``style`` naming an agent with a truncation of its own
(:attr:`~ctxtool.formats.adapter.FormatAdapter.output_truncation`, matched by its
:attr:`~ctxtool.formats.adapter.FormatAdapter.placeholder_style`) follows that instead: OpenCode's
(``style="opencode"``): a result over ``max_lines`` (2,000) lines or ``max_bytes`` (50 KB) is
saved and replaced by its first lines and OpenCode's hint to use Grep or Read with offset/limit.
Where a tool result sits, and which the agent already shows as cleared, is its adapter's
(:meth:`~ctxtool.formats.adapter.FormatAdapter.result_slots`; OpenCode: a tool part's
``state.output`` or error text, its attachments staying, parts marked compacted left alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ctxtool.clock import parse_now
from ctxtool.core.clearing.boundary import AnchorSavings
from ctxtool.core.clearing.restore import (PERSISTED_CLOSE, PERSISTED_OPEN, LineKeeper, ResultSlot,
                                  placeholder_path, result_slots, with_result_contents)
from ctxtool.core.messages.blocks import has_image, tool_result_text
from ctxtool.core.sizing.meter import ContextMeter
from ctxtool.core.sizing.tokens import estimate_text_tokens
from ctxtool.errors import StoreError, UsageError
from ctxtool.formats.capabilities.clearing import ClearingAdapter, OutputTruncation
from ctxtool.formats.jsonl import dumps_json, exact_entry
from ctxtool.formats.registry import adapter_for, adapters
from ctxtool.types import ResultStore, location_of

# Claude Code's per-result limit was 50,000 characters for most tools before v2.1 raised the
# default to 400,000; 50,000 keeps any single result under ~12,500 tokens (6% of a 200K window).
DEFAULT_MAX_CHARS = 50_000
DEFAULT_MAX_MESSAGE_CHARS = 200_000  # Claude Code: all tool results of one message together
PREVIEW_CHARS = 2_000
# the <persisted-output> style: Claude Code's placeholder, the base adapter's
PERSISTED_OUTPUT = ClearingAdapter.placeholder_style


def styles() -> tuple[str, ...]:
    """The ``--style`` names: ``<persisted-output>`` and each agent's own truncation."""
    return (PERSISTED_OUTPUT, *dict.fromkeys(a.placeholder_style for a in adapters()
                                             if a.output_truncation is not None))


def _truncating_agent(style: str) -> ClearingAdapter | None:
    """The adapter whose own truncation ``style`` names, or None (``<persisted-output>``).
    Only asked of the adapters (importing each) for a style other than ``<persisted-output>``."""
    if style == PERSISTED_OUTPUT:
        return None
    return next((a for a in adapters() if a.placeholder_style == style
                 and a.output_truncation is not None), None)


@dataclass(frozen=True)
class PersistOptions:
    max_chars: int | None = DEFAULT_MAX_CHARS
    max_message_chars: int | None = DEFAULT_MAX_MESSAGE_CHARS
    max_lines: int | None = None
    truncate: bool = False
    preview_chars: int = PREVIEW_CHARS
    # an agent's own truncation (OpenCode's Truncate: over max_lines (2000) or max_bytes (50 KB),
    # the head that fits and its hint); the char limits do not apply. None: the input's own
    # (its adapter's placeholder_style unless truncating, else <persisted-output>)
    style: str | None = None
    max_bytes: int | None = None  # None: the style's own limit

    def __post_init__(self) -> None:
        agent = _truncating_agent(self.style) if self.truncate and self.style else None
        if agent is not None:
            raise UsageError(f"--truncate drops content; {agent.title}'s style saves it: "
                             "choose one",
                             hint=f"--style {self.style} saves the full output to a file")

    def style_for(self, fmt: str) -> str:
        if self.style is not None:
            return self.style
        return PERSISTED_OUTPUT if self.truncate else adapter_for(fmt).placeholder_style

    def truncation_for(self, fmt: str) -> OutputTruncation | None:
        """The agent's truncation results get (None: ``<persisted-output>``)."""
        agent = _truncating_agent(self.style_for(fmt))
        return agent.output_truncation if agent is not None else None


@dataclass
class PersistReport:
    entries: int = 0
    entries_changed: int = 0
    results: int = 0
    persisted: int = 0
    truncated: int = 0
    failed: int = 0
    chars_before: int = 0  # of the results that were changed
    chars_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    files: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"entries": self.entries, "entries_changed": self.entries_changed,
                "tool_results": self.results, "persisted": self.persisted,
                "truncated": self.truncated, "failed": self.failed,
                "changed_results": {"chars_before": self.chars_before,
                                    "chars_after": self.chars_after,
                                    "tokens_before": self.tokens_before,
                                    "tokens_after": self.tokens_after},
                "files": self.files}


Warn = Callable[[str], None]


def _ignore(_: str) -> None:
    pass


# --- the placeholder -----------------------------------------------------------------------------

def format_size(size: int) -> str:
    """Claude Code's size label: ``950 bytes``, ``2KB``, ``134.7KB``, ``1.5MB``."""
    if size < 1024:
        return f"{size} bytes"
    value = size / 1024
    for unit in ("KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            text = f"{value:.1f}"
            return (text[:-2] if text.endswith(".0") else text) + unit
        value /= 1024
    raise AssertionError("unreachable")


def preview(text: str, limit: int = PREVIEW_CHARS) -> tuple[str, bool]:
    """The first ``limit`` characters, cut at the last newline when it is past the half;
    and whether anything was left out."""
    if len(text) <= limit:
        return text, False
    cut = text.rfind("\n", 0, limit)
    return text[:cut if cut > limit * 0.5 else limit], True


def js_length(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript (and so Claude Code's size label) counts."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def persisted_output(path: str, stored_text: str, *, preview_chars: int = PREVIEW_CHARS) -> str:
    """The ``<persisted-output>`` block for content saved at ``path``."""
    head, more = preview(stored_text, preview_chars)
    ending = "\n...\n" if more else "\n"
    return (f"{PERSISTED_OPEN}\nOutput too large ({format_size(js_length(stored_text))}). "
            f"Full output saved to: {path}\n\nPreview (first {format_size(preview_chars)}):\n"
            f"{head}{ending}{PERSISTED_CLOSE}")


def stored_text(content: str | list[Any]) -> str:
    """The text of the file a content is saved as (what Claude Code previews)."""
    if isinstance(content, str):
        return content
    return dumps_json(content, indent=True).decode()


def truncate_text(text: str, limit: int) -> str:
    """Head and tail of ``text`` around a ``[... N chars truncated ...]`` marker, at most
    ``limit`` characters in all (seed 001, tier 0)."""
    if len(text) <= limit:
        return text
    keep = max(0, (limit - len(_marker(len(text)))) // 2)
    return text[:keep] + _marker(len(text) - 2 * keep) + (text[-keep:] if keep else "")


def _marker(cut: int) -> str:
    return f"\n\n[... {cut} chars truncated ...]\n\n"


# --- sizes ---------------------------------------------------------------------------------------

def content_size(content: Any) -> int:
    """Characters of a result: the string's length, or a block list's compact JSON length."""
    if isinstance(content, str):
        return len(content)
    return len(dumps_json(content).decode())


def content_lines(content: Any) -> int:
    if isinstance(content, str):
        return content.count("\n") + 1
    return sum(b.get("text", "").count("\n") + 1 for b in content
               if isinstance(b, dict) and isinstance(b.get("text"), str))


def is_candidate(content: Any) -> bool:
    """A result persist may move: non-empty text or blocks, no image, not already a placeholder."""
    if isinstance(content, str):
        return bool(content) and not content.startswith(PERSISTED_OPEN) \
            and placeholder_path(content) is None
    return isinstance(content, list) and bool(content) and not has_image(content) \
        and not any(isinstance(b, dict) and b.get("type") == "image_url" for b in content) \
        and placeholder_path(content) is None


def choose(sizes: dict[int, tuple[int, int]], options: PersistOptions) -> list[int]:
    """Slots to move: each over the per-result limits, then the largest others until the
    message's total is within ``max_message_chars``. ``sizes`` maps slot -> (chars, lines)."""
    chosen = [i for i, (chars, lines) in sizes.items()
              if (options.max_chars is not None and chars > options.max_chars)
              or (options.max_lines is not None and lines > options.max_lines)]
    if options.max_message_chars is None:
        return chosen
    rest = sorted((i for i in sizes if i not in chosen), key=lambda i: -sizes[i][0])
    total = sum(sizes[i][0] for i in rest)
    for index in rest:
        if total <= options.max_message_chars:
            break
        chosen.append(index)
        total -= sizes[index][0]
    return chosen


# --- the transform -------------------------------------------------------------------------------

def persist(entries: Iterable[dict[str, Any]], *, fmt: str, store: ResultStore | None,
            options: PersistOptions = PersistOptions(), report: PersistReport | None = None,
            warn: Warn = _ignore, now: datetime | None = None) -> Iterator[dict[str, Any]]:
    """Replace oversized tool results by ``<persisted-output>`` blocks (see the module docstring).

    Streaming: one entry at a time, nothing buffered. A result that cannot be saved stays as it
    is, with a warning (``warn``) and a count in ``report.failed``; the caller decides what
    that means for the exit status. ``store`` may be None only with ``options.truncate``.
    ``now`` stamps the boundary entry (None: the clock).
    """
    report = report if report is not None else PersistReport()
    savings = AnchorSavings(fmt) if adapter_for(fmt).writes_clearing_boundary else None
    truncation = options.truncation_for(fmt)
    slots_of = adapter_for(fmt).result_slots  # looked up once: this runs for every line
    for entry in entries:
        report.entries += 1
        # most lines hold no tool result (progress, hooks, text): passed on without more ado
        slots = None if getattr(entry, "invalid", False) else slots_of(entry)
        new = _persist_entry(entry, slots, fmt, store, options, report, warn, truncation) \
            if slots else entry
        report.entries_changed += new is not entry
        if savings is not None:
            savings.note(new, report.tokens_before - report.tokens_after)
        yield new
    if savings is not None and savings.before_anchor > 0:
        last = savings.last_with_uuid  # copied from: read exactly (see _persist_entry)
        # no ids: listing them would show the results as cleared instead of their preview
        yield adapter_for(fmt).clearing_record(
            last=exact_entry(last) if last is not None else None, ids=[], trigger="manual",
            pre_tokens=report.tokens_before, tokens_saved=savings.before_anchor,
            now=now or parse_now(None), after=savings.last)


def _persist_entry(entry: dict[str, Any], found: list[ResultSlot], fmt: str,
                   store: ResultStore | None, options: PersistOptions, report: PersistReport,
                   warn: Warn, truncation: OutputTruncation | None) -> dict[str, Any]:
    """``entry`` with its chosen results replaced (a new entry), or ``entry`` itself."""
    # The CLI reads without the search for integers past 64 bits (half a parse, on every line):
    # an entry with results is read again exactly before its sizes, saved content and
    # re-serialized line are taken from it.
    exact = exact_entry(entry)
    if exact is not entry:
        found = result_slots(exact, fmt)
    slots = {slot.index: slot for slot in found}
    report.results += len(slots)
    if truncation is not None:
        # the text the model sees (a block list's text blocks joined), as the agent measures it
        chosen = [i for i, s in slots.items() if is_candidate(s.content)
                  and truncation.over_limits(tool_result_text(s.content),
                                             **_truncation_limits(options, truncation))]
    else:
        sizes = {i: (content_size(s.content), content_lines(s.content) if options.max_lines else 0)
                 for i, s in slots.items() if is_candidate(s.content)}
        chosen = choose(sizes, options if not options.truncate else _chars_only(options)) \
            if sizes else []
    if not chosen:
        return entry
    if not options.truncate and isinstance(store, LineKeeper) \
            and not _keep_original_line(exact, fmt, store, report, warn):
        report.failed += len(chosen)
        return entry
    changes: dict[int, Any] = {}
    for index in chosen:
        slot = slots[index]
        if options.truncate:
            replacement = _truncated(slot.content, options.max_chars or DEFAULT_MAX_CHARS)
            if replacement == slot.content:
                continue
            report.truncated += 1
        else:
            replacement = _saved(exact, fmt, slot, store, options, report, warn, truncation)
            if replacement is None:
                continue
        _account(report, slot.content, replacement)
        changes[index] = replacement
    return with_result_contents(exact, fmt, changes) if changes else entry


def _chars_only(options: PersistOptions) -> PersistOptions:
    # --truncate cuts each result to max_chars; the line and per-message triggers would pick
    # results already under that size, which truncation cannot shrink.
    return PersistOptions(max_chars=options.max_chars, max_message_chars=None, max_lines=None,
                          truncate=True, preview_chars=options.preview_chars)


def _truncation_limits(options: PersistOptions, truncation: OutputTruncation) -> dict[str, int]:
    return {"max_lines": options.max_lines or truncation.MAX_LINES,
            "max_bytes": options.max_bytes or truncation.MAX_BYTES}


def _saved(entry: dict[str, Any], fmt: str, slot: ResultSlot, store: ResultStore | None,
           options: PersistOptions, report: PersistReport, warn: Warn,
           truncation: OutputTruncation | None) -> str | None:
    if store is None:
        raise ValueError("persist needs a store unless options.truncate is set")
    try:
        path = store.save(slot.content, tool_use_id=slot.tool_use_id,
                          session_id=adapter_for(fmt).session_id_of(entry))
    except StoreError as exc:
        report.failed += 1
        warn(f"{location_of(entry) or '<entry>'}: tool result "
                               f"{slot.tool_use_id} left in place: {exc.format()}")
        return None
    report.persisted += 1
    report.files += 1
    if truncation is not None:
        return truncation.truncated_output(tool_result_text(slot.content), path,
                                           **_truncation_limits(options, truncation))
    return persisted_output(path, stored_text(slot.content), preview_chars=options.preview_chars)


def _keep_original_line(entry: dict[str, Any], fmt: str, store: LineKeeper,
                        report: PersistReport, warn: Warn) -> bool:
    """Keep the input bytes when they are not what orjson would write for the entry, so
    ``restore`` can give them back exactly (see core/clearing/restore.py). False when they could not be
    kept: the entry is then left unchanged, since changing it would lose those bytes."""
    raw = getattr(entry, "raw", None)
    if raw is None:
        return True
    canonical = dumps_json(entry)
    if raw == canonical + b"\n":
        return True
    try:
        store.save_line(raw, canonical=canonical,
                        session_id=adapter_for(fmt).session_id_of(entry))
    except StoreError as exc:
        warn(f"{location_of(entry) or '<entry>'}: tool results left in place: "
                               f"{exc.format()}")
        return False
    return True


def _truncated(content: Any, limit: int) -> Any:
    if isinstance(content, str):
        return truncate_text(content, limit)
    def is_text(block: Any) -> bool:
        return isinstance(block, dict) and isinstance(block.get("text"), str)

    share = max(1, limit // max(1, sum(map(is_text, content))))
    return [{**b, "text": truncate_text(b["text"], share)} if is_text(b) else b for b in content]


def _account(report: PersistReport, before: Any, after: Any) -> None:
    report.chars_before += content_size(before)
    report.chars_after += content_size(after)
    report.tokens_before += estimate_text_tokens(stored_text(before))
    report.tokens_after += estimate_text_tokens(stored_text(after))


# --- --budget auto -------------------------------------------------------------------------------

@dataclass(frozen=True)
class ContextUse:
    tokens: int
    model: str | None


def measure_context(entries: Iterable[dict[str, Any]], fmt: str) -> ContextUse:
    """How full the context is at the end of a transcript (the ``estimate`` rule), and the last
    model seen. Streaming; used for ``--budget auto`` before the transform runs."""
    meter = ContextMeter(fmt)
    model = None
    for entry in entries:
        meter.add(entry)
        message = entry.get("message")
        if isinstance(message, dict) and isinstance(message.get("model"), str) \
                and not message["model"].startswith("<"):
            model = message["model"]
    return ContextUse(meter.context_tokens, model)


def auto_max_chars(context_tokens: int, effective_window: int, ceiling: int | None) -> int | None:
    """Per-result limit for ``--budget auto`` (seed 001, tier 1): below half of the effective
    window nothing tightens, from 50% results over 30000 chars go, above 70% over 15000.
    ``ceiling`` (--max-chars) always applies."""
    used = context_tokens / effective_window if effective_window > 0 else 0.0
    tier = 15_000 if used > 0.70 else 30_000 if used >= 0.50 else None
    if tier is None:
        return ceiling
    return tier if ceiling is None else min(tier, ceiling)


__all__ = ["DEFAULT_MAX_CHARS", "DEFAULT_MAX_MESSAGE_CHARS", "PERSISTED_OUTPUT",
           "PREVIEW_CHARS", "ContextUse", "PersistOptions", "PersistReport", "auto_max_chars",
           "choose", "content_size", "format_size", "is_candidate", "measure_context", "persist",
           "persisted_output", "preview", "stored_text", "styles", "truncate_text"]
