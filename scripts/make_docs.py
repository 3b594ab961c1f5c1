#!/usr/bin/env python3
"""Fill the options table of each docs/<command>.md from the command's own click options.

Each page holds ``<!-- options -->`` ... ``<!-- /options -->``; what is between is rewritten from
the command's parameters (name, value, help, default), so the pages never drift from --help.

    python scripts/make_docs.py           # rewrite the tables
    python scripts/make_docs.py --check   # exit 1 when a page is out of date (the tests run this)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import click  # noqa: E402

from ctxtool.cli import COMMANDS, cli  # noqa: E402

MARK = re.compile(r"(<!-- options -->\n).*?(<!-- /options -->)", re.DOTALL)


def options_table(name: str) -> str:
    ctx = click.Context(cli, info_name="ctxtool")
    command = cli.get_command(ctx, name)
    assert command is not None, name
    rows = ["| option | meaning |", "| --- | --- |"]
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        names = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        meta = "" if param.is_flag else f" {param.make_metavar(ctx)}"
        text = " ".join((param.help or "").split()).replace("|", "\\|")
        text = text.replace("<", "&lt;").replace(">", "&gt;")
        default = param.default
        if param.show_default and default not in (None, False, ()) and not callable(default):
            text += f" Default: `{default}`."
        rows.append(f"| {names}{meta.replace('|', chr(92) + '|')} | {text} |")
    rows.append("| `-h`, `--help` | Show the command's help and exit. |")
    return "\n".join(rows) + "\n"


def render(page: str, name: str) -> str:
    return MARK.sub(lambda m: m.group(1) + options_table(name) + m.group(2), page)


def main(argv: list[str]) -> int:
    stale = []
    for name in COMMANDS:
        path = ROOT / "docs" / f"{name}.md"
        if not path.is_file():
            continue
        page = path.read_text(encoding="utf-8")
        new = render(page, name)
        if new != page:
            stale.append(path.name)
            if "--check" not in argv:
                path.write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print("out of date (run python scripts/make_docs.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
