"""OpenCode's own context rules, over OpenCode JSONL entries (``{"info", "parts"}`` lines).

Each function follows OpenCode's source (``packages/opencode/src/session/``):

* :func:`filter_compacted_opencode` - ``MessageV2.filterCompacted`` (``message-v2.ts``);
* :func:`usage_anchor` and :func:`overflow` - ``isOverflow``/``usable`` (``overflow.ts``);
* :func:`prune_marks` - ``SessionCompaction.prune`` (``compaction.ts``);
* :func:`compaction_messages` - the records ``SessionCompaction.create``/``process`` write.

Entries that are not messages (the ``{"session": ...}`` line, lines passed through as invalid)
are kept where they are. Every function buffers the whole session: OpenCode walks it from the
newest message back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxtool.formats.opencode.view import is_message, obj, parts_of, string

PRUNE_MINIMUM = 20_000
PRUNE_PROTECT = 40_000
PRUNE_PROTECTED_TOOLS: tuple[str, ...] = ("skill",)
COMPACTION_BUFFER = 20_000
OUTPUT_TOKEN_MAX = 32_000
CONTINUE_TEXT = ("Continue if you have next steps, or stop and ask for clarification if you are "
                 "unsure how to proceed.")


def _info(entry: Mapping[str, Any]) -> dict[str, Any]:
    return obj(entry["info"])


def _is_summary(info: Mapping[str, Any]) -> bool:
    return info.get("role") == "assistant" and bool(info.get("summary"))


def _compaction_part(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    return next((p for p in parts_of(entry) if p.get("type") == "compaction"), None)


# --- filterCompacted -------------------------------------------------------------------------------

def filter_compacted_opencode(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages OpenCode still sends to the model, in the order it sends them.

    Walking back from the newest message, a finished summary (``summary: true``, ``finish`` set,
    no ``error``) marks its parent user message; the walk stops at that user message when it
    holds a compaction part. A compaction part with ``tail_start_id`` keeps walking back to that
    message, and the kept tail is moved after the summary: ``[compaction, summary, tail...,
    newer...]``. Other entries (the session line) come first, in their own order.
    """
    entries = list(entries)
    messages = [e for e in entries if is_message(e)]
    others = [e for e in entries if not is_message(e)]
    result: list[dict[str, Any]] = []
    completed: set[str] = set()
    retain: str | None = None
    for message in reversed(messages):
        info = _info(message)
        result.append(message)
        if retain is not None:
            if info.get("id") == retain:
                break
            continue
        if info.get("role") == "user" and string(info.get("id")) in completed:
            part = _compaction_part(message)
            if part is None:
                continue
            if not part.get("tail_start_id"):
                break
            retain = part["tail_start_id"]
            if info.get("id") == retain:
                break
            continue
        if _is_summary(info) and info.get("finish") and not info.get("error"):
            completed.add(string(info.get("parentID")))  # type: ignore[arg-type]
    result.reverse()
    return others + _tail_after_summary(result)


