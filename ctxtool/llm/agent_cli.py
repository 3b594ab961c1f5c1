"""Model calls through a coding agent the user already runs (its login, no API key): one
non-interactive run of its CLI per call. ``llm/claude_code.py`` and ``llm/codex.py`` say how to
run each agent and read its reply; this module runs them the same way for both:

* **No tools, nothing of the user's touched.** The agent starts in an empty temporary folder
  (removed afterwards) with its tools turned off by the agent's own options; the prompt (the
  transcript, untrusted) goes on stdin, never on the command line.
* **Nothing left behind.** Each agent is run with its option for not saving the session, so its
  session list and resume picker do not fill with ctxtool's runs.
* **The deadline.** ``timeout`` bounds the whole run (:class:`ctxtool.llm.deadline.CallDeadline`):
  past it the agent's process group is killed. An agent may also be stopped early when what it
  prints shows it cannot succeed (Codex waiting for a network that is down).
* **Clear failure.** Not installed, not logged in, endpoint down, timeout: one
  :class:`ctxtool.errors.LLMError` naming the agent and what to do (exit 5).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ctxtool.errors import LLMError
from ctxtool.llm.base import Completion
from ctxtool.llm.deadline import CallDeadline

KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL for an agent past its deadline
TAIL = 300  # characters of an agent's own message kept in ours


@dataclass(frozen=True)
class Finished:
    """How an agent's run ended: its exit status and everything it printed."""

    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Folder:
    """The run's temporary folders: ``work`` (empty: the agent's working folder) and ``private``
    (beside it, for files ctxtool hands the agent, such as its instructions)."""

    work: Path
    private: Path


class AgentCli:
    """A coding agent's CLI as a :class:`ctxtool.core.summarizing.model.Model`. Subclasses set
    the names and implement :meth:`argv`, :meth:`read` and, where useful, :meth:`child_env`,
    :meth:`watch` and :meth:`diagnose`."""

    name = ""  # the --llm value
    label = ""  # how messages name the agent
    program = ""  # the executable looked up on PATH
    install_hint = ""

    def __init__(self, *, model: str | None = None, env: Mapping[str, str] | None = None,
                 timeout: float = 600.0) -> None:
        self.env = dict(os.environ if env is None else env)
        self.model = model
        self.timeout = timeout
        found = shutil.which(self.program, path=self.env.get("PATH", os.defpath))
        if found is None:
            raise LLMError(f"{self.label} is not installed: no `{self.program}` on PATH",
                           hint=self.install_hint)
        self.binary = found

    # --- what a subclass says -------------------------------------------------------------------

    def argv(self, system: str, folder: Folder) -> list[str]:
        raise NotImplementedError

    def child_env(self) -> dict[str, str]:
        return dict(self.env)

    def model_option(self) -> list[str]:
        """``--model NAME`` when a model was asked for (both agents spell it so)."""
        return ["--model", self.model] if self.model else []

    def watch(self, line: str) -> LLMError | None:
        """An error that ends the run now, from one line the agent printed on stdout."""
        return None

    def read(self, done: Finished) -> Completion:
        """The reply of a finished run; LLMError (or PromptTooLong) when it has none."""
        raise NotImplementedError

    def diagnose(self) -> str | None:
        """Why the agent may have failed, found after the fact (e.g. not logged in)."""
        return None

    # --- the run ---------------------------------------------------------------------------------

    def complete(self, *, system: str, prompt: str, max_tokens: int) -> Completion:
        # max_tokens: an agent sets its own output limit; the prompt states the size wanted
        deadline = CallDeadline(self.timeout)
        deadline.start()
        with tempfile.TemporaryDirectory(prefix="ctxtool-summary-") as root:
            folder = Folder(Path(root) / "work", Path(root))
            folder.work.mkdir()
            try:
                done = self._run(self.argv(system, folder), prompt, folder.work, deadline)
            except LLMError as exc:
                raise self._explained(exc) from None
        try:
            return self.read(done)
        except LLMError as exc:
            raise self._explained(exc) from None

    def _explained(self, exc: LLMError) -> LLMError:
        why = self.diagnose()
        if why is None:
            return exc
        return LLMError(f"{exc.message} ({why})", hint=exc.hint)

    def _run(self, argv: list[str], prompt: str, cwd: Path, deadline: CallDeadline) -> Finished:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=self.child_env(), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)  # its own group: killed as one
        except OSError as exc:
            raise LLMError(f"cannot run {self.label} ({self.binary}): {exc.strerror or exc}",
                           hint=self.install_hint) from None
        stopped: list[LLMError] = []
        out: list[str] = []
        err: list[bytes] = []

        def read_stdout() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                out.append(line)
                found = None if stopped else self.watch(line)
                if found is not None:
                    stopped.append(found)
                    _kill(proc)

        def read_stderr() -> None:
            assert proc.stderr is not None
            err.append(proc.stderr.read())

        # the prompt may be megabytes: written beside the readers, so the deadline holds while an
        # agent is slow to read it
        readers = [threading.Thread(target=read_stdout, daemon=True),
                   threading.Thread(target=read_stderr, daemon=True),
                   threading.Thread(target=_feed, args=(proc, prompt), daemon=True)]
        for reader in readers:
            reader.start()
        try:
            proc.wait(timeout=deadline.remaining())
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise LLMError(f"{self.label} gave no reply within the {deadline.seconds:g} s deadline "
                           "(--timeout)", hint=f"raise --timeout, or check that `{self.program}` "
                           "answers on its own") from None
        finally:
            if proc.poll() is None:  # an interrupt (Ctrl-C) or an error above: end the agent too
                _kill(proc)
            for reader in readers:
                reader.join(timeout=KILL_GRACE)
        if stopped:
            raise stopped[0]
        return Finished(proc.returncode, "".join(out),
                        b"".join(err).decode("utf-8", "replace"))


def _feed(proc: subprocess.Popen[bytes], prompt: str) -> None:
    """Write the prompt to the agent's stdin and close it (an agent that exits before reading
    all of it has failed in a way its output will say)."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.write(prompt.encode("utf-8"))
    with contextlib.suppress(BrokenPipeError, OSError):
        proc.stdin.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the agent's process group, SIGKILL if it is still there after KILL_GRACE."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=KILL_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def count(value: object) -> int:
    """A token count an agent reported (0 when it is not an integer)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def last_line(text: str) -> str:
    """The last non-empty line of what an agent printed, cut to TAIL characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:TAIL] if lines else ""


__all__ = ["AgentCli", "Finished", "Folder", "count", "last_line"]
