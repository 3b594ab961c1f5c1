"""What ``snip`` and ``microcompact`` share at the edge: options, the store, running per unit."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from ctxtool.core.sizing.tokens import AgentSettings, Thresholds, thresholds
from ctxtool.io import messages
from ctxtool.io.options import ReportOptions, store_options
from ctxtool.io.spool import FileSource, run_two_pass
from ctxtool.io.streams import IOOptions
from ctxtool.storage.claude_settings import read_settings
from ctxtool.storage.store import ToolResultStore, store_for_entries

F = TypeVar("F", bound=Callable[..., Any])


def csv_set(value: str | None) -> frozenset[str] | None:
    """``--tools Read,Bash`` as a set (None when the option was not given)."""
    if value is None:
        return None
    return frozenset(name.strip() for name in value.split(",") if name.strip())


def clearing_options(f: F) -> F:
    """--no-save, --model, --context-window, --store; passes ``clear: ClearingSettings``."""

    @functools.wraps(f)
    def wrapper(*args: Any, no_save: bool, model: str | None, context_window: int | None,
                store_dir: str | None, **kwargs: Any) -> Any:
        return f(*args, clear=ClearingSettings(no_save, model, context_window, store_dir),
                 **kwargs)

    options = [
        click.option("--no-save", is_flag=True,
                     help="Lossy: drop cleared content instead of saving it to the store "
                          "(placeholders then name no file and restore cannot bring it back)."),
        click.option("--model", metavar="NAME",
                     help="Model whose context window sets the thresholds (default: the one "
                          "named in the transcript; a [1m] suffix means 1M tokens)."),
        click.option("--context-window", type=click.IntRange(min=1), metavar="TOKENS",
                     help="Context window size, overriding the model's."),
        store_options,
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


class ClearingSettings:
    """The store and threshold settings of one snip/microcompact run."""

    def __init__(self, no_save: bool, model: str | None, context_window: int | None,
                 store_dir: str | None) -> None:
        self.no_save = no_save
        self.model = model
        self.context_window = context_window
        self.store_dir = store_dir
        self.durable = True
        self.stores: list[str] = []
        self.settings: AgentSettings = None  # Claude Code's settings files, read when needed

    def limits(self, model: str | None, version: str | None = None, *,
               fmt: str | None = None) -> Thresholds:
        """Thresholds as `ctxtool estimate` computes them, for the transcript's model and the
        agent version that wrote it (Claude Code's settings files too, for its transcripts)."""
        if self.settings is None:
            self.settings = read_settings(os.environ)
        return thresholds(model=self.model or model, context_window_override=self.context_window,
                          env=os.environ, fmt=fmt, version=version, settings=self.settings)

    def store(self, fmt: str, source: FileSource) -> ToolResultStore | None:
        """The store for one unit (None with --no-save). Like persist, saved files are made durable
        (in one batch, storage/durable.py) only when the output is a file (-o, --in-place)
        that points at them once replaced."""
        if self.no_save:
            return None
        store, _ = store_for_entries(self.store_dir, iter(source), fmt=fmt, env=os.environ,
                                     notice=messages.warn)
        store.durable = self.durable
        self.stores.append(str(store.root))
        return store


Transform = Callable[[str, FileSource, Any], Iterable[dict[str, Any]]]


def run_clearing(io: IOOptions, clear: ClearingSettings, report: ReportOptions,
                 transform: Transform, new_report: Callable[[], Any]) -> list[Any]:
    """Run a snip/microcompact transform over each unit (all inputs, or each --in-place
    file), then emit the report(s) and a one-line summary per unit on stderr."""
    reports: list[Any] = []
    clear.durable = io.in_place or io.output not in (None, "-")

    def run(fmt: str, source: FileSource) -> Iterable[dict[str, Any]]:
        reports.append(new_report())
        return transform(fmt, source, reports[-1])

    run_two_pass(io, run)
    dicts = [r.as_dict() for r in reports]
    for data in dicts:
        _summarize(data, clear)
    if dicts:
        report.emit(dicts[0] if len(dicts) == 1 else {"files": dicts})
    return reports


def _summarize(data: dict[str, Any], clear: ClearingSettings) -> None:
    if not data["results_cleared"]:
        messages.summary(data["command"], f"nothing cleared ({data.get('skipped') or 'none'})")
        return
    if data.get("marked_compacted"):
        messages.summary(data["command"], f"marked {data['results_cleared']} tool result(s) "
                         "compacted, " + messages.token_change(data["cleared_tokens_before"],
                                                              data["cleared_tokens_after"])
                         + "; the output stays in the file")
        return
    where = "not saved (--no-save)" if clear.no_save else f"saved under {clear.stores[-1]}"
    messages.summary(data["command"], f"cleared {data['results_cleared']} tool result(s), "
                     + messages.token_change(data["cleared_tokens_before"],
                                             data["cleared_tokens_after"]) + f"; {where}")

