"""End-to-end tests: the real agent clients (Claude Code, OpenCode, Codex CLI, Gemini CLI) resume
what ctxtool wrote, talking to a fake API server inside the test on 127.0.0.1, with a fresh HOME each time.

The clients come from ``scripts/install-clients.sh`` (pinned versions, cached); a test that needs a
client that cannot be installed is skipped with the installer's reason. Every test here is marked
``e2e`` (``pytest -m "not e2e"`` leaves them out of a quick run; ``.ci/run`` runs them).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

INSTALLER = ROOT / "scripts" / "install-clients.sh"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(Path(__file__).parent):
            item.add_marker(pytest.mark.e2e)


@functools.cache
def _install(name: str) -> tuple[str | None, str]:
    """(binary path, None) or (None, why not), once per test session and client."""
    try:
        proc = subprocess.run(["bash", str(INSTALLER), name], capture_output=True, text=True,
                              timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{INSTALLER.name} {name}: {exc}"
    for line in proc.stdout.splitlines():
        got, _, path = line.partition("\t")
        if got == name and proc.returncode == 0:
            return path, ""
    return None, (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def client_binary(name: str) -> str:
    """The installed client's executable, or skip the test saying why it could not be had."""
    path, why = _install(name)
    if path is None:
        pytest.skip(f"the real {name} client could not be installed: {why}")
    return path


@pytest.fixture(scope="session")
def claude_bin() -> str:
    return client_binary("claude")


@pytest.fixture(scope="session")
def opencode_bin() -> str:
    return client_binary("opencode")


@pytest.fixture(scope="session")
def codex_bin() -> str:
    return client_binary("codex")


@pytest.fixture(scope="session")
def gemini_bin() -> str:
    return client_binary("gemini")
