"""What keeps one client of the service from holding up the others, below the endpoints.

- :class:`Guard`, an ASGI middleware in front of every endpoint: the API key
  (``Authorization: Bearer KEY``, 401 without a known one), per-client limits
  (:class:`ClientLimits`: requests in progress, questions per second; 429 with
  ``Retry-After``), the body size limit (413) and the body-read deadline (408), and a
  client that leaves in the middle of its body ends its request quietly (no traceback
  in the log);
- :func:`guarded_h11`, the HTTP/1.1 connection handling (uvicorn's h11 protocol) with
  what uvicorn lacks: a deadline for a request's head (an idle connection, or one that
  sends half a header, is closed when it passes) and a cap on open connections (at the
  cap, a new connection closes the one that has waited longest without a request in
  progress, so idle connections cannot lock others out).

Every refusal is JSON ``{"error": MESSAGE}``, as every other error of the service.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from battlejudge.apps.api_keys import lookup

__all__ = ["CLIENT_KEY", "BodyAbort", "ClientLimits", "Guard", "guarded_h11", "send_json"]

log = logging.getLogger(__name__)

CLIENT_KEY: Final = "battlejudge.client"
"""Where :class:`Guard` puts the client's name in the ASGI scope."""
FREE_PATHS: Final = ("/healthz", "/docs", "/openapi.json", "/checkpoint")
"""Paths served without a key and outside the limits (with ``/static/`` and the proof
log's ``/tile/``: anyone may check a log, as C2SP tlog-tiles logs are read)."""


STREAMS: Final = 512
"""Event streams a client may hold open at once (a club's tables watched from one address)."""


def is_stream(path: str) -> bool:
    """Whether ``path`` is a table's event stream (``/v1/tables/ID/events``)."""
    return path.startswith("/v1/tables/") and path.endswith("/events")


async def send_json(
    send: Send, status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None
) -> None:
    """A complete JSON response that also closes the connection (the request's body may
    not have been read)."""
    data = json.dumps(body).encode()
    extra = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"connection", b"close"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


# -- per-client limits --------------------------------------------------------------------
@dataclass
class _Bucket:
    tokens: float
    stamp: float


@dataclass
class ClientLimits:
    """Per-client limits: at most ``concurrency`` requests in progress, and (when
    ``rate`` > 0) ``rate`` questions per second on average with bursts of ``burst``.

    The rate is a token bucket that may go into debt: a request is refused while the
    client's balance is below one question; an admitted batch of N questions costs N
    (:meth:`charge`), so a batch is never cut in half, and the client waits that much
    longer before its next request. A client is its API key's name, or its address
    when the service runs without keys."""

    concurrency: int = 32
    rate: float = 0.0
    burst: float = 0.0
    streams: int = STREAMS
    in_progress: dict[str, int] = field(default_factory=dict)
    open_streams: dict[str, int] = field(default_factory=dict)
    _buckets: dict[str, _Bucket] = field(default_factory=dict)

    def _capacity(self) -> float:
        return max(self.burst, self.rate, 1.0)

    def _bucket(self, client: str, now: float) -> _Bucket:
        b = self._buckets.get(client)
        if b is None:
            if len(self._buckets) > 10_000:  # forget the clients that are back to full
                full = self._capacity()
                for name, old in list(self._buckets.items()):
                    if old.tokens + (now - old.stamp) * self.rate >= full:
                        del self._buckets[name]
            b = self._buckets[client] = _Bucket(self._capacity(), now)
        else:
            b.tokens = min(self._capacity(), b.tokens + (now - b.stamp) * self.rate)
            b.stamp = now
        return b

    def admit(self, client: str) -> tuple[str, int] | None:
        """Start a request of ``client`` (costing one question), or say why not: the
        message and the seconds to wait (for ``Retry-After``)."""
        busy = self.in_progress.get(client, 0)
        if busy >= self.concurrency:
            return (
                f"too many requests in progress for client {client!r}: "
                f"at most {self.concurrency} at once",
                1,
            )
        if self.rate > 0:
            b = self._bucket(client, time.monotonic())
            if b.tokens < 1.0:
                wait = max(1, math.ceil((1.0 - b.tokens) / self.rate))
                return (
                    f"rate limit: client {client!r} may ask {self.rate:g} questions per "
                    f"second; try again in {wait} s",
                    wait,
                )
            b.tokens -= 1.0
        self.in_progress[client] = busy + 1
        return None

    def admit_stream(self, client: str) -> tuple[str, int] | None:
        """Open an event stream of ``client`` (:data:`STREAM_SUFFIX`), or say why not.
        A stream lasts as long as its watcher looks, so it is not a request in progress;
        a client holds at most ``streams`` at once."""
        held = self.open_streams.get(client, 0)
        if held >= self.streams:
            return (
                f"too many event streams open for client {client!r}: at most {self.streams}",
                5,
            )
        self.open_streams[client] = held + 1
        return None

    def release_stream(self, client: str) -> None:
        """The end of a stream :meth:`admit_stream` opened."""
        left = self.open_streams.get(client, 0) - 1
        if left > 0:
            self.open_streams[client] = left
        else:
            self.open_streams.pop(client, None)

    def charge(self, client: str, questions: int) -> None:
        """Charge ``questions`` more to an admitted request (a batch's other questions)."""
        if self.rate > 0 and questions > 0:
            self._bucket(client, time.monotonic()).tokens -= questions

    def release(self, client: str) -> None:
        """The end of a request :meth:`admit` started."""
        left = self.in_progress.get(client, 0) - 1
        if left > 0:
            self.in_progress[client] = left
        else:
            self.in_progress.pop(client, None)


