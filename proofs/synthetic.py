"""Large synthetic proof logs for measuring the audit (``build_synthetic_log``).

Every record is the same signed claim, an invalid one whose certificate is a small
witness, at seq 0, 1, 2...: only ``seq``, ``prev``, ``sig`` and ``time`` change. The line
is put together from pieces of one encoded record rather than encoded anew each time, so
a million records are written in about the time their signatures take; each line is
exactly what :func:`~battlejudge.proofs.log.encode_record` makes of its record (the tests
check it), and the log ends with its signed checkpoint, so it audits clean.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.audit import MerkleRange
from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.proofs.checkpoint import Checkpoint, origin_for
from battlejudge.proofs.log import GENESIS, checkpoint_path, claim_record, encode_record, sha256_hex
from battlejudge.proofs.merkle import leaf_hash
from battlejudge.solver import battleline as bl

__all__ = ["build_synthetic_log", "synthetic_claim"]

_PREV = "f" * 64  # placeholders, each found once in the encoded record
_SEQ = 918_273_645_546_372_819
_TIME = "2000-01-01T00:00:00.000Z"
START = datetime(2026, 1, 1, tzinfo=UTC)
"""The time of the first record; each next one is a second later."""


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
    """Write a log of ``n`` claim records (signed with ``key`` when given) to ``path``
    and its signed checkpoint to ``path.checkpoint``, replacing both; returns the size
    in bytes and the Merkle root."""
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
    leaves = MerkleRange()
    prev = GENESIS
    size = 0
    with open(path, "wb", buffering=1 << 20) as f:
        for seq in range(n):
            time = f'"{_time(seq)}"'.encode()
            start = b"".join((head, b'"', prev.encode(), b'"', middle, str(seq).encode()))
            line = b"".join((start, before_time, time, after_time))
            if key is not None:
                sig = base64.b64encode(key.sign(line))
                line = b"".join((start, b',"sig":"', sig, b'"', before_time, time, after_time))
            f.write(line + b"\n")
            size += len(line) + 1
            leaves.append(leaf_hash(line))
            prev = sha256_hex(line)
    root = leaves.root()
    note = Checkpoint(origin_for(key), n, root, _time(n)).sign(key)
    checkpoint_path(path).write_text(note, encoding="utf-8")
    return size, root
