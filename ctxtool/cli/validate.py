"""``ctxtool validate``: report what is wrong in transcripts, one line per problem."""

from __future__ import annotations

from collections.abc import Iterator

import click
import orjson

from ctxtool.core.validating.validate import ERROR, WARNING, Problem, validate
from ctxtool.errors import ExitCode, InputError, UnsupportedFormatError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.validate import entry_checker
from ctxtool.formats.registry import format_names
from ctxtool.io import batch, messages
from ctxtool.io.selectors import selector_options
from ctxtool.io.streams import IOOptions, check_stdin, display_name, iter_file_entries, open_output
from ctxtool.io.terminal import visible


@click.command("validate")
@selector_options
@click.argument("inputs", nargs=-1, metavar="[FILE]...",
                type=click.Path(allow_dash=True, path_type=str))
@click.option("-f", "--format", "fmt", type=click.Choice(format_names()),
              help="Input format; detected per file from its first entries when not given.")
@click.option("--json", "as_json", is_flag=True,
              help="Write one JSON object per problem (file, line, severity, code, message).")
@click.option("--strict", is_flag=True, help="Exit 3 on warnings too, not only on errors.")
@click.option("-o", "--output", metavar="FILE",
              help="Write the report to FILE (atomically) instead of stdout.")
@click.option("-q", "--quiet", is_flag=True,
              help="No summary on stderr (the line naming the first error stays).")
@click.pass_context
def validate_cmd(ctx: click.Context, inputs: tuple[str, ...], fmt: str | None, as_json: bool,
                 strict: bool, output: str | None, quiet: bool) -> None:
    """Check transcripts against their format's schema and structural rules.

    Each file is checked on its own: every entry against the JSON Schema of its format, every
    tool_use answered by exactly one later tool_result, parentUuid chains intact, no duplicate
    uuids, compact boundaries well-formed and followed by their summary. What Claude Code
    writes in normal operation (a live session's unanswered last tool call, subagent files
    pointing into their parent session, files starting mid-session) is not reported. OpenCode
    sessions (ctxtool convert's JSONL) have their own rules: every assistant's parentID in the
    file, each part's messageID its message's id, tool callIDs unique. Gemini CLI sessions are
    replayed as Gemini replays them, then checked: the session named, no line Gemini skips, no
    rewind to an unknown message, calls and results paired as Gemini sends them.

    Problems go to stdout as `FILE:LINE: severity: message [code]` (or JSONL with --json); a
    summary goes to stderr, naming the first error when there is one. Exit 0 when there are no
    errors (warnings allowed unless --strict), 3 when there are.

    \b
        ctxtool validate ~/.claude/projects/*/*.jsonl
        ctxtool validate --json session.jsonl | jq -r 'select(.severity=="error") | .code'
        ctxtool microcompact session.jsonl | ctxtool validate --strict && echo intact
    """
    messages.set_quiet(quiet)
    io = IOOptions(inputs=inputs, format=fmt, on_invalid="keep", quiet=quiet)
    check_stdin(io)
    totals: dict[str, int] = {ERROR: 0, WARNING: 0}
    first: Problem | None = None  # the first problem that fails the run
    with open_output(output, io.paths) as out:
        for path in io.paths:
            # a file that cannot be read is told on stderr and the others are checked: exit 3
            # if they have errors, else 1 (io/batch.py)
            with batch.each(path, of=len(io.paths)):
                for problem in _file_problems(path, io):
                    totals[problem.severity] += 1
                    if first is None and (problem.severity == ERROR or strict):
                        first = problem
                    out.write(orjson.dumps(problem.to_dict()) + b"\n" if as_json
                              else visible(problem.format()).encode() + b"\n")
            out.flush()
    tally = _tally(len(io.paths) - len(batch.failed()), totals)
    if first is None:
        messages.info(tally)
        return
    # like every command's bad input: one line naming file:line and the problem (the first)
    messages.error(f"{first.location}: {first.message} [{first.code}] (first of {tally})")
    ctx.exit(int(ExitCode.INVALID_INPUT))


def _file_problems(path: str, io: IOOptions) -> Iterator[Problem]:
    """Problems of one input; a file that is not a transcript at all yields one error. A format
    ctxtool does not read is refused as by every command (stderr), not reported as a problem."""
    name = display_name(path)
    try:
        fmt, entries = detect_format(iter_file_entries(path, io, warn=_ignore, exact_ints=False),
                                     io.format)
    except UnsupportedFormatError:
        raise
    except InputError as exc:
        yield Problem.from_error(exc, file=name)
        return
    yield from validate(entries, fmt=fmt, source=name, check_entry=entry_checker(fmt))


def _ignore(_: str) -> None:
    """Framing warnings of the reader: validate reports those lines itself."""


def _tally(files: int, totals: dict[str, int]) -> str:
    """``2 errors, 1 warning in 3 files`` / ``no problems in 1 file``."""
    where = f"in {files} file{'s' if files != 1 else ''}"
    parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in totals.items() if n]
    return f"{', '.join(parts) or 'no problems'} {where}"
