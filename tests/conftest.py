"""Shared test fixtures: corpus files, a subprocess runner for the real entry point, a CLI runner,
and a guard that refuses any network connection that is not to loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = Path(os.environ.get("CTXTOOL_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
# The session the real Claude Code wrote (scripts/make_claude_fixture.py), named by its id; other
# files in its folder are single records of the same version
CLAUDE_CODE_FIXTURE = next((FIXTURES / "claude-code-2.1.332").glob(
    "????????-????-????-????-????????????.jsonl"))


def corpus_files(suffix: str = ".jsonl") -> list[Path]:
    """Every corpus transcript, or [] when ../shared is absent."""
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob(f"*{suffix}") if p.is_file())


def corpus_params(suffix: str = ".jsonl") -> list[object]:
    """pytest params over the corpus; a single skipped param when ../shared is absent."""
    files = corpus_files(suffix)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"corpus not found at {CORPUS}"))]
    return [pytest.param(p, id=f"{p.parent.name}/{p.name[-40:]}") for p in files]


def ctxtool_executable() -> list[str]:
    """The installed console script next to this Python, else `python -m ctxtool`."""
    script = Path(sys.executable).with_name("ctxtool")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ctxtool"]


def run_ctxtool(*args: str, input: bytes | None = None, env: dict[str, str] | None = None,
                cwd: str | Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    """Run the real entry point in a subprocess; stdout and stderr captured separately."""
    full_env = {**os.environ, **(env or {})}
    if "ANTHROPIC_API_KEY" not in (env or {}):
        full_env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([*ctxtool_executable(), *args], input=input, capture_output=True,
                          env=full_env, cwd=cwd, timeout=timeout, check=False)


def read_terminal(main: int) -> bytes:
    """Everything written to a pseudo-terminal (``main``: its controller side, closed here)
    until the child closes its side."""
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    return b"".join(chunks)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _outside_the_repo(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test runs in a fresh working directory, so a default store (./ctxtool-store) or any
    other relative write can never land in the checkout."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test may reach the network: only loopback connections are allowed, and no API key
    from the developer's environment leaks into a test."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "CTXTOOL_LLM",
                 "CTXTOOL_STORE", "CTXTOOL_MODEL", "CLAUDE_CONFIG_DIR", "DISABLE_MICROCOMPACT",
                 "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
                 "CLAUDE_CODE_BLOCKING_LIMIT_OVERRIDE", "DISABLE_AUTO_COMPACT", "DISABLE_COMPACT",
                 "CLAUDE_CODE_AUTO_COMPACT_WINDOW", "CLAUDE_CODE_DISABLE_1M_CONTEXT",
                 "CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS", "FORCE_PROMPT_CACHING_5M"):
        monkeypatch.delenv(name, raising=False)
    # Claude Code's settings files: never the developer's own (a test that reads some sets
    # CLAUDE_CONFIG_DIR and lifts this)
    monkeypatch.setenv("CTXTOOL_CLAUDE_SETTINGS", "0")
    # ctxtool sessions keeps a cache: never the developer's own (~/.cache/ctxtool)
    monkeypatch.setenv("CTXTOOL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # sessions and the selectors list OpenCode's database: never the developer's own
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
    # ... and Codex CLI's rollouts: never the developer's own (~/.codex)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path_factory.mktemp("codex")))
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6):
            if not (str(host).startswith("127.") or host in ("::1", "localhost")):
                raise ConnectionRefusedError(f"tests may not connect to {address!r}")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