def _tail_after_summary(result: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenCode's reorder: the retained tail goes after the compaction and its summary."""
    compaction_index = next((i for i in range(len(result) - 1, -1, -1)
                             if _info(result[i]).get("role") == "user"
                             and any(p.get("type") == "compaction" and p.get("tail_start_id") is not None
                                     for p in parts_of(result[i]))), -1)
    if compaction_index < 0:
        return result
    compaction = result[compaction_index]
    tail_id = next(p.get("tail_start_id") for p in parts_of(compaction)
                   if p.get("type") == "compaction" and p.get("tail_start_id") is not None)
    summary_index = next((i for i in range(compaction_index + 1, len(result))
                          if _is_summary(_info(result[i]))
                          and _info(result[i]).get("parentID") == _info(compaction).get("id")), -1)
    tail_index = next((i for i, m in enumerate(result) if _info(m).get("id") == tail_id), -1) \
        if tail_id else -1
    if 0 <= tail_index < compaction_index < summary_index:
        return (result[compaction_index:summary_index + 1] + result[tail_index:compaction_index]
                + result[summary_index + 1:])
    return result


# --- usage and overflow ----------------------------------------------------------------------------

def older_token_count(tokens: Mapping[str, Any] | None) -> int:
    """OpenCode's count before 1.18: input + cache read + output (no cache write, no total)."""
    if not isinstance(tokens, Mapping):
        return 0
    values = (tokens.get("input"), obj(tokens.get("cache")).get("read"), tokens.get("output"))
    return int(sum(v for v in values if isinstance(v, (int, float))))


def token_count(tokens: Mapping[str, Any] | None) -> int:
    """OpenCode's count of an assistant message's tokens: ``total``, else input + output +
    cache read + cache write (reasoning is inside output where providers count it)."""
    if not isinstance(tokens, Mapping):
        return 0
    total = tokens.get("total")
    if isinstance(total, (int, float)) and total:
        return int(total)
    cache = obj(tokens.get("cache"))
    values = (tokens.get("input"), tokens.get("output"), cache.get("read"), cache.get("write"))
    return int(sum(v for v in values if isinstance(v, (int, float))))


@dataclass(frozen=True)
class UsageAnchor:
    """The last finished assistant message and its token count (the prompt OpenCode last sent)."""

    index: int  # position in the entries given
    message_id: str
    tokens: int
    summary: bool  # a compaction summary: OpenCode skips its overflow check after one
    older_tokens: int = 0  # the count of OpenCode before 1.18 (older_token_count)


def usage_anchor(entries: Iterable[Mapping[str, Any]]) -> UsageAnchor | None:
    """The last assistant message with ``finish`` set, as OpenCode's loop picks it; None if none."""
    found = None
    for index, entry in enumerate(entries):
        if is_message(entry):
            info = _info(entry)
            if info.get("role") == "assistant" and info.get("finish"):
                found = UsageAnchor(index, str(info.get("id")), token_count(info.get("tokens")),
                                    _is_summary(info), older_token_count(info.get("tokens")))
    return found


def max_output_tokens(limit_output: int | None, cap: int = OUTPUT_TOKEN_MAX) -> int:
    """``ProviderTransform.maxOutputTokens``: the model's output limit, capped at 32,000."""
    return min(limit_output, cap) if limit_output else cap


@dataclass(frozen=True)
class Overflow:
    count: int
    usable: int
    reserved: int
    overflow: bool

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "usable": self.usable, "reserved": self.reserved,
                "overflow": self.overflow}


def overflow(tokens: int | Mapping[str, Any], context: int, max_output: int, *,
             input_limit: int | None = None, reserved: int | None = None,
             older: bool = False) -> Overflow:
    """OpenCode's overflow rule (1.18, ``session/overflow.ts``): reserved = min(20,000, max
    output) unless configured; usable = input limit - reserved when the model has one, else
    context - max output; overflow when count (``total``, else input + output + cache read +
    cache write) >= usable. ``older``: the rule of releases before 1.18
    (``SessionCompaction.isOverflow``): count = input + cache read + output, usable = the input
    limit, else context - max output, no reserve; overflow when count > usable. A context of 0
    never overflows."""
    if older:
        count = tokens if isinstance(tokens, int) else older_token_count(tokens)
        usable = input_limit or max(0, context - max_output)
        return Overflow(count, usable, 0, context > 0 and count > usable)
    count = tokens if isinstance(tokens, int) else token_count(tokens)
    reserve = reserved if reserved is not None else min(COMPACTION_BUFFER, max_output)
    if context == 0:
        return Overflow(count, 0, reserve, False)
    if input_limit:
        usable = max(0, input_limit - reserve)
    else:
        usable = max(0, context - max_output)
    return Overflow(count, usable, reserve, count >= usable)


def is_older_session(version: Any) -> bool:
    """A session recorded by an OpenCode release before 1.18 (its ``version``), whose overflow
    rule counted and compared differently (:func:`overflow`); unknown versions get 1.18's."""
    if not isinstance(version, str):
        return False
    numbers = [int(n) for n in version.split("-")[0].split(".")[:2] if n.isdigit()]
    return len(numbers) == 2 and tuple(numbers) < (1, 18)


# --- prune -----------------------------------------------------------------------------------------

