"""The witness over HTTP (c2sp.org/tlog-witness): a small FastAPI app in front of a
:class:`~battlejudge.proofs.witness.Witness`.

- ``POST /add-checkpoint``: the body is an add-checkpoint request (``old N``, proof lines,
  an empty line, the signed checkpoint). 200: the cosignature lines (``text/plain``), each
  ending in a newline. 409: the body is the size of the latest checkpoint the witness
  cosigned for the log and a newline, with ``Content-Type: text/x.tlog.size`` (an old size
  other than that one, or a fork at that size). Other refusals are ``text/plain``, one
  line: 400 a malformed request or an old size above the checkpoint's, 403 no valid
  signature of the log, 404 a log the witness does not witness, 413 a body over
  :data:`~battlejudge.proofs.witness.MAX_BODY` bytes, 422 a consistency proof that does
  not verify, 500 the witness's state cannot be read or written (it cosigns nothing then).
- ``GET /healthz``: ``{"status": "ok"}``.

No request is authenticated: the log's signature on the checkpoint is the only check the
spec asks for. The witness's file work runs in a thread, off the event loop.
"""

from __future__ import annotations

import logging
from typing import Final

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from battlejudge.proofs.witness import (
    MAX_BODY,
    Witness,
    WitnessRefusal,
    WitnessStateError,
)

__all__ = ["SIZE_TYPE", "create_witness_app", "serve_witness"]

log = logging.getLogger(__name__)

SIZE_TYPE: Final = "text/x.tlog.size"
"""The content type of a 409 answer's body (c2sp.org/tlog-witness)."""
TEXT: Final = "text/plain; charset=utf-8"


def _text(status: int, message: str) -> Response:
    """A one-line plain-text answer (control characters replaced)."""
    line = "".join(c if c >= " " else "?" for c in message)
    return PlainTextResponse(line + "\n", status_code=status, media_type=TEXT)


async def _read_body(request: Request, limit: int) -> bytes | Response:
    """The body, or the 400/413 answer when Content-Length is wrong or the body is over
    ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            return _text(400, f"Content-Length {declared[:20]!r} is not a number")
        if int(declared) > limit:
            return _text(413, f"the request is over {limit} bytes")
    chunks: list[bytes] = []
    got = 0
    async for chunk in request.stream():
        got += len(chunk)
        if got > limit:
            return _text(413, f"the request is over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def create_witness_app(witness: Witness, max_body: int = MAX_BODY) -> FastAPI:
    """The witness's HTTP app: ``POST /add-checkpoint`` and ``GET /healthz`` with the
    statuses and content types of c2sp.org/tlog-witness (see the module's docstring);
    bodies over ``max_body`` bytes get 413. Every error is one line of text, never a
    traceback."""
    app = FastAPI(
        title="battlejudge witness",
        description="Cosigns proof-log checkpoints (c2sp.org/tlog-witness).",
        docs_url=None,
        redoc_url=None,
    )

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _text(exc.status_code, str(exc.detail))

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: ``{"status": "ok"}``."""
        return {"status": "ok"}

    @app.post("/add-checkpoint", response_class=PlainTextResponse)
    async def add_checkpoint(request: Request) -> Response:
        """Cosign a checkpoint that is consistent with the latest one this witness cosigned
        for its log (c2sp.org/tlog-witness, add-checkpoint)."""
        body = await _read_body(request, max_body)
        if isinstance(body, Response):
            return body
        try:
            lines = await run_in_threadpool(witness.add_checkpoint, body)
        except WitnessRefusal as e:
            if e.status != 400:
                log.info("refused (%d): %s", e.status, e)
            if e.status == 409 and e.latest is not None:
                # exactly this type, without the charset Starlette adds to text/* types
                return Response(
                    f"{e.latest}\n".encode(), status_code=409, headers={"Content-Type": SIZE_TYPE}
                )
            return _text(e.status, str(e))
        except WitnessStateError as e:
            log.error("%s", e)
            return _text(500, f"the witness cannot cosign now: {e}")
        return Response(lines, status_code=200, media_type=TEXT)

    return app


def serve_witness(witness: Witness, host: str, port: int, access_log: bool = False) -> None:
    """Serve the witness on ``host:port`` with uvicorn until SIGINT or SIGTERM."""
    import uvicorn

    config = uvicorn.Config(
        create_witness_app(witness),
        host=host,
        port=port,
        access_log=access_log,
        log_level="warning",
        timeout_keep_alive=5,
        limit_concurrency=256,
        h11_max_incomplete_event_size=16 * 1024,
    )
    uvicorn.Server(config).run()
