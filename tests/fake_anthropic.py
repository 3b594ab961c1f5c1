"""A fake Anthropic Messages API on 127.0.0.1 for tests, driven through the real SDK.

    with FakeAnthropic() as api:
        api.push(error(429, "rate_limit_error", "slow down"), summary())
        run with ANTHROPIC_BASE_URL=api.url ...
        api.requests  # every request received: path, headers, JSON body

``POST /v1/messages`` answers from the script (replies pushed with :meth:`FakeAnthropic.push`),
then from ``responder`` (a function of the request body), then with a valid nine-section summary.
``POST /v1/messages/count_tokens`` answers ``{"input_tokens": count_tokens_value}`` unless a
scripted reply is queued for it. Error replies carry ``retry-after-ms`` so the SDK's own retries
are quick in tests. A reply with ``delay`` is sent late (for timeouts); a client that gave up by
then is ignored. A successful message reply to a request with ``"stream": true`` is sent as the
Messages API's server-sent events (:func:`sse_events`). Other routes answer 404, or ``{}`` when
``lenient`` is set (real clients probe endpoints a test does not care about).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxtool.core.summarizing.prompt import HEADINGS


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None  # sent as the body instead of ``body`` as JSON (malformed replies)
    content_type: str = "application/json"
    drip: float = 0.0  # after the headers, send the body one byte every ``drip`` seconds
    drip_headers: bool = False  # with ``drip``: the status line and headers too


def raw_reply(data: bytes, *, status: int = 200, content_type: str = "application/json",
              drip: float = 0.0, drip_headers: bool = False) -> Reply:
    """A reply whose body is ``data`` exactly: invalid JSON, an HTML page, nothing at all."""
    return Reply(status, raw=data, content_type=content_type, drip=drip,
                 drip_headers=drip_headers)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received: float = field(default_factory=time.monotonic)  # when the request was read

    @property
    def prompt(self) -> str:
        """The text of the (single) user message of a Messages request."""
        messages = self.body.get("messages") or []
        content = messages[-1].get("content") if messages else ""
        if isinstance(content, list):
            return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
        return str(content)


def summary_text(*, missing: tuple[str, ...] = (), note: str = "fake summary") -> str:
    """A reply the way a model writes one: the scratchpad, then the nine sections."""
    sections = "\n\n".join(f"{n}. {title}:\n   {note} for {title.lower()}"
                           for n, title in enumerate(HEADINGS, start=1) if title not in missing)
    return f"<analysis>\nscratchpad that must not survive\n</analysis>\n\n<summary>\n{sections}\n</summary>"


def summary(*, missing: tuple[str, ...] = (), note: str = "fake summary", delay: float = 0.0,
            model: str = "claude-haiku-4-5") -> Reply:
    body = {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": summary_text(missing=missing, note=note)}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1234, "output_tokens": 321}}
    return Reply(200, body, delay=delay)


def sse_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A complete message as the (event, data) pairs the streaming Messages API sends for it."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start",
                                                                   "message": start})]
    for index, block in enumerate(message.get("content") or []):
        kind = block.get("type")
        if kind == "tool_use":
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}
        elif kind == "thinking":
            opening, delta = {**block, "thinking": ""}, {"type": "thinking_delta",
                                                         "thinking": block.get("thinking", "")}
        else:
            opening, delta = {**block, "text": ""}, {"type": "text_delta", "text": block.get("text", "")}
        events += [("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": opening}),
                   ("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": delta})]
        if kind == "thinking" and "signature" in block:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "signature_delta",
                                                             "signature": block["signature"]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events += [("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": message.get("stop_reason", "end_turn"),
                                            "stop_sequence": None},
                                  "usage": {"output_tokens": usage.get("output_tokens", 1)}}),
               ("message_stop", {"type": "message_stop"})]
    return events


def error(status: int, kind: str, message: str, *, retry_after_ms: int = 5) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": message}},
                 {"retry-after-ms": str(retry_after_ms)})


def overloaded() -> Reply:
    return error(529, "overloaded_error", "Overloaded")


class FakeAnthropic:
    """The server; use it as a context manager (see the module docstring)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: deque[Reply] = deque()
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.count_tokens_value = 4242
        self.lenient = False  # True: unknown routes answer 200 {} instead of 404
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def messages(self) -> list[Recorded]:
        return [r for r in self.requests if r.path == "/v1/messages"]

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(Recorded(path, headers, body))
            if self.script:
                return self.script.popleft()
        if path.endswith("/count_tokens"):
            return Reply(200, {"input_tokens": self.count_tokens_value})
        if self.responder is not None:
            return self.responder(body)
        return summary(model=str(body.get("model")))

    def other(self, path: str, headers: dict[str, str], body: Any) -> Reply:
        """Any route but the two Messages ones: logged, then 404 (or ``{}`` when lenient)."""
        with self._lock:
            self.requests.append(Recorded(path, headers, body if isinstance(body, dict) else {}))
        if self.lenient:
            return Reply(200, {})
        return error(404, "not_found_error", f"no route {path}")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                headers = {k.lower(): v for k, v in self.headers.items()}
                path = self.path.split("?", 1)[0]
                body = json.loads(raw or b"{}")
                if path in ("/v1/messages", "/v1/messages/count_tokens"):
                    reply = fake.answer(path, headers, body)
                else:
                    reply = fake.other(path, headers, body)
                if reply.delay:
                    time.sleep(reply.delay)
                streamed = (reply.status == 200 and path == "/v1/messages"
                            and isinstance(body, dict) and body.get("stream") is True)
                try:
                    self._send(reply, streamed)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?", 1)[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    self._send(fake.other(path, headers, {}), False)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_HEAD = do_GET  # noqa: N815

            def _send(self, reply: Reply, streamed: bool) -> None:
                if streamed:
                    data = b"".join(f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()
                                    for event, payload in sse_events(reply.body))
                    kind = "text/event-stream"
                elif reply.raw is not None:
                    data, kind = reply.raw, reply.content_type
                else:
                    data, kind = json.dumps(reply.body).encode(), "application/json"
                if reply.drip:
                    self._drip(reply, data, kind)
                    return
                self.send_response(reply.status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_fake_{len(fake.requests)}")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _drip(self, reply: Reply, data: bytes, kind: str) -> None:
                """A hostile server: headers (at once, or a byte at a time), then the body one
                byte every ``reply.drip`` seconds, until done or the client leaves."""
                head = (f"HTTP/1.0 {reply.status} OK\r\ncontent-type: {kind}\r\n"
                        f"content-length: {len(data)}\r\n\r\n").encode()
                if not reply.drip_headers:
                    self.wfile.write(head)
                    self.wfile.flush()
                for byte in (head if reply.drip_headers else b"") + data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(reply.drip)

        return Handler
