"""Codex CLI's tool calls under the Claude Code tools they amount to, as ``snip`` and the
summarizer read them (its shell tool running ``cat``, ``sed -n``, ``grep``..., ``apply_patch``,
``update_plan``)."""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Any

from ctxtool.formats.content import Block

# --- tool calls as snip reads them ----------------------------------------------------------------
#
# Codex reads, searches and edits through its shell tool (``exec_command {"cmd": ...}``; older
# rollouts: ``shell {"command": [...]}``, ``local_shell_call``) and ``apply_patch``. snip's rules
# know Claude Code's tools (Read with file_path/offset/limit, Edit/Write, Grep/Glob/LS), so each
# call whose command says plainly what it does is seen as one of those; anything else (pipes,
# chains, scripts) is left as it is, which snip never clears as superseded.

_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$", re.MULTILINE)
_SED_RANGE = re.compile(r"(\d+)(?:,(\d+))?p")
_OPERATORS = frozenset({"|", "||", "&&", ";", "&", "<", "<<", "(", ")", ">&", "<&", "|&"})
_REDIRECTS = (">", ">>")
_SEARCHES = {"grep": "Grep", "egrep": "Grep", "rg": "Grep", "ls": "LS", "find": "Glob",
             "fd": "Glob"}
_SHELLS = frozenset({"bash", "sh", "zsh"})


def shell_command(name: str, value: Any) -> str | None:
    """The shell command line a Codex tool call runs (``apply_patch``'s own call: its patch), or
    None."""
    if not isinstance(value, (dict, str)):
        return None
    if name == "apply_patch":
        text = value if isinstance(value, str) else value.get("input")
        return f"apply_patch {text}" if isinstance(text, str) else None
    if not isinstance(value, dict):
        return None
    command = value.get("cmd", value.get("command"))
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-c", "-lc"):
            return command[2]
        return shlex.join(command)
    return command if isinstance(command, str) else None


def shell_tool(command: str, workdir: str | None = None) -> tuple[str, dict[str, Any]] | None:
    """(Claude Code's tool name, its input) for a command that plainly reads part of a file
    (``cat``, ``nl``, ``head``, ``sed -n 'A,Bp'``), writes one (``apply_patch`` of one file,
    ``sed -i``, ``> FILE``) or searches (``grep``/``rg``, ``ls``, ``find``); else None."""
    if command.lstrip().startswith("apply_patch"):
        files = set(_PATCH_FILE.findall(command))
        return ("Edit", {"file_path": _path(files.pop(), workdir)}) if len(files) == 1 else None
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    if len(words) == 3 and words[0] in _SHELLS and words[1] in ("-c", "-lc"):
        return shell_tool(words[2], workdir)
    if not words or any(w in _OPERATORS for w in words):
        return None
    targets = [words[i + 1] for i, w in enumerate(words[:-1]) if w in _REDIRECTS]
    if targets:
        return ("Write", {"file_path": _path(targets[-1], workdir)}) if len(set(targets)) == 1 \
            else None
    program, args = words[0], words[1:]
    if program in _SEARCHES:
        return _SEARCHES[program], {}
    files = [a for a in args if not a.startswith("-")]
    if program in ("cat", "nl") and len(files) == 1 and (program == "nl" or files == args):
        return "Read", {"file_path": _path(files[0], workdir)}
    if program == "head":
        return _head(args, workdir)
    if program == "sed":
        return _sed(args, workdir)
    return None


def _head(args: list[str], workdir: str | None) -> tuple[str, dict[str, Any]] | None:
    count, rest = 10, list(args)
    if rest[:1] == ["-n"] and len(rest) > 1 and rest[1].isdigit():
        count, rest = int(rest[1]), rest[2:]
    elif rest and re.fullmatch(r"-n?\d+", rest[0]):
        count, rest = int(rest[0].lstrip("-n")), rest[1:]
    if len(rest) != 1 or rest[0].startswith("-") or count < 1:
        return None
    return "Read", {"file_path": _path(rest[0], workdir), "limit": count}


