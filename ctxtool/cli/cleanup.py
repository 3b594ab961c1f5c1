"""``ctxtool cleanup``: age-based retention of Claude Code sessions and ctxtool's store."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any, TypeVar

import click
import orjson

from ctxtool.cli import messages
from ctxtool.cli.cleanup_table import render, rows
from ctxtool.cli.live import LIVE_ENV
from ctxtool.cli.options import ReportOptions, now_option, report_options
from ctxtool.cli.progress import progress
from ctxtool.cli.streams import open_output
from ctxtool.cli.terminal import colour_enabled, is_terminal, size, width
from ctxtool.clock import parse_duration, parse_now
from ctxtool.errors import UsageError
from ctxtool.storage import marker
from ctxtool.storage.cleanup import CleanupOptions, CleanupRun, Summary, plan_cleanup
from ctxtool.storage.cleanup_tree import CATEGORIES, CLAUDE_CATEGORIES, CODEX_FOLDERS, check_folder
from ctxtool.storage.lock import folder_lock
from ctxtool.formats.codex import codex_home as default_codex_home
from ctxtool.storage.paths import claude_config_dir
from ctxtool.storage.retention import format_age, period_from_settings
from ctxtool.storage.store import STORE_ENV

T = TypeVar("T")


@click.command("cleanup")
@click.option("--root", metavar="DIR",
              help="Claude Code config folder.  [default: $CLAUDE_CONFIG_DIR or ~/.claude]")
@click.option("--store", metavar="DIR",
              help="ctxtool's store, cleaned too.  [default: $CTXTOOL_STORE]")
@click.option("--codex-home", metavar="DIR",
              help="Codex CLI folder whose sessions/ (rollout-*.jsonl) are cleaned too.  "
                   "[default without --root: $CODEX_HOME or ~/.codex, when it exists]")
@click.option("--older-than", metavar="AGE",
              help="Remove what has been inactive this long: 30d, 12h, 2w.  "
                   "[default: cleanupPeriodDays from settings.json, else 30d]")
@click.option("--include", multiple=True, metavar="CATEGORY[,...]",
              help=f"Only act on these categories: {', '.join(CATEGORIES)}.")
@click.option("--exclude", multiple=True, metavar="CATEGORY[,...]",
              help="Never act on these categories.")
@click.option("--apply", is_flag=True,
              help="Really remove (or archive). Without it: only the plan.")
@click.option("--archive", "archive_dir", metavar="DIR",
              help="Move what goes into DIR/<session>.tar.gz (verified) instead of deleting it.")
@click.option("--keep-usage", "keep_usage", metavar="DIR",
              help="Before a session goes, append its usage (no conversation text) to "
                   "DIR/projects/... (Claude Code) or DIR/sessions/... (Codex), where "
                   "CLAUDE_CONFIG_DIR=\"$HOME/.claude,DIR\" ccusage and CODEX_HOME=DIR still "
                   "count it.")
@click.option("--live-window", default="1h", show_default=True, envvar=LIVE_ENV,
              metavar="DURATION",
              help="Sessions active this recently are never touched, whatever --older-than "
                   f"says (the rule --in-place uses too). Also ${LIVE_ENV}.")
@click.option("--force", is_flag=True,
              help="Accept a --root that does not look like one (never / or ~). A --store must "
                   "hold the .ctxtool-store file ctxtool writes when it creates one.")
@now_option
@click.option("--json", "as_json", is_flag=True,
              help="JSONL records (schemas/cleanup-record.schema.json) even on a terminal; "
                   "the default into a pipe or file.")
@click.option("-q", "--quiet", is_flag=True, help="No summary, warnings or progress on stderr.")
@report_options
def cleanup_cmd(root: str | None, store: str | None, codex_home: str | None,
                older_than: str | None,
                include: tuple[str, ...], exclude: tuple[str, ...], apply: bool,
                archive_dir: str | None, keep_usage: str | None, live_window: str, force: bool, now: str | None,
                as_json: bool, quiet: bool, report: ReportOptions) -> None:
    """Remove old sessions and their side files, safely: a plan by default, --apply to act.

    A session goes as a whole (transcript, tool-results/, subagents/, file-history, todos,
    plans, debug log, session-env, image-cache, its folder in ctxtool's store; a Codex CLI
    session: its rollout-*.jsonl under $CODEX_HOME/sessions) once its last
    activity - the newest timestamp inside or the newest file time, whichever is later - is
    older than --older-than. Never touched: sessions active within --live-window (1h), tool
    results a kept transcript still points at, anything behind a symlink, anything outside the
    root.
    On a terminal: a table, one row per session. With --json or into a pipe: JSONL, one
    record per path (with --apply, only what changed or failed), then one summary record; every
    record carries the run's time. A one-line summary goes to stderr, except for an --apply run
    that found nothing to do (cron stays quiet). Exit 1 if anything failed.

    \b
        ctxtool cleanup                                  # the plan: what would go, and why
        ctxtool cleanup --older-than 60d --apply
        ctxtool cleanup --apply --archive ~/claude-archive --exclude plans
        ctxtool cleanup --apply --keep-usage ~/.local/share/ctxtool/usage
        ctxtool cleanup --json | jq -r 'select(.action == "delete") | .path'

    Restore an archived session with: tar -xzf ARCHIVE -C ~/.claude
    """
    messages.set_quiet(quiet)
    _no_empty_paths(root=root, store=store, archive=archive_dir, codex_home=codex_home,
                    keep_usage=keep_usage)
    when = parse_now(now)
    real_codex = _resolve_codex(codex_home, default=root is None, force=force)
    real_root = _resolve_root(root, force=force)
    from_env = os.environ.get(STORE_ENV) or None
    real_store = _resolve_store(store, from_env, root=real_root, force=force)
    window = parse_duration(live_window, option="--live-window")
    options = CleanupOptions(
        root=real_root, store=real_store, now=when, apply=apply, live_window=window,
        older_than=_older_than(older_than, real_root, window),
        include=_categories(include, exclude),
        archive_dir=_resolve_archive(archive_dir, real_root, real_store, real_codex),
        codex=real_codex, keep_usage=_resolve_keep_usage(keep_usage, real_root, real_store,
                                                         real_codex))
    table = not as_json and is_terminal()
    with _locks(options):
        plan = plan_cleanup(options, progress=_progress)
        run = CleanupRun(plan)
        records = progress(run.records(), desc="cleaning up" if apply else "planning",
                           unit="path")
        if table:
            done = list(records)
        else:
            _write_records(record for record in records if apply_logs(record, apply=apply))
            _write_records([{"time": run.time, "summary": summary_record(run.summary, options)}])
    if table:
        click.echo(render(rows(done), summary_line(run.summary, options), width=width(),
                          colour=colour_enabled()), nl=False)
    _finish(run.summary, options, report, quiet_if_idle=apply, line=not table)
    if run.summary.errors:
        click.get_current_context().exit(1)


def _progress(items: Iterable[T], total: int, desc: str) -> Iterator[T]:
    return progress(items, total=total, desc=desc, unit="session")


def _no_empty_paths(**paths: str | None) -> None:
    """``--root ''`` (an unset variable in a script) must not quietly mean the default."""
    for name, value in paths.items():
        option = name.replace("_", "-")
        if value is not None and not value.strip():
            raise UsageError(f"--{option}: empty path",
                             hint=f"leave --{option} out for the default")


def _resolve_root(root: str | None, *, force: bool) -> str | None:
    path = root or str(claude_config_dir(os.environ))
    if root is None and not os.path.lexists(path):
        # a machine without Claude Code (yet): nothing to clean, not an error for cron
        messages.info(f"no Claude Code folder at {path}; nothing to clean there")
        return None
    return check_folder(path, what="root", force=force)


def _resolve_codex(option: str | None, *, default: bool, force: bool) -> str | None:
    """The Codex CLI folder: ``--codex-home``, else (when no ``--root`` narrows the run to one
    Claude Code folder) ``$CODEX_HOME`` or ``~/.codex`` if it exists."""
    if option is None:
        path = str(default_codex_home(os.environ))
        if not default or not os.path.isdir(path):
            return None
        return check_folder(path, what="codex", force=True)  # Codex's own folder by definition
    return check_folder(option, what="codex", force=force)


def _resolve_store(option: str | None, from_env: str | None, *, root: str | None,
                   force: bool) -> str | None:
    store = option or from_env
    if store is None:
        return None
    if option is None and not os.path.lexists(store):
        messages.warn(f"${STORE_ENV} {store} does not exist; nothing to clean there")
        return None
    if option is None and os.path.isdir(store) and not marker.is_marked(os.path.realpath(store)):
        # cron with a $CTXTOOL_STORE ctxtool never wrote to: clean the root, leave that alone
        messages.warn(f"${STORE_ENV} {store} is not a store ctxtool made (no {marker.MARKER} "
                      "file in it); nothing is cleaned there")
        return None
    real = check_folder(store, what="store", force=force)
    if real == root or _swept(real, root=root, store=None):
        raise UsageError(f"the store {store} is inside a Claude Code folder cleanup sweeps",
                         hint="keep the store elsewhere")
    return real


def _resolve_archive(folder: str | None, root: str | None, store: str | None,
                     codex: str | None = None) -> str | None:
    if folder is None:
        return None
    real = os.path.realpath(os.path.expanduser(folder))
    if _swept(real, root=root, store=store, codex=codex):
        # a later run would take the archives for old sessions and remove them
        raise UsageError(f"--archive: {folder} is inside a folder cleanup sweeps",
                         hint="keep archives outside the swept folders, e.g. ~/claude-archive")
    return real


def _resolve_keep_usage(folder: str | None, root: str | None, store: str | None,
                        codex: str | None) -> str | None:
    if folder is None:
        return None
    real = os.path.realpath(os.path.expanduser(folder))
    # DIR/projects or DIR/sessions must not be (inside) what is cleaned: the usage would be
    # written into the very transcript about to go, or swept by the next run
    mirrors = [real, *(os.path.join(real, name) for name in ("projects", *CODEX_FOLDERS))]
    if any(_swept(path, root=root, store=store, codex=codex) for path in mirrors) or any(
            path in (root, codex) for path in mirrors):
        raise UsageError(f"--keep-usage: {folder} is (inside) a folder cleanup sweeps",
                         hint="keep usage outside them, e.g. ~/.local/share/ctxtool/usage")
    return real


def _swept(real: str, *, root: str | None, store: str | None, codex: str | None = None) -> bool:
    """Whether ``real`` is (inside) a folder cleanup removes things from."""
    folders = [os.path.join(root, name) for name in CLAUDE_CATEGORIES] if root else []
    folders += [store] if store else []
    folders += [os.path.join(codex, name) for name in CODEX_FOLDERS] if codex else []
    return any(real == folder or real.startswith(folder + os.sep) for folder in folders)


def _older_than(value: str | None, root: str | None, live_window: timedelta) -> timedelta:
    if value is not None:
        age = parse_duration(value, option="--older-than")
        if age < live_window:
            messages.warn(f"sessions active within the last {format_age(live_window)} are kept "
                          f"whatever --older-than says")
        return age
    settings: Any = None
    if root is None:
        return period_from_settings(None)[0]
    path = os.path.join(root, "settings.json")
    try:
        with open(path, "rb") as handle:
            settings = orjson.loads(handle.read())
    except FileNotFoundError:  # no settings.json: Claude Code's default, nothing to say
        pass
    except (OSError, orjson.JSONDecodeError) as exc:
        messages.warn(f"{path}: cannot read settings ({exc}); using 30 days")
    age, problem = period_from_settings(settings)
    if problem:
        messages.warn(f"{path}: {problem}")
    return age


def _categories(include: tuple[str, ...], exclude: tuple[str, ...]) -> tuple[str, ...]:
    def names(values: tuple[str, ...], option: str) -> list[str]:
        found = [name.strip() for value in values for name in value.split(",") if name.strip()]
        unknown = [name for name in found if name not in CATEGORIES]
        if unknown:
            raise UsageError(f"{option}: unknown category {unknown[0]!r}",
                             hint=f"choose from {', '.join(CATEGORIES)}")
        return found

    chosen = names(include, "--include") or list(CATEGORIES)
    dropped = set(names(exclude, "--exclude"))
    return tuple(name for name in CATEGORIES if name in chosen and name not in dropped)


@contextlib.contextmanager
def _locks(options: CleanupOptions) -> Iterator[None]:
    """Only a run that changes things takes the locks (a dry run writes nothing, not even those)."""
    with contextlib.ExitStack() as stack:
        if options.apply:
            for folder in dict.fromkeys(filter(None, (options.root, options.store,
                                                      options.codex))):
                stack.enter_context(folder_lock(folder))
        yield


def _write_records(records: Iterable[dict[str, Any]]) -> None:
    with open_output(None) as out:
        for record in records:
            out.write(orjson.dumps(record) + b"\n")
        out.flush()


def apply_logs(record: dict[str, Any], *, apply: bool) -> bool:
    """Whether a record goes into the JSONL: all of a plan; of an --apply run (a log, usually
    cron's), what changed, what failed, and files kept because a removed session's neighbours
    point at them - not every session that merely stays."""
    return (not apply or record["action"] != "keep" or "error" in record
            or "referenced_by" in record or record["reason"].startswith("changed since"))


def summary_record(summary: Summary, options: CleanupOptions) -> dict[str, Any]:
    return {**summary.as_dict(), "older_than": int(options.older_than.total_seconds())}


def _idle(summary: Summary) -> bool:
    """An --apply run that changed nothing and met no error."""
    return not (summary.removed_sessions or summary.removed_items or summary.indexes
                or summary.empty_folders or summary.errors)


def _finish(summary: Summary, options: CleanupOptions, report: ReportOptions, *,
            quiet_if_idle: bool, line: bool) -> None:
    for error in dict.fromkeys(summary.errors):
        messages.warn(error)
    if line and not (quiet_if_idle and _idle(summary)):
        messages.info(summary_line(summary, options))
    report.emit(summary.as_dict())


def summary_line(summary: Summary, options: CleanupOptions) -> str:
    verb = "would remove" if summary.dry_run else "removed"
    removed = (f"{messages.count(summary.removed_sessions, 'session')} and "
               f"{messages.count(summary.removed_items, 'other item')}")
    kept = sum(summary.kept.values())
    detail = ", ".join(f"{count} {status}" for status, count in sorted(summary.kept.items()))
    parts = [f"cleanup{' (dry run)' if summary.dry_run else ''}: {verb} {removed}"
             f" ({size(summary.bytes)}) inactive for {format_age(options.older_than)}+",
             f"kept {kept}" + (f" ({detail})" if detail else "")]
    if summary.referenced_files:
        parts.append(f"{summary.referenced_files} referenced files left in place")
    if summary.empty_folders:
        parts.append(f"{summary.empty_folders} empty project folder(s) "
                     + ("would go" if summary.dry_run else "removed"))
    if summary.archives:
        parts.append(f"{len(summary.archives)} archives in {options.archive_dir}")
    if summary.usage_kept:
        parts.append(f"usage of {summary.usage_kept} sessions kept in {options.keep_usage}")
    if summary.errors:
        parts.append(f"{len(summary.errors)} errors")
    if summary.dry_run:
        parts.append("pass --apply to act")
    return "; ".join(parts)

