"""The offline summarizer on every real transcript of the corpus (skipped without ../shared).

For each file: it runs; every real user prompt appears in the summary; every file the session
edited or wrote appears; the output has no validation error the input did not already have; and
filter-compacted starts at the new boundary. The prompt and file checks below are written
independently of ctxtool's own classification, from what the corpus shows.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from ctxtool.core.messages.filter_compacted import filter_compacted, plan_cut
from ctxtool.core.summarizing.offline import OfflineSummarizer
from ctxtool.core.summarizing.summarize import SummarizeOptions, compact
from ctxtool.core.validating.validate import validate
from ctxtool.errors import CtxtoolError
from ctxtool.formats.detect import detect_format
from ctxtool.formats.jsonl import iter_entries
from ctxtool.formats.validate import entry_checker
from ctxtool.types import CLAUDE_CODE
from tests.conftest import corpus_params

pytestmark = pytest.mark.corpus

NOT_PROMPTS = ("<local-command", "<bash-stdout", "<bash-stderr", "<task-notification",
               "Caveat: The messages below", "[Request interrupted")
EDIT_TOOLS = {"Edit": "file_path", "MultiEdit": "file_path", "Write": "file_path",
              "NotebookEdit": "notebook_path"}


def squash(text: str) -> str:
    return " ".join(text.split())


def main_entries(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    main = [e for e in items if e.get("isSidechain") is not True]
    return main if any(e.get("type") in ("user", "assistant") for e in main) else items


def expected_prompts(items: list[dict[str, Any]]) -> list[str]:
    """What a person would call the user's own messages, with wrappers reduced to their words."""
    prompts = []
    for entry in main_entries(items):
        if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
            continue
        content = (entry.get("message") or {}).get("content")
        if isinstance(content, list):
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
                continue
            content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
        text = re.sub(r"<(system-reminder|ide_selection|ide_opened_file)>.*?</\1>", "",
                      str(content or ""), flags=re.S).strip()
        if not text or text.startswith(NOT_PROMPTS):
            continue
        name = re.search(r"<command-name>/?(.*?)</command-name>", text)
        shell = re.match(r"<bash-input>(.*?)</bash-input>", text, flags=re.S)
        prompts.append(f"/{name.group(1)}" if name else shell.group(1) if shell else text)
    return prompts


def edited_files(items: list[dict[str, Any]]) -> set[str]:
    found = set()
    for entry in main_entries(items):
        content = (entry.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") in EDIT_TOOLS:
                path = (block.get("input") or {}).get(EDIT_TOOLS[block["name"]])
                if isinstance(path, str) and path:
                    found.add(path)
    return found


def errors(entries: list[dict[str, Any]], fmt: str) -> set[tuple[str, int | None]]:
    return {(p.code, p.line) for p in validate(entries, fmt=fmt, check_entry=entry_checker(fmt))
            if p.severity == "error"}


@pytest.mark.parametrize("path", corpus_params())
def test_offline_summary_of_every_corpus_file(path: Path) -> None:
    with path.open("rb") as handle:
        try:
            fmt, stream = detect_format(iter_entries(handle, str(path), on_invalid="keep"))
            items = list(stream)
        except CtxtoolError:
            pytest.skip("not a transcript (a control file of the corpus)")
    done = compact(items, fmt=fmt, summarizer=OfflineSummarizer(),
                   options=SummarizeOptions(now=datetime(2026, 3, 1, tzinfo=timezone.utc)))
    if done.summary is None:  # nothing to summarize, or a summary would not be smaller
        assert done.entries == items
        assert not expected_prompts(items) or "would not make the context smaller" in str(
            done.report.reason)
        return
    summary = squash(done.summary)
    for prompt in expected_prompts(items):
        assert squash(prompt)[:60] in summary, prompt[:200]
    named = re.search(r"Working directory: (\S+)", done.summary)
    cwd = named.group(1).rstrip("/") if named else ""
    for edited in edited_files(items):  # shown relative to the working directory it names
        shown = edited[len(cwd) + 1:] if cwd and edited.startswith(cwd + "/") else edited
        assert shown in done.summary, edited
    assert errors(done.entries, fmt) <= errors(items, fmt)
    if fmt == CLAUDE_CODE:
        view = list(filter_compacted(done.entries, plan_cut(done.entries, fmt)))
        assert view[0] is done.entries[len(items)]  # our boundary
