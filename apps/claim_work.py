"""The claim work the service's worker processes do: proving claims (each distinct question
proved and verified once per worker, :func:`proved`) and checking certificates, for each
endpoint from the raw request body to the answer's status and JSON (module-level functions,
so they pickle).

The whole of it runs in a worker, under the job's time and memory budget: reading the
JSON within the input limits (:func:`~battlejudge.solver.json_input.parse_json`: 400
naming the JSON path), validating it (422 with the command line's message), deciding,
proving and verifying. The service's event loop then only moves bytes. Kept apart from
:mod:`battlejudge.apps.service` so that a worker imports the solver and the file
formats, not the web stack: a worker killed at its time limit is replaced in
milliseconds.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from typing import Any, Final, TypeAlias

from pydantic import ValidationError

from battlejudge.engines.battleline.answer_json import claim_json
from battlejudge.engines.battleline.position import PositionFile, to_state
from battlejudge.proofs.battleline.certificate import (
    CertificateFile,
    from_file_model,
    to_file_model,
)
from battlejudge.proofs.log import PreparedRecord, prepare_record, proved_record
from battlejudge.solver import battleline as bl
from battlejudge.solver.errors import InputError, VerificationError, invalid
from battlejudge.solver.json_input import parse_json

Answer: TypeAlias = tuple[int, bytes]
"""An HTTP status and its JSON body."""
Proved: TypeAlias = "tuple[int, bytes, PreparedRecord | None, dict[str, Any]]"
"""An answer, the claim record for the proof log (when kept, encoded here: the service's
own process only chains, signs and writes it) and the log's context."""


def _error(status: int, message: str) -> Answer:
    return status, json.dumps({"error": message}).encode()


def _read(body: bytes) -> Any:
    """The body's JSON within the input limits; :class:`InputError` naming the path."""
    return parse_json(body, "body")


PROVED_CACHE: Final = 512
"""Verified proofs a worker keeps (LRU), keyed by the question's canonical text."""
_proved: OrderedDict[str, tuple[bl.ProvedClaim, bool]] = OrderedDict()


def proved(q: bl.ClaimQuestion, conflict_limit: int | None) -> tuple[bl.ProvedClaim, bool]:
    """The proved claim of ``q`` and its verification, each done once per distinct
    question in this worker: the certificate is a pure function of the question (the same
    question always gets the same bytes), so a repeat gets the very proof that was
    proved and then checked (DRAT included) when first asked. Only a proof that passed
    :func:`~battlejudge.solver.battleline.verify` is kept; nothing is skipped for a
    question not seen before. Raises :class:`UndecidedError` past ``conflict_limit``."""
    key = q.canonical()
    hit = _proved.get(key)
    if hit is not None:
        _proved.move_to_end(key)
        return hit
    p = bl.prove(q, conflict_limit=conflict_limit)
    entry = (p, bl.verify(p))
    _proved[key] = entry
    if len(_proved) > PROVED_CACHE:
        _proved.popitem(last=False)
    return entry


_certificates: OrderedDict[str, dict[str, Any]] = OrderedDict()


def certificate_json(p: bl.ProvedClaim) -> dict[str, Any]:
    """The certificate file's JSON of a proved claim, made once per distinct question in
    this worker (as :func:`proved`: it is a pure function of the question)."""
    key = p.question.canonical()
    hit = _certificates.get(key)
    if hit is not None:
        _certificates.move_to_end(key)
        return hit
    made: dict[str, Any] = to_file_model(p.certificate).model_dump(mode="json")
    _certificates[key] = made
    if len(_certificates) > PROVED_CACHE:
        _certificates.popitem(last=False)
    return made


def prove_claim(
    q: bl.ClaimQuestion,
    certificate: bool,
    conflict_limit: int | None,
    keep_proof: bool,
    context: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], PreparedRecord | None]:
    """The certified verdict of ``q`` as ``battlejudge claim --json`` prints it (proved
    and verified, or the verified proof of the same question asked before: :func:`proved`),
    and, when ``keep_proof``, its claim record for the proof log (with ``context``: made
    here, in the worker, so the service's own process only pools and commits it). Raises
    :class:`UndecidedError` past ``conflict_limit``."""
    start = time.perf_counter()
    p, verified = proved(q, conflict_limit)
    micros = round((time.perf_counter() - start) * 1e6)
    cert = certificate_json(p) if certificate or keep_proof else None
    answer = claim_json(
        p, verified=verified, certificate=cert if certificate else None, micros=micros
    )
    if not keep_proof:
        return answer, None
    return answer, prepare_record(proved_record(p, cert, **(context or {})))


