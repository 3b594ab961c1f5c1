"""Where Claude Code keeps things, and safe file names for untrusted ids.

Claude Code stores a session at ``<config>/projects/<slug of cwd>/<sessionId>.jsonl``, where
``<config>`` is ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``. The slug rule, as shipped in its CLI
bundle: every UTF-16 code unit of the cwd that is not an ASCII letter or digit becomes ``-``
(so ``/Users/me/my_app.v2`` -> ``-Users-me-my-app-v2``, and an emoji costs two dashes); a slug
longer than 200 characters keeps its first 200 and gets ``-`` plus a base-36 hash of the cwd
(the 32-bit ``h = h*31 + code unit`` string hash, absolute value).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathlib where used: with urllib.parse and ipaddress, ~3 ms of start-up
    from pathlib import Path

MAX_SLUG = 200
SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR`` when set (``~`` expanded), else ``~/.claude``."""
    from pathlib import Path  # see the imports

    configured = (env.get("CLAUDE_CONFIG_DIR") or "").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(home) / ".claude"


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]


def _java_hash(units: list[int]) -> int:
    """JavaScript's ``h = (h << 5) - h + c; h |= 0`` over code units: a signed 32-bit result."""
    h = 0
    for unit in units:
        h = (h * 31 + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, rest = divmod(number, 36)
        digits = _BASE36[rest] + digits
        if number == 0:
            return digits


def project_slug(cwd: str) -> str:
    """The folder name Claude Code gives a project under ``projects/`` (see module docstring)."""
    units = _utf16_units(cwd)
    slug = "".join(chr(u) if u < 128 and not _NOT_ALNUM.match(chr(u)) else "-" for u in units)
    if len(slug) <= MAX_SLUG:
        return slug
    return f"{slug[:MAX_SLUG]}-{_base36(abs(_java_hash(units)))}"


def claude_project_dir(cwd: str, env: Mapping[str, str]) -> Path:
    """``<config>/projects/<slug of cwd>``: the folder holding that project's sessions."""
    return claude_config_dir(env) / "projects" / project_slug(cwd)


def safe_name(value: str | None, *, fallback: str) -> str:
    """A file name that cannot leave its folder, for an id that came from untrusted input.

    Ids made of ASCII letters, digits, ``_`` and ``-`` (every real ``toolu_...``, ``call_...``
    and session UUID) are kept as they are, so files carry the names Claude Code gives them.
    Anything else - ``../``, ``/``, NUL, dots, non-ASCII look-alikes, over-long ids - becomes
    ``x-`` plus its SHA-256 (32 hex digits), which is stable, so re-runs find the same file.
    """
    if not value:
        return fallback
    if SAFE_NAME.fullmatch(value):
        return value
    import hashlib  # only for such ids: loading OpenSSL's hashes costs every command ~3 ms

    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"x-{digest}"
