"""The deadline of one model call (``--timeout``): its attempts, the waits between them and
the reading of every reply, in all.

:class:`CallDeadline` is the clock of one call; a backend starts it before the first attempt and
asks it how long is left before each attempt and each wait (``llm/retry.py``), or kills what it
runs when it expires (``llm/agent_cli.py``).

An HTTP request needs more than a read timeout to keep to it: the SDK's ``timeout`` bounds each
socket operation, so a server that sends its headers and then one byte a second (or its headers
a byte at a time) never trips it. The transport made by :func:`deadline_transport` wraps the
SDK's HTTP transport: a timer started with each request shuts the request's socket down when the
call's time is up, and the error that follows is raised as a read timeout.

The socket comes from the transport's documented ``trace`` extension (the
``connection.connect_tcp.complete`` event); connections are not kept alive, so every request
opens its own. Imported only by the Anthropic backend, with the SDK's own HTTP library (httpx, or
httpx2 in newer SDKs) passed in: this module imports neither.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import socket

Trace = Callable[[str, dict[str, Any]], None]


class CallDeadline:
    """``seconds`` for one call, counted from :meth:`start` (on a monotonic clock)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end: float | None = None

    def start(self) -> None:
        self._end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        """Seconds left (all of them before :meth:`start`; never below 0)."""
        if self._end is None:
            return self.seconds
        return max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0


class Deadline:
    """The sockets of one request, and the timer that shuts them down."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()

    def trace(self, name: str, info: dict[str, Any]) -> None:
        import socket  # here: an offline summarize imports this module, not the network

        if name != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.append(sock)
                if self.fired:
                    _cut(sock)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _cut(sock)


def _cut(sock: socket.socket) -> None:
    # shutdown, not close: a recv blocked in another thread returns at once, and the transport
    # still owns (and closes) the socket
    import socket

    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def deadline_transport(httpx: ModuleType, call: CallDeadline) -> Any:
    """An ``httpx.BaseTransport`` (of the given httpx module) that gives each request at most
    what is left of ``call``: connecting, sending, waiting and reading the whole body."""

    class DeadlineStream(httpx.SyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, inner: Any, deadline: Deadline, request: Any) -> None:
            self.inner, self.deadline, self.request = inner, deadline, request

        def __iter__(self) -> Iterator[bytes]:
            with _timed_out(httpx, self.deadline, self.request):
                yield from self.inner

        def close(self) -> None:
            self.deadline.cancel()
            self.inner.close()

    class DeadlineTransport(httpx.BaseTransport):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self.inner = httpx.HTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))

        def handle_request(self, request: Any) -> Any:
            left = call.remaining()
            if left <= 0:
                raise httpx.ReadTimeout(f"the {call.seconds:g} s deadline has passed",
                                        request=request)
            deadline = Deadline(left)
            previous: Trace | None = request.extensions.get("trace")

            def trace(name: str, info: dict[str, Any]) -> None:
                deadline.trace(name, info)
                if previous is not None:
                    previous(name, info)

            request.extensions = {**request.extensions, "trace": trace}
            deadline.start()
            try:
                with _timed_out(httpx, deadline, request):
                    response = self.inner.handle_request(request)
            except BaseException:
                deadline.cancel()
                raise
            response.stream = DeadlineStream(response.stream, deadline, request)
            return response

        def close(self) -> None:
            self.inner.close()

    return DeadlineTransport()


@contextlib.contextmanager
def _timed_out(httpx: ModuleType, deadline: Deadline, request: Any) -> Iterator[None]:
    """Once the deadline has fired, whatever the cut connection raised is a read timeout."""
    try:
        yield
    except httpx.TransportError as exc:
        if deadline.fired:
            raise httpx.ReadTimeout(f"no complete reply within {deadline.seconds:.3g} s (total "
                                    "deadline)", request=request) from exc
        raise


__all__ = ["CallDeadline", "Deadline", "deadline_transport"]
