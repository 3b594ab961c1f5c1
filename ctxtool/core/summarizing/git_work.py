"""What a session did through git and GitHub's CLI that a summary tells in one line each.

* A merge, pull or rebase with its outcome: what went into which branch, how many files it
  changed, and its conflicts - none, or which files, and whether the work after resolved them
  (:func:`integration`, :class:`Integration`).
* A round of replies to a pull request's review comments: how many, from whom when the record
  says (a listing of the comments names their authors), how many fixed in which commit, how many
  "won't fix" (:class:`ReviewRound`).

Pure functions and small records: :class:`ctxtool.core.summarizing.work.WorkLog` feeds them.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
from ctxtool.core.summarizing.text import one_line

NAMES_SHOWN = 4  # conflicted files or commits named on a line; the rest counted
AUTHORS = 2000  # review comments whose author is remembered (the newest)
REASON_CHARS = 90  # a "won't fix" reason, as the first such reply gives it

# --- merges, pulls and rebases -----------------------------------------------------------------

_INTEGRATE = re.compile(r"\bgit\s+(?:-C\s+\S+\s+)?(merge|pull|rebase)(?![\w-])(.*)")
_ENDING = re.compile(r"\s--(continue|abort|skip|quit)\b")
_CONFLICT = re.compile(r"^CONFLICT \([^)]*\): (?:Merge conflict in )?(\S+)", re.MULTILINE)
_FILES_CHANGED = re.compile(r"\b(\d+) files? changed")
_UP_TO_DATE = re.compile(r"\bAlready up[ -]to[ -]date\b|\bis up to date\b", re.IGNORECASE)
_FAST_FORWARD = re.compile(r"^Fast-forward\s*$", re.MULTILINE)
# options of merge, pull and rebase that take a value (the message, a strategy, --onto's base)
_VALUED = frozenset("-m -s -X -F --strategy --strategy-option --onto --file --message".split())
# the branch a git command's output says is checked out
_BRANCH = re.compile(r"^On branch (\S+)|Switched to (?:a new )?branch '([^']+)'|"
                     r"^\[([^\]\s]+)(?: \(root-commit\))? [0-9a-f]{7,40}\]|"
                     r"updated refs/heads/(\S+?)\.?$", re.MULTILINE)
VERBS = {"merge": "Merged", "pull": "Pulled", "rebase": "Rebased"}


@dataclass
class Integration:
    """A merge, pull or rebase as one line of work."""

    verb: str  # merge, pull or rebase
    source: str  # what was merged or pulled, or what was rebased onto ("" for the upstream)
    branch: str  # the branch checked out ("" when the record does not say)
    files: int | None = None  # files changed, when the output counts them
    up_to_date: bool = False
    fast_forward: bool = False
    conflicts: list[str] = field(default_factory=list)
    ending: str = ""  # how the conflicts ended: "resolved ...", "aborted"

    @property
    def open(self) -> bool:
        """Conflicts not yet resolved nor given up."""
        return bool(self.conflicts) and not self.ending

    def text(self) -> str:
        """``Merged origin/main into branch feat: 12 files changed, no conflicts``."""
        branch = f"branch {self.branch}" if self.branch else "the current branch"
        if self.verb == "rebase":
            head = f"Rebased {branch} onto {self.source or 'its upstream'}"
        else:
            source = self.source or "the upstream"
            head = f"{VERBS[self.verb]} {source} into {branch}"
        if self.up_to_date:
            return f"{head}: already up to date"
        parts = ["fast-forward"] if self.fast_forward else []
        if self.files is not None:
            parts.append(f"{self.files} file{'s' * (self.files != 1)} changed")
        if self.conflicts:
            parts.append("conflicts in " + _listed(self.conflicts)
                         + (f", {self.ending}" if self.ending else ", not yet resolved"))
        else:
            parts.append("no conflicts")
        return f"{head}: " + ", ".join(parts)


def integration(command: str, result: str, branch: str) -> Integration | None:
    """The merge, pull or rebase ``command`` (one command of a line) ran, and what ``result``
    says came of it; None for another command, or one that ends an earlier one
    (``--continue``, ``--abort``: :func:`ending_of`)."""
    match = _INTEGRATE.search(command)
    if match is None or _ENDING.search(" " + match.group(2)):
        return None
    verb = match.group(1)
    args = _arguments(match.group(2))
    if verb == "pull":
        source = "/".join(args[:2]) if len(args) > 1 else (args[0] if args else "")
    else:
        source = ", ".join(args[:3]) if verb == "merge" else (args[0] if args else "")
    found = Integration(verb, source, branch_in(result) or branch)
    found.up_to_date = _UP_TO_DATE.search(result) is not None
    found.fast_forward = _FAST_FORWARD.search(result) is not None
    changed = _FILES_CHANGED.findall(result)
    found.files = sum(int(n) for n in changed) if changed else None
    found.conflicts = list(dict.fromkeys(_CONFLICT.findall(result)))
    return found


def ending_of(command: str) -> str:
    """``continue``, ``abort``, ``skip`` or ``quit`` for a ``git merge/rebase --continue``
    (and the like), else ""."""
    match = _INTEGRATE.search(command)
    ending = _ENDING.search(" " + match.group(2)) if match else None
    return ending.group(1) if ending else ""


def branch_in(result: str) -> str:
    """The branch a git command's output says is checked out ("" when it says none)."""
    found = ""
    for match in _BRANCH.finditer(result):
        found = next(g for g in match.groups() if g)
    return found


