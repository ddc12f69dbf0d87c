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
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import resource
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.apps import claim_work
from battlejudge.apps.browsers import BrowserGuard
from battlejudge.apps.limits import CLIENT_KEY, BodyAbort, ClientLimits, Guard, guarded_h11
from battlejudge.apps.scheduler import FairScheduler
from battlejudge.apps.workers import WorkerPool
from battlejudge.engines.battleline.position import PositionFile
from battlejudge.proofs.battleline.certificate import CertificateFile
from battlejudge.proofs.budget import DEFAULT_MEMORY_LIMIT
from battlejudge.proofs.log import PreparedRecord, proved_record
from battlejudge.proofs.sequencer import DEFAULT_INTERVAL, Sequencer
from battlejudge.proofs.store import StoreError, open_store
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import (
    BattlejudgeError,
    InputError,
    UndecidedError,
)
from battlejudge.solver.json_input import parse_json

MAX_BODY: Final = 1 << 20
"""Largest request body accepted (1 MiB); larger ones get 413."""
MAX_BATCH: Final = 256
BULK_NICE: Final = 10
"""The priority (nice) of the workers that run a client's second and later jobs."""
BIG_BODY: Final = 64 * 1024
"""Bodies larger than this are parsed off the event loop."""
SWAGGER_UI: Final = Path(__file__).parent / "static" / "swagger-ui"
"""The vendored Swagger UI (its README says where it comes from)."""
_ASSETS: Final = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui-init.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}
_DOCS_PAGE: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>battlejudge - API</title>
<link rel="stylesheet" href="/static/swagger-ui/swagger-ui.css">
<link rel="icon" href="/static/swagger-ui/favicon-32x32.png">
<script src="/static/swagger-ui/swagger-ui-bundle.js" defer></script>
<script src="/static/swagger-ui/swagger-ui-init.js" defer></script>
</head>
<body>
<div id="swagger-ui"></div>
</body>
</html>
"""
"""``/docs``: Swagger UI with no inline script (the Content-Security-Policy allows none), its
set-up in ``swagger-ui-init.js``, ours, beside the vendored files."""
T = TypeVar("T")
_logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServiceConfig:
    """How the service runs.

    Work: ``time_limit`` seconds and ``memory_limit`` bytes per job (one question or
    one certificate check) before 503 undecided; ``conflict_limit`` solver conflicts per
    question (None: no limit); ``workers`` jobs run at once, plus as many more for
    clients that have none running (:mod:`.scheduler`). Log: ``log_path`` and
    ``key_path``, the proof log every answered claim is appended to (a file or a
    ``postgresql://`` URL, which several services may share) and its signing key; each
    answer logged carries its record's ``log_seq``. While the log cannot be written the
    service refuses claims (503), unless ``log_optional``: then it answers them unlogged.
    Answered claims are pooled and committed together as they come, and a checkpoint of
    them published at most every ``checkpoint_interval`` seconds
    (:mod:`~battlejudge.proofs.sequencer`); ``witnesses`` (``URL=VKEY``) cosign each
    checkpoint.
    Clients: ``api_keys`` maps key hashes to client names (None: no keys);
    ``client_concurrency`` requests in progress and ``rate_limit`` questions per second
    (0: none) per client, bursts of ``rate_burst``. Connections (used by :func:`serve`):
    ``header_timeout`` and ``body_timeout`` seconds to send a request's head and body,
    ``keep_alive`` seconds an idle keep-alive connection stays open,
    ``max_connections`` open at once, ``max_header_bytes`` of a request head.
    ``dedicated``: the process does nothing but serve (``battlejudge serve``), so it
    may be tuned for that (:func:`tune_for_serving`)."""

    time_limit: float = 2.0
    conflict_limit: int | None = None
    log_path: str | None = None
    key_path: str | None = None
    log_optional: bool = False
    checkpoint_interval: float = DEFAULT_INTERVAL
    witnesses: tuple[str, ...] = ()
    dedicated: bool = False
    workers: int = 1
    memory_limit: int = DEFAULT_MEMORY_LIMIT
    api_keys: dict[str, str] | None = field(default=None, hash=False, compare=False)
    client_concurrency: int = 32
    rate_limit: float = 0.0
    rate_burst: float = 0.0
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    keep_alive: int = 5
    max_connections: int = 1000
    max_header_bytes: int = 16 * 1024


class ServiceError(Exception):
    """An answer other than 200: its status and JSON body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("error", ""))
        self.status = status
        self.body = body


