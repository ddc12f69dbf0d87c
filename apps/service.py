"""The HTTP adjudication service (``battlejudge serve``): certified claims over JSON.

A FastAPI application (OpenAPI document at ``/docs`` and ``/openapi.json``):

- ``POST /v1/claims``: a flag question (the JSON of ``claims check`` lines) -> the same
  JSON as ``battlejudge claim --json``; ``?certificate=true`` puts the certificate file's
  JSON in ``certificate`` (null otherwise; the command line puts a file name there);
- ``POST /v1/claims:batch``: ``{"questions": [...]}`` (at most 256) -> ``{"results":
  [...]}``, one answer per question in order; a bad question gets ``{"index", "error"}``
  and the others are still answered, as ``claims check`` does;
- ``POST /v1/verify``: a certificate file's JSON (``?deep=true`` adds the brute-force
  oracle) -> ``{"verified": true, "verdict", "deep"}`` or ``{"verified": false,
  "reason"}``, as ``battlejudge verify --json``;
- ``POST /v1/positions/claim``: ``{"position": POSITION, "flag": 1-9, "player":
  "north"|"south"}`` -> the same JSON as ``battlejudge claim POSITION --flag --player
  --json``;
- ``GET /healthz``: ``{"status": "ok"}``.

Errors: a body that is not JSON (or not UTF-8) gets 400, a JSON value that is not a valid
question, certificate or position gets 422, each with ``{"error": MESSAGE}`` where MESSAGE
is the one-line message the command line prints for the same input; a body over 1 MiB
gets 413. Each request has a solver time limit (and optionally a conflict limit): past it
the answer is 503 ``{"verdict": "undecided", "error": ...}``, never a verdict.

Solving runs on one solver thread per process (the solver cache is not thread-safe), so
the event loop stays free. With a proof log every answered claim is appended by one log
writer thread per process, before the answer is sent (``ProofLog`` serializes processes
with a file lock, so ``--workers N`` processes share one log safely).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from battlejudge.engines.battleline.answers import claim_json as claim_json
from battlejudge.engines.battleline.position import PositionFile, to_state
from battlejudge.proofs.battleline.certificate import (
    CertificateFile,
    from_file_model,
    to_file_model,
)
from battlejudge.proofs.log import ProofLog, append_proved
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import UndecidedError, VerificationError, invalid

MAX_BODY = 1 << 20
"""Largest request body accepted (1 MiB); larger ones get 413."""
MAX_BATCH = 256
ENV_CONFIG = "BATTLEJUDGE_SERVICE_CONFIG"
"""Environment variable carrying the configuration to ``--workers`` processes (JSON)."""
T = TypeVar("T")


@dataclass(frozen=True)
class ServiceConfig:
    """``time_limit``: seconds of server time per request before 503 undecided;
    ``conflict_limit``: solver conflicts per question (None: no limit); ``log_path`` and
    ``key_path``: the proof log every answered claim is appended to, and its signing key;
    ``dedicated``: the process does nothing but serve (``battlejudge serve``), so it may
    be tuned for that (:func:`tune_for_serving`)."""

    time_limit: float = 2.0
    conflict_limit: int | None = None
    log_path: str | None = None
    key_path: str | None = None
    dedicated: bool = False

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServiceConfig:
        raw = os.environ.get(ENV_CONFIG)
        return cls(**json.loads(raw)) if raw else cls()


class ServiceError(Exception):
    """An answer other than 200: its status and JSON body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("error", ""))
        self.status = status
        self.body = body


def _bad(status: int, message: str) -> ServiceError:
    return ServiceError(status, {"error": message})


def _json_response(status: int, body: Any) -> Response:
    return Response(json.dumps(body).encode(), status, media_type="application/json")


# -- the body size limit ------------------------------------------------------------------
class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: 413 for a body over ``limit`` bytes, by its Content-Length or,
    for a streamed body, as soon as the bytes read pass the limit."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await _send(send, 400, {"error": f"bad Content-Length {length.decode()!r}"})
                return
            if int(length) > self.limit:
                await _send(send, 413, self._message())
                return
        seen = 0
        started = False

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
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
                await _send(send, 413, self._message())

    def _message(self) -> dict[str, Any]:
        return {"error": f"request body over {self.limit} bytes"}


