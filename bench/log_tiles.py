"""The in-process part of ``battlejudge bench log`` (the rest, which starts services and
drives them over HTTP, is :mod:`battlejudge.bench.log`): building a large signed log with
its tiles, timed, and the time to compute inclusion proofs from a log's tiles in this
process, without HTTP, so that a slow proof over HTTP can be told apart from a slow read
of the tiles.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from battlejudge.bench.serve import percentile

__all__ = ["BuildFigure", "ProofTimes", "build_log", "proof_times"]


@dataclass(frozen=True)
class BuildFigure:
    """A synthetic log built: its records, its size in bytes and the wall time."""

    records: int
    bytes: int
    seconds: float


@dataclass(frozen=True)
class ProofTimes:
    """Inclusion proofs of random records of a log of ``records`` records, computed in
    this process from its checkpoint and tiles (:meth:`LogView.inclusion_proof`): the
    number made, p50, p99 and mean wall time in milliseconds."""

    records: int
    count: int
    p50_ms: float
    p99_ms: float
    mean_ms: float


def build_log(path: str | Path, records: int, key: Ed25519PrivateKey) -> BuildFigure:
    """:func:`~battlejudge.bench.synthetic_log.build_synthetic_log`, timed."""
    from battlejudge.bench.synthetic_log import build_synthetic_log

    start = time.perf_counter()
    size, _ = build_synthetic_log(path, records, key)
    return BuildFigure(records, size, time.perf_counter() - start)


def proof_times(path: str | Path, count: int, seed: int = 1) -> ProofTimes:
    """Time ``count`` inclusion proofs of random records (seeded) of the file log at
    ``path``, made as ``battlejudge serve`` makes them, in this process."""
    from battlejudge.proofs.logview import open_view

    view = open_view(path)
    try:
        _, head = view.head()
        rng = random.Random(seed)
        times = []
        for _ in range(count):
            seq = rng.randrange(head.size)
            start = time.perf_counter()
            view.inclusion_proof(seq)
            times.append(time.perf_counter() - start)
    finally:
        view.close()
    return ProofTimes(
        head.size,
        len(times),
        percentile(times, 0.50) * 1e3,
        percentile(times, 0.99) * 1e3,
        statistics.fmean(times) * 1e3 if times else 0.0,
    )