def _bad(status: int, message: str) -> ServiceError:
    return ServiceError(status, {"error": message})


def _undecided(e: BattlejudgeError) -> ServiceError:
    return ServiceError(503, {"verdict": "undecided", "error": f"undecided: {e}"})


def _json_response(status: int, body: Any) -> Response:
    return Response(json.dumps(body).encode(), status, media_type="application/json")


# -- the work -------------------------------------------------------------------------------
class Adjudicator:
    """The work behind the endpoints: the fair queue, its worker processes, one log
    writer thread."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        spare = config.workers
        # A client's sole running job gets a worker at normal priority; the jobs of a
        # client that already has one running get nice-10 workers: when the cores are
        # busy, a client asking one question goes before another client's bulk.
        self.pool = WorkerPool(config.workers + spare)
        self.bulk = WorkerPool(config.workers, nice=BULK_NICE)
        self.queue = FairScheduler(config.workers, spare)
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="battlejudge-log")
        self.log: Any = None
        self.sequencer: Sequencer | None = None
        self.view: Any = None
        self.keeps_log = bool(config.log_path)
        if config.log_path:
            from battlejudge.proofs.keys import load_private_key
            from battlejudge.proofs.logview import open_view

            self._key = load_private_key(config.key_path) if config.key_path else None
            self.view = open_view(config.log_path)
            try:
                self._open_log()
            except StoreError as e:
                if not config.log_optional:
                    raise
                _logger.warning("%s; answering claims unlogged until it is back", e)

    def _open_log(self) -> None:
        from battlejudge.proofs.witnessing import Cosigners, parse_witness_option

        cfg = self.config
        assert cfg.log_path is not None
        links = [parse_witness_option(w) for w in cfg.witnesses]
        cosign = Cosigners(links) if links else None
        self.log = open_store(cfg.log_path, self._key, cosign=cosign)
        self.sequencer = Sequencer(self.log, interval=cfg.checkpoint_interval)

    async def start(self) -> None:
        """Start every worker process now rather than on the first requests."""
        await asyncio.gather(self.pool.start(), self.bulk.start())

    def close(self) -> None:
        """Stop the service's work: close the request queue and the worker pools, wait for the
        log writer to finish its appends, and close the proof log."""
        self.queue.close()
        self.pool.close()
        self.bulk.close()
        self.writer.shutdown(wait=True)
        if self.sequencer is not None:
            self.sequencer.close()
        if self.log is not None:
            self.log.close()
        if self.view is not None:
            self.view.close()

    async def job(
        self, client: str, fn: Callable[..., T], *args: Any, what: str, scale: float = 1.0
    ) -> T:
        """``fn(*args)`` as a job of ``client``: in its turn (:mod:`.scheduler`), in a
        worker, within the time and memory limits (:class:`UndecidedError` past them);
        ``scale`` times the time limit for work made of many questions (a web audit)."""
        cfg = self.config
        limit = cfg.time_limit * scale

        async def work(busy: bool) -> T:
            return await (self.bulk if busy else self.pool).run(
                fn, *args, time_limit=limit, memory_limit=cfg.memory_limit, what=what
            )

        return await self.queue.run(client, work)

    async def record(
        self, proofs: list[tuple[bl.ProvedClaim | PreparedRecord, dict[str, Any]]]
    ) -> list[int | None]:
        """Append answered claims (proved claims, or their records made in a worker) to
        the proof log (when there is one) before answering: pooled with every other
        client's and committed together by the sequencer as soon as the commit in progress
        is done; their records' seqs (None where unlogged). A log that cannot be written is
        a 503 :class:`ServiceError`, unless ``log_optional``: then the claims go unlogged."""
        if not self.keeps_log or not proofs:
            return [None] * len(proofs)
        records = [  # a worker's record has its context in already
            p if isinstance(p, PreparedRecord) else proved_record(p, **context)
            for p, context in proofs
        ]
        try:
            if self.sequencer is None:  # it was down when the service started
                await asyncio.get_running_loop().run_in_executor(self.writer, self._open_log)
            assert self.sequencer is not None
            written = await asyncio.wrap_future(self.sequencer.submit(records))
            return [r["seq"] for r in written]
        except (InputError, OSError) as e:
            if not self.config.log_optional:
                why = f"the proof log cannot be written, so no claim is answered: {self._shown(e)}"
                raise _bad(503, why) from None
            _logger.warning("%s; this claim goes unlogged", e)
            return [None] * len(proofs)

    def _shown(self, e: BaseException) -> str:
        """An error of the log as a client may read it: a file log's path on disk is not
        shown (a database URL is, without its password)."""
        text = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        path = self.config.log_path
        if path and not path.startswith(("postgresql://", "postgres://")):
            for shown in (str(Path(path).resolve()), path):  # the longer first
                text = text.replace(shown, "the proof log")
        return text


# -- reading requests -----------------------------------------------------------------------
async def _body(request: Request) -> Any:
    """The request's JSON within the input limits (nesting, integer size), or 400 naming
    the JSON path. Large bodies are parsed off the event loop."""
    raw = await request.body()
    try:
        if len(raw) > BIG_BODY:
            return await asyncio.to_thread(parse_json, raw, "body")
        return parse_json(raw, "body")
    except InputError as e:
        raise _bad(400, str(e)) from None


def _client(request: Request) -> str:
    name: str = request.scope.get(CLIENT_KEY, "local")
    return name


async def _unless_client_leaves(request: Request, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None when the client leaves first: then ``work`` is
    cancelled, and its jobs that have not started never run."""
    task: asyncio.Task[T] = asyncio.ensure_future(work)

    async def gone() -> None:
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                return

    watch = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
    if not task.done():
        task.cancel()
        return None
    return task.result()


