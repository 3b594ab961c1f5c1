"""OpenCode's truncation of tool output (``tool/truncation.ts``, ``Truncate.output``), for
``persist --style opencode``.

An output longer than 2,000 lines or 50 KB (UTF-8 bytes) keeps its first lines within both limits
(whole lines only), then ``...N lines truncated...`` (or ``N bytes``, when the byte limit stopped
it) and OpenCode's hint naming the file that holds the full output::

    <first lines>

    ...3120 lines truncated...

    The tool call succeeded but the output was truncated. Full output saved to: /abs/path
    Use Grep to search the full content or Read with offset/limit to view specific sections.

:func:`persisted_path` recognizes such a text when the file is one ctxtool saved (a ``.txt`` or
``.json`` file in a ``tool-results`` folder), so ``restore`` can bring the output back; OpenCode's
own truncations (files in its ``tool-output`` folder) are not ctxtool's to restore.
"""

from __future__ import annotations

import re

MAX_LINES = 2_000
MAX_BYTES = 50 * 1024
HINT_HEAD = "The tool call succeeded but the output was truncated. Full output saved to: "
HINT_TAIL = ("Use Grep to search the full content or Read with offset/limit to view specific "
             "sections.")
_STORE_FILE = r"(?P<path>[^\n]*/tool-results/[^\n/]+\.(?:txt|json))"  # a ctxtool store file
_PERSISTED = re.compile(r".*\n\n\.\.\.\d+ (?:lines|bytes) truncated\.\.\.\n\n"
                        + re.escape(HINT_HEAD) + _STORE_FILE + r"\n" + re.escape(HINT_TAIL),
                        re.DOTALL)


def over_limits(text: str, *, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> bool:
    """True when OpenCode would truncate ``text``: more than ``max_lines`` lines (split on
    newlines, as JavaScript's ``split("\\n")`` counts them) or more than ``max_bytes`` bytes."""
    return text.count("\n") + 1 > max_lines or len(text.encode("utf-8")) > max_bytes


def truncated_output(text: str, path: str, *, max_lines: int = MAX_LINES,
                     max_bytes: int = MAX_BYTES) -> str:
    """What OpenCode leaves of ``text`` once its full output is saved at ``path`` (head kept)."""
    lines = text.split("\n")
    kept: list[str] = []
    size = 0
    hit_bytes = False
    for line in lines[:max_lines]:
        cost = len(line.encode("utf-8")) + (1 if kept else 0)
        if size + cost > max_bytes:
            hit_bytes = True
            break
        kept.append(line)
        size += cost
    removed = len(text.encode("utf-8")) - size if hit_bytes else len(lines) - len(kept)
    unit = "bytes" if hit_bytes else "lines"
    preview = "\n".join(kept)
    return f"{preview}\n\n...{removed} {unit} truncated...\n\n{HINT_HEAD}{path}\n{HINT_TAIL}"


_STORE_HINT = re.compile(re.escape(HINT_HEAD) + r"[^\n]*/tool-results/[^\n]*\n" + re.escape(HINT_TAIL)
                         + r"\Z")


def looks_persisted(text: str) -> bool:
    """True when ``text`` ends with the hint naming a ctxtool store file, whether or not
    :func:`persisted_path` can read the path out of it (``restore --strict`` fails on those)."""
    return text.endswith(HINT_TAIL) and _STORE_HINT.search(text) is not None


def persisted_path(text: str) -> str | None:
    """The ctxtool store file a truncated output names, or None when ``text`` is not one."""
    if not text.endswith(HINT_TAIL):
        return None
    match = _PERSISTED.fullmatch(text)
    return match.group("path") if match else None


__all__ = ["HINT_HEAD", "HINT_TAIL", "MAX_BYTES", "MAX_LINES", "looks_persisted", "over_limits",
           "persisted_path", "truncated_output"]
