"""The position route: ``POST /v1/positions/claim``, a claim asked of a table position
(``{"position", "flag", "player"}``), decided as ``POST /v1/claims`` decides a question
(:func:`~battlejudge.apps.routes.claims.one_claim`), the question derived from the table in
the worker (:func:`battlejudge.apps.claim_work.answer_position`)."""

from __future__ import annotations

from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import Response

from battlejudge.apps import claim_work
from battlejudge.apps.routes.claims import one_claim
from battlejudge.apps.routes.common import ERRORS, request_schema

_SCHEMA: Final = {
    "type": "object",
    "required": ["position", "flag", "player"],
    "properties": {
        "position": {"$ref": "#/components/schemas/PositionFile"},
        "flag": {"type": "integer", "minimum": 1, "maximum": 9},
        "player": {"enum": ["north", "south"]},
    },
}

router = APIRouter()


@router.post(
    "/v1/positions/claim",
    openapi_extra=request_schema(_SCHEMA),
    responses=ERRORS,
    summary="Decide a claim in a table position",
)
async def position_claim(request: Request, certificate: bool = False) -> Response:
    """``{"position": POSITION, "flag": N, "player": "north"|"south"}`` -> the claim
    JSON, the question derived from the table as ``battlejudge claim POSITION``."""
    return await one_claim(request, claim_work.answer_position, certificate)