def _arguments(rest: str) -> list[str]:
    """The words of a git command after its verb that are neither options nor their values."""
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    found: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in _VALUED
        elif word.startswith(("#", ">", "2>")):
            break
        else:
            found.append(word)
    return found


def _listed(names: list[str]) -> str:
    shown = [n.rsplit("/", 1)[-1] if n.count("/") > 1 else n for n in names[:NAMES_SHOWN]]
    more = len(names) - NAMES_SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


# --- review comments -------------------------------------------------------------------------------

# a reply to a pull request's review comment: ``gh api .../pulls/N/comments/ID/replies -f body=...``
# or ``gh api .../pulls/N/comments -F in_reply_to=ID -f body=...``
_REPLY = re.compile(r"\bgh\s+api\b[^\n]*?/pulls/(\d+)/comments(?:/(\d+)/replies\b|"
                    r"\b(?=[^\n]*\bin_reply_to=(\d+)))")
_REPLY_BODY = re.compile(r"""(?:-f|-F|--field|--raw-field)\s+body=(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))""")
_WONT_FIX = re.compile(r"\bwon['\u2019]?t (?:fix|change|do)\b|\bwill not (?:fix|change)\b|"
                       r"\bnot (?:going to )?(?:fix|change)\b|\bskip(?:ping|ped)?\b|\bby design\b|"
                       r"\bintentional(?:ly)?\b|\bdeclin(?:e|ed|ing)\b", re.IGNORECASE)
_ALREADY = re.compile(r"\balready\b", re.IGNORECASE)
_FIXED = re.compile(r"\b(?:fix(?:ed)?|address(?:ed)?|done|resolved|updated|added|removed|changed|"
                    r"implemented|reconsidered)\b", re.IGNORECASE)
_SHA = re.compile(r"\b[0-9a-f]{7,40}\b")
_VERDICT_END = re.compile(r"\s[-\u2013\u2014]\s|[.:;,]\s")  # where a reply's opening verdict ends
_ID = re.compile(r"\b(\d{7,})\b")
# who wrote a listed comment: ``by @Copilot``, ``Author: Copilot``, ``user: x``, ``@x:``
_LOGIN = re.compile(r"(?:\bby\s+@|\b(?:author|user|login|reviewer)\b[\"']?\s*[:=]\s*[\"']?@?|^\s*@)"
                    r"([A-Za-z][\w.\[\]-]*[\w\]])", re.IGNORECASE | re.MULTILINE)
# a listing filtered on its author: ``select(.user.login == "Copilot")``
_AUTHOR_FILTER = re.compile(r"\.(?:user|author)\.login\s*==\s*\\?[\"']([^\"'\\]+)")


def replies_in(command: str) -> list[tuple[str, str, str]]:
    """The replies to review comments a command line posts: (pull request, comment id, body),
    in order, every line of it read (a comment line may come first)."""
    found = []
    for match in _REPLY.finditer(command):
        end = command.find("\n", match.end())
        line = command[match.start():end if end >= 0 else len(command)]
        body = _REPLY_BODY.search(line)
        text = next((g for g in body.groups() if g is not None), "") if body else ""
        found.append((match.group(1), match.group(2) or match.group(3) or "",
                      text.replace('\\"', '"')))
    return found


