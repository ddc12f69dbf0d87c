"""What lets a browser trust the service: :class:`BrowserGuard`, in front of every endpoint.

A judge runs ``battlejudge serve`` on his own machine and browses the web meanwhile. Any page
he opens can make his browser send requests to the service (a form it submits, an image, a
``fetch()`` in ``no-cors`` mode): the browser sends them without asking, and would let the
service answer them and, with ``--log``, log their claims. Only a browser does this, and a
browser says where a request comes from, so:

- **JSON only** (415): a request with a body to the JSON API (POST, PUT or PATCH under
  ``/v1/``) must say ``Content-Type: application/json`` (a ``charset=utf-8`` parameter
  allowed). Another site's page may send text/plain, a form or multipart without asking;
  to send application/json the browser must first ask the service (a CORS preflight),
  which it never grants.
- **No cross-site requests** (403): a request that may change something (any method but
  GET, HEAD and OPTIONS) whose ``Origin`` is not the service's own, or, without an Origin,
  whose ``Sec-Fetch-Site`` is not ``same-origin`` or ``none``; and a GET or HEAD from
  another site's page unless the browser is opening it as a page (a link followed,
  ``Sec-Fetch-Mode: navigate``), so a shared link still works but an ``<img>`` elsewhere
  asks no question. Another port of the same machine is another origin (browsers call it
  the *same site*: it is refused too). A client that is not a browser sends neither header
  and passes: curl, engines, scripts.
- **Headers on every response**: ``Content-Security-Policy`` (:data:`CSP`: the package's
  own scripts, styles and images only, no inline script or style, no framing, forms post
  only to the service), ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``,
  ``Referrer-Policy: same-origin`` (no address of a page is sent to another site; under
  ``no-referrer`` a browser would send even the service's own forms with ``Origin: null``)
  and the cross-origin isolation headers.

Both checks happen before the request reaches any endpoint: a refused request's body is
read and dropped (so that the refusal reaches its client), never parsed, and no job or log
record is made. Refusals are JSON ``{"error": MESSAGE}``, as every other error of
the service (docs/web.md, *What another site's page can do*).
"""

from __future__ import annotations

import asyncio
from typing import Final
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from battlejudge.apps.limits import send_json

__all__ = ["CSP", "DOCS_CSP", "SECURITY_HEADERS", "BrowserGuard", "json_type_problem"]

