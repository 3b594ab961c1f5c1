"""OpenCode's overflow rule as ``estimate`` reports it for OpenCode sessions.

OpenCode 1.18 (``session/overflow.ts``; the 1.18.33 binary: ``compaction.auto !== false &&
(tokens.total || input + output + cache.read + cache.write) >= usable``) compacts when the last
finished assistant message's token count reaches the usable part of the window: the model's
input limit minus the reserve (its config's ``compaction.reserved``, else ``min(20,000, max
output)``) when it has one, else the context window minus the maximum output; never with
``compaction.auto: false``. Sessions recorded by older releases
(their ``version`` is below 1.18) follow the rule of their time (``SessionCompaction.isOverflow``,
1.1-1.17): input + cache read + output, over the input limit or the window minus the maximum
output, strictly more (168,000 on a 200K window where a reserve off it would say 148,000). The maximum output is the model's output limit (from the
OpenCode config when given) capped at 32,000 (``OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX`` moves the
cap). A summary message is never checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxtool.formats.adapter import verdict_rows
from ctxtool.formats.opencode.session import (
    OUTPUT_TOKEN_MAX, is_older_session, max_output_tokens, overflow, usage_anchor,
)
from ctxtool.formats.opencode.view import is_message, is_session_line, obj

# (provider id, model id, session folder) -> the model's limits from OpenCode's config
ModelLimits = Callable[[str | None, str | None, str | None], Mapping[str, int]]

OUTPUT_CAP_ENV = "OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"


@dataclass(frozen=True)
class OpenCodeLimits:
    """OpenCode's view of one session's context (see the module docstring)."""

    report_key: ClassVar[str] = "opencode"  # in the estimate report

    window: int
    max_output: int
    reserved: int
    input_limit: int | None
    usable: int
    count: int  # OpenCode's count: the last finished assistant message's tokens
    anchor: str | None  # that message's id
    summary: bool  # it is a compaction summary: OpenCode skips the check
    overflow: bool  # OpenCode would compact before its next call
    context_overflow: bool  # ctxtool's context now (count + what came after) is past usable
    older: bool = False  # the rule of OpenCode before 1.18 (the reserve came off the window too)
    switched_off: str | None = None  # compaction.auto: false (or its flag): it never compacts

    def as_dict(self) -> dict[str, Any]:
        return {"window": self.window, "max_output": self.max_output, "reserved": self.reserved,
                "input_limit": self.input_limit, "usable": self.usable, "count": self.count,
                "anchor": self.anchor, "anchor_is_summary": self.summary,
                "overflow": self.overflow, "context_overflow": self.context_overflow,
                "switched_off": self.switched_off}

    def rows(self, context: int) -> list[tuple[str, str]]:
        """Where OpenCode compacts, and what its own check sees now."""
        if self.input_limit:
            base = f"input limit {self.input_limit:,}" + (
                ", before 1.18" if self.older else f" - reserved {self.reserved:,}")
        else:
            base = f"window {self.window:,} - max output {self.max_output:,}" + (
                ", before 1.18" if self.older else "")
        if self.anchor is None:
            check = "no finished assistant message yet"
        elif self.switched_off:
            check = f"{self.switched_off}: it never compacts by itself"
        elif self.summary:
            check = f"last finished message is a summary ({self.anchor}): not checked"
        else:
            verdict = "compacts before its next call" if self.overflow else "no overflow"
            check = f"last finished message {self.anchor}: {self.count:,} tokens, {verdict}"
        return verdict_rows("OpenCode", self.usable, context, base, check)


def output_cap(env: Mapping[str, str] | None) -> int:
    """OpenCode's cap on output tokens (32,000 unless its environment variable says otherwise)."""
    value = (env or {}).get(OUTPUT_CAP_ENV, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else OUTPUT_TOKEN_MAX


def opencode_limits(view: Iterable[Mapping[str, Any]], *, window: int, context: int,
                    input_limit: int | None = None, output_limit: int | None = None,
                    reserved: int | None = None, switched_off: str | None = None,
                    env: Mapping[str, str] | None = None) -> OpenCodeLimits:
    """OpenCode's rule for the messages in context (``view``) and a window of ``window`` tokens;
    ``context`` is ctxtool's size of the context now, compared with the same limit.
    ``reserved``: the config's ``compaction.reserved``; ``switched_off``: why automatic
    compaction is off (``compaction.auto: false``), when it is."""
    view = list(view)
    anchor = usage_anchor(view)
    max_output = max_output_tokens(output_limit, output_cap(env))
    older = is_older_session(session_version(view))
    count = 0 if anchor is None else anchor.older_tokens if older else anchor.tokens
    rule = overflow(count, window, max_output, input_limit=input_limit, reserved=reserved,
                    older=older)
    checked = anchor is not None and not anchor.summary
    return OpenCodeLimits(window=window, max_output=max_output, reserved=rule.reserved,
                          input_limit=input_limit, usable=rule.usable, count=count,
                          anchor=anchor.message_id if anchor is not None else None,
                          summary=anchor is not None and anchor.summary,
                          overflow=checked and rule.overflow and not switched_off,
                          context_overflow=window > 0 and context >= rule.usable, older=older,
                          switched_off=switched_off)


def session_version(entries: Iterable[Mapping[str, Any]]) -> Any:
    """The OpenCode version a session line records, or None."""
    return next((e["session"].get("version") for e in entries if is_session_line(e)), None)


def session_model(entries: Iterable[Mapping[str, Any]]) -> tuple[str | None, str | None,
                                                                 str | None]:
    """(provider id, model id, folder) of a session: the last assistant message's model, else
    the session record's; the folder from the session record."""
    provider = model = folder = None
    for entry in entries:
        if is_session_line(entry):
            record = entry["session"]
            folder = record.get("directory")
            chosen = obj(record.get("model"))
            provider = provider or chosen.get("providerID")
            model = model or chosen.get("id")
        elif is_message(entry) and obj(entry.get("info")).get("role") == "assistant":
            info = obj(entry.get("info"))
            provider, model = info.get("providerID") or provider, info.get("modelID") or model
    text = [v if isinstance(v, str) else None for v in (provider, model, folder)]
    return text[0], text[1], text[2]


def usable_tokens(*, window: int, input_limit: int | None = None,
                  output_limit: int | None = None, reserved: int | None = None,
                  older: bool = False, env: Mapping[str, str] | None = None) -> int:
    """OpenCode's usable tokens for a window (the auto-compaction threshold)."""
    return overflow(0, window, max_output_tokens(output_limit, output_cap(env)),
                    input_limit=input_limit, reserved=reserved, older=older).usable


__all__ = ["ModelLimits", "OUTPUT_CAP_ENV", "OpenCodeLimits", "opencode_limits", "output_cap", "session_model", "session_version",
           "usable_tokens"]
