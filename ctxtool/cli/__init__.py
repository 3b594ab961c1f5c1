"""The ``ctxtool`` command: a click group that loads each command module only when it runs.

Errors raised by the core (:class:`ctxtool.errors.CtxtoolError`) are turned into one line on
stderr and the matching exit code here, once, for every command.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from typing import Any

import click

from ctxtool import __version__
from ctxtool.errors import CtxtoolError, ExitCode, Terminated
from ctxtool.io import ARGS_KEY, batch, messages
from ctxtool.storage import durable
from ctxtool.types import Entry

# name -> "module:function", in the order of a working session: find it, measure it, check it,
# shrink it, look at what the model sees, undo, convert, clean up. --help lists them this way.
COMMANDS: dict[str, str] = {
    "sessions": "ctxtool.cli.sessions:sessions_cmd",
    "estimate": "ctxtool.cli.estimate:estimate_cmd",
    "statusline": "ctxtool.cli.statusline:statusline_cmd",
    "validate": "ctxtool.cli.validate:validate_cmd",
    "persist": "ctxtool.cli.persist:persist_cmd",
    "snip": "ctxtool.cli.snip:snip_cmd",
    "microcompact": "ctxtool.cli.microcompact:microcompact_cmd",
    "summarize": "ctxtool.cli.summarize:summarize_cmd",
    "filter-compacted": "ctxtool.cli.filter_compacted:filter_compacted_cmd",
    "restore": "ctxtool.cli.restore:restore_cmd",
    "convert": "ctxtool.cli.convert:convert_cmd",
    "cleanup": "ctxtool.cli.cleanup:cleanup_cmd",
    "vacuum": "ctxtool.cli.vacuum:vacuum_cmd",
}

# One line each for `ctxtool --help` (which then imports no command module). A command missing
# here falls back to the first sentence of its own help.
SUMMARIES: dict[str, str] = {
    "sessions": "List your sessions, newest first: which file is which.",
    "estimate": "Show how full the context window is, and with what.",
    "statusline": "Print one line for Claude Code's status line.",
    "validate": "Check transcripts against their format's rules.",
    "persist": "Move oversized tool results to files on disk.",
    "snip": "Clear tool results that newer ones superseded.",
    "microcompact": "Replace old tool results with short placeholders.",
    "summarize": "Replace old history by a structured summary.",
    "filter-compacted": "Show what the model sees after the last compaction.",
    "restore": "Put saved tool results back, byte for byte.",
    "convert": "Convert OpenCode sessions and API message lists.",
    "cleanup": "Remove old sessions safely (a plan unless --apply).",
    "vacuum": "Take out what sessions hold twice (a plan with --all).",
}


class CtxtoolGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        import importlib.util  # here: a command's run needs no find_spec (see get_command)

        return [name for name, target in COMMANDS.items()
                if importlib.util.find_spec(target.split(":")[0]) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:  # one of the command's own imports: a real error
                raise
            return None  # as list_commands: a command module left out of the install
        command = getattr(module, attr)
        return command if isinstance(command, click.Command) else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            summary = SUMMARIES.get(name)
            if summary is None:
                command = self.get_command(ctx, name)
                summary = command.get_short_help_str(limit=200) if command else ""
            rows.append((name, summary))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        # the command line as typed, for an option whose meaning depends on how a value was
        # given (``--backup=SUFFIX`` against ``--backup FILE``: io/options.py)
        ctx.meta[ARGS_KEY] = tuple(args)
        name, command, rest = super().resolve_command(ctx, args)
        from ctxtool.formats.unsupported import running  # small, no adapter loaded

        running(name)  # a format may not be handled by every command yet
        return name, command, rest

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            _usage_error(exc)
            raise  # not reached

    def invoke(self, ctx: click.Context) -> Any:
        # files a store wrote for an earlier command in this process (tests, a library
        # caller) are not this command's to sync before its output replaces anything
        durable.discard()
        batch.reset()
        try:
            result = super().invoke(ctx)
            batch.check()  # a run over several files that went on past some (exit 1)
            return result
        except click.UsageError as exc:  # a command's own options: the same style as ours
            sub = ctx.invoked_subcommand
            _usage_error(exc, f"{ctx.command_path} {sub}" if sub else ctx.command_path)
        except CtxtoolError as exc:
            messages.error(exc.format())
            ctx.exit(int(exc.exit_code))
        except BrokenPipeError:
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: temp files are gone
            safe_fs = sys.modules.get("ctxtool.storage.safe_fs")  # loaded if a store wrote
            if safe_fs is not None:
                safe_fs.remove_pending()
            with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
                messages.error(_stopped_by(exc))
            ctx.exit(_exit_status(exc))
        except RecursionError as exc:
            # orjson reads JSON up to 1024 levels deep, but walking or writing such values back
            # runs into Python's recursion limit: an input we cannot process, not a crash
            where = _entry_at_fault(exc)
            messages.error(f"{where + ': ' if where else ''}input nested too deeply to process "
                           "(JSON arrays or objects more than a few hundred levels deep)")
            ctx.exit(int(ExitCode.INVALID_INPUT))
        except OSError as exc:  # writing stdout or an -o file failed (disk full, EIO...)
            messages.error(f"I/O error: {exc.strerror or exc}")
            ctx.exit(int(ExitCode.STORAGE))


def _usage_error(exc: click.UsageError, where: str = "ctxtool") -> None:
    """Click's usage errors in ctxtool's one-line style, with where to look, exit 2."""
    if exc.ctx is not None:
        where = exc.ctx.command_path
        variable = _from_environment(exc)
        if variable is not None:  # the user never typed the option: name what they did set
            exc.param_hint = f"${variable} (for {exc.param.opts[0]})"  # type: ignore[union-attr]
    messages.error(f"{exc.format_message().rstrip('.')} — see '{where} --help'")
    sys.exit(int(ExitCode.USAGE))


def _from_environment(exc: click.UsageError) -> str | None:
    """The environment variable a bad option value came from, if it came from one."""
    param = getattr(exc, "param", None)
    if exc.ctx is None or not isinstance(param, click.Option) or not param.envvar:
        return None
    from click.core import ParameterSource

    if exc.ctx.get_parameter_source(param.name or "") is not ParameterSource.ENVIRONMENT:
        return None
    names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar)
    return next((name for name in names if os.environ.get(name)), names[0])


def _entry_at_fault(exc: BaseException) -> str | None:
    """FILE:LINE of the entry being worked on when ``exc`` was raised: the innermost frame of
    its traceback that holds a line read from the input (searched only on this error path, so
    reading costs nothing for it)."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            if isinstance(value, Entry) and value.lineno:
                return value.location
    return None


