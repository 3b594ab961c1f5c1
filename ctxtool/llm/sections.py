"""The nine sections of a summary: their headings, and reading a summary back by them.

The nine headings are Claude Code's (seeds/000). They are the contract between the summary
request and every backend (a model's reply must hold them; the offline backend writes them) and
the agents' own templates filled from them (``formats/opencode/prompt.py``), so they live here,
below both.
"""

from __future__ import annotations

import re

HEADINGS: tuple[str, ...] = (
    "Primary Request and Intent",
    "Key Technical Concepts",
    "Files and Code Sections",
    "Errors and fixes",
    "Problem Solving",
    "All user messages",
    "Pending Tasks",
    "Current Work",
    "Optional Next Step",
)


def _heading_pattern(number: int, title: str) -> re.Pattern[str]:
    words = r"\s+".join(re.escape(w) for w in title.split())
    if title == "Optional Next Step":
        words = r"(?:Optional\s+)?Next\s+Steps?"
    return re.compile(rf"^[\s#*>_-]*(?:{number}\s*[.):]\s*)?[*_]*\s*{words}\b",
                      re.IGNORECASE | re.MULTILINE)


_PATTERNS = tuple(_heading_pattern(n, t) for n, t in enumerate(HEADINGS, start=1))


def missing_headings(summary: str) -> list[str]:
    """The section headings that do not start a line of ``summary``."""
    return [title for title, pattern in zip(HEADINGS, _PATTERNS) if not pattern.search(summary)]


def split_sections(summary: str) -> dict[str, str] | None:
    """The body under each of the nine headings of a summary (headings found in order), or None
    when it is not made of them."""
    starts: list[tuple[int, int, str]] = []
    for title, pattern in zip(HEADINGS, _PATTERNS):
        match = pattern.search(summary)
        if match is None:
            continue
        line_end = summary.find("\n", match.end())
        body_start = len(summary) if line_end < 0 else line_end + 1
        starts.append((match.start(), body_start, title))
    if len(starts) < len(HEADINGS) // 2:
        return None
    starts.sort()
    sections: dict[str, str] = {}
    for i, (_, body_start, title) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(summary)
        first_line = summary[starts[i][0]:body_start]
        inline = first_line.split(":", 1)[1].strip(" *\n") if ":" in first_line else ""
        sections[title] = (inline + "\n" + summary[body_start:end]).strip()
    return sections


__all__ = ["HEADINGS", "missing_headings", "split_sections"]
