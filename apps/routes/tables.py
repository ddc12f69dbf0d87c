"""The tables' API (:mod:`battlejudge.apps.tables`), one contract for the pages, scripts
and other clients:

- ``POST /v1/tables`` ``{"game", "north", "south", "options", "clock", "seed"}`` -> 201
  ``{"table": ID, "seats": {"north": {"kind", "token", "url"}, "south": {...}},
  "spectate": URL}`` (a token and the page's URL for each human seat, null for a bot's);
- ``GET /v1/tables``: the tables changed most recently (the lobby);
- ``GET /v1/tables/{ID}``: the view of the seat whose token comes in the ``X-Seat-Token``
  header or the ``token`` parameter, or a spectator's without one;
- ``POST /v1/tables/{ID}/actions`` ``{"action": A}``: 200 and the new view; 409 not the
  seat's turn, or the game over; 422 an action not legal, naming why (a refused claim
  with its witness in ``claim``);
- ``POST /v1/tables/{ID}/resign``: the seat resigns;
- ``GET /v1/tables/{ID}/events``: Server-Sent Events, the watcher's view after every change;
- ``GET /v1/tables/{ID}/record``: the finished game's ``.blg`` record (409 before);
- ``GET /v1/tables/{ID}/claims/{N}/certificate``: the certificate of the table's N-th claim.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from battlejudge.apps.adjudicator import ServiceError
from battlejudge.apps.routes.common import (
    ERRORS,
    answer,
    bad,
    client,
    json_response,
    read_json,
    request_schema,
    running_tables,
)
from battlejudge.apps.tables.room import SEATS, Tables

router = APIRouter(tags=["tables"])

_NEW_TABLE = {
    "type": "object",
    "properties": {
        "game": {"type": "string", "enum": ["battleline", "nine-circles"], "default": "battleline"},
        "north": {
            "type": "string",
            "example": "human",
            "description": "human or bot:heuristic, bot:search, bot:expert",
        },
        "south": {"type": "string", "example": "bot:expert"},
        "options": {
            "type": "object",
            "description": "theme, deck (full or troops), claim_timing, "
            "environment_removable, stalemate",
        },
        "clock": {
            "type": "object",
            "properties": {"minutes": {"type": "number"}, "increment": {"type": "number"}},
        },
        "seed": {"type": "integer"},
    },
}
_ACTION = {
    "type": "object",
    "required": ["action"],
    "properties": {
        "action": {"type": "string", "example": "R7@3"},
        "version": {"type": "integer", "description": "409 unless the table is at it"},
    },
}


def _tables(request: Request) -> Tables:
    found = running_tables(request.app)
    if found is None:
        raise bad(404, "this service keeps no tables")
    return found


def token_of(request: Request) -> str | None:
    """The seat token of the request: the ``X-Seat-Token`` header, else the ``token``
    query parameter (None: a spectator)."""
    return request.headers.get("x-seat-token") or request.query_params.get("token") or None


def seat_url(request: Request, table_id: str, token: str | None) -> str:
    """The page of a seat (or of a spectator, for no token)."""
    base = str(request.base_url).rstrip("/")
    return f"{base}/tables/{table_id}" + (f"?token={token}" if token else "")


@router.post(
    "/v1/tables",
    status_code=201,
    openapi_extra=request_schema(_NEW_TABLE),
    responses=ERRORS,
    summary="Open a table",
)
async def new_table(request: Request) -> Response:
    """Open a table between two of: a person (``human``) and our bots (``bot:NAME``)."""

    async def handle() -> Any:
        made = await _tables(request).create(await read_json(request), client(request))
        table_id = made.table_id
        seats = {}
        for seat in SEATS:
            token = made.tokens[seat]
            seats[seat] = {
                "kind": made.seats[seat],
                "token": token,
                "url": None if token is None else seat_url(request, table_id, token),
            }
        body = {"table": table_id, "seats": seats, "spectate": seat_url(request, table_id, None)}
        return json_response(201, body)

    return await answer(request, handle)


@router.get("/v1/tables", responses=ERRORS, summary="The lobby: recent tables")
async def lobby(request: Request) -> Response:
    """The tables changed most recently, newest first (ids, seats, turn, result)."""

    async def handle() -> Any:
        return {"tables": await _tables(request).recent()}

    return await answer(request, handle)


@router.get("/v1/tables/{table_id}", responses=ERRORS, summary="A seat's view of a table")
async def view(request: Request, table_id: str) -> Response:
    """The view of the token's seat, or a spectator's (no hand) without a token."""

    async def handle() -> Any:
        return await _tables(request).view(table_id, token_of(request))

    return await answer(request, handle)


@router.post(
    "/v1/tables/{table_id}/actions",
    openapi_extra=request_schema(_ACTION),
    responses=ERRORS,
    summary="Take an action",
)
async def act(request: Request, table_id: str) -> Response:
    """The token's seat takes ``action`` (record notation, one of the view's ``legal``)."""

    async def handle() -> Any:
        body = await read_json(request)
        if not isinstance(body, dict) or "action" not in body or set(body) - {"action", "version"}:
            raise bad(
                422,
                'body must be {"action": "..."} (an action in record notation), with '
                '"version" if the action answers that version of the table',
            )
        version = body.get("version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise bad(422, f"body.version must be a whole number, got {version!r:.40}")
        status, out = await _tables(request).act(
            table_id, token_of(request), body["action"], client(request), version
        )
        return json_response(status, out)

    return await answer(request, handle)


@router.post("/v1/tables/{table_id}/resign", responses=ERRORS, summary="Resign")
async def resign(request: Request, table_id: str) -> Response:
    """The token's seat resigns; the other seat wins."""

    async def handle() -> Any:
        return await _tables(request).resign(table_id, token_of(request))

    return await answer(request, handle)


@router.get("/v1/tables/{table_id}/events", responses=ERRORS, summary="A table's live events")
async def events(request: Request, table_id: str) -> Response:
    """Server-Sent Events: ``event: table`` with the watcher's view, now and after every
    change (``id`` is the table's version)."""
    try:
        stream = await _tables(request).events(table_id, token_of(request))
    except ServiceError as e:
        return json_response(e.status, e.body)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


@router.get("/v1/tables/{table_id}/record", responses=ERRORS, summary="The game's record")
async def record(request: Request, table_id: str) -> Response:
    """The finished game's ``.blg`` record (``battlejudge replay`` judges it); 409 while
    the game goes on."""

    async def handle() -> Any:
        text = await _tables(request).record(table_id)
        return Response(
            text,
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="table-{table_id}.blg"'},
        )

    return await answer(request, handle)


@router.get(
    "/v1/tables/{table_id}/claims/{number}/certificate",
    responses=ERRORS,
    summary="A claim's certificate",
)
async def certificate(request: Request, table_id: str, number: int) -> Response:
    """The certificate file of the table's claim ``number`` (from 1, as the view lists
    them): ``battlejudge verify`` checks it."""

    async def handle() -> Any:
        data = await _tables(request).certificate(table_id, number)
        return Response(
            json.dumps(data).encode(),
            media_type="application/json",
            headers={
                "Content-Disposition": "attachment; "
                f'filename="table-{table_id}-claim-{number}.json"'
            },
        )

    return await answer(request, handle)
