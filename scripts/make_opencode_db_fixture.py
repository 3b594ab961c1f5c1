#!/usr/bin/env python3
"""Write a small OpenCode session with the real client, for tests/fixtures/opencode-<version>/.

    python scripts/make_opencode_db_fixture.py [OUT_DIR]   # default tests/fixtures/opencode-<version>

Drives the pinned OpenCode (scripts/install-clients.sh) headless against the fake Messages server
of tests/e2e, with a fresh HOME under a temporary folder: three turns (``opencode run``, then
``opencode run --session``), the first calling the ``read`` tool, the replies reporting usage so
the session ends at a known size. Copies to OUT_DIR, the temporary folder's path replaced by
``/home/user`` everywhere:

- ``opencode.db``: OpenCode's own database (VACUUMed into one file, no WAL);
- ``export.json``: ``opencode export`` of the session.

(tests/fixtures/opencode/ is the hand-built 1.1.48 file-storage session of
scripts/make_opencode_fixture.js: the pre-1.18 rule is tested on it.)
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.fake_messages import FakeMessages, say, tool  # noqa: E402
from tests.e2e.opencode_cli import opencode_in  # noqa: E402

NEUTRAL_HOME = "/home/user"
NOTES = "".join(f"note {n}: the build uses make and the tests use pytest\n" for n in range(1, 31))


def opencode_binary() -> tuple[str, str]:
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-clients.sh"), "opencode"],
                          capture_output=True, text=True, check=True)
    binary = proc.stdout.strip().split("\t", 1)[1]
    version = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    return binary, version


def forms(tmp: str) -> list[tuple[str, str]]:
    """The temporary folder's path as OpenCode writes it (absolute, and relative to / in the
    session's ``path``), each with its neutral replacement, absolute first."""
    return [(tmp, NEUTRAL_HOME), (tmp.lstrip("/"), NEUTRAL_HOME.lstrip("/"))]


def neutral_copy(db: Path, target: Path, tmp: str) -> None:
    """``db`` into one file at ``target``, ``tmp`` replaced by NEUTRAL_HOME in every text column."""
    target.unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    try:
        conn.execute("VACUUM INTO ?", (str(target),))
    finally:
        conn.close()
    conn = sqlite3.connect(target)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f"PRAGMA table_info(`{table}`)")
                       if r[2].lower() == "text"]
            for column in columns:
                for old, new in forms(tmp):
                    conn.execute(f"UPDATE `{table}` SET `{column}` = replace(`{column}`, ?, ?)"
                                 f" WHERE instr(`{column}`, ?) > 0", (old, new, old))
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()


def main() -> None:
    binary, version = opencode_binary()
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/fixtures" / f"opencode-{version}"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, FakeMessages() as api:
        oc = opencode_in(binary, Path(tmp), api)
        (oc.project / "notes.txt").write_text(NOTES)
        api.push(tool("read", {"filePath": str(oc.project / "notes.txt")}),
                 say("The build uses make; the tests use pytest.", usage=(12_000, 40)))
        oc.prompt("What does notes.txt say about the build?")
        session = oc.newest_session()
        api.push(say("Run `make test`.", usage=(12_600, 12)))
        oc.prompt("How do I run the tests?", session)
        api.push(say("Then `make lint`.", usage=(13_100, 9)))
        oc.prompt("And the linter?", session)
        export = oc.export(session)
        for old, new in forms(tmp):
            export = export.replace(old.encode(), new.encode())
        (out / "export.json").write_bytes(export)
        neutral_copy(oc.db, out / "opencode.db", tmp)
    for name in ("opencode.db", "export.json"):
        print(f"{out / name}\t{(out / name).stat().st_size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
