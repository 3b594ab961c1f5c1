"""A check's finding in words, for the offline summary's Errors and fixes (:mod:`failures`).

A linter names its checks by codes (``errcheck``, ``nestif``); a reader, and a model's summary,
by what they check ("unchecked error", "nesting depth"): :func:`check_words`. And a finding can
reach the assistant where the transcript does not keep it (a hook's feedback on an edit): then
only the assistant's own words name it ("let me fix the credo nesting issue in `f`", "`X` is
now unused"): :func:`stated_error`, unless its sentence only wonders whether there is one.
"""

from __future__ import annotations

import re

# linters' names for their checks, in the words a reader (and a model's summary) uses
_CHECKS = {"errcheck": "unchecked error", "wrapcheck": "unwrapped error",
           "gocyclo": "cyclomatic complexity", "cyclop": "cyclomatic complexity",
           "gocognit": "cognitive complexity", "nestif": "nesting depth",
           "ineffassign": "ineffectual assignment", "unparam": "unused parameter",
           "nilerr": "nil error returned", "goconst": "repeated constant",
           "funlen": "function length", "lll": "line length", "dupl": "duplicate code",
           "errorlint": "error comparison", "embeddedstructfieldcheck": "embedded field order",
           "forcetypeassert": "unchecked type assertion"}
_CHECK_NAME = re.compile(r"\((" + "|".join(_CHECKS) + r")\)")


def check_words(gist: str) -> str:
    """What the linter checks a gist (or a run's output) names are, in plain words (``errcheck``:
    unchecked error), each once, in order."""
    return ", ".join(dict.fromkeys(_CHECKS[found.group(1)] for found in _CHECK_NAME.finditer(gist)))


# a finding the assistant names: "fix the credo nesting issue in `f`", "`X` is unused" ...
_STATED = re.compile(
    r"\b(?:fix|address|resolve)(?:ing)?\s+(?:the|this|that|these|both|two|an?)\s+"
    r"((?:[\w`./:()-]+\s+){0,5}?(?:errors?|issues?|warnings?|failures?)"
    r"(?:\s+(?:in|on|at|about|with|for)\s+(?:`[^`\n]{1,60}`|\w*[_.]\w[\w.]*(?:/\d)?\b))?)"
    r"|(`[^`\n]{1,60}`\s+(?:is|are)\s+(?:now\s+)?(?:unused|undefined|never used)\b)"
    r"|\bthere(?:'s| is| are)\s+(?:an?\s+|now\s+)?((?:unreachable|unused|undefined)\s(?:[^.!?\n:]|\.\w){3,60})"
    r"|\bthe\s+((?:lint|test|build|compile|type)\w*\s+(?:failure|error)s?\s+(?:is|are)\s+"
    r"(?:[^.!?\n]|\.\w){3,60})",
    re.IGNORECASE)
# ...of a compiler, a type checker, a linter or a test run (not "the review's issues")
_CHECKED = re.compile(r"compil|credo|lint|dialyzer|mypy|ruff|eslint|clippy|\bvet\b|errcheck|"
                      r"\btype\b|format|nesting|complexity|unused|undefined|unreachable|\btests?\b",
                      re.IGNORECASE)


# words that wonder, check or guess: their sentence asks about a finding, it does not state one
_WONDERS = re.compile(r"\?|\b(?:whether|maybe|perhaps|probably|possibly|might|wonder\w*)\b|"
                      r"\b(?:check|see|verify|confirm|find out|sure)\s+if\b|\b(?:could|may) be\b",
                      re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?](?=\s|\Z)|\n")


def stated_error(text: str) -> str:
    """The finding of a check the assistant names in ``text`` (its words), else '': a sentence
    that wonders about one ("`X` is undefined - let me check if ...") names none."""
    for found in _STATED.finditer(text):
        words = next(group for group in found.groups() if group)
        if _CHECKED.search(words) and not _WONDERS.search(_sentence(text, found.start(),
                                                                     found.end())):
            return words
    return ""


def stated_cause(text: str, words: str) -> str:
    """When the finding ``words`` names only its kind ("the compile error"), the sentence of
    ``text`` before it that says what is wrong (not one that says what to do), else ''."""
    if set(re.findall(r"[a-z]+", words.lower())) - _KIND_WORDS:
        return ""  # the finding names what it is
    at = text.find(words)
    before = [s.strip() for s in _SENTENCE_SPLIT.split(text[:max(at, 0)]) if s.strip()]
    said = [s for s in before if len(s.split()) >= 4 and not _TO_DO.match(s)]
    return said[-1].rstrip(".:") if said else ""


_KIND_WORDS = {"the", "this", "that", "these", "both", "two", "an", "a", "first", "remaining",
               "compile", "compilation", "build", "lint", "linter", "test", "type", "error",
               "errors", "issue", "issues", "warning", "warnings", "failure", "failures"}
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_TO_DO = re.compile(r"(?:let me|let's|i'll|i will|i need to|i'm going to|now|next|first)\b",
                    re.IGNORECASE)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``text[start:end]``."""
    before = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    after = _SENTENCE_END.search(text, end)
    return text[before[-1] if before else 0:after.end() if after else len(text)]


def speaks_of(stated: str, gist: str) -> bool:
    """The assistant's words name what a gist says (its words besides "error", "issue", ...)."""
    words = set(re.findall(r"[a-z_]{4,}", stated.lower())) - _GENERIC
    return bool(words) and words <= set(re.findall(r"[a-z_]{4,}", gist.lower()))


_GENERIC = {"error", "errors", "issue", "issues", "warning", "warnings", "failure", "failures",
            "both", "this", "that", "these", "with", "about"}


def restates(words: str, gist: str) -> bool:
    """Most of ``words``' words are the gist's."""
    said = set(re.findall(r"[a-z_]{3,}", words.lower()))
    return len(said & set(re.findall(r"[a-z_]{3,}", gist.lower()))) >= 0.6 * len(said)


# words that say something went wrong, whatever it was, or what it needs
_WRONG = re.compile(r"\b(?:fail\w*|errors?|because|bug|broke\w*|wrong|missing|issue|problem|"
                    r"needs?|needed|must|should|ha(?:ve|s) to|instead|"
                    r"(?:is|was|does|did|are|were|ca|could)n'?t|cannot|not (?:found|available|"
                    r"installed|defined|exist|allowed|set)|no such|unavailable|unknown)\b",
                    re.IGNORECASE)
_SAYING = re.compile(r"[A-Za-z_][\w.]{3,}")


def says_wrong(sentence: str) -> bool:
    """Whether a sentence says something went wrong ("failed because", "isn't available") or
    what it needs ("Need to activate the virtual environment")."""
    return _WRONG.search(sentence) is not None


def names_failed(sentence: str, failure: str) -> bool:
    """Whether a sentence names a word of what failed (``failure``: the command and the error's
    gist), besides "error" and the like."""
    named = {w.rstrip(".").lower() for w in _SAYING.findall(failure)} - _GENERIC
    return any(w.rstrip(".").lower() in named for w in _SAYING.findall(sentence))


__all__ = ["check_words", "names_failed", "restates", "says_wrong", "speaks_of", "stated_cause",
           "stated_error"]
