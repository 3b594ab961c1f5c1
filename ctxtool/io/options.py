"""Option bundles shared by the commands (like sqlite-utils' output_options).

Each bundle adds its click options and hands the command one small object instead of many
keyword arguments: ``@io_options`` gives ``io: IOOptions``, ``@report_options`` gives
``report: ReportOptions``.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ctxtool.clock import parse_duration
from ctxtool.errors import StoreError, UsageError
from ctxtool.formats.jsonl import dumps_json
from ctxtool.io import ARGS_KEY, database, messages
from ctxtool.io.live import BACKUP_SUFFIX, LIVE_ENV, LiveOptions
from ctxtool.io.selectors import selector_options
from ctxtool.io.streams import IOOptions
from ctxtool.storage.atomic import write_named
from ctxtool.formats.registry import format_names

F = TypeVar("F", bound=Callable[..., Any])


class LazyChoice(click.Choice):  # type: ignore[type-arg]
    """A :class:`click.Choice` whose choices are looked up the first time they are used
    (checking a value, ``--help``, shell completion), not when the command is defined: a list
    built from every format adapter would import them all on every run of the command."""

    def __init__(self, choices: Callable[[], Iterable[str]], case_sensitive: bool = True) -> None:
        self._lookup = choices  # click.Choice.__init__ would iterate it now
        self.case_sensitive = case_sensitive

    @functools.cached_property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._lookup())


def io_options(f: F) -> F:
    """Inputs (files, session ids or stdin), -o/--output, --in-place, --format, --on-invalid,
    --quiet, --latest, --project."""
    return _io_options(f, rewrites=True)


def read_io_options(f: F) -> F:
    """``io_options`` for commands that never rewrite their input: no --in-place to offer."""
    return _io_options(f, rewrites=False)


def _io_options(f: F, *, rewrites: bool) -> F:
    @functools.wraps(f)
    def wrapper(*args: Any, inputs: tuple[str, ...], output: str | None, fmt: str | None,
                on_invalid: str, quiet: bool, session_id: str | None, in_place: bool = False,
                **kwargs: Any) -> Any:
        messages.set_quiet(quiet)
        database.set_session(session_id, in_place=in_place)
        io = IOOptions(inputs=inputs, output=output, in_place=in_place, format=fmt,
                       on_invalid=on_invalid, quiet=quiet)  # type: ignore[arg-type]
        return f(*args, io=io, **kwargs)

    options = [
        click.argument("inputs", nargs=-1, metavar="[FILE]...",
                       type=click.Path(allow_dash=True, path_type=str)),
        click.option("-o", "--output", metavar="FILE",
                     help="Write to FILE (atomically) instead of stdout."),
        *([click.option("--in-place", is_flag=True,
                        help="Rewrite each input file (atomically) instead of writing to stdout.")]
          if rewrites else []),
        # the registered formats (loading every adapter here costs nothing: the commands that
        # take these options detect the format, which asks every adapter anyway)
        click.option("-f", "--format", "fmt", type=click.Choice(format_names()),
                     help="Input format; detected from the first entries when not given."),
        click.option("--on-invalid", type=click.Choice(["error", "skip", "keep"]),
                     default="error", show_default=True,
                     help="What to do with a line that is not a JSON object: stop with exit 3, "
                          "drop it, or pass it through untouched."),
        click.option("--session", "session_id", metavar="ID",
                     help="The OpenCode session to read when an input is OpenCode's database "
                          "(opencode.db) or data folder; default: the most recently updated."),
        click.option("-q", "--quiet", is_flag=True, help="No messages or progress on stderr."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    # session ids, --latest, --project, hook JSON on stdin
    return selector_options(wrapper)  # type: ignore[return-value]


BACKUP_HELP = ("With --in-place: keep the original as FILE.bak (or FILE plus SUFFIX, given as "
               "--backup=SUFFIX); never over an earlier backup: then FILE.bak.1, FILE.bak.2... "
               "A run that changes nothing writes none.")
FORCE_HELP = "With --in-place: also rewrite files modified within --live-window."


def in_place_options(*, force: bool = True) -> Callable[[F], F]:
    """--backup[=SUFFIX], --live-window and (unless the command has its own) --force, for the
    commands that rewrite files with --in-place; they go into ``io.live`` (io/live.py)."""

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, io: IOOptions, backup: str | None, live_window: str,
                    **kwargs: Any) -> Any:
            forced = kwargs.pop("force") if force else False
            backup, io = _backup_suffix(backup, io)
            options = LiveOptions(force=forced, backup=backup,
                                  window=parse_duration(live_window, option="--live-window"))
            return f(*args, io=dataclasses.replace(io, live=options), **kwargs)

        options = [
            click.option("--backup", is_flag=False, flag_value=BACKUP_SUFFIX, default=None,
                         metavar="[=SUFFIX]", help=BACKUP_HELP),
            click.option("--live-window", default="1h", show_default=True, envvar=LIVE_ENV,
                         metavar="DURATION",
                         help="With --in-place: skip (with a warning) files modified this "
                              f"recently, which may be sessions in use; 0 turns it off. Also "
                              f"${LIVE_ENV}."),
        ]
        if force:
            options.append(click.option("--force", is_flag=True, help=FORCE_HELP))
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def _backup_suffix(backup: str | None, io: IOOptions) -> tuple[str | None, IOOptions]:
    """--backup's suffix as the user meant it: ``--backup=SUFFIX`` is one (checked: it is
    added to file names); in ``--backup FILE`` click took the first file for it: given back."""
    if backup is None:
        return None, io
    typed = click.get_current_context().meta.get(ARGS_KEY, ())
    typed = typed[:typed.index("--")] if "--" in typed else typed
    if not any(arg.startswith("--backup=") for arg in typed):
        if "/" in backup or not backup.startswith((".", "~", "-", "_")):
            return BACKUP_SUFFIX, dataclasses.replace(io, inputs=(backup, *io.inputs))
    if not backup or "/" in backup or os.sep in backup:
        raise UsageError(f"--backup={backup}: the suffix is added to each file's name, so it "
                         "cannot be empty or hold a '/'", hint="like --backup=.orig")
    return backup, io


@dataclass(frozen=True)
class ReportOptions:
    stats: bool = False
    report: str | None = None

    def emit(self, data: dict[str, Any]) -> None:
        """Print the report as one JSON object to stderr (--stats) and/or write it (--report)."""
        # dumps_json: counts taken from a transcript's usage may be integers past 64 bits
        blob = dumps_json(data, indent=True, sort_keys=True)
        if self.stats and sys.stderr is not None:  # None: started with stderr closed
            sys.stderr.write(blob.decode() + "\n")
            sys.stderr.flush()
        if self.report:
            write_named(self.report, blob + b"\n")  # through a device or a symlink


def report_options(f: F) -> F:
    """--stats (JSON report on stderr) and --report FILE."""

    @functools.wraps(f)
    def wrapper(*args: Any, stats: bool, report_file: str | None, **kwargs: Any) -> Any:
        return f(*args, report=ReportOptions(stats=stats, report=report_file), **kwargs)

    wrapper = click.option("--report", "report_file", metavar="FILE",
                           help="Write the JSON report of what was done to FILE.")(wrapper)
    wrapper = click.option("--stats", is_flag=True,
                           help="Print a JSON report of what was done to stderr.")(wrapper)
    return wrapper  # type: ignore[return-value]


def now_option(f: F) -> F:
    """--now TIMESTAMP: the current time, for reproducible age and idle checks."""
    return click.option(
        "--now", metavar="TIME",
        help="Use this ISO-8601 time (or epoch seconds) as 'now' instead of the clock.")(f)  # type: ignore[return-value]


def store_options(f: F) -> F:
    """--store DIR: the root of the tool-result store; passes ``store_dir: str | None``.

    Resolve it once the format and first entries are known, with
    ``ctxtool.storage.store.store_for_entries(store_dir, entries, fmt=fmt, env=os.environ)``
    (--store DIR, else $CTXTOOL_STORE, else Claude Code's own session folder, else
    ./ctxtool-store); files go to ``DIR/<session>/tool-results/<tool_use_id>.txt|.json``.
    """
    return click.option(
        "--store", "store_dir", metavar="DIR", type=click.Path(file_okay=False, path_type=str),
        help="Root folder for saved tool results: files go to DIR/<session>/tool-results/. "
             "Default: $CTXTOOL_STORE, else Claude Code's own project folder for a session in "
             "Claude Code's folders, else ctxtool-store beside the file (./ctxtool-store for "
             "stdin and other formats).")(f)  # type: ignore[return-value]