@click.group(cls=CtxtoolGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="ctxtool")
def cli() -> None:
    """Keep LLM agent transcripts inside their context window.

    Commands read JSONL transcripts (Claude Code, OpenCode, Anthropic or OpenAI message lists)
    from FILE arguments, a session id, --latest or stdin, and write JSONL to stdout, so they
    compose in pipelines; each ends with a summary line on stderr (-q: none). Reports
    (sessions, estimate, validate) are text for people, into a pipe too; --json makes them
    JSON lines, which cleanup writes whenever its output is not a terminal (a cron log).
    Offline unless you ask for the Anthropic backend. Documentation: docs/index.md.

    \b
        ctxtool sessions                      # which file is my session?
        ctxtool estimate --latest             # how full is its context window?
        ctxtool persist --latest | ctxtool snip | ctxtool microcompact | ctxtool estimate
        ctxtool summarize --latest -o compacted.jsonl

    Exit codes: 0 ok, 1 failed, 2 usage, 3 invalid input, 4 file I/O, 5 LLM backend,
    129 hung up, 130 interrupted, 143 terminated.
    """


def _stopped_by(exc: KeyboardInterrupt) -> str:
    if not isinstance(exc, Terminated):
        return "interrupted"
    what = "hung up" if exc.signum == getattr(signal, "SIGHUP", None) else "terminated"
    return f"{what} ({signal.Signals(exc.signum).name})"


def _exit_status(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C; 128 + the signal's number for SIGTERM (143) and SIGHUP (129)."""
    return 128 + exc.signum if isinstance(exc, Terminated) else int(ExitCode.INTERRUPTED)


def _terminate(signum: int, frame: object) -> None:
    # a second signal while the first one's cleanup runs ends the process at once
    signal.signal(signum, signal.SIG_DFL)
    raise Terminated(signum)


def main(argv: list[str] | None = None) -> None:
    """Entry point: restores default SIGPIPE so `ctxtool ... | head` ends quietly; SIGTERM and
    SIGHUP end a command as Ctrl-C does (its temp files removed, one line on stderr)."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _terminate)
    _hold_closed_fds()
    try:
        cli.main(args=argv, prog_name="ctxtool")
    except KeyboardInterrupt as exc:
        sys.exit(_exit_status(exc))
    except BrokenPipeError:
        # platforms without SIGPIPE: silence the flush at exit, then leave quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(int(ExitCode.FAILED))


def _hold_closed_fds() -> None:
    """Started with stdin, stdout or stderr closed (`<&-`, `>&-`, `2>&-`), Python sets them to
    None: commands that need stdin or stdout say so (io/streams.py), messages go nowhere
    (io/messages.py), and the fd points at /dev/null so no file opened later (an input, a temp
    file) lands on it."""
    for fd, stream, flags in ((0, sys.stdin, os.O_RDONLY), (1, sys.stdout, os.O_WRONLY),
                              (2, sys.stderr, os.O_WRONLY)):
        if stream is not None:
            continue
        try:
            null = os.open(os.devnull, flags)
        except OSError:
            continue
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
