"""Every shell example of README.md and docs/ runs, in order, in a sandbox: a temporary HOME
holding a Claude Code folder with the bundled example session, and a working folder with the
files the examples name. Each command must end with exit 0, or with the code its line announces
in a trailing ``# exit N`` comment. A block preceded by ``<!-- not run: REASON -->`` is only
illustrative (installing, systemd): those stay few. README size and vocabulary are checked here
too, and that each command has its page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxtool.cli import COMMANDS
from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
EXAMPLE = ROOT / "ctxtool" / "examples" / "session.jsonl"
SESSION_ID = "9b2f6c1e-4d7a-4e0b-8f3c-2a61d5e0c7b4"
BLOCK = re.compile(r"(<!-- not run: ([^>]*?) -->\n)?```(sh|bash)\n(.*?)```", re.DOTALL)
INTERNAL = re.compile(r"\bseed \d|\bseed 0|DESIGN(\.md)? ?§|\btier \d|\btiers?\b", re.IGNORECASE)
MAX_ILLUSTRATIVE = 8  # in all pages together


@dataclass
class Example:
    page: str
    command: str
    expect: int


def blocks(path: Path) -> list[tuple[str | None, str]]:
    """(reason it is not run or None, block text) of each sh block."""
    return [(m.group(2), m.group(4)) for m in BLOCK.finditer(path.read_text(encoding="utf-8"))]


def examples(path: Path) -> list[Example]:
    found = []
    text = path.read_text(encoding="utf-8")
    for reason, block in blocks(path):
        if reason is not None:
            continue
        if path.name == "README.md" and "Set up on a fresh machine" in text and \
                block == _setup_block(text):
            # the set-up itself is what CI runs; its ctxtool step is an example like the others
            block = block.splitlines()[0].split("&&")[-1].strip() + "\n"
        for line in block.replace("\\\n", " ").splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            announced = re.search(r"#\s*exit (\d+)", line)
            found.append(Example(path.name, line, int(announced.group(1)) if announced else 0))
    return found


def _setup_block(text: str) -> str:
    match = re.search(r"Set up on a fresh machine.*?```sh\n(.*?)```", text, re.DOTALL)
    return match.group(1) if match else ""


def sandbox(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A home with the example session in ~/.claude, a working folder with the examples' files."""
    home, work = tmp / "home", tmp / "work"
    two_days_ago = time.time() - 2 * 86400  # not a session in use: --in-place may rewrite it
    project = home / ".claude" / "projects" / "-home-dev-invoice-tool"
    project.mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}")
    for target in (project / f"{SESSION_ID}.jsonl", work / "ctxtool" / "examples" / "session.jsonl",
                   work / "session.jsonl"):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLE, target)
        os.utime(target, (two_days_ago, two_days_ago))
    shutil.copyfile(ROOT / "tests" / "fixtures" / "opencode" / "export.json", work / "s.json")
    shutil.copytree(ROOT / "scripts", work / "scripts")
    bin_dir = Path(sys.executable).parent
    env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "LANG": "C.UTF-8",
           "TMPDIR": str(tmp), "COLUMNS": "100"}
    return work, env


def run_page(path: Path, tmp: Path) -> list[str]:
    work, env = sandbox(tmp)
    failures = []
    for example in examples(path):
        proc = subprocess.run(["bash", "-c", "set -o pipefail; " + example.command], cwd=work,
                              env=env, capture_output=True, timeout=300, check=False)
        if proc.returncode != example.expect:
            failures.append(f"{example.command!r}: exit {proc.returncode}, expected "
                            f"{example.expect}: {proc.stderr.decode(errors='replace')[-600:]}")
    return failures


@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_every_shell_example_runs(path: Path, tmp_path: Path) -> None:
    assert run_page(path, tmp_path) == []


def test_examples_are_found_and_illustrative_blocks_stay_few() -> None:
    assert sum(len(examples(p)) for p in PAGES) >= 60
    reasons = [reason for p in PAGES for reason, _ in blocks(p) if reason is not None]
    assert len(reasons) <= MAX_ILLUSTRATIVE, reasons
    assert all(reason.strip() for reason in reasons)


def test_readme_is_short_and_speaks_plainly() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 12 * 1024
    assert not INTERNAL.search(text), INTERNAL.search(text)
    first = text.split("Set up on a fresh machine")[0]
    assert "context window" in first  # what it is, before how to set it up
    for needed in ("pipx install", "uv tool install", "ctxtool sessions", "crontab",
                   "docs/index.md", "completion"):
        assert needed in text.replace("_COMPLETE", "completion"), needed


