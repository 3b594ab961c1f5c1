"""Reading a Messages API reply ourselves, and keeping secrets out of what we print.

The SDK builds its reply objects leniently: an HTML page, an empty body, a reply without
``content`` or with ``"text": null`` came out as a JSONDecodeError, an AttributeError or a
TypeError deep inside it (a traceback, exit 1). The Anthropic backend asks for the raw reply and
checks it here: anything but a JSON object with a ``content`` list of blocks, whose text blocks
hold strings, is :class:`ctxtool.llm.base.BadReply` - one line, exit 5, and
``--passthrough-on-error`` passes the input through.

:func:`redact` removes anything key-shaped from text a server sent, not only the exact key: a
server (or a proxy) that echoes a slightly altered key must not get it printed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from ctxtool.llm.base import BadReply, Completion

KEY_ENVS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
REDACTED = "[redacted]"
SCAN_LIMIT = 4000  # characters of a server's message looked at; messages are cut to 300 anyway
_KEY_SHAPED = re.compile(
    r"(?i:sk-[a-z0-9_\-]{6,}|bearer\s+[^\s\"',]{6,}|x-api-key[\"']?\s*[:=]\s*[\"']?[^\s\"',]{6,})"
    r"|[A-Za-z0-9_\-+/=]{40,}")  # long opaque tokens, whatever their prefix
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.]{12,}")
_SHARED = 12  # a run sharing this many characters with a configured key is that key, altered
BAD_REPLY_HINT = "is ANTHROPIC_BASE_URL an Anthropic Messages API? --passthrough-on-error " \
                 "keeps pipelines going"


def redact(text: str, env: Mapping[str, str]) -> str:
    """``text`` without the configured keys, anything shaped like a key or token, or any run of
    characters sharing 12 or more with a configured key."""
    keys = [key for name in KEY_ENVS if len(key := env.get(name, "").strip()) >= 8]
    text = text[:SCAN_LIMIT]
    for key in keys:
        text = text.replace(key, REDACTED)
    text = _KEY_SHAPED.sub(REDACTED, text)
    return _TOKEN.sub(lambda m: REDACTED if _shares(m.group(), keys) else m.group(), text)


def _shares(run: str, keys: list[str]) -> bool:
    return any(key[i:i + _SHARED] in run for key in keys for i in range(len(key) - _SHARED + 1))


def one_line(text: str, env: Mapping[str, str], limit: int = 300) -> str:
    """A server's text as a short, redacted single line."""
    return " ".join(redact(text, env).split())[:limit]


def parse_json(body: bytes, env: Mapping[str, str]) -> dict[str, Any]:
    """The JSON object a server answered with; BadReply for anything else."""
    if not body.strip():
        raise BadReply("the Anthropic API sent an empty reply", hint=BAD_REPLY_HINT)
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        excerpt = one_line(body[:SCAN_LIMIT].decode("utf-8", "replace"), env, 80)
        raise BadReply(f"the Anthropic API sent a reply that is not JSON: {excerpt!r}",
                       hint=BAD_REPLY_HINT) from None
    if not isinstance(data, dict):
        raise BadReply(f"the Anthropic API sent JSON that is not an object "
                       f"({type(data).__name__})", hint=BAD_REPLY_HINT)
    error = data.get("error")
    if data.get("type") == "error" or isinstance(error, dict):
        message = error.get("message") if isinstance(error, dict) else None
        raise BadReply("the Anthropic API answered with an error: "
                       + one_line(message if isinstance(message, str) else str(error), env),
                       hint=BAD_REPLY_HINT)
    return data


def completion(body: bytes, env: Mapping[str, str]) -> Completion:
    """The text and usage of a Messages reply; BadReply when it is not one."""
    data = parse_json(body, env)
    content = data.get("content")
    if not isinstance(content, list):
        raise BadReply("the Anthropic API's reply has no content list"
                       + ("" if content is None else f" (content is {type(content).__name__})"),
                       hint=BAD_REPLY_HINT)
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            raise BadReply("the Anthropic API's reply holds a content block that is not an "
                           "object", hint=BAD_REPLY_HINT)
        if block.get("type") == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise BadReply("the Anthropic API's reply holds a text block without text "
                               f"(text is {type(text).__name__})", hint=BAD_REPLY_HINT)
            texts.append(text)
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return Completion("".join(texts), input_tokens=_count(usage.get("input_tokens")),
                      output_tokens=_count(usage.get("output_tokens")))


def input_tokens(body: bytes, env: Mapping[str, str]) -> int:
    """``input_tokens`` of a count_tokens reply; BadReply when it has none."""
    value = parse_json(body, env).get("input_tokens")
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise BadReply("the Anthropic API's count_tokens reply has no input_tokens count",
                       hint=BAD_REPLY_HINT)
    return value


def _count(value: Any) -> int:
    """A usage count; 0 for anything that is not a non-negative integer (usage is reported,
    never relied on)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


__all__ = ["KEY_ENVS", "completion", "input_tokens", "one_line", "parse_json", "redact"]