CSP: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
"""The pages' Content-Security-Policy: everything from the service itself, no inline script,
style or ``on...=`` handler, no plugins, no ``<base>``, forms sent only to the service, and
no page of another site may frame it."""
DOCS_CSP: Final = CSP.replace("img-src 'self'", "img-src 'self' data:")
"""``/docs``' policy: Swagger UI's stylesheet draws its icons as ``data:`` SVG images."""
SECURITY_HEADERS: Final = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # not no-referrer: under it, a browser sends even a same-origin form's Origin as "null"
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
"""Sent with every response, beside the Content-Security-Policy."""
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing: the only ones another site's page may use (GET and HEAD
only to open a page)."""
BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
JSON_API: Final = "/v1/"
"""Every request with a body under this prefix is JSON."""
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def json_type_problem(content_type: str | None) -> str | None:
    """Why a request body of ``content_type`` (the header's value, None when missing) is not
    taken as JSON, or None when it is ``application/json`` (with at most a ``charset=utf-8``
    parameter: JSON is UTF-8, RFC 8259 section 8.1)."""
    expected = "send the body as JSON with 'Content-Type: application/json'"
    if content_type is None or not content_type.strip():
        return f"no Content-Type: {expected}"
    media, *params = (p.strip() for p in content_type.split(";"))
    ok = media.lower() == "application/json"
    for param in params:
        name, _, value = param.partition("=")
        charset = value.strip().strip('"').lower()
        if name.strip().lower() != "charset" or charset not in ("utf-8", "utf8"):
            ok = False
    if ok:
        return None
    return f"Content-Type {content_type[:80]!r} is not accepted: {expected}"


def _host_port(netloc: str, scheme: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``netloc`` (``host[:port]``, IPv6 in brackets), the port of
    ``scheme`` when none is given; None when it cannot be read."""
    try:
        parts = urlsplit(f"//{netloc}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS.get(scheme, 0)


def foreign_origin(headers: dict[bytes, bytes]) -> str | None:
    """Why the request comes from another site's page (its ``Origin``, or without one its
    ``Sec-Fetch-Site``, against its ``Host``), or None: the service's own page, the browser
    itself (an address typed, a bookmark), or a client that is not a browser.

    The scheme is not compared: behind a proxy that ends TLS, the page is ``https`` and the
    request reaching the service ``http``, on the same host and port the proxy passes on."""
    origin = headers.get(b"origin")
    site = headers.get(b"sec-fetch-site", b"").decode("latin-1").strip().lower()
    if origin == b"null" and site:
        # an origin kept from the request (a no-referrer policy, a sandboxed frame, a
        # redirect across origins): the browser's Sec-Fetch-Site still says where it is from
        origin = None
    if origin is not None:
        text = origin.decode("latin-1").strip()
        parts = urlsplit(text)
        mine = headers.get(b"host", b"").decode("latin-1")
        theirs = _host_port(parts.netloc, parts.scheme) if parts.scheme in _DEFAULT_PORTS else None
        if theirs is None or theirs != _host_port(mine, parts.scheme):
            return f"Origin {text[:80]!r} is not this service ({mine[:80]!r})"
        return None
    if site in ("", "same-origin", "none"):
        return None
    return f"Sec-Fetch-Site: {site[:40]}"


def _is_page_opened(method: str, headers: dict[bytes, bytes]) -> bool:
    """Whether the browser is opening the URL as its page (a link followed, an address
    typed): a GET or HEAD navigation of the top-level window (frames are refused anyway)."""
    return (
        method in ("GET", "HEAD")
        and headers.get(b"sec-fetch-mode") == b"navigate"
        and headers.get(b"sec-fetch-dest", b"document") == b"document"
    )


async def _drain(receive: Receive, limit: int, timeout: float) -> None:
    """Read the request's body and drop it (at most ``limit`` bytes, for at most ``timeout``
    seconds), so that a refusal reaches its client: a connection closed with data it has
    not read is reset, and the client may lose the answer."""
    seen = 0
    try:
        async with asyncio.timeout(timeout):
            while seen <= limit:
                message = await receive()
                if message["type"] != "http.request":
                    return
                seen += len(message.get("body", b""))
                if not message.get("more_body", False):
                    return
    except TimeoutError:
        return


class BrowserGuard:
    """ASGI middleware: the JSON API's content type, cross-site requests, and the security
    headers of every response (see the module). A refused request's body is read (within
    ``max_body`` bytes and ``body_timeout`` seconds, as the Guard of :mod:`.limits` reads
    any) and dropped, never parsed."""

    def __init__(self, app: ASGIApp, *, max_body: int, body_timeout: float) -> None:
        self.app = app
        self.max_body = max_body
        self.body_timeout = body_timeout

    async def _refuse(
        self, receive: Receive, send: Send, headers: dict[bytes, bytes], status: int, error: str
    ) -> None:
        length = headers.get(b"content-length", b"0")
        if not length.isdigit() or int(length) <= self.max_body:
            await _drain(receive, self.max_body, self.body_timeout)
        await send_json(send, status, {"error": error})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        policy = (DOCS_CSP if path == "/docs" else CSP).encode()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {name.lower() for name, _ in headers}
                for name, value in ((b"content-security-policy", policy), *SECURITY_HEADERS):
                    if name not in present:
                        headers.append((name, value))
                message = {**message, "headers": headers}
            await send(message)

        method: str = scope["method"]
        headers = dict(scope.get("headers") or [])
        why = foreign_origin(headers)
        if why is not None and (method not in SAFE_METHODS or not _is_page_opened(method, headers)):
            error = (
                f"refused a request from another site's page ({why}): the service's pages "
                "work only from the service itself"
            )
            await self._refuse(receive, with_headers, headers, 403, error)
            return
        if method in BODY_METHODS and path.startswith(JSON_API):
            raw = headers.get(b"content-type")
            problem = json_type_problem(None if raw is None else raw.decode("latin-1"))
            if problem is not None:
                await self._refuse(receive, with_headers, headers, 415, problem)
                return
        await self.app(scope, receive, with_headers)