def test_docs_speak_plainly_and_every_command_has_its_page() -> None:
    for page in DOCS.glob("*.md"):
        assert not INTERNAL.search(page.read_text(encoding="utf-8")), page.name
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert (DOCS / f"{name}.md").is_file(), name
        assert f"({name}.md)" in index, name
    for page in ("benchmarks.md", "internals.md", "python-api.md"):
        assert (DOCS / page).is_file() and f"({page})" in index


def test_the_readme_cron_line_is_the_one_tested() -> None:
    """tests/cli/test_cleanup*.py run scripts/cleanup-cron.txt's line: the README shows it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    cron = [line for line in (ROOT / "scripts" / "cleanup-cron.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]
    assert cron and cron[0] in readme


def test_the_python_api_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from ctxtool.storage import durable

    work, _ = sandbox(tmp_path)
    monkeypatch.chdir(work)
    durable.discard()  # a fresh process, as the page's code is: nothing pending from earlier tests
    text = (DOCS / "python-api.md").read_text(encoding="utf-8")
    for code in re.findall(r"```python\n(.*?)```", text, re.DOTALL):
        exec(compile(code, "docs/python-api.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "claude-code 54 entries"  # as the page's comment says
    assert (work / "compacted.jsonl").stat().st_size > (work / "session.jsonl").stat().st_size


def test_option_tables_match_the_commands() -> None:
    """docs/<command>.md's options table is made from the command itself (scripts/make_docs.py)."""
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_docs.py"), "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in COMMANDS:
        page = (DOCS / f"{name}.md").read_text(encoding="utf-8")
        assert "<!-- options -->\n| option | meaning |" in page, name


def first_command_prints(clone: Path) -> str:
    """What the README's first command prints run in ``clone`` (holding the example)."""
    proc = subprocess.run([str(Path(sys.executable).with_name("ctxtool")), "summarize",
                           "ctxtool/examples/session.jsonl", "-o", str(clone / "c.jsonl")],
                          cwd=clone, capture_output=True, text=True, timeout=120, check=True)
    return proc.stderr.strip()


def test_the_readme_shows_what_its_first_command_prints(tmp_path: Path) -> None:
    """Run from a clone at a short path and at a long one: the line the README shows is what
    both print but the figure after the arrow, which moves with the clone's path (the summary
    names the transcript by it); the README says so and gives it as "about" a figure both
    runs are within 1% of."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"```text\n(ctxtool: summarize: .*?)\n```", text).group(1)  # type: ignore[union-attr]
    printed = []
    for clone in (tmp_path / "c", tmp_path / "home" / "someone" / ("projects-" * 10) / "ctxtool"):
        (clone / "ctxtool" / "examples").mkdir(parents=True)
        shutil.copyfile(EXAMPLE, clone / "ctxtool" / "examples" / "session.jsonl")
        printed.append(first_command_prints(clone))
    after = re.compile(r"-> ([0-9,]+) tokens \(-\d+%\)")  # the share moves with it, by a point
    figures = [int(after.search(line).group(1).replace(",", "")) for line in printed]  # type: ignore[union-attr]
    assert figures[0] != figures[1]  # it does move with the path
    assert {after.sub("-> N tokens (-P%)", line) for line in [*printed, shown]} == \
        {after.sub("-> N tokens (-P%)", shown)}
    about = re.search(r"after the arrow is about ([0-9,]+) wherever your clone is", text)
    assert about, "the README must say the figure after the arrow moves with the clone's path"
    shown_about = int(about.group(1).replace(",", ""))
    assert all(abs(f - shown_about) <= shown_about // 100 for f in figures), figures  # within 1%


def test_the_rules_table_has_every_rule_and_where_it_comes_from() -> None:
    """docs/estimate.md's table of rules by agent and version: a row for each row of
    ctxtool's own table (the name estimate reports), for OpenCode's three (the overflow rule
    changed at 1.18, the prune default at ctxtool's PRUNE_OPT_IN_SINCE), Codex's and
    Gemini CLI's, each
    saying where its numbers come from."""
    from ctxtool.formats.claude_code.rules import RULES
    from ctxtool.formats.opencode.switches import PRUNE_OPT_IN_SINCE
    text = (ROOT / "docs" / "estimate.md").read_text(encoding="utf-8")
    table = text[text.index("## Rules by agent and version"):]
    rows = [line for line in table.splitlines() if line.startswith("| ")][2:]
    names = [f"Claude Code {rule.name}" for rule in RULES] + [
        "OpenCode 1.18+", "OpenCode 1.4-1.17",
        f"OpenCode before {'.'.join(map(str, PRUNE_OPT_IN_SINCE))}", "Codex CLI", "Gemini CLI"]
    for name in names:
        row = next((r for r in rows if r.startswith(f"| {name}")), None)
        assert row is not None, f"no row for {name}"
        cells = [c.strip() for c in row.replace("\\|", "").strip("|").split("|")]
        assert len(cells) == 5 and len(cells[-1]) > 8, row  # where the numbers come from