def answer_claim(
    body: bytes, certificate: bool, conflict_limit: int | None, keep_proof: bool
) -> Proved:
    """``POST /v1/claims``: 400 not JSON within the limits, 422 not a valid question,
    200 :func:`prove_claim`'s answer."""
    try:
        obj = _read(body)
    except InputError as e:
        return (*_error(400, str(e)), None, {})
    try:
        q = bl.ClaimQuestion.from_json(obj)
    except ValueError as e:
        return (*_error(422, str(e)), None, {})
    out, p = prove_claim(q, certificate, conflict_limit, keep_proof)
    return 200, json.dumps(out).encode(), p, {}


def answer_item(
    index: int, item: Any, certificate: bool, conflict_limit: int | None, keep_proof: bool
) -> tuple[dict[str, Any], PreparedRecord | None]:
    """One question of ``POST /v1/claims:batch``: ``{"index", **answer}``, or
    ``{"index", "error"}`` when it is not a valid question."""
    try:
        q = bl.ClaimQuestion.from_json(item)
    except ValueError as e:
        return {"index": index, "error": str(e)}, None
    out, p = prove_claim(q, certificate, conflict_limit, keep_proof)
    return {"index": index, **out}, p


def answer_verify(body: bytes, deep: bool) -> Answer:
    """``POST /v1/verify``: 400 not JSON within the limits, 422 not a certificate file,
    200 ``{"verified": true, "verdict", "deep"}`` or ``{"verified": false, "reason"}``.
    The proof-size rule is the first check (a padded proof is refused before any
    checking), the CNF and proof inflate no further than it allows."""
    try:
        obj = _read(body)
    except InputError as e:
        return _error(400, str(e))
    try:
        cert_file = CertificateFile.model_validate(obj)
    except ValidationError as e:
        return _error(422, f"not a battlejudge certificate: {invalid(e)}")
    try:
        cert = from_file_model(cert_file)
        bl.verify(cert, deep=deep)
    except VerificationError as e:
        out: dict[str, Any] = {"verified": False, "reason": str(e)}
    else:
        out = {"verified": True, "verdict": cert.verdict, "deep": deep}
    return 200, json.dumps(out).encode()


def answer_position(
    body: bytes, certificate: bool, conflict_limit: int | None, keep_proof: bool
) -> Proved:
    """``POST /v1/positions/claim``: ``{"position", "flag", "player"}`` -> the claim
    JSON of the question derived from the table, as ``battlejudge claim POSITION``; the
    log context names the turn, player and flag."""
    try:
        obj = _read(body)
    except InputError as e:
        return (*_error(400, str(e)), None, {})
    try:
        q, context = _position_question(obj)
    except ValueError as e:
        return (*_error(422, str(e)), None, {})
    out, p = prove_claim(q, certificate, conflict_limit, keep_proof, context)
    return 200, json.dumps(out).encode(), p, context


def _position_question(body: Any) -> tuple[bl.ClaimQuestion, dict[str, Any]]:
    if not isinstance(body, dict):
        raise InputError('the body must be {"position": ..., "flag": N, "player": ...}')
    extra = sorted(set(body) - {"position", "flag", "player"})
    if extra:
        raise InputError(f"unknown key {extra[0]!r}")
    flag, player = body.get("flag"), body.get("player")
    if type(flag) is not int or not 1 <= flag <= 9:
        raise InputError(f"flag must be a number 1-9, got {json.dumps(flag)}")
    if player not in ("north", "south"):
        raise InputError(f"player must be north or south, got {json.dumps(player)}")
    try:
        pos = PositionFile.model_validate(body.get("position"))
        table = to_state(pos)
    except ValidationError as e:
        raise invalid(e, "position") from None
    except ValueError as e:
        raise InputError(f"position: {e}") from None
    f = table.flags[flag - 1]
    if f.claimed_by >= 0:
        holder = ("north", "south")[f.claimed_by]
        raise InputError(f"flag {flag} is already claimed by {holder}")
    q = table.claim_question(flag, ("north", "south").index(player))
    return q, {"turn": table.turn, "player": player, "flag": flag}