async def _send(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


# -- the service ----------------------------------------------------------------------------
class Adjudicator:
    """The work behind the endpoints: one solver thread, one log writer thread."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self.solver = ThreadPoolExecutor(1, thread_name_prefix="battlejudge-solver")
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="battlejudge-log")
        self.log: ProofLog | None = None
        if config.log_path:
            from battlejudge.proofs.keys import load_private_key

            key = load_private_key(config.key_path) if config.key_path else None
            self.log = ProofLog(config.log_path, key)

    def close(self) -> None:
        self.solver.shutdown(wait=True, cancel_futures=True)
        self.writer.shutdown(wait=True)
        if self.log is not None:
            self.log.close()

    async def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the solver thread within the time limit (503 past it; the
        result of work that overran is thrown away)."""
        loop = asyncio.get_running_loop()
        limit = self.config.time_limit
        undecided = ServiceError(
            503, {"verdict": "undecided", "error": f"undecided: no verdict within {limit:g} s"}
        )
        start = loop.time()
        future = loop.run_in_executor(self.solver, work)
        try:
            result = await asyncio.wait_for(future, limit)
        except TimeoutError:
            raise undecided from None
        except UndecidedError as e:
            raise ServiceError(503, {"verdict": "undecided", "error": f"undecided: {e}"}) from None
        if loop.time() - start > limit:  # finished, but late: the limit holds all the same
            raise undecided
        return result

    async def record(self, proofs: list[tuple[bl.ProvedClaim, dict[str, Any]]]) -> None:
        """Append answered claims to the proof log (when there is one) before answering."""
        log = self.log
        if log is None or not proofs:
            return

        def write() -> None:
            for p, context in proofs:
                append_proved(log, p, **context)

        await asyncio.get_running_loop().run_in_executor(self.writer, write)

    def prove(
        self, q: bl.ClaimQuestion, certificate: bool
    ) -> tuple[bl.ProvedClaim, dict[str, Any]]:
        start = time.perf_counter()
        p = bl.prove(q, conflict_limit=self.config.conflict_limit)
        micros = round((time.perf_counter() - start) * 1e6)
        verified = bl.verify(p)
        cert = to_file_model(p.certificate).model_dump(mode="json") if certificate else None
        return p, claim_json(p, verified=verified, certificate=cert, micros=micros)


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise _bad(400, "the body is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise _bad(400, f"not JSON: {e.msg} at column {e.colno}") from None


def _question(obj: Any, where: str = "") -> bl.ClaimQuestion:
    try:
        return bl.ClaimQuestion.from_json(obj)
    except ValueError as e:
        raise _bad(422, f"{where}{e}") from None


def _validation_message(e: ValidationError, prefix: str = "") -> str:
    return str(invalid(e, prefix))


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
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "The body is not JSON."},
    413: {"description": "The body is over 1 MiB."},
    422: {"description": "Not a valid question (the command line's message)."},
    503: {"description": "Undecided within the time limit: no verdict."},
}


