"""``ctxtool cleanup``: age-based retention of every agent's sessions and ctxtool's store."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from datetime import timedelta
from typing import Any, TypeVar

import click
import orjson

from ctxtool.cli.cleanup_table import render, rows
from ctxtool.clock import parse_duration, parse_now
from ctxtool.errors import UsageError
from ctxtool.io import messages
from ctxtool.io.live import LIVE_ENV
from ctxtool.io.options import ReportOptions, now_option, report_options
from ctxtool.io.progress import progress
from ctxtool.io.streams import open_output
from ctxtool.io.terminal import colour_enabled, is_terminal, size, width
from ctxtool.storage import marker
from ctxtool.storage.cleanup import BUSY, CleanupOptions, CleanupRun, Summary, plan_cleanup
from ctxtool.storage.cleanup_plan import sources_of
from ctxtool.storage.cleanup_source import CleanupSource, agent_folder, agent_title, agents
from ctxtool.storage.cleanup_tree import CATEGORIES, CODEX_FOLDERS, check_folder
from ctxtool.storage.lock import folder_lock
from ctxtool.storage.retention import Retention, format_age, period_from_settings
from ctxtool.storage.store import STORE_ENV

T = TypeVar("T")


@click.command("cleanup")
@click.option("--agent", "chosen", multiple=True, type=click.Choice(agents()), metavar="NAME",
              help=f"Only clean this agent's sessions (repeatable): {', '.join(agents())}.  "
                   "[default: every agent whose folder exists; only --root's and --codex-home's "
                   "when --root is given]")
@click.option("--root", metavar="DIR",
              help="Claude Code config folder.  [default: $CLAUDE_CONFIG_DIR or ~/.claude]")
@click.option("--store", metavar="DIR",
              help="ctxtool's store, cleaned too.  [default: $CTXTOOL_STORE]")
@click.option("--codex-home", metavar="DIR",
              help="Codex CLI folder whose sessions/ (rollout-*.jsonl) are cleaned too.  "
                   "[default without --root: $CODEX_HOME or ~/.codex, when it exists]")
@click.option("--older-than", metavar="AGE",
              help="Remove what has been inactive this long: 30d, 12h, 2w.  "
                   "[default: cleanupPeriodDays from settings.json, else 30d; Gemini CLI's "
                   "sessions: its own general.sessionRetention (maxAge 30d by default, maxCount) "
                   "merged as Gemini does from the system's, the user's ~/.gemini/settings.json "
                   "and, for a project's sessions, the project's .gemini/settings.json when "
                   "Gemini trusts the folder]")
@click.option("--include", multiple=True, metavar="CATEGORY[,...]",
              help=f"Only act on these categories: {', '.join(CATEGORIES)}.")
@click.option("--exclude", multiple=True, metavar="CATEGORY[,...]",
              help="Never act on these categories.")
@click.option("--apply", is_flag=True,
              help="Really remove (or archive). Without it: only the plan.")
@click.option("--archive", "archive_dir", metavar="DIR",
              help="Move what goes into DIR/<session>.tar.gz (verified) instead of deleting it "
                   "(an OpenCode session: DIR/<session>.json, what `opencode export` prints).")
@click.option("--keep-usage", "keep_usage", metavar="DIR",
              help="Before a session goes, append its usage (no conversation text) to "
                   "DIR/projects/... (Claude Code) or DIR/sessions/... (Codex), where "
                   "CLAUDE_CONFIG_DIR=\"$HOME/.claude,DIR\" ccusage and CODEX_HOME=DIR still "
                   "count it; DIR/opencode/<session>.jsonl (OpenCode: tokens and cost of each "
                   "assistant message); DIR/gemini/<session>.jsonl (Gemini CLI: tokens and "
                   "model of each model message, its subagents' too).")
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
def cleanup_cmd(chosen: tuple[str, ...], root: str | None, store: str | None,
                codex_home: str | None, older_than: str | None,
                include: tuple[str, ...], exclude: tuple[str, ...], apply: bool,
                archive_dir: str | None, keep_usage: str | None, live_window: str, force: bool, now: str | None,
                as_json: bool, quiet: bool, report: ReportOptions) -> None:
    """Remove old sessions of every agent, safely: a plan by default, --apply to act.

    Each agent's folder is found as the agent finds it: Claude Code's from $CLAUDE_CONFIG_DIR
    (~/.claude), Codex CLI's from $CODEX_HOME (~/.codex), OpenCode's from $XDG_DATA_HOME
    (~/.local/share/opencode), Gemini CLI's from $GEMINI_CLI_HOME (~/.gemini); --agent limits
    the run to some.
    A session goes as a whole (Claude Code: transcript, tool-results/, subagents/,
    file-history, todos, plans, debug log, session-env, image-cache; Codex CLI: its
    rollout-*.jsonl under sessions/ or archived_sessions/ and the thread's rows in Codex's
    databases, as codex delete removes them; OpenCode: its child sessions and every row of
    theirs in opencode.db, in one transaction, and their tool outputs; Gemini CLI: every
    tmp/<project>/chats file with its id, its subagents, logs, tool-outputs, plans and
    /restore points; its folder in ctxtool's store) once
    its last activity - the newest timestamp inside or the newest file time, whichever is
    later - is older than --older-than (Gemini CLI's sessions by default: its own
    general.sessionRetention, maxAge and maxCount, a project's own .gemini/settings.json
    deciding for that project's sessions as it does when Gemini starts there). Never touched:
    sessions active within --live-window (1h), tool
    results a kept transcript still points at, anything behind a symlink, anything outside the
    root.
    On a terminal: a table, one row per session, naming its agent. With --json or into a
    pipe: JSONL, one record per path (each with its "agent") (with --apply, only what changed or failed), then one summary record; every
    record carries the run's time. A one-line summary (counts and bytes per agent) goes to
    stderr, except for an --apply run
    that found nothing to do (cron stays quiet). Exit 1 if anything failed.

    \b
        ctxtool cleanup                                  # the plan: what would go, and why
        ctxtool cleanup --older-than 60d --apply
        ctxtool cleanup --agent codex --older-than 14d   # Codex CLI's sessions only
        ctxtool cleanup --apply --archive ~/claude-archive --exclude plans
        ctxtool cleanup --apply --keep-usage ~/.local/share/ctxtool/usage
        ctxtool cleanup --json | jq -r 'select(.action == "delete") | .path'

    Restore an archived session with the command its record gives (Claude Code:
    tar -xzf ARCHIVE -C ~/.claude; OpenCode: opencode import DIR/<session>.json, run in the
    session's directory). See docs/cleanup.md.
    """
    messages.set_quiet(quiet)
    _no_empty_paths(root=root, store=store, archive=archive_dir, codex_home=codex_home,
                    keep_usage=keep_usage)
    when = parse_now(now)
    folders = _agent_folders(chosen, {"claude-code": root, "codex": codex_home}, force=force)
    real_root = folders.get("claude-code")
    from_env = os.environ.get(STORE_ENV) or None
    real_store = _resolve_store(store, from_env, folders=folders, force=force)
    sources = sources_of(folders, real_store)
    window = parse_duration(live_window, option="--live-window")
    retention, by_project = ({}, {}) if older_than is not None else _own_retention(sources)
    options = CleanupOptions(
        folders=folders, store=real_store, now=when, apply=apply, live_window=window,
        older_than=_older_than(older_than, real_root, window),
        retention=retention, project_retention=by_project,
        include=_categories(include, exclude),
        archive_dir=_resolve_archive(archive_dir, sources),
        keep_usage=_resolve_keep_usage(keep_usage, sources))
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


def _agent_folders(chosen: tuple[str, ...], given: dict[str, str | None], *,
                   force: bool) -> dict[str, str]:
    """agent -> the real path of its folder, for the agents this run cleans: those named by
    --agent, else every agent (only those given a folder when --root narrows the run to one
    Claude Code folder). A default folder that does not exist is nothing to clean (cron on a
    machine without that agent), not an error."""
    if chosen:
        wanted = list(dict.fromkeys(chosen))
        for agent, option in given.items():
            if option is not None and agent not in wanted:
                raise UsageError(f"a folder is given for {agent_title(agent)}, but --agent "
                                 f"leaves {agent} out", hint=f"add --agent {agent}")
    elif given.get("claude-code") is not None:
        wanted = [agent for agent in agents() if given.get(agent) is not None]
    else:
        wanted = list(agents())
    folders: dict[str, str] = {}
    missing: list[str] = []
    for agent in wanted:
        option = given.get(agent)
        if option is not None:
            folders[agent] = check_folder(option, what=agent, force=force)
            continue
        path = agent_folder(agent, os.environ)
        if os.path.isdir(path):  # the agent's own folder, found as it finds it
            folders[agent] = check_folder(path, what=agent, force=True)
        else:
            missing.append(f"no {agent_title(agent)} folder at {path}")
    if missing and (chosen or not folders):  # cron on a machine without that agent (yet)
        messages.info(f"{'; '.join(missing)}: nothing to clean there")
    return folders


def _resolve_store(option: str | None, from_env: str | None, *, folders: dict[str, str],
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
    for source in sources_of(folders, None):
        if real == source.folder or _swept(real, [source]):
            raise UsageError(f"the store {store} is inside a {agent_title(source.agent)} folder "
                             "cleanup sweeps", hint="keep the store elsewhere")
    return real


def _resolve_archive(folder: str | None, sources: list[CleanupSource]) -> str | None:
    if folder is None:
        return None
    real = os.path.realpath(os.path.expanduser(folder))
    if _swept(real, sources):
        # a later run would take the archives for old sessions and remove them
        raise UsageError(f"--archive: {folder} is inside a folder cleanup sweeps",
                         hint="keep archives outside the swept folders, e.g. ~/claude-archive")
    return real


def _resolve_keep_usage(folder: str | None, sources: list[CleanupSource]) -> str | None:
    if folder is None:
        return None
    real = os.path.realpath(os.path.expanduser(folder))
    # DIR/projects or DIR/sessions must not be (inside) what is cleaned: the usage would be
    # written into the very transcript about to go, or swept by the next run
    mirrors = [real, *(os.path.join(real, name) for name in ("projects", *CODEX_FOLDERS))]
    folders = {source.folder for source in sources}
    if any(_swept(path, sources) or path in folders for path in mirrors):
        raise UsageError(f"--keep-usage: {folder} is (inside) a folder cleanup sweeps",
                         hint="keep usage outside them, e.g. ~/.local/share/ctxtool/usage")
    return real


def _swept(real: str, sources: list[CleanupSource]) -> bool:
    """Whether ``real`` is (inside) a folder cleanup removes things from."""
    return any(real == folder or real.startswith(folder + os.sep)
               for source in sources for folder in source.swept())


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


def _own_retention(sources: list[CleanupSource]) -> tuple[dict[str, Retention],
                                                         dict[str, dict[str, Retention]]]:
    """The agents' own rules (Gemini CLI's ``general.sessionRetention``), for a run without
    ``--older-than``: agent -> its rule, and agent -> project -> a project's own rule."""
    rules: dict[str, Retention] = {}
    by_project: dict[str, dict[str, Retention]] = {}
    for source in sources:
        rule = source.own_retention(os.environ)
        if rule is None:
            continue
        rules[source.agent] = rule
        projects = dict(source.project_retention(os.environ))
        if projects:
            by_project[source.agent] = projects
        for each in [rule, *projects.values()]:
            if each.problem:
                messages.warn(each.problem)
    return rules, by_project


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
            for folder in dict.fromkeys([*options.folders.values(),
                                         *filter(None, [options.store])]):
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
    point at them, sessions kept because their agent was busy with them - not every session
    that merely stays."""
    return (not apply or record["action"] != "keep" or "error" in record
            or "referenced_by" in record or record["reason"].startswith(("changed since", BUSY)))


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


def _rule_text(rule: Retention) -> str:
    limits = [f"{format_age(rule.older_than)}+" if rule.older_than is not None else "",
              f"beyond the newest {rule.keep_newest} per project"
              if rule.keep_newest is not None else ""]
    return " or ".join(filter(None, limits)) or "none by age, its own retention is off"


def _agent_counts(sessions: int, items: int) -> str:
    counted = messages.count(sessions, "session")
    return f"{counted} and {messages.count(items, 'other item')}" if items else counted


def summary_line(summary: Summary, options: CleanupOptions) -> str:
    verb = "would remove" if summary.dry_run else "removed"
    removed = (f"{messages.count(summary.removed_sessions, 'session')} and "
               f"{messages.count(summary.removed_items, 'other item')}")
    kept = sum(summary.kept.values())
    detail = ", ".join(f"{count} {status}" for status, count in sorted(summary.kept.items()))
    parts = [f"cleanup{' (dry run)' if summary.dry_run else ''}: {verb} {removed}"
             f" ({size(summary.bytes)}) inactive for {format_age(options.older_than)}+"
             + "".join(f" ({agent}: {_rule_text(rule)}"
                       + "".join(f"; {project}: {_rule_text(own)}" for project, own in
                                 sorted(options.project_retention.get(agent, {}).items()))
                       + ")" for agent, rule in options.retention.items())]
    if summary.agents:
        parts.append(", ".join(f"{name} {_agent_counts(counts.sessions, counts.items)} "
                               f"({size(counts.bytes)})"
                               for name, counts in summary.agents.items()))
    parts.append(f"kept {kept}" + (f" ({detail})" if detail else ""))
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

