"""Repairing a proof log: lines that are not records are moved aside, the rest re-chained,
and the repair is itself a record of the log (``battlejudge log repair LOG``).

A malformed line (a record damaged by hand, garbage pasted in, JSON past the limits) or
a torn one stays in the log and the audit reports it every time. :func:`repair_log`
takes them out, so the log audits clean again and goes on taking appends:

1. under the log's exclusive lock (writers wait; :class:`ProofLog` follows the new file),
   every line that is not a record is written, as it was, to a file beside the log
   (``LOG.moved-SEQ``, SEQ being the repair record's seq);
2. the remaining records keep their bytes where their ``seq`` and ``prev`` are still
   right; where a removed line was a record of the chain, the records after it get new
   ``seq`` and ``prev`` (re-chained) and are signed again with ``key`` (a log with
   signed records is only repaired with a key);
3. a repair record (log format 2) closes the log: the line numbers and SHA-256 of the
   lines moved, the file they went to, the SHA-256 of the whole log before, and how
   many records were re-chained; it is signed with ``key`` when given;
4. the new log replaces the old one atomically (a crash leaves one or the other), and a
   new checkpoint (signed with ``key`` when given) replaces ``LOG.checkpoint``: records
   re-chained have new bytes, so checkpoints from before the repair no longer match and
   whoever holds one can show the log was rewritten (the repair record says how).

A repair never re-chains around other damage: if the chain shows anything but the gaps
the removed lines leave (an edit, a forgery, records missing elsewhere), the log is left
as it is and the audit's finding is the error.
"""

from __future__ import annotations

import base64
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.atomic import write_atomic
from battlejudge.proofs.audit import chain_problems
from battlejudge.proofs.checkpoint import Checkpoint, origin_for
from battlejudge.proofs.log import (
    GENESIS,
    REPAIR_FORMAT,
    LogRecord,
    Problem,
    checkpoint_path,
    encode_record,
    newer_format,
    parse_log,
    sha256_hex,
    utc_now,
)
from battlejudge.proofs.merkle import MerkleTree, leaf_hash
from battlejudge.solver.errors import InputError

__all__ = ["Repair", "repair_log"]

MOVED: tuple[str, ...] = ("malformed", "torn")
"""The kinds of line a repair moves aside: lines that are not records."""


@dataclass(frozen=True)
class Repair:
    """What a repair did: the lines moved (0-based, as they were numbered in the log),
    the file they went to, how many records were re-chained, and the repair record."""

    moved: list[Problem]
    to: Path
    rechained: int
    record: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The repair as JSON: the lines moved aside, the file they went to, how many records
        were re-chained and the sequence number of the repair's own record."""
        return {
            "moved": [p.to_json() for p in self.moved],
            "to": str(self.to),
            "rechained": self.rechained,
            "record": self.record["seq"],
        }


def _lock(path: Path) -> int:
    """An exclusive lock on the file that is the log now (another repair may have
    replaced it while we waited)."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            return fd
        os.close(fd)


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    chunks, at = [], 0
    while at < size:
        chunk = os.pread(fd, size - at, at)
        if not chunk:
            break
        chunks.append(chunk)
        at += len(chunk)
    return b"".join(chunks)


def _unexplained(records: list[LogRecord], moved: list[Problem]) -> Problem | None:
    """The first chain problem the moved lines do not explain. A moved line that was a
    record of the chain leaves a gap: records missing right after it (``deleted``), no
    more of them than lines were moved there. Anything else is other damage."""
    moved_at = {p.record for p in moved}
    gaps: dict[int, tuple[int, int]] = {}  # record index -> (moved lines before, room)
    previous: LogRecord | None = None
    for r in records:
        start = -1 if previous is None else previous.index
        lines = sum(1 for i in range(start + 1, r.index) if i in moved_at)
        missing = r.seq - (-1 if previous is None else previous.seq) - 1
        gaps[r.index] = (lines, missing)
        previous = r
    for p in chain_problems(records):
        lines, missing = gaps.get(p.record, (0, 0))
        if not (p.kind == "deleted" and 0 < missing <= lines):
            return p
    return None


def _moved_name(path: Path, seq: int) -> Path:
    name = path.with_name(f"{path.name}.moved-{seq}")
    n = 1
    while name.exists():
        n += 1
        name = path.with_name(f"{path.name}.moved-{seq}-{n}")
    return name


def repair_log(path: str | Path, key: Ed25519PrivateKey | None = None) -> Repair | None:
    """Move the lines of the log at ``path`` that are not records aside, re-chain the
    rest and append a repair record (see the module's docstring); None, with the log
    untouched, when every line is a record.

    Raises :class:`InputError` naming the record when the log cannot be repaired: it is
    not a proof log, its chain has damage the moved lines do not explain, or it has
    signed records and no ``key`` was given.
    """
    path = Path(path)
    fd = _lock(path)
    try:
        before = _read_all(fd)
        records, problems = parse_log(before, path)
        newer_format(problems, path)  # a record of a later format is not ours to move
        moved = [p for p in problems if p.kind in MOVED]
        if not moved:
            return None
        if key is None and any(r.sig is not None for r in records):
            raise InputError(
                f"{path}: the log is signed: give the key, so that the repair record (and any "
                "record re-chained) is signed like the rest"
            )
        odd = _unexplained(records, moved)
        if odd is not None:
            raise InputError(
                f"{path}: record {odd.record}: {odd.kind}: {odd.detail}; log repair moves "
                "aside lines that are not records and does not re-chain around other damage"
            )
        lines = before.split(b"\n")
        out: list[bytes] = []
        prev, rechained = GENESIS, 0
        for seq, r in enumerate(records):
            line = r.raw
            if r.seq != seq or r.prev != prev:
                data = {k: v for k, v in r.data.items() if k != "sig"} | {"seq": seq, "prev": prev}
                if key is not None:
                    data["sig"] = _sign(key, data)
                line = encode_record(data)
                rechained += 1
            out.append(line)
            prev = sha256_hex(line)
        seq = len(records)
        to = _moved_name(path, seq)
        record: dict[str, Any] = {
            "v": REPAIR_FORMAT,
            "kind": "repair",
            "seq": seq,
            "prev": prev,
            "time": utc_now(),
            "repair": {
                "moved": [{"line": p.record, "sha256": sha256_hex(lines[p.record])} for p in moved],
                "to": to.name,
                "before": sha256_hex(before),
                "rechained": rechained,
            },
        }
        if key is not None:
            record["sig"] = _sign(key, record)
        out.append(encode_record(record))
        with open(to, "xb") as f:  # never over another file
            f.write(b"".join(lines[p.record] + b"\n" for p in moved))
            f.flush()
            os.fsync(f.fileno())
        write_atomic(path, b"".join(x + b"\n" for x in out))  # also makes ``to`` durable
        tree = MerkleTree(leaf_hash(x) for x in out)
        head = Checkpoint(origin_for(key), len(tree), tree.root(), record["time"])
        write_atomic(checkpoint_path(path), head.sign(key))
        return Repair(moved, to, rechained, record)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _sign(key: Ed25519PrivateKey, record: dict[str, Any]) -> str:
    """The signature of a record without its ``sig`` (what :class:`ProofLog` signs)."""
    unsigned = {k: v for k, v in record.items() if k != "sig"}
    return base64.b64encode(key.sign(encode_record(unsigned))).decode("ascii")
