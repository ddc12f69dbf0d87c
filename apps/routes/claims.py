"""The claim routes: ``POST /v1/claims`` (a flag question) and ``POST /v1/claims:batch``
(many); :mod:`.positions` asks a claim of a table position the same way.

Each question is a job of the client that asked, in the fair queue, decided, proved and
verified in a worker (:mod:`battlejudge.apps.claim_work`); with a proof log every answered
claim is appended before the answer is sent, and the answer carries its record's
``log_seq``. A single claim, from a question or a position, takes one path
(:func:`one_claim`); only the worker's reading of the body differs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import Response

from battlejudge.apps import claim_work
from battlejudge.apps.adjudicator import Adjudicator
from battlejudge.apps.routes.common import (
    ERRORS,
    answer,
    bad,
    client,
    judge,
    limits,
    read_json,
    request_schema,
)
from battlejudge.proofs.log import PreparedRecord
from battlejudge.solver.errors import BattlejudgeError, UndecidedError

MAX_BATCH: Final = 256
"""Questions one batch may carry."""
QUESTION_SCHEMA: dict[str, Any] = {
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
"""The JSON schema of a flag question (the JSON of ``claims check`` lines)."""
_BATCH_SCHEMA: Final = {
    "type": "object",
    "required": ["questions"],
    "properties": {
        "questions": {"type": "array", "maxItems": MAX_BATCH, "items": QUESTION_SCHEMA},
    },
}
router = APIRouter()


@router.post(
    "/v1/claims",
    openapi_extra=request_schema(QUESTION_SCHEMA),
    responses=ERRORS,
    summary="Decide one flag claim, certified",
)
async def claims(request: Request, certificate: bool = False) -> Response:
    """A flag question -> the certified verdict (the JSON of ``battlejudge claim
    --json``): a valid claim with its minimal blocking set, explanation and verified
    DRAT proof; an invalid one with the completion that beats it."""
    return await one_claim(request, claim_work.answer_claim, certificate)


@router.post(
    "/v1/claims:batch",
    openapi_extra=request_schema(_BATCH_SCHEMA),
    responses=ERRORS,
    summary="Decide many flag claims",
)
async def claims_batch(request: Request, certificate: bool = False) -> Response:
    """``{"questions": [...]}`` -> ``{"results": [...]}`` in order; a bad question
    gets ``{"index", "error"}``, one past a limit ``{"index", "verdict":
    "undecided"}``, and the others are still answered. Each question is a job of
    its own in the fair queue, and counts as one question for the rate limit."""

    async def handle() -> Any:
        items = _batch_questions(await read_json(request))
        who = client(request)
        limits(request).charge(who, len(items) - 1)
        j = judge(request)
        answers = await asyncio.gather(
            *(_batch_item(j, who, i, item, certificate) for i, item in enumerate(items))
        )
        logged = [r for p, r in answers if p is not None]
        seqs = await j.record([(p, {}) for p, _ in answers if p is not None])
        for r, seq in zip(logged, seqs, strict=True):
            if seq is not None:
                r["log_seq"] = seq
        return {"results": [r for _, r in answers]}

    return await answer(request, handle, watch=True)


async def one_claim(
    request: Request, work: Callable[..., claim_work.Proved], certificate: bool
) -> Response:
    """One claim: ``work`` (:func:`~battlejudge.apps.claim_work.answer_claim` or
    :func:`~battlejudge.apps.claim_work.answer_position`) reads the body and decides it in
    a worker; the proved claim is logged with the context ``work`` gives, its ``log_seq``
    added to the answer. Cancelled if the client leaves."""

    async def handle() -> Any:
        body = await request.body()
        j = judge(request)
        status, data, p, context = await j.job(
            client(request),
            work,
            body,
            certificate,
            j.config.conflict_limit,
            j.keeps_log,
            what="deciding the claim",
        )
        if p is not None:
            data = with_seq(data, (await j.record([(p, context)]))[0])
        return Response(data, status, media_type="application/json")

    return await answer(request, handle, watch=True)


def _batch_questions(body: Any) -> list[Any]:
    """The questions of a batch's body; 422 when it is not ``{"questions": [...]}`` of at
    most :data:`MAX_BATCH`."""
    if not isinstance(body, dict) or not isinstance(body.get("questions"), list):
        raise bad(422, 'the body must be {"questions": [...]}')
    if set(body) != {"questions"}:
        extra = sorted(set(body) - {"questions"})[0]
        raise bad(422, f"unknown key {extra!r} in the batch")
    items: list[Any] = body["questions"]
    if len(items) > MAX_BATCH:
        raise bad(422, f"questions: at most {MAX_BATCH} per batch, got {len(items)}")
    return items


async def _batch_item(
    j: Adjudicator, who: str, i: int, item: Any, certificate: bool
) -> tuple[PreparedRecord | None, dict[str, Any]]:
    """Question ``i`` of a batch, a job of its own: its log record (None when not logged)
    and its answer, ``{"index", "verdict": "undecided"}`` past a limit."""
    try:
        result, p = await j.job(
            who,
            claim_work.answer_item,
            i,
            item,
            certificate,
            j.config.conflict_limit,
            j.keeps_log,
            what=f"deciding question {i}",
        )
    except UndecidedError:
        return None, {"index": i, "verdict": "undecided"}
    except BattlejudgeError as e:
        return None, {"index": i, "verdict": "undecided", "error": str(e)}
    return p, result


def with_seq(data: bytes, seq: int | None) -> bytes:
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
