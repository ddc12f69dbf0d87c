"""What the service's routers share: the running service (:func:`judge`, :func:`limits`), who
asks (:func:`client`), the request's JSON (:func:`read_json`), the answer as JSON with the
service's errors (:func:`answer`, ``{"error": MESSAGE}`` always) and the OpenAPI fragments of
the request bodies and error answers.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar

from fastapi import Request
from fastapi.responses import Response
from starlette.applications import Starlette

from battlejudge.apps.adjudicator import Adjudicator, ServiceError
from battlejudge.apps.limits import CLIENT_KEY, BodyAbort, ClientLimits
from battlejudge.apps.tables.room import Tables
from battlejudge.solver.errors import BattlejudgeError, InputError, UndecidedError
from battlejudge.solver.json_input import parse_json

BIG_BODY: Final = 64 * 1024
"""Bodies larger than this are parsed off the event loop."""
T = TypeVar("T")
_logger = logging.getLogger(__name__)


# -- the running service --------------------------------------------------------------------
def running(app: Starlette) -> Adjudicator:
    """The :class:`Adjudicator` of the service ``app`` runs (KeyError outside the app's
    lifespan): :func:`battlejudge.apps.service.create_app` keeps it in ``app.state``."""
    service: dict[str, Adjudicator] = app.state.running
    return service["judge"]


def running_tables(app: Starlette) -> Tables | None:
    """The running service's tables (:class:`~battlejudge.apps.tables.room.Tables`), if it
    keeps any."""
    service: dict[str, Any] = app.state.running
    found: Tables | None = service.get("tables")
    return found


def judge(request: Request) -> Adjudicator:
    """The running service's :class:`Adjudicator`, which ``request`` is answered by."""
    return running(request.app)


def limits(request: Request) -> ClientLimits:
    """The service's per-client limits (the same the :class:`~battlejudge.apps.limits.Guard`
    charges every request to)."""
    found: ClientLimits = request.app.state.limits
    return found


def client(request: Request) -> str:
    """Who asks, for the fair queue and the limits: the API key's name, or the address
    without keys."""
    name: str = request.scope.get(CLIENT_KEY, "local")
    return name


# -- answers ----------------------------------------------------------------------------------
def bad(status: int, message: str) -> ServiceError:
    """The answer ``status`` with ``{"error": message}``."""
    return ServiceError(status, {"error": message})


def undecided(e: BattlejudgeError) -> ServiceError:
    """503 ``{"verdict": "undecided", "error"}``: a limit ran out, never a verdict."""
    return ServiceError(503, {"verdict": "undecided", "error": f"undecided: {e}"})


def json_response(status: int, body: Any) -> Response:
    """``body`` as the JSON answer ``status``."""
    return Response(json.dumps(body).encode(), status, media_type="application/json")


async def read_json(request: Request) -> Any:
    """The request's JSON within the input limits (nesting, integer size), or 400 naming
    the JSON path. Large bodies are parsed off the event loop."""
    raw = await request.body()
    try:
        if len(raw) > BIG_BODY:
            return await asyncio.to_thread(parse_json, raw, "body")
        return parse_json(raw, "body")
    except InputError as e:
        raise bad(400, str(e)) from None


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
        return json_response(e.status, e.body)
    except UndecidedError as e:
        return json_response(503, undecided(e).body)
    except BattlejudgeError as e:  # a worker that died: no verdict, and not the client's fault
        return json_response(503, undecided(e).body)
    except BodyAbort:
        raise  # the Guard answers it
    except Exception as e:  # a bug: still JSON, and logged with its traceback
        _logger.exception("internal error on %s", request.url.path)
        return json_response(500, {"error": f"internal error: {type(e).__name__}"})
    if out is None:  # the client left: nobody to answer
        return Response(status_code=499)
    if isinstance(out, Response):
        return out
    return json_response(200, out)


# -- OpenAPI ----------------------------------------------------------------------------------
def request_schema(model: Any) -> dict[str, Any]:
    """The ``openapi_extra`` of a route whose JSON body is ``model`` (a JSON schema): the
    routes read their bodies themselves, so FastAPI cannot infer it."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": model}},
        }
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
ERRORS: dict[int | str, dict[str, Any]] = {
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
"""The error answers every route of the API may give, for its OpenAPI ``responses``."""