def _sed(args: list[str], workdir: str | None) -> tuple[str, dict[str, Any]] | None:
    files = [a for a in args[1:] if not a.startswith("-")]
    if any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        return ("Write", {"file_path": _path(args[-1], workdir)}) if files else None
    match = _SED_RANGE.fullmatch(args[1]) if len(args) == 3 and args[0] == "-n" else None
    if match is None or args[2].startswith("-"):
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if start < 1 or end < start:
        return None
    return "Read", {"file_path": _path(args[2], workdir), "offset": start,
                    "limit": end - start + 1}


def _path(path: str, workdir: str | None) -> str:
    if workdir and not posixpath.isabs(path):
        path = posixpath.join(workdir, path)
    return posixpath.normpath(path)


def snip_view(block: Block) -> Block:
    """A ``tool_use`` block of Codex under the Claude Code tool it amounts to (see above)."""
    if block.get("type") != "tool_use":
        return block
    value = block.get("input")
    command = shell_command(str(block.get("name") or ""), value)
    workdir = value.get("workdir") if isinstance(value, dict) else None
    seen = shell_tool(command, workdir if isinstance(workdir, str) else None) \
        if command is not None else None
    if seen is None:
        return block
    return {**block, "name": seen[0], "input": seen[1]}


# --- tool calls as the summarizer reads them ------------------------------------------------------
#
# The summary tracks files, tasks and commands by Claude Code's tool names: Codex's plan tool
# (``update_plan {"plan": [{"step", "status"}]}``) is its todo list, its shell tools run
# commands, and an ``apply_patch`` of one file is an edit of it (the lines the patch removes and
# adds, context lines on both sides), or a write when it adds the file.

_PATCH_LINE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+?)\s*$")


def patch_as_edit(patch: str, workdir: str | None) -> tuple[str, dict[str, Any]] | None:
    """(``Edit`` or ``Write``, its input) for a patch of one file; None for any other patch."""
    kind, path, old, new = "", "", [], []
    for line in patch.splitlines():
        header = _PATCH_LINE.match(line)
        if header:
            if path:
                return None  # a second file
            kind, path = header.groups()
        elif path and line[:1] in ("-", "+", " ") and not line.startswith("*** "):
            if line[:1] != "+":
                old.append(line[1:])
            if line[:1] != "-":
                new.append(line[1:])
    if not path or kind == "Delete":
        return None
    if kind == "Add":
        return "Write", {"file_path": _path(path, workdir), "content": "\n".join(new)}
    return "Edit", {"file_path": _path(path, workdir), "old_string": "\n".join(old),
                    "new_string": "\n".join(new)}


_EXIT = re.compile(r"^Process exited with code (\d+)|\"exit_code\":\s*(\d+)", re.MULTILINE)


def summary_view(block: Block) -> Block:
    """A ``tool_use`` block of Codex under the Claude Code tool it amounts to (see above); a
    ``tool_result`` of a command that exited non-zero marked as an error (Codex records the
    exit code in the output's text)."""
    if block.get("type") == "tool_result":
        content = block.get("content")
        code = _EXIT.search(content[:2000]) if isinstance(content, str) else None
        failed = code is not None and (code.group(1) or code.group(2)) != "0"
        return {**block, "is_error": True} if failed and not block.get("is_error") else block
    if block.get("type") != "tool_use":
        return block
    name, value = str(block.get("name") or ""), block.get("input")
    if name == "update_plan" and isinstance(value, dict) and isinstance(value.get("plan"), list):
        todos = [{"content": str(step.get("step") or ""), "status": str(step.get("status") or
                                                                         "pending")}
                 for step in value["plan"] if isinstance(step, dict)]
        return {**block, "name": "TodoWrite", "input": {"todos": todos}}
    command = shell_command(name, value)
    if command is None:
        return block
    workdir = value.get("workdir") if isinstance(value, dict) else None
    if command.startswith("apply_patch"):
        edit = patch_as_edit(command, workdir if isinstance(workdir, str) else None)
        return block if edit is None else {**block, "name": edit[0], "input": edit[1]}
    return {**block, "name": "Bash", "input": {"command": command}}