def _schema(model: Any) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": model}},
        }
    }


_QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["mine"],
    "properties": {
        "mine": {"type": "array", "items": {"type": "string"}, "examples": [["R4", "R5", "R3"]]},
        "theirs": {"type": "array", "items": {"type": "string"}, "examples": [["B8"]]},
        "seen": {"type": "array", "items": {"type": "string"}, "examples": [["B7", "B10"]]},
        "mud": {"type": "boolean"},
        "fog": {"type": "boolean"},
        "completed_first": {"enum": ["mine", "theirs", None]},
    },
}
_ERROR_SCHEMA = {
    "application/json": {
        "schema": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": {"type": "string"}},
        }
    }
}
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"description": text, "content": _ERROR_SCHEMA}
    for code, text in (
        (400, "The body is not JSON within the limits, or a bad query parameter."),
        (401, "No API key, or an unknown one (when the service has keys)."),
        (403, "A request from another site's page (its Origin or Sec-Fetch-Site)."),
        (408, "The body was not received in time."),
        (413, "The body is over 1 MiB."),
        (415, "The body was not sent as Content-Type: application/json."),
        (422, "Not a valid question, certificate or position (the command line's message)."),
        (429, "Over the client's limits; Retry-After says when to try again."),
        (503, "Undecided within the time, memory or conflict limit: no verdict."),
    )
}