def create_app(config: ServiceConfig | None = None) -> FastAPI:
    """The application; ``config`` defaults to :class:`ServiceConfig` ()."""
    cfg = config or ServiceConfig()
    state: dict[str, Adjudicator] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        state["judge"] = Adjudicator(cfg)
        if cfg.dedicated:
            tune_for_serving()
        try:
            yield
        finally:
            state.pop("judge").close()

    app = FastAPI(
        title="battlejudge",
        summary="Certified Battle Line flag claims: proofs anyone can check.",
        version="1",
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimit, limit=MAX_BODY)

    def judge() -> Adjudicator:
        return state["judge"]

    async def answer(handler: Callable[[], Awaitable[Any]]) -> Response:
        try:
            return _json_response(200, await handler())
        except ServiceError as e:
            return _json_response(e.status, e.body)

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
            q = _question(await _body(request))
            p, out = await judge().run(lambda: judge().prove(q, certificate))
            await judge().record([(p, {})])
            return out

        return await answer(handle)

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
        gets ``{"index", "error"}``, one past the conflict limit ``{"index", "verdict":
        "undecided"}``, and the others are still answered."""

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
            parsed: list[bl.ClaimQuestion | str] = []
            for item in items:
                try:
                    parsed.append(bl.ClaimQuestion.from_json(item))
                except ValueError as e:
                    parsed.append(str(e))

            def work() -> list[tuple[bl.ProvedClaim | None, dict[str, Any]]]:
                out: list[tuple[bl.ProvedClaim | None, dict[str, Any]]] = []
                for i, q in enumerate(parsed):
                    if isinstance(q, str):
                        out.append((None, {"index": i, "error": q}))
                        continue
                    try:
                        p, result = judge().prove(q, certificate)
                    except UndecidedError:
                        out.append((None, {"index": i, "verdict": "undecided"}))
                        continue
                    out.append((p, {"index": i, **result}))
                return out

            answers = await judge().run(work)
            await judge().record([(p, {}) for p, _ in answers if p is not None])
            return {"results": [r for _, r in answers]}

        return await answer(handle)

    @app.post(
        "/v1/verify",
        openapi_extra=_schema({"$ref": "#/components/schemas/CertificateFile"}),
        responses=_ERRORS,
        summary="Check a certificate",
    )
    async def verify(request: Request, deep: bool = False) -> Response:
        """A certificate file's JSON -> ``{"verified": true, "verdict", "deep"}``, or
        ``{"verified": false, "reason"}`` when a check fails (as ``battlejudge verify
        --json``)."""

        async def handle() -> Any:
            body = await _body(request)
            try:
                cert_file = CertificateFile.model_validate(body)
            except ValidationError as e:
                raise _bad(422, "not a battlejudge certificate: " + _validation_message(e)) from e

            def work() -> dict[str, Any]:
                try:
                    cert = from_file_model(cert_file)
                    bl.verify(cert, deep=deep)
                except VerificationError as e:
                    return {"verified": False, "reason": str(e)}
                return {"verified": True, "verdict": cert.verdict, "deep": deep}

            return await judge().run(work)

        return await answer(handle)

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
            body = await _body(request)
            if not isinstance(body, dict):
                raise _bad(422, 'the body must be {"position": ..., "flag": N, "player": ...}')
            extra = sorted(set(body) - {"position", "flag", "player"})
            if extra:
                raise _bad(422, f"unknown key {extra[0]!r}")
            flag, player = body.get("flag"), body.get("player")
            if type(flag) is not int or not 1 <= flag <= 9:
                raise _bad(422, f"flag must be a number 1-9, got {json.dumps(flag)}")
            if player not in ("north", "south"):
                raise _bad(422, f"player must be north or south, got {json.dumps(player)}")
            try:
                pos = PositionFile.model_validate(body.get("position"))
                table = to_state(pos)
            except ValidationError as e:
                raise _bad(422, _validation_message(e, "position")) from e
            except ValueError as e:
                raise _bad(422, f"position: {e}") from None
            f = table.flags[flag - 1]
            if f.claimed_by >= 0:
                holder = ("north", "south")[f.claimed_by]
                raise _bad(422, f"flag {flag} is already claimed by {holder}")
            try:
                q = table.claim_question(flag - 1, ("north", "south").index(player))
            except ValueError as e:
                raise _bad(422, str(e)) from None
            p, out = await judge().run(lambda: judge().prove(q, certificate))
            context = {"turn": table.turn, "player": player, "flag": flag}
            await judge().record([(p, context)])
            return out

        return await answer(handle)

    _add_file_schemas(app)
    return app


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


def app_from_env() -> FastAPI:
    """The application configured from ``BATTLEJUDGE_SERVICE_CONFIG`` (for worker
    processes started by uvicorn)."""
    return create_app(ServiceConfig.from_env())


# -- running ------------------------------------------------------------------------------
def tune_for_serving() -> None:
    """Settings for a process that does nothing but serve (``battlejudge serve``, once
    the app has started; not applied when the app is embedded elsewhere). The solver
    thread runs Python most of the time: at the default 5 ms switch interval the event
    loop would wait that long for the GIL to read each request. Long-lived objects (the
    app, the solver caches) are frozen out of garbage collection and collections made
    rarer, which shortens the latency tail."""
    sys.setswitchinterval(0.0005)
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


def _listener(host: str, port: int, reuse_port: bool) -> socket.socket:
    """A listening TCP socket on ``host:port``; with ``reuse_port`` several may share it."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _serve_on(config: ServiceConfig, host: str, port: int, access_log: bool) -> None:
    import signal

    import uvicorn

    for s in (signal.SIGTERM, signal.SIGINT):  # the parent's handlers are not ours
        signal.signal(s, signal.SIG_DFL)

    sock = _listener(host, port, reuse_port=True)
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), access_log=access_log, log_level="warning")
    )
    server.run(sockets=[sock])


def serve_workers(
    config: ServiceConfig, host: str, port: int, workers: int, access_log: bool = False
) -> None:
    """Serve with ``workers`` processes, each listening on its own socket bound to the same
    port (``SO_REUSEPORT``), so the kernel spreads connections evenly over them. (With one
    shared socket, the first worker to wake accepts a whole burst of connections and the
    others idle: half the throughput and a long latency tail.) Returns when every worker
    has stopped; SIGTERM or SIGINT stops them all."""
    import multiprocessing
    import signal

    # fork: Linux only (see can_reuse_port), and no resource-tracker process left behind
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=_serve_on, args=(config, host, port, access_log), daemon=True)
        for _ in range(workers)
    ]
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for p in procs:
            if p.is_alive():
                p.terminate()

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.join()
            if not stopping:  # one worker died: stop the others rather than serve half
                stop(0, None)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
        for s, handler in previous.items():
            signal.signal(s, handler)


def can_reuse_port() -> bool:
    """Whether this system balances connections over sockets sharing a port (Linux)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
