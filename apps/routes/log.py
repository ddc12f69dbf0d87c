"""The proof log's routes: C2SP tlog-tiles at the root (``/checkpoint``,
``/tile/<L>/<N>[.p/<W>]``, ``/tile/entries/<N>[.p/<W>]``) and the service's own
``/v1/log/checkpoint`` and ``/v1/log/proof/SEQ``, every one answered from the checkpoint
and a few tiles (:class:`~battlejudge.proofs.logview.LogView`), never by reading the log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any, Final, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import Response

from battlejudge.apps.adjudicator import Adjudicator, ServiceError
from battlejudge.apps.routes.common import ERRORS, bad, json_response, judge
from battlejudge.proofs.checkpoint import CheckpointError
from battlejudge.proofs.store import StoreError
from battlejudge.proofs.tiles import TileError, parse_tile_path
from battlejudge.solver.errors import InputError

IMMUTABLE: Final = "public, max-age=31536000, immutable"
"""Cache-Control of a tile: it never changes (c2sp.org/tlog-tiles)."""
T = TypeVar("T")

router = APIRouter()


def _view(j: Adjudicator) -> Any:
    """The service's view of its proof log; 404 when it keeps none."""
    v = j.view
    if v is None:
        raise bad(404, "this service keeps no proof log")
    return v


async def _read(j: Adjudicator, work: Callable[[], T]) -> T:
    """``work()`` off the event loop; 503 naming what went wrong when the log cannot be
    read (never its path)."""
    try:
        return await asyncio.to_thread(work)
    except StoreError as e:
        raise bad(503, f"the proof log cannot be read: {e}") from None
    except OSError as e:
        raise bad(503, f"the proof log cannot be read: {e.strerror or e}") from None
    except CheckpointError as e:  # a damaged checkpoint file: named, never its path
        where = j.view.name if j.view is not None else ""
        message = str(e).replace(where, "the proof log") if where else str(e)
        raise bad(503, f"the proof log cannot be read: {message}") from None


async def _checkpoint(j: Adjudicator) -> Response:
    """The latest checkpoint as text/plain, not cached; 404 before the first."""
    try:
        v = _view(j)
        note = await _read(j, v.checkpoint)
    except ServiceError as e:
        return json_response(e.status, e.body)
    if note is None:
        return json_response(404, {"error": "the proof log has no checkpoint yet"})
    return Response(
        note,
        200,
        media_type="text/plain; charset=utf-8",
        headers={"Cache-Control": "no-cache"},
    )


@router.get("/checkpoint", responses=ERRORS, summary="The latest checkpoint (tlog-tiles)")
async def tlog_checkpoint(request: Request) -> Response:
    """The proof log's latest signed checkpoint, a C2SP signed note with its witnesses'
    cosignatures (text/plain; not cached beyond a few seconds)."""
    return await _checkpoint(judge(request))


@router.get("/tile/{path:path}", responses=ERRORS, summary="A tile or entry bundle")
async def tlog_tile(request: Request, path: str) -> Response:
    """A tile of the proof log's Merkle tree (``/tile/<L>/<N>[.p/<W>]``: 256 hashes, or
    W of a partial tile) or an entry bundle (``/tile/entries/<N>[.p/<W>]``: the
    records' lines, each behind its 16-bit length), as C2SP tlog-tiles names them;
    immutable, so cached for a year."""
    j = judge(request)
    try:
        parse_tile_path(f"tile/{path}")
        v = _view(j)
        data = await _read(j, lambda: v.tile(f"tile/{path}"))
    except TileError as e:
        return json_response(404, {"error": str(e)})
    except ServiceError as e:
        return json_response(e.status, e.body)
    if data is None:
        return json_response(404, {"error": f"no tile {path} in this log"})
    return Response(
        data,
        200,
        media_type="application/octet-stream",
        headers={"Cache-Control": IMMUTABLE},
    )


@router.get("/v1/log/checkpoint", responses=ERRORS, summary="The proof log's checkpoint")
async def log_checkpoint(request: Request) -> Response:
    """The latest signed checkpoint of the proof log: a C2SP signed note (text/plain):
    origin, tree size, Merkle root, time, signature (docs/checkpoints.md)."""
    return await _checkpoint(judge(request))


@router.get("/v1/log/proof/{seq}", responses=ERRORS, summary="An inclusion proof")
async def log_proof(request: Request, seq: int) -> Response:
    """The proof that record ``seq`` (the ``log_seq`` of an answer) is in the proof
    log, as ``battlejudge log prove``: the record, its index, the audit path and the
    signed checkpoint, computed from a few tiles; check it with ``battlejudge log
    verify-inclusion``. A record committed but not yet in a checkpoint is answered
    once the next checkpoint is out (within the checkpoint interval)."""
    loop = asyncio.get_running_loop()
    j = judge(request)
    deadline = loop.time() + j.config.checkpoint_interval + 2.0
    while True:
        try:
            v = _view(j)
            proof = await _read(j, partial(v.inclusion_proof, seq))
        except ServiceError as e:
            return json_response(e.status, e.body)
        except InputError as e:  # no such record (or a tile missing: named, no path)
            committed = j.log.next_seq if j.log is not None else 0
            if seq < committed and loop.time() < deadline:
                await asyncio.sleep(0.02)  # in the log, not yet in a checkpoint
                continue
            return json_response(404, {"error": str(e).replace(str(v.name), "the log")})
        return json_response(200, proof)
