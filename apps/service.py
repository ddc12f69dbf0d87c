"""The HTTP adjudication service (``battlejudge serve``): certified claims over JSON.

A FastAPI application (OpenAPI document at ``/openapi.json``, Swagger UI at ``/docs``
served from the package's own copy, so it works offline):

- ``POST /v1/claims``: a flag question (the JSON of ``claims check`` lines) -> the same
  JSON as ``battlejudge claim --json``; ``?certificate=true`` puts the certificate file's
  JSON in ``certificate`` (null otherwise; the command line puts a file name there);
- ``POST /v1/claims:batch``: ``{"questions": [...]}`` (at most 256) -> ``{"results":
  [...]}``, one answer per question in order; a bad question gets ``{"index", "error"}``,
  one past a limit ``{"index", "verdict": "undecided"}``, and the others are still
  answered, as ``claims check`` does;
- ``POST /v1/verify``: a certificate file's JSON (``?deep=true`` adds the brute-force
  oracle) -> ``{"verified": true, "verdict", "deep"}`` or ``{"verified": false,
  "reason"}``, as ``battlejudge verify --json``;
- ``POST /v1/positions/claim``: ``{"position": POSITION, "flag": 1-9, "player":
  "north"|"south"}`` -> the same JSON as ``battlejudge claim POSITION --flag --player
  --json``;
- ``GET /healthz``: ``{"status": "ok"}``.

Errors are always ``{"error": MESSAGE}`` (never FastAPI's ``{"detail": ...}``), MESSAGE
being the one-line message the command line prints for the same input: 400 a body that
is not JSON within the limits of :func:`~battlejudge.solver.json_input.parse_json`
(nesting, integer size; the message names the JSON path), a bad query parameter or
Content-Length; 401 no or an unknown API key (when the service has keys); 403 a request
from another site's page; 404, 405; 408 a body not received within the body deadline;
413 a body over 1 MiB; 415 a body not sent as ``Content-Type: application/json``; 422 JSON that
is not a valid question, certificate or position; 429 a client over its limits (with
``Retry-After``); 503 ``{"verdict": "undecided", "error"}``: the time, memory or conflict
limit ran out, never a verdict.

Where the work runs (:mod:`.scheduler`): every question and every certificate check is a
job of the client that asked (a batch is one job per question) in a fair queue, round
robin across clients, run in a worker process (:mod:`.workers`, the worker loop of
:mod:`battlejudge.proofs.budget`) that is killed when the job's time limit or memory
budget runs out, or when its client leaves (its core is free at once; a fresh worker
takes its place). A client's sole running job runs at normal priority, its other jobs
and any job past 50 ms at nice 10, so a client asking one question goes first when the
cores are busy. A client is its API key's name, or its address without keys. With a proof log every
answered claim is appended by one log writer thread before the answer is sent. The
connection and per-client limits are in :mod:`.limits`; what keeps other sites' pages out
(the content type, cross-site requests, the security headers of every response) in
:mod:`.browsers`.

The routes themselves are routers by area, gathered here by :func:`create_app`: the JSON
API's in :mod:`battlejudge.apps.routes`, the web pages' in :mod:`battlejudge.apps.web`; the
work behind them (the queue, the workers, the log writer) is :mod:`.adjudicator`'s, and
what a worker runs :mod:`.claim_work`'s.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import resource
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.apps.adjudicator import Adjudicator, ServiceConfig
from battlejudge.apps.browsers import BrowserGuard
from battlejudge.apps.limits import ClientLimits, Guard, guarded_h11
from battlejudge.apps.routes import certificates, claims, docs, log, positions, tables
from battlejudge.apps.routes.common import json_response
from battlejudge.apps.tables.room import Tables
from battlejudge.apps.tables.stores import open_table_store
from battlejudge.apps.web.routes import router as web_pages

__all__ = [
    "MAX_BODY",
    "Adjudicator",
    "ServiceConfig",
    "create_app",
    "is_loopback",
    "open_file_limit",
    "serve",
    "server_config",
    "tune_for_serving",
]

MAX_BODY: Final = 1 << 20
"""Largest request body accepted (1 MiB); larger ones get 413."""
_logger = logging.getLogger(__name__)


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """The application; ``config`` defaults to :class:`ServiceConfig` (). Its routers
    (:mod:`battlejudge.apps.routes`, then the web pages) find the running
    :class:`Adjudicator`, made by the app's lifespan, and the client limits in
    ``app.state``."""
    cfg = config or ServiceConfig()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        judge = state["judge"] = Adjudicator(cfg)
        with contextlib.ExitStack() as stack:
            try:
                state["tables"] = _open_tables(cfg, judge, stack)
                await judge.start()
                if cfg.dedicated:
                    tune_for_serving()
                yield
            finally:
                tables = state.pop("tables", None)
                if tables is not None:
                    tables.close()
                state.pop("judge").close()

    app = FastAPI(
        title="battlejudge",
        summary="Certified Battle Line flag claims: proofs anyone can check.",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.running = state
    app.state.limits = ClientLimits(cfg.client_concurrency, cfg.rate_limit, cfg.rate_burst)
    app.add_middleware(
        Guard,
        keys=cfg.api_keys,
        limits=app.state.limits,
        max_body=MAX_BODY,
        body_timeout=cfg.body_timeout,
    )
    # outermost, so that every answer, the Guard's refusals too, carries the headers, and
    # another site's request is refused before anything else is done for it
    app.add_middleware(BrowserGuard, max_body=MAX_BODY, body_timeout=cfg.body_timeout)
    app.add_exception_handler(RequestValidationError, _bad_query)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    for area in (docs, claims, certificates, positions, log, tables):
        app.include_router(area.router)
    app.include_router(web_pages)  # the web table (docs/web.md)
    docs.add_file_schemas(app)
    return app


def _open_tables(cfg: ServiceConfig, judge: Adjudicator, stack: contextlib.ExitStack) -> Tables:
    """The service's tables in their store (a temporary directory when none is given)."""
    where = cfg.tables
    if where is None:
        where = stack.enter_context(tempfile.TemporaryDirectory(prefix="battlejudge-tables-"))
    return Tables(open_table_store(where), judge)


