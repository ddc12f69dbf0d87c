"""``battlejudge bench log``: appends per second for the file and PostgreSQL logs with
concurrent writers, and inclusion proofs on a 1,000,000-record tree, each against a
baseline measured in the same run.

- Appends: ``writers`` processes share ``records`` appends of a certified claim
  (``append_proved``: chain, signature, durable write, Merkle tree, signed checkpoint).
  Baseline: the same lines written the old way (hash chain only: the line, ``fsync``,
  no tree, no checkpoint) by one process.
- Proofs: a tree of ``leaves`` leaf hashes; the audit path size of a leaf and the time to
  verify it (RFC 9162, 2.1.3.2). Baseline: what a reader without a proof does, hashing
  every leaf into the root.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.proofs.battleline.certificate import to_file_model
from battlejudge.proofs.log import append_proved, chain_record, claim_record, sha256_hex
from battlejudge.proofs.merkle import MerkleTree, leaf_hash, verify_inclusion
from battlejudge.solver import battleline as bl

__all__ = ["AppendFigure", "ProofFigure", "append_rates", "proof_figures"]


@dataclass(frozen=True)
class AppendFigure:
    """Appends of one benchmark run: the backend, the number of writer processes, the records
    appended and the wall time."""

    backend: str
    writers: int
    records: int
    seconds: float

    @property
    def per_second(self) -> float:
        """Records appended per second."""
        return self.records / self.seconds


@dataclass(frozen=True)
class ProofFigure:
    """Inclusion proofs on a tree of ``leaves`` leaves: the build time, the audit path sizes, a
    proof's size and verify time, and the baseline time to hash every leaf into the root."""

    leaves: int
    build_s: float
    path_hashes: list[int] = field(default_factory=list)
    proof_bytes: int = 0
    verify_us: float = 0.0
    baseline_root_s: float = 0.0


def _claim() -> bl.ProvedClaim:
    return bl.prove(bl.ClaimQuestion(mine="R4 R5 R3", theirs="B8", seen="B7 B10"))


def _writer(target: str, n: int, start: Any, key: bytes) -> None:
    from battlejudge.proofs.store import open_store

    log = open_store(target, Ed25519PrivateKey.from_private_bytes(key))
    proved = _claim()
    start.wait()
    for i in range(n):
        append_proved(log, proved, game=f"bench-{os.getpid()}", turn=i, flag=1)
    log.close()


def _run_writers(target: str, writers: int, records: int) -> float:
    ctx = multiprocessing.get_context("fork")
    start = ctx.Event()
    key = Ed25519PrivateKey.generate().private_bytes_raw()
    share = [records // writers + (1 if k < records % writers else 0) for k in range(writers)]
    procs = [ctx.Process(target=_writer, args=(target, n, start, key)) for n in share]
    for p in procs:
        p.start()
    time.sleep(0.3)  # every writer has opened the log
    t0 = time.perf_counter()
    start.set()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"a bench writer failed (exit {p.exitcode})")
    return time.perf_counter() - t0


def baseline_appends(records: int) -> AppendFigure:
    """The old way: the same record made and signed, its line written and fsynced under
    the lock, and nothing else (no tree, no checkpoint)."""
    proved = _claim()
    key = Ed25519PrivateKey.generate()
    prev = "0" * 64
    with tempfile.TemporaryDirectory() as tmp:
        fd = os.open(Path(tmp) / "old.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        t0 = time.perf_counter()
        for i in range(records):
            record = claim_record(
                question=proved.question.to_json(),
                verdict=proved.verdict,
                certificate=to_file_model(proved.certificate).model_dump(mode="json"),
                game="bench",
                turn=i,
                flag=1,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
            _, line = chain_record(record, i, prev, key)
            os.write(fd, line + b"\n")
            os.fsync(fd)
            fcntl.flock(fd, fcntl.LOCK_UN)
            prev = sha256_hex(line)
        seconds = time.perf_counter() - t0
        os.close(fd)
    return AppendFigure("file, chain only", 1, records, seconds)


def append_rates(
    records: int, writer_counts: tuple[int, ...], pg_url: str | None
) -> list[AppendFigure]:
    """Appends per second for the file log (and the PostgreSQL log at ``pg_url``, an
    empty database whose log tables are made here) with each number of writers."""
    out = []
    for writers in writer_counts:
        with tempfile.TemporaryDirectory() as tmp:
            path = str(Path(tmp) / "bench.log")
            seconds = _run_writers(path, writers, records)
            out.append(AppendFigure("file", writers, records, seconds))
    if pg_url is not None:
        from battlejudge.proofs.pglog import connect, init_pg

        init_pg(pg_url)
        for writers in writer_counts:
            conn = connect(pg_url)
            with conn.transaction():
                conn.execute("TRUNCATE battlejudge_log, battlejudge_checkpoint")
            conn.close()
            seconds = _run_writers(pg_url, writers, records)
            out.append(AppendFigure("postgresql", writers, records, seconds))
    return out


def proof_figures(leaves: int, probes: int = 2000) -> ProofFigure:
    """Build a tree of ``leaves`` leaf hashes, then time ``probes`` verifications of
    audit paths of leaves spread over it, and the baseline: the root from every leaf."""
    t0 = time.perf_counter()
    tree = MerkleTree(leaf_hash(i.to_bytes(8, "big")) for i in range(leaves))
    build_s = time.perf_counter() - t0
    root = tree.root()
    indices = [(k * 7_919_993) % leaves for k in range(probes)]
    paths = [tree.inclusion_path(i) for i in indices]
    hashes = [tree.leaf(i) for i in indices]
    times = []
    for i, p, h in zip(indices, paths, hashes, strict=True):
        t = time.perf_counter()
        ok = verify_inclusion(i, leaves, h, p, root)
        times.append(time.perf_counter() - t)
        if not ok:
            raise RuntimeError(f"the proof of leaf {i} does not verify")
    t0 = time.perf_counter()
    MerkleTree(tree.levels[0]).root()
    baseline = time.perf_counter() - t0
    sizes = sorted({len(p) for p in paths})
    return ProofFigure(
        leaves=leaves,
        build_s=build_s,
        path_hashes=sizes,
        proof_bytes=32 * max(sizes),
        verify_us=statistics.median(times) * 1e6,
        baseline_root_s=baseline,
    )
