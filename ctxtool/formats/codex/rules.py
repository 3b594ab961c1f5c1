"""Codex CLI's own rules: when it compacts a session, what it sends that no line records, and
which tools' outputs may be cleared."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxtool.formats.adapter import verdict_rows
from ctxtool.formats.codex.usage import token_info

# Codex's tools whose outputs may be cleared (its shell, file and search tools), as Claude Code's
# compactable set is for it
COMPACTABLE_TOOLS = frozenset({"exec_command", "write_stdin", "shell", "local_shell",
                               "shell_command", "read_file", "list_dir", "grep_files",
                               "view_image", "web_search", "apply_patch"})

# What Codex 0.169.0 sends in front of the items besides its base instructions (tool definitions
# and request fields), which no rollout line records: its first request of a session (the
# fixtures' fake Responses API counts characters / 4) was 9,622 tokens, of which the base
# instructions (20,751 characters) are 5,188 and the three items sent about 1,040.
UNRECORDED_SYSTEM_TOKENS = 3_400


#: ``model_context_window`` in a token_count is this share of the model's window (Codex keeps the
#: rest in reserve: ``effective_context_window_percent``, 95 unless a model says otherwise)
EFFECTIVE_WINDOW_PERCENT = 95
#: Codex compacts when a turn's tokens reach this share of the model's window (its default
#: ``auto_compact_token_limit``; a lower ``model_auto_compact_token_limit`` in config.toml wins,
#: and no rollout line records one)
AUTO_COMPACT_PERCENT = 90


@dataclass(frozen=True)
class CodexLimits:
    """Where Codex compacts a session by its own rule (see :data:`AUTO_COMPACT_PERCENT`)."""

    report_key: ClassVar[str] = "codex"  # in the estimate report

    window: int  # model_context_window, as the last token_count records it
    model_window: int  # the model's whole window it is the share of
    usable: int  # Codex compacts when a turn's tokens reach this
    count: int | None  # the last token_count's last_token_usage.total_tokens

    @property
    def overflow(self) -> bool:
        return self.count is not None and self.count >= self.usable

    def as_dict(self) -> dict[str, Any]:
        return {"window": self.window, "model_window": self.model_window, "usable": self.usable,
                "count": self.count, "overflow": self.overflow}

    def rows(self, context: int) -> list[tuple[str, str]]:
        base = (f"{AUTO_COMPACT_PERCENT}% of the model's {self.model_window:,}, of which "
                f"{self.window:,} usable")
        if self.count is None:
            check = "no token count recorded yet"
        else:
            verdict = "compacts before its next turn" if self.overflow else "no compaction due"
            check = f"last turn {self.count:,} tokens, {verdict}"
        return verdict_rows("Codex", self.usable, context, base, check)


def codex_limits(view: Iterable[Mapping[str, Any]], window: int) -> CodexLimits:
    """Codex's rule for a session whose ``model_context_window`` is ``window``."""
    model_window = window * 100 // EFFECTIVE_WINDOW_PERCENT
    count = None
    for entry in view:
        info = token_info(entry)
        last = info.get("last_token_usage") if info is not None else None
        total = last.get("total_tokens") if isinstance(last, dict) else None
        if isinstance(total, int) and total > 0:
            count = total
    return CodexLimits(window=window, model_window=model_window,
                       usable=model_window * AUTO_COMPACT_PERCENT // 100, count=count)
