"""Large synthetic proof logs for measuring the audit (``build_synthetic_log``).

Every record is the same signed claim, an invalid one whose certificate is a small
witness, at seq 0, 1, 2...: only ``seq``, ``prev``, ``sig`` and ``time`` change. The line
is put together from pieces of one encoded record rather than encoded anew each time, so
a million records are written in about the time their signatures take; each line is
exactly what :func:`~battlejudge.proofs.log.encode_record` makes of its record (the tests
check it), and the log ends with its signed checkpoint, so it audits clean. Its tiles
(``LOG.tiles``: :mod:`battlejudge.proofs.tiles`) are written as the records go by, as a
:class:`~battlejudge.proofs.log.ProofLog` writes them, so a writer or ``battlejudge serve``
opens the log from its tiles and its last records, without reading the whole log.
"""

from __future__ import annotations

import base64
import secrets
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.proofs.checkpoint import Checkpoint, origin_for
from battlejudge.proofs.log import (
    EPOCH,
    GENESIS,
    checkpoint_path,
    claim_record,
    encode_record,
    sha256_hex,
    tiles_path,
)
from battlejudge.proofs.merkle import leaf_hash
from battlejudge.proofs.tiles import DirTiles, TileState
from battlejudge.solver import battleline as bl

__all__ = ["build_synthetic_log", "synthetic_claim"]

_PREV = "f" * 64  # placeholders, each found once in the encoded record
_SEQ = 918_273_645_546_372_819
_TIME = "2000-01-01T00:00:00.000Z"
START = datetime(2026, 1, 1, tzinfo=UTC)
"""The time of the first record; each next one is a second later."""
_FLUSH = 64
"""Completed tiles (and bundles, of some 250 kB each) held before they are written."""


def synthetic_claim() -> bl.ProvedClaim:
    """The claim every record holds: three red cards against one blue, refused (a
    witness certificate of a few hundred bytes)."""
    return bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8"))


def _time(i: int) -> str:
    stamp = (START + timedelta(seconds=i)).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def build_synthetic_log(
    path: str | Path, n: int, key: Ed25519PrivateKey | None
) -> tuple[int, bytes]:
    """Write a log of ``n`` claim records (signed with ``key`` when given) to ``path``,
    its signed checkpoint to ``path.checkpoint`` and its tiles to ``path.tiles`` (a new
    epoch, every full and partial tile and bundle, and a copy of the checkpoint),
    replacing all three; returns the size in bytes and the Merkle root. Nothing is
    fsynced: the log is for measuring, and a crash leaves it to be built again."""
    proved = synthetic_claim()
    record = claim_record(
        question=proved.question.to_json(),
        verdict=proved.verdict,
        certificate=to_file_model(proved.certificate).model_dump(mode="json"),
        game="synthetic",
        turn=1,
        player="north",
        flag=1,
        time=_TIME,
    )
    template = encode_record(record | {"seq": _SEQ, "prev": _PREV})
    # keys are sorted: ... "prev", "question", "seq", ("sig",) "time", "turn", "verdict"
    head, rest = template.split(f'"{_PREV}"'.encode())
    middle, tail = rest.split(str(_SEQ).encode())
    before_time, after_time = tail.split(f'"{_TIME}"'.encode())
    if before_time != b',"time":':
        raise AssertionError(f"unexpected record layout: {before_time!r}")
    tiles = DirTiles(tiles_path(path))
    shutil.rmtree(tiles.root, ignore_errors=True)  # a log started again gets a new epoch
    tiles.write({EPOCH: secrets.token_hex(16).encode("ascii")})
    state = TileState()
    done: dict[str, bytes] = {}
    prev = GENESIS
    size = 0
    sign = key.sign if key is not None else None
    with open(path, "wb", buffering=1 << 20) as f:
        for seq in range(n):
            time = f'"{_time(seq)}"'.encode()
            start = b"".join((head, b'"', prev.encode(), b'"', middle, str(seq).encode()))
            line = b"".join((start, before_time, time, after_time))
            if sign is not None:
                sig = base64.b64encode(sign(line))
                line = b"".join((start, b',"sig":"', sig, b'"', before_time, time, after_time))
            f.write(line + b"\n")
            size += len(line) + 1
            closed = state.append(leaf_hash(line), line)
            if closed:
                done.update(closed)
                if len(done) >= _FLUSH:
                    tiles.write(done)
                    done = {}
            prev = sha256_hex(line)
    tiles.write(done | state.partial())
    root = state.root()
    note = Checkpoint(origin_for(key), n, root, _time(n)).sign(key)
    checkpoint_path(path).write_text(note, encoding="utf-8")
    tiles.write({"checkpoint": note.encode("utf-8")})
    return size, root
