"""What a session did through git and GitHub's CLI that a summary tells in one line each.

* A merge, pull or rebase with its outcome: what went into which branch, how many files it
  changed, and its conflicts - none, or which files, and whether the work after resolved them
  (:func:`integration`, :class:`Integration`).
* A round of replies to a pull request's review comments: how many, from whom when the record
  says (a listing of the comments names their authors), how many fixed in which commit, how many
  "won't fix" (:class:`ReviewRound`); under it, one short line per comment (the most telling
  :data:`POINTS_SHOWN`): its point as the listing showed it (the first sentence, the file and
  line it is on), the reply's verdict, commit and words (:func:`review_comments`).

Pure functions and small records: :class:`ctxtool.core.summarizing.work.WorkLog` feeds them.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson
from ctxtool.core.summarizing.text import one_line

NAMES_SHOWN = 4  # conflicted files or commits named on a line; the rest counted
COMMENTS = 2000  # review comments remembered as listed (the newest)
POINTS_SHOWN = 4  # comments of a round told one per line (won't fix first, then the most telling)
POINT_CHARS = 120  # a comment's point, as its first sentence says it (what room is left)...
SAID_CHARS = 100  # ...and what the reply said came of it...
REPLY_CHARS = 196  # ...on a line no longer than this (the summary keeps lines of 200 whole)

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


@dataclass
class Comment:
    """A review comment as a listing showed it."""

    author: str = ""
    where: str = ""  # ``explain.go:534`` (the file's name and the line), or ""
    point: str = ""  # the first sentence of its body, cut to :data:`POINT_CHARS`


def comment_authors(command: str, result: str) -> dict[str, str]:
    """The review comments a listing shows, by id, with their authors (those it names)."""
    return {ident: c.author for ident, c in review_comments(command, result).items() if c.author}


def review_comments(command: str, result: str) -> dict[str, Comment]:
    """The review comments a listing shows, by id: from ``gh api``'s JSON (``user.login``,
    ``path``, ``line``, ``body``; an array, or objects one after another as ``--jq`` prints
    them) or a text listing made with ``--jq`` (``[id] path:line by @login`` and the body,
    ``ID: id | Line: n | Body: ...``, ``id|login|line|body``)."""
    found: dict[str, Comment] = {}
    text = result.lstrip()
    if text[:1] in "[{" and _json_comments(text, found):
        return found
    default = _AUTHOR_FILTER.search(command)
    blocks: list[tuple[list[str], list[str]]] = []  # (ids, lines): a comment's lines
    for line in result.splitlines():
        ids = _ID.findall(line)
        if ids or not blocks:
            blocks.append((ids, [line]))
        else:
            blocks[-1][1].append(line)
    for ids, lines in blocks:
        for ident in ids:
            found.setdefault(ident, Comment())
        login = next((m.group(1) for m in map(_LOGIN.search, lines) if m), "")
        for ident in ids if login else ():
            found[ident].author = found[ident].author or login
        if ids:
            found[ids[0]].where, found[ids[0]].point = _where(lines), _point_in(lines)
    for comment in found.values() if default else ():
        comment.author = comment.author or default.group(1)
    return {ident: c for ident, c in found.items() if c.author or c.point}


def _json_comments(text: str, found: dict[str, Comment]) -> bool:
    """The comments of a JSON listing into ``found``; False when the text is not JSON."""
    at, values = 0, []
    try:
        values.append(orjson.loads(text))
    except orjson.JSONDecodeError:  # objects one after another (``--jq '.[] | {...}'``)
        raw = json.JSONDecoder()
        try:
            while at < len(text):
                value, at = raw.raw_decode(text, at)
                values.append(value)
                while at < len(text) and text[at].isspace():
                    at += 1
        except ValueError:
            return False
    _walk(values, found, 0)
    return True


def _walk(value: Any, found: dict[str, Comment], depth: int) -> None:
    if depth > 6:
        return
    if isinstance(value, list):
        for item in value:
            _walk(item, found, depth + 1)
    elif isinstance(value, dict):
        ident = value.get("id") or value.get("databaseId")
        who = value.get("user") or value.get("author")
        login = who.get("login") if isinstance(who, dict) else None
        body = value.get("body")
        if isinstance(ident, int) and (isinstance(login, str) or isinstance(body, str)):
            path, line = value.get("path"), value.get("line") or value.get("original_line")
            where = _short(path) + (f":{line}" if isinstance(line, int) else "") \
                if isinstance(path, str) else ""
            found[str(ident)] = Comment(login if isinstance(login, str) else "", where,
                                        _point_in(body.splitlines()) if isinstance(body, str) else "")
        for item in value.values():
            if isinstance(item, (list, dict)):
                _walk(item, found, depth + 1)


# a listing's fields that are not the comment's words: ``ID: 1``, ``Line: 5``, ``Author: x``
_FIELD = re.compile(r"^\s*(?:id|line|path|created(?:_at)?|updated(?:_at)?|author|user|login|"
                    r"replyto|in_reply_to(?:_id)?|url)\s*:", re.IGNORECASE)
_BODY_FIELD = re.compile(r"\bbody\s*:\s*", re.IGNORECASE)
_PATH_LINE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[A-Za-z]\w{0,5})(?::(\d+))?\b")
_LINE_FIELD = re.compile(r"\bline\s*:\s*(\d+)", re.IGNORECASE)
_HEADING = re.compile(r"^[#>*\s]+|\*\*|__")


def _where(lines: list[str]) -> str:
    """``explain.go:534``: the file and line a listed comment is on, as its header names them."""
    head = _BODY_FIELD.split(lines[0], maxsplit=1)[0]
    found = _PATH_LINE.search(_LOGIN.sub("", head))
    line = _LINE_FIELD.search("\n".join(lines[:3]))
    number = (found.group(2) if found else None) or (line.group(1) if line else "")
    if not found:
        return f"line {number}" if number else ""
    return _short(found.group(1)) + (f":{number}" if number else "")


def _short(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _point_in(lines: list[str]) -> str:
    """A comment's point: the first sentence of its body (after ``Body:``, else the header's
    own words - its id, file, line, author and other fields taken off - and the lines under
    it), markup off, cut to :data:`POINT_CHARS`."""
    at = next((i for i, line in enumerate(lines[:4]) if _BODY_FIELD.search(line)), None)
    if at is not None:
        body = _BODY_FIELD.search(lines[at])
        words = [lines[at][body.end():], *lines[at + 1:]] if body else []
    else:
        words = [_header_words(lines[0]), *lines[1:]] if lines else []
    for raw in words:
        line = _HEADING.sub("", raw).strip()
        if len(line.split()) >= 2 and not line.startswith(("```", "---")):
            return one_line(re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0].rstrip("."), POINT_CHARS)
    return ""


def _header_words(header: str) -> str:
    """What a listing's header line says besides the comment's id, file, line, author and
    other fields (``id|login|line|body``: the last field of several words)."""
    if "|" in header:
        fields = [f for f in header.split("|") if not _FIELD.match(f) and len(f.split()) >= 3]
        return fields[-1] if fields else ""
    bare = _LOGIN.sub(" ", header)
    for pattern in (_ID, _PATH_LINE, _LINE_FIELD):
        bare = pattern.sub(" ", bare)
    return re.sub(r"[\[\]]|\bby\b", " ", bare)


@dataclass(eq=False)  # a reply is itself: two that say the same are still two
class Reply:
    """One reply of a round: what it said came of the comment it answers."""

    verdict: str  # "fixed", "already fixed", "won't fix" or "answered"
    sha: str  # the commit it names ("" for none)
    said: str  # its words after the verdict
    comment: Comment
    like: int = 0  # later replies of the round that said the same (duplicate comments)

    def text(self) -> str:
        """``explain.go:534 "uses Author.When as the timestamp": fixed in 09bd59e - using
        Committer.When``."""
        verdict = self.verdict + (f" in {self.sha}" if self.sha else "")
        said = f" - {self.said}" if self.said else ""
        more = f" (and {self.like} more like it)" if self.like else ""
        where = f"{self.comment.where} " if self.comment.where else ""
        room = REPLY_CHARS - len(where + verdict + said + more) - 4
        point = one_line(self.comment.point, max(40, room))
        if point:
            return f'{where}"{point}": {verdict}{said}{more}'
        head = f"{where.strip()}: " if where else ""
        return head + (verdict if head else verdict[:1].upper() + verdict[1:]) + said + more


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
    told: list[Reply] = field(default_factory=list)  # one per distinct reply, in order

    def add(self, body: str, commits: set[str], comment: Comment | None = None) -> None:
        """A reply (``body``) to ``comment`` (as a listing showed it, when one did);
        ``commits``: the hashes of the session's commits, which a reply may name all in
        digits."""
        comment = comment or Comment()
        self.replies += 1
        if comment.author:
            self.authors[comment.author] += 1
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
            kind = "won't fix"
        elif _ALREADY.search(body) and (sha or fixed):
            self.already += 1
            kind = "already fixed"
        elif sha or fixed:
            self.fixed[sha[:7]] += 1
            kind = "fixed"
        else:
            self.answered += 1
            kind = "answered"
        said = _reason(body) if (wont or fixed or sha) else one_line(body, SAID_CHARS)
        same = next((r for r in self.told if r.said == said and r.verdict == kind), None)
        if same is not None and said:
            same.like += 1
        else:
            self.told.append(Reply(kind, sha[:7], one_line(said, SAID_CHARS), comment))

    def text(self) -> str:
        """``Replied to 7 review comments on PR #112 from Copilot: 6 fixed in 09bd59e, 1 won't
        fix`` (each comment's point and the reply's words: :meth:`points`)."""
        plural = "s" * (self.replies != 1)
        head = f"Replied to {self.replies} review comment{plural} on PR #{self.pr}"
        if self.replies == 1 and self.told:  # the comment's own line says it all
            return f"Replied to a review comment on PR #{self.pr}" + (
                f" from {next(iter(self.authors))}" if self.authors else "") + ": " + self.told[0].text()
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
            parts.append(f"{self.wont_fix} won't fix")
        if self.answered:
            parts.append(f"{self.answered} answered")
        return head + (": " + ", ".join(parts) if parts else "")

    def points(self) -> list[str]:
        """One line per comment answered, in order: the :data:`POINTS_SHOWN` that tell most
        (those declined first: a reader resuming must not redo them; then those whose point
        and reply say most); the round's line counts them all."""
        def worth(reply: Reply) -> tuple[bool, int]:
            words = set(re.findall(r"[\w.]{4,}", f"{reply.comment.point} {reply.said}".lower()))
            return reply.verdict == "won't fix", len(words)
        if self.replies == 1:
            return []  # on the round's line
        chosen = sorted(self.told, key=worth, reverse=True)[:POINTS_SHOWN]
        return [reply.text() for reply in self.told if reply in chosen]


def _reason(body: str) -> str:
    """A reply's words after its verdict, their first clause (``Won't fix - X is fine (...)``
    gives "X is fine"; ``Reconsidered - fixed in X. Now Y`` gives "Now Y")."""
    rest = re.split(r"\s+[-\u2013\u2014:]\s+|[.:]\s+", body.strip(), maxsplit=1)
    clauses = re.split(r"[.;]\s|\s\(", rest[1] if len(rest) > 1 else "")
    told = [c.strip() for c in clauses if c.strip() and not _ONLY_VERDICT.match(c.strip())]
    return told[0].rstrip(" .") if told else ""


_ONLY_VERDICT = re.compile(r"^(?:\w+\s+)?(?:fixed|addressed|done|resolved)(?:\s+in\s+\w+)?\W*$",
                           re.IGNORECASE)