def comment_authors(command: str, result: str) -> dict[str, str]:
    """The review comments a listing shows, by id, with their authors: from ``gh api``'s JSON
    (``user.login``, ``author.login``) or a listing made with ``--jq`` (``[id] ... by @login``)."""
    found: dict[str, str] = {}
    text = result.lstrip()
    if text[:1] in "[{":
        try:
            _walk(orjson.loads(text), found, 0)
            return found
        except orjson.JSONDecodeError:
            pass
    default = _AUTHOR_FILTER.search(command)
    current: list[str] = []
    for line in result.splitlines():
        ids = _ID.findall(line)
        current = ids or current
        login = _LOGIN.search(line)
        for ident in current if login else ():
            found.setdefault(ident, login.group(1))
    if default:
        for ident in _ID.findall(result):
            found.setdefault(ident, default.group(1))
    return found


def _walk(value: Any, found: dict[str, str], depth: int) -> None:
    if depth > 6:
        return
    if isinstance(value, list):
        for item in value:
            _walk(item, found, depth + 1)
    elif isinstance(value, dict):
        ident = value.get("id") or value.get("databaseId")
        who = value.get("user") or value.get("author")
        login = who.get("login") if isinstance(who, dict) else None
        if isinstance(ident, int) and isinstance(login, str):
            found[str(ident)] = login
        for item in value.values():
            if isinstance(item, (list, dict)):
                _walk(item, found, depth + 1)


@dataclass
class ReviewRound:
    """The replies to one pull request's review comments in one round (until the user's next
    message): how many, to whom, and what each said came of the comment."""

    pr: str
    replies: int = 0
    authors: Counter[str] = field(default_factory=Counter)
    fixed: Counter[str] = field(default_factory=Counter)  # by the commit named ("" for none)
    already: int = 0
    wont_fix: int = 0
    answered: int = 0
    reason: str = ""  # the first "won't fix" reply's words

    def add(self, body: str, author: str, commits: set[str]) -> None:
        """A reply (``body``) to a comment by ``author`` ("" when not known); ``commits``: the
        hashes of the session's commits, which a reply may name all in digits."""
        self.replies += 1
        if author:
            self.authors[author] += 1
        sha = next((s for s in _SHA.findall(body) if s[:7] in commits
                    or re.search(r"[a-f]", s) and re.search(r"\d", s)), "")
        # the verdict a reply opens with ("Fixed in X - skipped the Y case") decides; else
        # any word of it in the reply
        verdict = _VERDICT_END.split(body.strip(), maxsplit=1)[0]
        wont, fixed = _WONT_FIX.search(verdict), _FIXED.search(verdict)
        if not wont and not fixed:
            wont, fixed = _WONT_FIX.search(body), _FIXED.search(body)
        if wont:
            self.wont_fix += 1
            self.reason = self.reason or _reason(body)
        elif _ALREADY.search(body) and (sha or fixed):
            self.already += 1
        elif sha or fixed:
            self.fixed[sha[:7]] += 1
        else:
            self.answered += 1

    def text(self) -> str:
        """``Replied to 7 review comments on PR #112 from Copilot: 6 fixed in 09bd59e, 1 won't
        fix (reason)``."""
        plural = "s" * (self.replies != 1)
        head = f"Replied to {self.replies} review comment{plural} on PR #{self.pr}"
        if self.authors:
            head += " from " + ", ".join(
                name + (f" ({n})" if len(self.authors) > 1 else "")
                for name, n in self.authors.most_common(3))
        parts = []
        named = [(sha, n) for sha, n in self.fixed.most_common() if sha]
        if named:
            fixes = [f"{n} in {sha}" for sha, n in named[:NAMES_SHOWN]]
            parts.append(f"{sum(self.fixed.values())} fixed ({', '.join(fixes)})"
                         if len(named) > 1 or self.fixed[""] else f"{named[0][1]} fixed in {named[0][0]}")
        elif self.fixed:
            parts.append(f"{self.fixed['']} fixed")
        if self.already:
            parts.append(f"{self.already} already fixed")
        if self.wont_fix:
            parts.append(f"{self.wont_fix} won't fix" + (f" ({self.reason})" if self.reason else ""))
        if self.answered:
            parts.append(f"{self.answered} answered")
        return head + (": " + ", ".join(parts) if parts else "")


def _reason(body: str) -> str:
    """A "won't fix" reply's reason: the first clause of its words after the verdict (``Won't
    fix - X is fine (...)`` gives "X is fine")."""
    rest = re.split(r"\s+[-\u2013\u2014:]\s+|[.:]\s+", body.strip(), maxsplit=1)
    reason = re.split(r"[.;]\s|\s\(", rest[1] if len(rest) > 1 else "", maxsplit=1)[0].strip()
    return one_line(reason.rstrip(" ."), REASON_CHARS)