def estimate_opencode(text: str) -> int:
    """``Token.estimate``: JavaScript string length (UTF-16 units) / 4, rounded half up."""
    return (len(text.encode("utf-16-le", "surrogatepass")) // 2 + 2) // 4


@dataclass
class PruneResult:
    entries: list[dict[str, Any]]
    marked: list[str] = field(default_factory=list)  # callIDs of the parts marked compacted
    total: int = 0  # estimated tokens of tool output walked over
    pruned: int = 0  # estimated tokens of the parts chosen (marked only if > minimum)


def prune_marks(entries: Iterable[dict[str, Any]], *, now_ms: int, protect: int = PRUNE_PROTECT,
                minimum: int = PRUNE_MINIMUM,
                protected_tools: Iterable[str] = PRUNE_PROTECTED_TOOLS,
                estimate: Callable[[str], int] = estimate_opencode,
                protect_turns: int = 2) -> PruneResult:
    """OpenCode's prune: mark old completed tool outputs with ``state.time.compacted = now_ms``.

    Walking back from the newest message: the two newest user turns (``protect_turns``) are
    protected; the walk
    stops at a summary message or at a part already compacted; protected tools are skipped; the
    newest ``protect`` tokens of output are kept and older parts chosen. They are marked only when
    more than ``minimum`` tokens would go. The output stays in the part (nothing is lost); OpenCode
    shows the model ``[Old tool result content cleared]`` instead.
    """
    entries = list(entries)
    shielded = set(protected_tools)
    chosen: list[tuple[int, int]] = []  # (entry index, part index)
    result = PruneResult(entries)
    turns = 0
    for index in range(len(entries) - 1, -1, -1):
        if not is_message(entries[index]):
            continue
        info = _info(entries[index])
        turns += info.get("role") == "user"
        if turns < protect_turns:
            continue
        if _is_summary(info):
            break
        if not _walk_parts(entries[index], index, shielded, protect, estimate, chosen, result):
            break
    if result.pruned > minimum:
        result.entries = _mark(entries, chosen, now_ms, result.marked)
    return result


def _walk_parts(entry: Mapping[str, Any], index: int, shielded: set[str], protect: int,
                estimate: Callable[[str], int], chosen: list[tuple[int, int]],
                result: PruneResult) -> bool:
    """One message's parts, newest first; False when an already compacted part ends the walk."""
    parts = entry["parts"]
    for part_index in range(len(parts) - 1, -1, -1):
        part = parts[part_index]
        state = part.get("state") if isinstance(part, dict) else None
        if not (isinstance(state, dict) and part.get("type") == "tool"
                and state.get("status") == "completed") or string(part.get("tool")) in shielded:
            continue
        if obj(state.get("time")).get("compacted"):
            return False
        size = estimate(str(state.get("output", "")))
        result.total += size
        if result.total > protect:
            result.pruned += size
            chosen.append((index, part_index))
    return True


def mark_compacted(entries: Iterable[dict[str, Any]], call_ids: Iterable[str], *,
                   now_ms: int) -> tuple[list[dict[str, Any]], list[str]]:
    """``entries`` with the completed, not yet compacted tool parts of ``call_ids`` marked
    ``state.time.compacted = now_ms`` (copy-on-write), and the callIDs marked."""
    entries, wanted = list(entries), set(call_ids)
    chosen = [(i, k) for i, entry in enumerate(entries) if is_message(entry)
              for k, part in enumerate(entry["parts"])
              if isinstance(part, dict) and part.get("type") == "tool"
              and string(part.get("callID")) in wanted
              and obj(part.get("state")).get("status") == "completed"
              and not obj(obj(part.get("state")).get("time")).get("compacted")]
    marked: list[str] = []
    return _mark(entries, chosen, now_ms, marked), marked


def _mark(entries: list[dict[str, Any]], chosen: list[tuple[int, int]], now_ms: int,
          marked: list[str]) -> list[dict[str, Any]]:
    out = list(entries)
    for index, part_index in sorted(chosen):
        parts = list(out[index]["parts"])
        part = parts[part_index]
        state = part["state"]
        parts[part_index] = {**part, "state": {**state, "time": {**obj(state.get("time")),
                                                                 "compacted": now_ms}}}
        out[index] = {**out[index], "parts": parts}
        marked.append(str(part.get("callID")))
    return out


# --- the records a compaction writes ---------------------------------------------------------------

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def new_id(prefix: str, now_ms: int, counter: int, seed: str) -> str:
    """An id shaped like OpenCode's ascending ids (``prefix_`` + 12 hex digits of
    ms * 4096 + counter + 14 base62 characters); the characters come from ``seed``, not chance,
    so the same input gives the same output."""
    import hashlib  # here, not at the top: it costs every command 5 ms of start-up

    value = (now_ms * 0x1000 + counter) & (2**48 - 1)
    digest = hashlib.sha256(f"{seed}|{prefix}|{now_ms}|{counter}".encode()).digest()
    return f"{prefix}_{value:012x}" + "".join(_BASE62[b % 62] for b in digest[:14])


def last_user(entries: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The newest user message: OpenCode takes the agent and model of a compaction from it."""
    found = None
    for entry in entries:
        if is_message(entry) and _info(entry).get("role") == "user":
            found = entry
    return found


def compaction_messages(summary_text: str, *, parent: Mapping[str, Any], auto: bool, now_ms: int,
                        path: Mapping[str, Any] | None = None, overflow: bool | None = None,
                        tail_start_id: str | None = None, tokens: Mapping[str, Any] | None = None,
                        model: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The messages OpenCode writes for one compaction, after ``parent`` (the newest user message).

    A user message holding a compaction part (``auto``; ``overflow`` and ``tail_start_id`` when
    given), the finished ``summary: true`` assistant message with the summary as its text, and -
    for automatic compactions - the synthetic user message asking the agent to continue.
    ``model`` (``{providerID, modelID}``) is the model that wrote the summary (default: the user's).
    """
    source = _info(parent)
    session = source.get("sessionID")
    user_model = obj(source.get("model"))
    counter = iter(range(1, 100))

    def ident(prefix: str) -> str:
        return new_id(prefix, now_ms, next(counter), f"{session}|{source.get('id')}")

    def base(message_id: str) -> dict[str, Any]:
        return {"id": ident("prt"), "messageID": message_id, "sessionID": session}

    user_id = ident("msg")
    compaction: dict[str, Any] = {**base(user_id), "type": "compaction", "auto": auto}
    if overflow is not None:
        compaction["overflow"] = overflow
    if tail_start_id is not None:
        compaction["tail_start_id"] = tail_start_id
    out = [{"info": {"id": user_id, "role": "user", "model": user_model, "sessionID": session,
                     "agent": source.get("agent"), "time": {"created": now_ms}},
            "parts": [compaction]}]
    out.append(_summary_message(ident("msg"), summary_text, user_id, source, now_ms, base, path=path,
                                tokens=tokens, model=model or user_model))
    if auto:
        continue_id = ident("msg")
        out.append({"info": {"id": continue_id, "role": "user", "sessionID": session,
                             "time": {"created": now_ms}, "agent": source.get("agent"),
                             "model": user_model},
                    "parts": [{**base(continue_id), "type": "text",
                               "metadata": {"compaction_continue": True}, "synthetic": True,
                               "text": CONTINUE_TEXT, "time": {"start": now_ms, "end": now_ms}}]})
    return out


def _summary_message(message_id: str, text: str, parent_id: str, source: Mapping[str, Any],
                     now_ms: int, base: Callable[[str], dict[str, Any]], *,
                     path: Mapping[str, Any] | None, tokens: Mapping[str, Any] | None,
                     model: Mapping[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = {"id": message_id, "role": "assistant", "parentID": parent_id,
                            "sessionID": source.get("sessionID"), "mode": "compaction",
                            "agent": "compaction"}
    if isinstance(source.get("model"), dict) and "variant" in source["model"]:
        info["variant"] = source["model"]["variant"]
    info.update({"summary": True, "path": dict(path or {"cwd": "", "root": ""}), "cost": 0,
                 "tokens": dict(tokens or {"output": 0, "input": 0, "reasoning": 0,
                                           "cache": {"read": 0, "write": 0}}),
                 "modelID": model.get("modelID"), "providerID": model.get("providerID"),
                 "time": {"created": now_ms, "completed": now_ms}, "finish": "stop"})
    part = {**base(message_id), "type": "text", "text": text, "time": {"start": now_ms, "end": now_ms}}
    return {"info": info, "parts": [part]}


def last_path(entries: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """``path`` ({cwd, root}) of the newest assistant message that has one."""
    found = None
    for entry in entries:
        if is_message(entry) and isinstance(_info(entry).get("path"), dict):
            found = _info(entry)["path"]
    return found


def append_compaction(entries: Iterable[dict[str, Any]], summary_text: str, *, auto: bool,
                      now_ms: int, **options: Any) -> list[dict[str, Any]]:
    """``entries`` followed by the records of one compaction (see :func:`compaction_messages`).

    The parent is the newest user message, the path the newest assistant's, and the time is
    moved past the newest message when ``now_ms`` is older, so the records sort last.
    Raises ValueError when there is no user message to compact after.
    """
    entries = list(entries)
    parent = last_user(entries)
    if parent is None:
        raise ValueError("no user message to compact after")
    newest = max((_created(e) for e in entries if is_message(e)), default=0)
    options.setdefault("path", last_path(entries))
    return entries + compaction_messages(summary_text, parent=parent, auto=auto,
                                         now_ms=max(now_ms, newest + 1), **options)


def _created(entry: Mapping[str, Any]) -> int:
    created = obj(_info(entry).get("time")).get("created")
    return int(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else 0


__all__ = [
    "COMPACTION_BUFFER", "CONTINUE_TEXT", "OUTPUT_TOKEN_MAX", "PRUNE_MINIMUM", "PRUNE_PROTECT",
    "PRUNE_PROTECTED_TOOLS", "Overflow", "PruneResult", "UsageAnchor", "append_compaction",
    "compaction_messages", "estimate_opencode", "filter_compacted_opencode", "last_path",
    "is_older_session", "last_user", "mark_compacted", "max_output_tokens", "new_id", "overflow", "prune_marks",
    "token_count",
    "usage_anchor",
]