def _query_message(e: RequestValidationError) -> str:
    err = e.errors()[0]
    loc = [str(x) for x in err.get("loc", ())]
    where = f"query parameter {loc[-1]!r}" if loc[:1] == ["query"] else ".".join(loc)
    got = err.get("input")
    shown = f" (got {got!r})" if isinstance(got, str) else ""
    return f"{where}: {err.get('msg', 'invalid')}{shown}"


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """The application; ``config`` defaults to :class:`ServiceConfig` ()."""
    cfg = config or ServiceConfig()
    state: dict[str, Adjudicator] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        judge = state["judge"] = Adjudicator(cfg)
        try:
            await judge.start()
            if cfg.dedicated:
                tune_for_serving()
            yield
        finally:
            state.pop("judge").close()

    app = FastAPI(
        title="battlejudge",
        summary="Certified Battle Line flag claims: proofs anyone can check.",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    limits = ClientLimits(cfg.client_concurrency, cfg.rate_limit, cfg.rate_burst)
    app.add_middleware(
        Guard,
        keys=cfg.api_keys,
        limits=limits,
        max_body=MAX_BODY,
        body_timeout=cfg.body_timeout,
    )
    # outermost, so that every answer, the Guard's refusals too, carries the headers, and
    # another site's request is refused before anything else is done for it
    app.add_middleware(BrowserGuard, max_body=MAX_BODY, body_timeout=cfg.body_timeout)

    @app.exception_handler(RequestValidationError)
    async def bad_query(_request: Request, e: RequestValidationError) -> Response:
        return _json_response(400, {"error": _query_message(e)})

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, e: StarletteHTTPException) -> Response:
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

    def judge() -> Adjudicator:
        return state["judge"]

    async def answer(
        request: Request, handler: Callable[[], Coroutine[Any, Any, Any]], watch: bool = False
    ) -> Response:
        """``handler``'s answer as JSON (a Response as it is); with ``watch`` the work
        is cancelled if the client leaves: its jobs not yet started never run, and a
        running one's worker is killed, so a client that gives up frees its cores."""
        try:
            if watch:
                await request.body()  # read whole before the watch starts
                out = await _unless_client_leaves(request, handler())
            else:
                out = await handler()
        except ServiceError as e:
            return _json_response(e.status, e.body)
        except UndecidedError as e:
            return _json_response(503, _undecided(e).body)
        except BattlejudgeError as e:  # a worker that died: no verdict, and not the client's fault
            return _json_response(503, _undecided(e).body)
        except BodyAbort:
            raise  # the Guard answers it
        except Exception as e:  # a bug: still JSON, and logged with its traceback
            _logger.exception("internal error on %s", request.url.path)
            return _json_response(500, {"error": f"internal error: {type(e).__name__}"})
        if out is None:  # the client left: nobody to answer
            return Response(status_code=499)
        if isinstance(out, Response):
            return out
        return _json_response(200, out)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        """Swagger UI from the package's own copy (apps/static/swagger-ui)."""
        return HTMLResponse(_DOCS_PAGE)

    @app.get("/static/swagger-ui/{name}", include_in_schema=False)
    async def swagger_asset(name: str) -> Response:
        """The Swagger UI files /docs loads."""
        if name not in _ASSETS:
            raise StarletteHTTPException(404)
        return FileResponse(SWAGGER_UI / name, media_type=_ASSETS[name])

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: ``{"status": "ok"}``."""
        return {"status": "ok"}

    @app.post(
        "/v1/claims",
        openapi_extra=_schema(_QUESTION_SCHEMA),
        responses=_ERRORS,
        summary="Decide one flag claim, certified",
    )
    async def claims(request: Request, certificate: bool = False) -> Response:
        """A flag question -> the certified verdict (the JSON of ``battlejudge claim
        --json``): a valid claim with its minimal blocking set, explanation and verified
        DRAT proof; an invalid one with the completion that beats it."""

        async def handle() -> Any:
            body = await request.body()
            j = judge()
            status, data, p, _ = await j.job(
                _client(request),
                claim_work.answer_claim,
                body,
                certificate,
                cfg.conflict_limit,
                j.keeps_log,
                what="deciding the claim",
            )
            if p is not None:
                data = _with_seq(data, (await j.record([(p, {})]))[0])
            return Response(data, status, media_type="application/json")

        return await answer(request, handle, watch=True)

    @app.post(
        "/v1/claims:batch",
        openapi_extra=_schema(
            {
                "type": "object",
                "required": ["questions"],
                "properties": {
                    "questions": {
                        "type": "array",
                        "maxItems": MAX_BATCH,
                        "items": _QUESTION_SCHEMA,
                    }
                },
            }
        ),
        responses=_ERRORS,
        summary="Decide many flag claims",
    )
    async def claims_batch(request: Request, certificate: bool = False) -> Response:
        """``{"questions": [...]}`` -> ``{"results": [...]}`` in order; a bad question
        gets ``{"index", "error"}``, one past a limit ``{"index", "verdict":
        "undecided"}``, and the others are still answered. Each question is a job of
        its own in the fair queue, and counts as one question for the rate limit."""

        async def handle() -> Any:
            body = await _body(request)
            if not isinstance(body, dict) or not isinstance(body.get("questions"), list):
                raise _bad(422, 'the body must be {"questions": [...]}')
            if set(body) != {"questions"}:
                extra = sorted(set(body) - {"questions"})[0]
                raise _bad(422, f"unknown key {extra!r} in the batch")
            items = body["questions"]
            if len(items) > MAX_BATCH:
                raise _bad(422, f"questions: at most {MAX_BATCH} per batch, got {len(items)}")
            client = _client(request)
            limits.charge(client, len(items) - 1)
            j = judge()

            async def one(i: int, item: Any) -> tuple[PreparedRecord | None, dict[str, Any]]:
                try:
                    result, p = await j.job(
                        client,
                        claim_work.answer_item,
                        i,
                        item,
                        certificate,
                        cfg.conflict_limit,
                        j.keeps_log,
                        what=f"deciding question {i}",
                    )
                except UndecidedError:
                    return None, {"index": i, "verdict": "undecided"}
                except BattlejudgeError as e:
                    return None, {"index": i, "verdict": "undecided", "error": str(e)}
                return p, result

            answers = await asyncio.gather(*(one(i, item) for i, item in enumerate(items)))
            logged = [r for p, r in answers if p is not None]
            seqs = await j.record([(p, {}) for p, _ in answers if p is not None])
            for r, seq in zip(logged, seqs, strict=True):
                if seq is not None:
                    r["log_seq"] = seq
            return {"results": [r for _, r in answers]}

        return await answer(request, handle, watch=True)

    @app.post(
        "/v1/verify",
        openapi_extra=_schema({"$ref": "#/components/schemas/CertificateFile"}),
        responses=_ERRORS,
        summary="Check a certificate",
    )
    async def verify(request: Request, deep: bool = False) -> Response:
        """A certificate file's JSON -> ``{"verified": true, "verdict", "deep"}``, or
        ``{"verified": false, "reason"}`` when a check fails (as ``battlejudge verify
        --json``). A proof out of proportion to its CNF is refused before any checking
        (``battlejudge verify`` states the rule)."""

        async def handle() -> Any:
            body = await request.body()
            status, data = await judge().job(
                _client(request),
                claim_work.answer_verify,
                body,
                deep,
                what="checking the certificate",
            )
            return Response(data, status, media_type="application/json")

        return await answer(request, handle, watch=True)

    @app.post(
        "/v1/positions/claim",
        openapi_extra=_schema(
            {
                "type": "object",
                "required": ["position", "flag", "player"],
                "properties": {
                    "position": {"$ref": "#/components/schemas/PositionFile"},
                    "flag": {"type": "integer", "minimum": 1, "maximum": 9},
                    "player": {"enum": ["north", "south"]},
                },
            }
        ),
        responses=_ERRORS,
        summary="Decide a claim in a table position",
    )
    async def position_claim(request: Request, certificate: bool = False) -> Response:
        """``{"position": POSITION, "flag": N, "player": "north"|"south"}`` -> the claim
        JSON, the question derived from the table as ``battlejudge claim POSITION``."""

        async def handle() -> Any:
            body = await request.body()
            j = judge()
            status, data, p, context = await j.job(
                _client(request),
                claim_work.answer_position,
                body,
                certificate,
                cfg.conflict_limit,
                j.keeps_log,
                what="deciding the claim",
            )
            if p is not None:
                data = _with_seq(data, (await j.record([(p, context)]))[0])
            return Response(data, status, media_type="application/json")

        return await answer(request, handle, watch=True)

    add_log_routes(app, judge)
    from battlejudge.apps import web

    web.mount(app, judge, cfg.conflict_limit)  # the web table's pages (docs/web.md)
    _add_file_schemas(app)
    return app


IMMUTABLE: Final = "public, max-age=31536000, immutable"
"""Cache-Control of a tile: it never changes (c2sp.org/tlog-tiles)."""


def add_log_routes(app: FastAPI, judge: Callable[[], Adjudicator]) -> None:
    """The proof log's routes: C2SP tlog-tiles at the root (``/checkpoint``,
    ``/tile/<L>/<N>[.p/<W>]``, ``/tile/entries/<N>[.p/<W>]``) and the service's own
    ``/v1/log/checkpoint`` and ``/v1/log/proof/SEQ``, every one answered from the
    checkpoint and a few tiles (:class:`~battlejudge.proofs.logview.LogView`), never by
    reading the log."""
    from battlejudge.proofs.checkpoint import CheckpointError
    from battlejudge.proofs.tiles import TileError, parse_tile_path

    def view() -> Any:
        v = judge().view
        if v is None:
            raise _bad(404, "this service keeps no proof log")
        return v

    async def read(work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except StoreError as e:
            raise _bad(503, f"the proof log cannot be read: {e}") from None
        except OSError as e:
            raise _bad(503, f"the proof log cannot be read: {e.strerror or e}") from None
        except CheckpointError as e:  # a damaged checkpoint file: named, never its path
            where = judge().view.name if judge().view is not None else ""
            message = str(e).replace(where, "the proof log") if where else str(e)
            raise _bad(503, f"the proof log cannot be read: {message}") from None

    async def checkpoint() -> Response:
        try:
            v = view()
            note = await read(v.checkpoint)
        except ServiceError as e:
            return _json_response(e.status, e.body)
        if note is None:
            return _json_response(404, {"error": "the proof log has no checkpoint yet"})
        return Response(
            note,
            200,
            media_type="text/plain; charset=utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    @app.get("/checkpoint", responses=_ERRORS, summary="The latest checkpoint (tlog-tiles)")
    async def tlog_checkpoint() -> Response:
        """The proof log's latest signed checkpoint, a C2SP signed note with its witnesses'
        cosignatures (text/plain; not cached beyond a few seconds)."""
        return await checkpoint()

    @app.get("/tile/{path:path}", responses=_ERRORS, summary="A tile or entry bundle")
    async def tlog_tile(path: str) -> Response:
        """A tile of the proof log's Merkle tree (``/tile/<L>/<N>[.p/<W>]``: 256 hashes, or
        W of a partial tile) or an entry bundle (``/tile/entries/<N>[.p/<W>]``: the
        records' lines, each behind its 16-bit length), as C2SP tlog-tiles names them;
        immutable, so cached for a year."""
        try:
            parse_tile_path(f"tile/{path}")
            v = view()
            data = await read(lambda: v.tile(f"tile/{path}"))
        except TileError as e:
            return _json_response(404, {"error": str(e)})
        except ServiceError as e:
            return _json_response(e.status, e.body)
        if data is None:
            return _json_response(404, {"error": f"no tile {path} in this log"})
        return Response(
            data,
            200,
            media_type="application/octet-stream",
            headers={"Cache-Control": IMMUTABLE},
        )

    @app.get("/v1/log/checkpoint", responses=_ERRORS, summary="The proof log's checkpoint")
    async def log_checkpoint() -> Response:
        """The latest signed checkpoint of the proof log: a C2SP signed note (text/plain):
        origin, tree size, Merkle root, time, signature (docs/checkpoints.md)."""
        return await checkpoint()

    @app.get("/v1/log/proof/{seq}", responses=_ERRORS, summary="An inclusion proof")
    async def log_proof(seq: int) -> Response:
        """The proof that record ``seq`` (the ``log_seq`` of an answer) is in the proof
        log, as ``battlejudge log prove``: the record, its index, the audit path and the
        signed checkpoint, computed from a few tiles; check it with ``battlejudge log
        verify-inclusion``. A record committed but not yet in a checkpoint is answered
        once the next checkpoint is out (within the checkpoint interval)."""
        loop = asyncio.get_running_loop()
        j = judge()
        deadline = loop.time() + j.config.checkpoint_interval + 2.0
        while True:
            try:
                v = view()
                proof = await read(partial(v.inclusion_proof, seq))
            except ServiceError as e:
                return _json_response(e.status, e.body)
            except InputError as e:  # no such record (or a tile missing: named, no path)
                committed = j.log.next_seq if j.log is not None else 0
                if seq < committed and loop.time() < deadline:
                    await asyncio.sleep(0.02)  # in the log, not yet in a checkpoint
                    continue
                return _json_response(404, {"error": str(e).replace(str(v.name), "the log")})
            return _json_response(200, proof)


def _with_seq(data: bytes, seq: int | None) -> bytes:
    """The answer's JSON with the seq of its log record added (``log_seq``, last): the
    worker's ``json.dumps`` of an object, so the key goes in before its closing brace,
    byte for byte what decoding, adding and encoding again gives, without doing so."""
    if seq is None:
        return data
    if data.endswith(b"}") and data != b"{}":
        return data[:-1] + b', "log_seq": ' + str(int(seq)).encode("ascii") + b"}"
    body = json.loads(data)
    body["log_seq"] = seq
    return json.dumps(body).encode()


def _add_file_schemas(app: FastAPI) -> None:
    """Put the position and certificate file schemas into the OpenAPI components."""
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = original()
            components = doc.setdefault("components", {}).setdefault("schemas", {})
            for name, model in (
                ("PositionFile", PositionFile),
                ("CertificateFile", CertificateFile),
            ):
                schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
                components.update(schema.pop("$defs", {}))
                components[name] = schema
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


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

    uvicorn.Server(server_config(config, host=host, port=port, access_log=access_log)).run()