def _query_message(e: RequestValidationError) -> str:
    err = e.errors()[0]
    loc = [str(x) for x in err.get("loc", ())]
    where = f"query parameter {loc[-1]!r}" if loc[:1] == ["query"] else ".".join(loc)
    got = err.get("input")
    shown = f" (got {got!r})" if isinstance(got, str) else ""
    return f"{where}: {err.get('msg', 'invalid')}{shown}"


async def _bad_query(_request: Request, e: RequestValidationError) -> Response:
    """400 naming the bad query parameter (never FastAPI's 422 ``{"detail": ...}``)."""
    return json_response(400, {"error": _query_message(e)})


async def _http_error(request: Request, e: StarletteHTTPException) -> Response:
    """404, 405 and the other HTTP errors as ``{"error": MESSAGE}``."""
    if e.status_code == 404:
        message = f"no such endpoint: {request.url.path}"
    elif e.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(e.detail)
    return Response(
        json.dumps({"error": message}).encode(),
        e.status_code,
        headers=dict(e.headers or {}),
        media_type="application/json",
    )


# -- running ------------------------------------------------------------------------------
def tune_for_serving() -> None:
    """Settings for a process that does nothing but serve (``battlejudge serve``, once
    the app has started; not applied when the app is embedded elsewhere). The log
    writer and body-parsing threads run Python while the event loop reads requests: at
    the default 5 ms switch interval the loop would wait that long for the GIL. Long-lived objects
    (the app, the caches) are frozen out of garbage collection and collections made
    rarer, which shortens the latency tail."""
    sys.setswitchinterval(0.0005)
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def open_file_limit(wanted: int) -> int:
    """Raise this process's open-file limit towards ``wanted`` (within the hard limit);
    returns the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft if soft != resource.RLIM_INFINITY else wanted


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address to listen on) means this machine only."""
    import ipaddress
    import socket

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def server_config(config: ServiceConfig, **uvicorn_options: Any) -> Any:
    """The ``uvicorn.Config`` of the service: its app, the guarded h11 protocol
    (:func:`~battlejudge.apps.limits.guarded_h11`), the keep-alive timeout and the
    request-head size limit. The open-file limit is raised to fit ``max_connections``
    (the connection cap is lowered if it cannot be)."""
    import uvicorn

    files = open_file_limit(config.max_connections + 256)
    max_connections = max(16, min(config.max_connections, files - 128))
    return uvicorn.Config(
        create_app(config),
        http=guarded_h11(config.header_timeout, max_connections),
        timeout_keep_alive=config.keep_alive,
        h11_max_incomplete_event_size=config.max_header_bytes,
        log_level="warning",
        **uvicorn_options,
    )


def serve(config: ServiceConfig, host: str, port: int, access_log: bool = False) -> None:
    """Serve on ``host:port`` until SIGINT or SIGTERM (one process for HTTP and the
    queue; ``config.workers`` worker processes do the work)."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            app: Any = self.config.app  # the FastAPI app of server_config
            tables = app.state.running.get("tables")
            if tables is not None:  # open event streams would hold the shutdown
                tables.end_streams()

    Server(server_config(config, host=host, port=port, access_log=access_log)).run()