# -- the middleware -----------------------------------------------------------------------
class BodyAbort(Exception):
    """Reading the body stopped (too large, too slow, the client left): the Guard
    answers it, so whatever is between them must let it through."""


class _TooLarge(BodyAbort):
    pass


class _TooSlow(BodyAbort):
    pass


class _Gone(BodyAbort):
    """The client left before its body was complete."""


class Guard:
    """ASGI middleware: keys, per-client limits, body size and body deadline (see the
    module). ``keys`` maps key hashes to client names (None: no keys; the client is its
    address)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        keys: Mapping[str, str] | None,
        limits: ClientLimits,
        max_body: int,
        body_timeout: float,
    ) -> None:
        self.app = app
        self.keys = keys
        self.limits = limits
        self.max_body = max_body
        self.body_timeout = body_timeout

    def _client(self, scope: Scope) -> tuple[str | None, str]:
        """The client's name, or None and why it is refused."""
        if self.keys is None:
            peer = scope.get("client")
            return (peer[0] if peer else "unknown"), ""
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        scheme, _, key = auth.partition(" ")
        if not auth:
            return None, "an API key is required: send 'Authorization: Bearer KEY'"
        if scheme.lower() != "bearer" or not key.strip():
            return None, "the Authorization header must be 'Bearer KEY'"
        client = lookup(self.keys, key.strip())
        if client is None:
            return None, "unknown API key"
        return client, ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path in FREE_PATHS or path.startswith(("/static/", "/tile/")):
            await self.app(scope, receive, send)
            return
        client, why = self._client(scope)
        if client is None:
            await send_json(send, 401, {"error": why}, {"WWW-Authenticate": "Bearer"})
            return
        stream = is_stream(path)
        refused = self.limits.admit_stream(client) if stream else self.limits.admit(client)
        if refused is not None:
            message, wait = refused
            await send_json(send, 429, {"error": message}, {"Retry-After": str(wait)})
            return
        try:
            await self._guarded(scope, receive, send, client)
        finally:
            (self.limits.release_stream if stream else self.limits.release)(client)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send, client: str) -> None:
        scope[CLIENT_KEY] = client
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                shown = length.decode("latin-1")[:40]
                await send_json(send, 400, {"error": f"bad Content-Length {shown!r}"})
                return
            if int(length) > self.max_body:
                await send_json(send, 413, self._too_large())
                return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        seen = 0
        complete = False
        started = False

        async def limited() -> Message:
            nonlocal seen, complete
            if complete:
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise _TooSlow from None
            if message["type"] == "http.disconnect":
                raise _Gone
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise _TooLarge
                complete = not message.get("more_body", False)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracked)
        except _TooLarge:
            if not started:
                await send_json(send, 413, self._too_large())
        except _TooSlow:
            if not started:
                error = f"the request body was not received within {self.body_timeout:g} s"
                await send_json(send, 408, {"error": error})
        except _Gone:
            log.debug("client %s left before sending its whole body", client)

    def _too_large(self) -> dict[str, Any]:
        return {"error": f"request body over {self.max_body} bytes"}


# -- connections ----------------------------------------------------------------------------
def guarded_h11(header_timeout: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a deadline for each request head and a cap on open
    connections (see the module); pass it as ``uvicorn.Config(http=...)``.

    uvicorn closes a keep-alive connection that stays silent (``timeout_keep_alive``)
    but not one that is silent from the start or that trickles a header byte by byte:
    here every connection waiting for a request head gets ``header_timeout`` seconds to
    send all of it, counted from when it started waiting (bytes arriving do not reset
    it). At ``max_connections`` open connections a new one closes the connection that
    has waited longest for a request head (idle or half-sent); when every connection
    has a request in progress the new one is closed instead."""

    class GuardedH11Protocol(H11Protocol):
        _waiting_since: float = 0.0
        _head_timer: asyncio.TimerHandle | None = None

        def _waiting_for_head(self) -> bool:
            cycle = self.cycle
            return self.conn.their_state is h11.IDLE and (cycle is None or cycle.response_complete)

        def _arm(self) -> None:
            self._disarm()
            self._waiting_since = self.loop.time()
            self._head_timer = self.loop.call_later(header_timeout, self._head_deadline)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_deadline(self) -> None:
            self._head_timer = None
            if self._waiting_for_head() and not self.transport.is_closing():
                log.debug("closed a connection that sent no request head in %g s", header_timeout)
                self.transport.close()

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._arm()
            if len(self.connections) <= max_connections:
                return
            idle = [
                p
                for p in self.connections
                if isinstance(p, GuardedH11Protocol)
                and p is not self
                and p._waiting_for_head()
                and not p.transport.is_closing()
            ]
            if idle:
                oldest = min(idle, key=lambda p: p._waiting_since)
                log.debug("at %d connections: closed the longest idle one", max_connections)
                oldest.transport.close()
            else:
                log.warning("at %d connections, all busy: refused a new one", max_connections)
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if not self._waiting_for_head():
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self._waiting_for_head():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return GuardedH11Protocol
