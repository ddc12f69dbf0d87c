"""The certificate route: ``POST /v1/verify``, a certificate file checked as ``battlejudge
verify --json`` checks it, in a worker of the fair queue
(:func:`battlejudge.apps.claim_work.answer_verify`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from battlejudge.apps import claim_work
from battlejudge.apps.routes.common import ERRORS, answer, client, judge, request_schema

router = APIRouter()


@router.post(
    "/v1/verify",
    openapi_extra=request_schema({"$ref": "#/components/schemas/CertificateFile"}),
    responses=ERRORS,
    summary="Check a certificate",
)
async def verify(request: Request, deep: bool = False) -> Response:
    """A certificate file's JSON -> ``{"verified": true, "verdict", "deep"}``, or
    ``{"verified": false, "reason"}`` when a check fails (as ``battlejudge verify
    --json``). A proof out of proportion to its CNF is refused before any checking
    (``battlejudge verify`` states the rule)."""

    async def handle() -> Any:
        body = await request.body()
        status, data = await judge(request).job(
            client(request),
            claim_work.answer_verify,
            body,
            deep,
            what="checking the certificate",
        )
        return Response(data, status, media_type="application/json")

    return await answer(request, handle, watch=True)
